package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// TestAuditRevealWithoutCredential checks
// docs/api.md#audit-log-and-change-feed (v1.2): every allowed request
// with reveal=true on a route that returns record values writes one
// credential.reveal entry, whether or not the answer held a credential; the
// same requests without reveal=true, and a reveal=true that is refused,
// write none.
func TestAuditRevealWithoutCredential(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		k := pathK("p", "c", "k")
		c.addRecord(alice, k, "port", "INTEGER", "5432")
		c.mustDo("POST", pathK("p", "c", "empty"), "", alice, http.StatusCreated)
		c.mustDo("PUT", pathP("p")+"/members/bob", `{"role":"viewer"}`, alice, http.StatusOK)
		reveals := func() int {
			return c.auditLog("p", "?action=credential.reveal").Total
		}
		targets := []string{
			pathR("p", "c", "k", "port"),
			pathR("p", "c", "k", "port") + "/versions",
			pathR("p", "c", "k", "port") + "?version=1",
			k + "/records",
			k,
			pathK("p", "c", "empty"),
			k + "?format=env",
			pathP("p") + "/export",
			pathP("p") + "/diff?from=c/k&to=c/empty",
		}
		for _, target := range targets {
			res := c.raw(request("GET", target, "", alice))
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode, "GET %s", target)
		}
		assert.Zero(t, reveals(), "no entry without reveal=true")
		for i, target := range targets {
			sep := "?"
			if strings.Contains(target, "?") {
				sep = "&"
			}
			res := c.raw(request("GET", target+sep+"reveal=true", "", alice))
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode, "GET %s with reveal=true", target)
			assert.Equal(t, i+1, reveals(), "GET %s?reveal=true: one entry, though no credential was in the answer", target)
		}
		status, _, _ := c.do("GET", k+"?reveal=true", "", c.token("bob"))
		assert.Equal(t, http.StatusForbidden, status, "a viewer may not reveal")
		assert.Equal(t, len(targets), reveals(), "a refused reveal=true writes no entry")
	})
}

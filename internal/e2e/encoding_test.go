package e2e_test

// String encoding: every JSON string of a response is written as
// encoding/json writes it with HTML escaping off (internal/jsonstr), in
// records, lists, cluster data and revealed credentials alike.

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds"
)

func TestResponseStringEncoding(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		K := pathK("p", "c", "k")
		// The value "\b\f<a&b>\u2028" sent as JSON; its encoding in every
		// response must be exactly want.
		const sent, want = `"\b\f<a&b>\u2028"`, `"\b\f<a&b>\u2028"`
		c.addRecord(alice, K, "s", "STRING", sent)
		c.addRecord(alice, K, "secret", "CREDENTIAL", sent)
		c.addRecord(alice, K, "list", "[]CREDENTIAL", "["+sent+","+sent+"]")
		for _, target := range []string{
			K + "/records/s", K + "/records?reveal=true", K + "?reveal=true",
			K + "/records/secret?reveal=true", K + "/records/list?reveal=true",
		} {
			raw := string(c.mustDo("GET", target, "", alice, http.StatusOK).raw)
			assert.Contains(t, raw, want, target)
			assert.NotContains(t, raw, `\u0008`, target)
			assert.NotContains(t, raw, `\u003c`, target)
		}
	})
}

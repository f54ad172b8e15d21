package e2e_test

// Query strings (docs/api.md#conventions, v1.1): a query string that does
// not parse, or a parameter of the contract given twice, is 400
// INVALID_REQUEST; it is never silently dropped.

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// TestMalformedQuery sends the repros of issue 10 (finding 4) and checks
// that each is refused and changes nothing.
func TestMalformedQuery(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		K := pathK("p", "c", "k")
		R := K + "/records/conn"
		c.addRecord(alice, K, "conn", "STRING", `"old"`)
		c.addRecord(alice, K, "n", "INTEGER", `7`)
		c.addRecord(alice, K, "secret", "CREDENTIAL", `"s3cr3t"`)

		const escape = "malformed query string"
		for _, tt := range []struct {
			method, target string
			details        []string
		}{
			{"PUT", R + "?type=STRING&value=50%", []string{escape, `invalid URL escape "%"`, "%25"}},
			{"PUT", R + "?type=STRING&value=Server=db1;Database=prod", []string{escape, "semicolon", "%3B"}},
			{"POST", K + "/records/new?type=STRING&value=50%", []string{escape, `invalid URL escape "%"`}},
			{"GET", K + "/records?type=INTEGER%zz", []string{escape, `invalid URL escape "%zz"`}},
			{"GET", K + "/records?limit=5;offset=1", []string{escape, "semicolon"}},
			{"GET", K + "?reveal=true;x=1", []string{escape, "semicolon"}},
			{"GET", R + "?%zz", []string{escape}},
			{"DELETE", R + "?x=%", []string{escape}},
			{"PUT", pathP("p") + "?rename=a%", []string{escape}},
			{"GET", "/api/v1/projects?search=%g0", []string{escape}},
			{"POST", pathP("q") + "?x=;", []string{escape, "semicolon"}},
			{"GET", K + "?reveal=true&reveal=false", []string{"reveal", "more than once"}},
			{"GET", K + "/records/secret?reveal=true&reveal=false", []string{"reveal", "more than once"}},
			{"GET", K + "/records?reveal=false&reveal=true", []string{"reveal", "more than once"}},
			{"GET", K + "/records?type=INTEGER&type=STRING", []string{"type", "more than once"}},
			{"GET", K + "/records?limit=1&limit=2", []string{"limit", "more than once"}},
			{"GET", "/api/v1/projects?sortBy=name&sortBy=id", []string{"sortBy", "more than once"}},
			{"PUT", R + "?value=a&value=b", []string{"value", "more than once"}},
			{"PUT", pathP("p") + "?rename=a&rename=b", []string{"rename", "more than once"}},
		} {
			what := tt.method + " " + tt.target
			status, _, env := c.do(tt.method, tt.target, "", alice)
			assert.Equal(t, http.StatusBadRequest, status, what)
			assert.Equal(t, "INVALID_REQUEST", env.code(), what)
			assert.Equal(t, "Invalid request", env.message(), what)
			for _, d := range tt.details {
				assert.Contains(t, env.details(), d, what)
			}
		}

		// Nothing changed: the record keeps its value and version, no
		// record or project was created, the project kept its name.
		var got recordJSON
		c.mustDo("GET", R, "", alice, http.StatusOK).decode(t, &got)
		assert.JSONEq(t, `"old"`, string(got.Value), "the refused PUTs left the value")
		assert.EqualValues(t, 1, got.Version, "the refused PUTs made no new version")
		c.mustDo("GET", K+"/records/new", "", alice, http.StatusNotFound)
		c.mustDo("GET", pathP("q"), "", alice, http.StatusNotFound)
		c.mustDo("GET", pathP("p"), "", alice, http.StatusOK)
	})
}

// TestQueryStillAccepted checks what stays valid: a ';' or '%' written
// percent-encoded, parameters outside the contract given twice, and an
// empty query.
func TestQueryStillAccepted(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		K := pathK("p", "c", "k")
		c.mustDo("POST", K+"/records/conn?type=STRING&value=Server%3Ddb1%3BDatabase%3Dprod", "", alice, http.StatusCreated)
		c.mustDo("POST", K+"/records/pct?type=STRING&value=50%25", "", alice, http.StatusCreated)

		var got recordJSON
		c.mustDo("GET", K+"/records/conn", "", alice, http.StatusOK).decode(t, &got)
		assert.JSONEq(t, `"Server=db1;Database=prod"`, string(got.Value))
		c.mustDo("GET", K+"/records/pct?", "", alice, http.StatusOK).decode(t, &got)
		assert.JSONEq(t, `"50%"`, string(got.Value))

		var page struct {
			Items []recordJSON `json:"items"`
			Total int          `json:"total"`
		}
		c.mustDo("GET", K+"/records?value=50%25&other=1&other=2", "", alice, http.StatusOK).decode(t, &page)
		require.Len(t, page.Items, 1)
		assert.Equal(t, "pct", page.Items[0].Name)
	})
}

// TestMalformedQueryAfterRoutingAndAuth checks the order of
// docs/api.md#conventions: an unknown route or a wrong method keeps its
// 404 or 405 and a request without a token its 401, whatever the query
// string; on someone else's project the answer is 403.
func TestMalformedQueryAfterRoutingAndAuth(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "p", "c", "k")

		status, _, env := c.do("GET", "/api/v1/nowhere?x=%zz", "", alice)
		wantError(t, "unknown route", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		status, _, env = c.do("PATCH", pathP("p")+"?x=%zz", "", alice)
		wantError(t, "wrong method", status, env, http.StatusMethodNotAllowed, "INVALID_REQUEST", "Method not allowed")
		status, _, env = c.do("GET", pathK("p", "c", "k")+"?reveal=true&reveal=false", "", "")
		wantError(t, "no token", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
		status, _, env = c.do("GET", pathK("p", "c", "k")+"?x=%zz", "", bob)
		wantError(t, "someone else's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		status, _, env = c.do("POST", "/api/v1/auth/login?x=%zz", `{"username":"alice","password":"alice-password"}`, "")
		wantError(t, "login", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		status, _, env = c.do("POST", "/api/v1/auth/refresh?a=1;b=2", "", alice)
		wantError(t, "refresh", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
	})
}

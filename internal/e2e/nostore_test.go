package e2e_test

// Cache-Control (docs/api.md#conventions, v1.1): every response under
// /api/v1/ carries Cache-Control: no-store, successes and errors alike.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// brokenStore fails FindProject with an error no row of the error table
// knows: a 500.
type brokenStore struct{ store.Store }

func (brokenStore) FindProject(context.Context, store.Path) (*store.Project, error) {
	return nil, errors.New("broken")
}

// TestNoStore sends one request for every kind of answer and checks that
// each carries Cache-Control: no-store.
func TestNoStore(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey), hds.WithMaxBodyBytes(64), hds.WithCORS(testOrigin))
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "p", "c", "k")
		K := pathK("p", "c", "k")
		c.addRecord(alice, K, "secret", "CREDENTIAL", `"s3cr3t"`)

		type req struct {
			name, method, target, body, token string
			header                            map[string]string
			status                            int
		}
		login := `{"username":"alice","password":"alice-password"}`
		for _, tt := range []req{
			{"list", "GET", "/api/v1/projects", "", alice, nil, http.StatusOK},
			{"the OpenAPI document", "GET", "/api/v1/openapi.json", "", "", nil, http.StatusOK},
			{"create", "POST", pathP("q"), "", alice, nil, http.StatusCreated},
			{"cluster data revealed", "GET", K + "?reveal=true", "", alice, nil, http.StatusOK},
			{"record revealed", "GET", K + "/records/secret?reveal=true", "", alice, nil, http.StatusOK},
			{"records revealed", "GET", K + "/records?reveal=true", "", alice, nil, http.StatusOK},
			{"update", "PUT", K + "/records/secret?value=other", "", alice, nil, http.StatusOK},
			{"delete", "DELETE", pathP("q"), "", alice, nil, http.StatusNoContent},
			{"bad query", "GET", K + "/records?limit=0", "", alice, nil, http.StatusBadRequest},
			{"malformed query", "GET", K + "?reveal=true&reveal=false", "", alice, nil, http.StatusBadRequest},
			{"no token", "GET", K, "", "", nil, http.StatusUnauthorized},
			{"bad token", "GET", K, "", "x.y.z", nil, http.StatusUnauthorized},
			{"not the owner", "GET", K, "", bob, nil, http.StatusForbidden},
			{"missing", "GET", pathP("nope"), "", alice, nil, http.StatusNotFound},
			{"unknown route", "GET", "/api/v1/nowhere", "", "", nil, http.StatusNotFound},
			{"the API root", "GET", "/api/v1", "", "", nil, http.StatusNotFound},
			{"not canonical", "GET", "/api/v1/projects/", "", alice, nil, http.StatusNotFound},
			{"wrong method", "PATCH", pathP("p"), "", alice, nil, http.StatusMethodNotAllowed},
			{"taken", "POST", pathP("p"), "", alice, nil, http.StatusConflict},
			{"too large", "POST", "/api/v1/projects", `{"name":"` + strings.Repeat("x", 100) + `"}`, alice, nil, http.StatusRequestEntityTooLarge},
			{"login", "POST", "/api/v1/auth/login", login, "", nil, http.StatusOK},
			{"failed login", "POST", "/api/v1/auth/login", `{"username":"alice","password":"wrong"}`, "", nil, http.StatusUnauthorized},
			{"refresh", "POST", "/api/v1/auth/refresh", "", alice, nil, http.StatusOK},
			{"preflight", "OPTIONS", "/api/v1/projects", "", "",
				map[string]string{"Origin": testOrigin, "Access-Control-Request-Method": "GET"}, http.StatusNoContent},
			{"cross-origin", "GET", "/api/v1/projects", "", alice, map[string]string{"Origin": testOrigin}, http.StatusOK},
		} {
			r := request(tt.method, tt.target, tt.body, tt.token)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			res := c.raw(r)
			assert.Equal(t, tt.status, res.StatusCode, tt.name)
			assert.Equal(t, "no-store", res.Header.Get("Cache-Control"), tt.name)
		}

		// 415: a body with another content type.
		r := request("POST", "/api/v1/projects", `{"name":"x"}`, alice)
		r.Header.Set("Content-Type", "text/plain")
		res := c.raw(r)
		assert.Equal(t, http.StatusUnsupportedMediaType, res.StatusCode, "415")
		assert.Equal(t, "no-store", res.Header.Get("Cache-Control"), "415")
	})
}

// TestNoStoreLimitedAndFailing covers 429 and 500, and a handler mounted
// under a prefix.
func TestNoStoreLimitedAndFailing(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithRateLimit(1000, 1))
		_, _, _ = c.do("GET", "/api/v1/nowhere", "", "")
		status, h, env := c.do("GET", "/api/v1/nowhere", "", "")
		wantError(t, "over the limit", status, env, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
		assert.Equal(t, "no-store", h.Get("Cache-Control"), "429")

		c = newServerWrapped(t, kind, func(s store.Store) store.Store { return brokenStore{s} })
		status, h, env = c.do("GET", pathP("p"), "", c.token("alice"))
		wantError(t, "a store failure", status, env, http.StatusInternalServerError, "SERVER_ERROR", "Internal server error")
		assert.Equal(t, "no-store", h.Get("Cache-Control"), "500")

	})
}

// TestNoStoreMounted checks a handler mounted under a prefix: what is
// under its /api/v1/ carries no-store, /health keeps its own.
func TestNoStoreMounted(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/hds/", http.StripPrefix("/hds", hds.New(hds.WithLogger(quietLogger))))
	for _, tt := range []struct {
		target string
		status int
	}{
		{"/hds/api/v1/projects", http.StatusUnauthorized},
		{"/hds/api/v1/nowhere", http.StatusNotFound},
		{"/hds/health", http.StatusOK},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, request("GET", tt.target, "", ""))
		require.Equal(t, tt.status, rec.Code, tt.target)
		assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"), tt.target)
	}
}

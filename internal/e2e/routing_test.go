package e2e_test

// Routing (docs/api.md#conventions): unknown routes, 405, non-canonical
// paths, and the API mounted under a prefix
// (docs/api.md#the-go-library).

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnknownRoutes(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		for _, target := range []string{
			"/api/v1/nothing",
			"/api/v1",
			"/api/v2/projects",
			"/api/v1/project",
			"/api/v1/auth",
			"/api/v1/auth/unknown",
			"/api/v1/projects/web/unknown",
			"/api/v1/projects/web/collections/prod/unknown",
			"/api/v1/projects/web/collections/prod/clusters/k/records/r/extra",
			"/api/v1/projects/web/collections/prod/clusters/k/data",
			"/nothing",
			"/",
		} {
			for _, token := range []string{"", alice, "notajwt"} {
				for _, method := range []string{"GET", "POST"} {
					status, _, env := c.do(method, target, "", token)
					wantError(t, fmt.Sprintf("%s %s (token: %v)", method, target, token != ""), status, env,
						http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
				}
			}
		}
	})
}

func TestMethodNotAllowed(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		P, C, K, R := pathP("web"), pathC("web", "prod"), pathK("web", "prod", "k"), pathR("web", "prod", "k", "r")
		tests := []struct {
			method, target string
			allow          []string
		}{
			{"DELETE", "/api/v1/projects", []string{"GET", "POST"}},
			{"PUT", "/api/v1/projects", []string{"GET", "POST"}},
			{"PATCH", P, []string{"GET", "POST", "PUT", "DELETE"}},
			{"PATCH", C, []string{"GET", "POST", "PUT", "DELETE"}},
			{"PATCH", K, []string{"GET", "POST", "PUT", "DELETE"}},
			{"PATCH", R, []string{"GET", "POST", "PUT", "DELETE"}},
			{"PUT", P + "/collections", []string{"GET", "POST"}},
			{"DELETE", C + "/clusters", []string{"GET", "POST"}},
			{"PUT", K + "/records", []string{"GET", "POST"}},
			{"DELETE", K + "/records", []string{"GET", "POST"}},
			{"GET", "/api/v1/auth/login", []string{"POST"}},
			{"DELETE", "/api/v1/auth/login", []string{"POST"}},
			{"GET", "/api/v1/auth/refresh", []string{"POST"}},
			{"POST", "/health", []string{"GET"}},
			{"DELETE", "/health", []string{"GET"}},
		}
		known := []string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"}
		for _, tt := range tests {
			for _, token := range []string{"", alice, "notajwt"} {
				status, h, env := c.do(tt.method, tt.target, "", token)
				what := fmt.Sprintf("%s %s (token: %v)", tt.method, tt.target, token != "")
				wantError(t, what, status, env, http.StatusMethodNotAllowed, "INVALID_REQUEST", "")
				allow := strings.Split(h.Get("Allow"), ", ")
				for _, m := range tt.allow {
					assert.Contains(t, allow, m, "%s: Allow %q lacks %s", what, h.Get("Allow"), m)
				}
				for _, m := range allow {
					assert.Contains(t, known, m, "%s: Allow %q has %s, want %v", what, h.Get("Allow"), m, tt.allow)
					if m != "HEAD" && m != "OPTIONS" {
						assert.Contains(t, tt.allow, m, "%s: Allow %q has %s, want %v", what, h.Get("Allow"), m, tt.allow)
					}
				}
			}
		}
	})
}

// nonCanonical are raw paths with an empty, "." or ".." segment.
var nonCanonical = []string{
	"/api/v1/projects/",
	"/api/v1/projects/web/",
	"/api/v1/projects/web/collections/",
	"/api/v1/projects/web/collections/prod/clusters/k/records/r/",
	"/health/",
	"//api/v1/projects",
	"/api/v1//projects",
	"/api/v1/projects//web",
	"/api//v1/projects/web",
	"/api/v1/./projects",
	"/./health",
	"/api/v1/projects/./web",
	"/api/v1/projects/web/..",
	"/api/v1/projects/web/../web",
	"/api/v1/projects/../projects/web",
	"/api/v1/projects/%2e%2e",
	"/api/v1/projects/%2E%2E/projects/web",
	"/api/v1/projects/%2e",
	"/api/v1/projects/.%2e",
	"/api/v1/projects/web/collections/%2e%2e/clusters/k",
	"/api/v1/projects/web/collections/prod/clusters/k/records/%2E",
	"/api/v1/projects/web/collections/prod/clusters/k/records/..",
}

func TestNonCanonicalPaths(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, pathK("web", "prod", "k"), "r", "NULL", "null")

		srv := httptest.NewServer(c.h)
		defer srv.Close()
		noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

		for _, raw := range nonCanonical {
			for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
				// Through the handler, the URL built by hand.
				unescaped, err := url.PathUnescape(raw)
				require.NoError(t, err, err)
				r := request(method, "/", "", alice)
				r.URL = &url.URL{Path: unescaped, RawPath: raw}
				r.RequestURI = raw
				status, h, env := c.send(r)
				what := method + " " + raw
				wantError(t, what, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
				assert.Empty(t, h.Get("Location"), "%s: redirected", what)

				// Over the wire.
				req, err := http.NewRequest(method, srv.URL+raw, nil)
				require.NoError(t, err, "%s: new request", what)
				req.Header.Set("Authorization", "Bearer "+alice)
				res, err := noRedirects.Do(req)
				require.NoError(t, err, "%s over the wire", what)
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				assert.Equal(t, http.StatusNotFound, res.StatusCode, "%s over the wire: status", what)
				assert.Empty(t, res.Header.Get("Location"), "%s over the wire: redirected", what)
				assert.NoError(t, checkEnvelope(res.StatusCode, res.Header, body), "%s over the wire", what)
			}
		}
		// The resources are still there.
		c.mustDo("GET", pathR("web", "prod", "k", "r"), "", alice, http.StatusOK)
	})
}

func TestMounted(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		mux := http.NewServeMux()
		mux.Handle("/hds/", http.StripPrefix("/hds", c.h))
		mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "host") })
		m := &client{t: t, h: mux, store: c.store, users: c.users, ids: c.ids, tokens: map[string]string{}, mount: "/hds"}

		res := m.raw(httptest.NewRequest("GET", "/hds/health", nil))
		assert.EqualValues(t, http.StatusOK, res.StatusCode, "GET /hds/health: %d", res.StatusCode)
		status, h, env := m.do("POST", "/hds/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, "")
		require.Equal(t, http.StatusOK, status, "login under /hds: %s", env.raw)
		require.Equal(t, "no-store", h.Get("Cache-Control"), "login under /hds: Cache-Control")
		var tok struct {
			Token string `json:"token"`
		}
		env.decode(t, &tok)
		m.mustDo("POST", "/hds"+pathP("mounted"), "", tok.Token, http.StatusCreated)
		m.mustDo("POST", "/hds"+pathC("mounted", "c"), "", tok.Token, http.StatusCreated)
		var l listJSON[projectJSON]
		m.mustDo("GET", "/hds/api/v1/projects", "", tok.Token, http.StatusOK).decode(t, &l)
		if assert.Equal(t, 1, l.Total, "list under /hds: total (%+v)", l) && assert.Len(t, l.Items, 1, "list under /hds: items") {
			assert.Equal(t, "mounted", l.Items[0].Name, "list under /hds: name")
			assert.Equal(t, 1, l.Items[0].CollectionCount, "list under /hds: collection_count")
		}
		status, _, env = m.do("GET", "/hds/api/v1/nothing", "", tok.Token)
		wantError(t, "unknown route under /hds", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		status, _, env = m.do("DELETE", "/hds/api/v1/projects", "", tok.Token)
		wantError(t, "wrong method under /hds", status, env, http.StatusMethodNotAllowed, "INVALID_REQUEST", "")
		status, _, env = m.do("GET", "/hds/api/v1/projects", "", "")
		wantError(t, "no token under /hds", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
		// The refreshed token works under the prefix too.
		var ref struct {
			Token string `json:"token"`
		}
		m.mustDo("POST", "/hds/api/v1/auth/refresh", "", tok.Token, http.StatusOK).decode(t, &ref)
		m.mustDo("GET", "/hds"+pathP("mounted"), "", ref.Token, http.StatusOK)
	})
}

package hds_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/handler"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// adminTestHandler is hds with one host route for administrators, GET
// /api/v1/things (a page of three things) and DELETE /api/v1/things/{name}
// (404 but for "a"), on a store with the administrator root and the user
// bob; it returns their tokens and the log.
func adminTestHandler(t *testing.T, routes bool) (h http.Handler, rootToken, bobToken string, logs *strings.Builder) {
	t.Helper()
	mem := memory.New()
	for _, u := range []struct {
		name  string
		admin bool
	}{{"root", true}, {"bob", false}} {
		hash, err := auth.HashPassword("password-" + u.name)
		require.NoError(t, err)
		_, err = mem.CreateUser(context.Background(), &store.User{Username: u.name, PasswordHash: hash, Active: true, Admin: u.admin})
		require.NoError(t, err)
	}
	logs = &strings.Builder{}
	opts := []hds.Option{hds.WithStore(mem), hds.WithUsers(mem), hds.WithLogger(quietLogger),
		hds.WithSecurity(hds.Security{JWTSecret: strings.Repeat("k", 32)})}
	if routes {
		audit := newTextLogger(logs)
		things := []map[string]string{{"name": "a"}, {"name": "b"}, {"name": "c"}}
		opts = append(opts, hds.WithAdminRoutes(
			handler.AdminRoute{Pattern: "GET /api/v1/things", OperationID: "listThings", Tag: "things", Summary: "List the things",
				Query: []string{"limit", "offset"}, Status: 200,
				Response: handler.AdminResponse{Description: "A page of things.", List: true,
					Data: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}},
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					p, err := handler.ParsePage(r)
					if err != nil {
						handler.WriteError(w, r, err)
						return
					}
					handler.WriteList(w, things, p)
				})},
			handler.AdminRoute{Pattern: "DELETE /api/v1/things/{name}", OperationID: "deleteThing", Tag: "things", Summary: "Delete a thing",
				Status: 204, Response: handler.AdminResponse{Description: "Deleted."}, Errors: []int{404},
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.PathValue("name") != "a" {
						handler.WriteError(w, r, store.ErrNotFound)
						return
					}
					handler.LogAdminAction(audit, r, "thing.delete", "a")
					w.WriteHeader(http.StatusNoContent)
				})},
		))
	}
	h, err := hds.NewHandler(opts...)
	require.NoError(t, err)
	for _, name := range []string{"root", "bob"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, jsonRequest("POST", "/api/v1/auth/login", `{"username":"`+name+`","password":"password-`+name+`"}`))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var env struct {
			Data struct {
				Token string `json:"token"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
		if name == "root" {
			rootToken = env.Data.Token
		} else {
			bobToken = env.Data.Token
		}
	}
	return h, rootToken, bobToken, logs
}

// newTextLogger logs text lines to w.
func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// jsonRequest is a request with a JSON body.
func jsonRequest(method, target, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

// TestAdminRoutes: a host's routes for administrators are served behind
// the handler's authentication (no token 401, a user who is not an
// administrator 403), rate limited (the X-RateLimit headers), answer in
// the envelope, with 405 for another method, and are in the OpenAPI
// document; without them, the paths are 404 and absent from it.
func TestAdminRoutes(t *testing.T) {
	h, root, bob, logs := adminTestHandler(t, true)
	c := &client{t: t, h: h}

	status, _, env := c.do("GET", "/api/v1/things", "", "")
	wantError(t, "no token", status, env, 401, "AUTHENTICATION_FAILED", "No authorization token provided")
	status, _, env = c.do("GET", "/api/v1/things", "", bob)
	wantError(t, "not an administrator", status, env, 403, "AUTHORIZATION_FAILED", "Insufficient permissions")
	status, _, env = c.do("GET", "/api/v1/things?limit=0", "", root)
	wantError(t, "limit=0", status, env, 400, "INVALID_REQUEST", "")
	status, hdr, env := c.do("PUT", "/api/v1/things", "", root)
	wantError(t, "another method", status, env, 405, "INVALID_REQUEST", "Method not allowed")
	assert.Equal(t, "GET, HEAD", hdr.Get("Allow"))
	status, _, env = c.do("DELETE", "/api/v1/things/zzz", "", root)
	wantError(t, "unknown thing", status, env, 404, "RESOURCE_NOT_FOUND", "")

	rec := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/api/v1/things?limit=2&offset=1", nil)
	r.Header.Set("Authorization", "Bearer "+root)
	h.ServeHTTP(rec, r)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.NotEmpty(t, rec.Header().Get("X-RateLimit-Remaining"), "rate limited")
	assert.JSONEq(t, `{"success": true, "message": "OK", "data": {"items": [{"name": "b"}, {"name": "c"}], "total": 3, "limit": 2, "offset": 1}}`,
		rec.Body.String())

	status, _, _ = c.do("DELETE", "/api/v1/things/a", "", root)
	assert.Equal(t, http.StatusNoContent, status)
	assert.Contains(t, logs.String(), `msg=audit action=thing.delete actor=`)
	assert.Contains(t, logs.String(), `actor_name=root target=a request_id=`)

	doc := openAPIPaths(t, h)
	require.Contains(t, doc, "/api/v1/things")
	require.Contains(t, doc, "/api/v1/things/{name}")
	assert.Equal(t, "listThings", doc["/api/v1/things"]["get"].(map[string]any)["operationId"])

	// Without the routes: 404 as any unknown path, not in the document.
	h, root, _, _ = adminTestHandler(t, false)
	c = &client{t: t, h: h}
	status, _, env = c.do("GET", "/api/v1/things", "", root)
	wantError(t, "no such route", status, env, 404, "RESOURCE_NOT_FOUND", "")
	assert.NotContains(t, openAPIPaths(t, h), "/api/v1/things")
}

// TestAdminRoutePanics: a route that lacks what it needs panics when the
// handler is built.
func TestAdminRoutePanics(t *testing.T) {
	ok := func(w http.ResponseWriter, r *http.Request) {}
	for _, r := range []handler.AdminRoute{
		{Pattern: "GET /things", Handler: http.HandlerFunc(ok), OperationID: "x", Tag: "t", Summary: "s", Status: 200},
		{Pattern: "GET /api/v1/things", OperationID: "x", Tag: "t", Summary: "s", Status: 200},
		{Pattern: "GET /api/v1/things", Handler: http.HandlerFunc(ok), Tag: "t", Summary: "s", Status: 200},
		{Pattern: "GET /api/v1/things", Handler: http.HandlerFunc(ok), OperationID: "x", Tag: "t", Summary: "s"},
	} {
		msg, panicked := panicMessage(func() { hds.New(hds.WithLogger(quietLogger), hds.WithAdminRoutes(r)) })
		assert.True(t, panicked, "%+v", r)
		assert.Contains(t, msg, "hds: admin route "+r.Pattern)
	}
}

// openAPIPaths returns the paths of the served OpenAPI document.
func openAPIPaths(t *testing.T, h http.Handler) map[string]map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	body, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	return doc.Paths
}

package e2e_test

// CORS (docs/api.md#cors), black-box through hds.New. The middleware is
// unit-tested in middleware/cors_test.go.

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// corsHeaders returns the names of the Access-Control-* headers.
func corsHeaders(h http.Header) []string {
	var out []string
	for name := range h {
		if strings.HasPrefix(name, "Access-Control-") {
			out = append(out, name)
		}
	}
	return out
}

// wantVary checks Vary: Origin.
func wantVary(t *testing.T, what string, h http.Header) {
	t.Helper()
	assert.Contains(t, headerList(h, "Vary"), "Origin", "%s: Vary: Origin", what)
}

// wantAllowed checks the headers of a response to an allowed origin.
func wantAllowed(t *testing.T, what, origin string, h http.Header) {
	t.Helper()
	assert.Equal(t, []string{origin}, h.Values("Access-Control-Allow-Origin"), "%s: Access-Control-Allow-Origin", what)
	exposed := headerList(h, "Access-Control-Expose-Headers")
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"} {
		assert.Contains(t, exposed, name, "%s: Access-Control-Expose-Headers", what)
	}
	wantVary(t, what, h)
}

func TestCORS(t *testing.T) {
	h := newServer(t, memoryKind, hds.WithCORS(testOrigin))
	token := h.loginAt(ipB, "alice", "alice-password")
	from := func(q req, origin string) req {
		q.remote = ipA
		q.header = map[string]string{"Origin": origin}
		return q
	}
	list := req{method: "GET", target: "/api/v1/projects", token: token}

	t.Run("allowed", func(t *testing.T) {
		rec := h.call(from(list, testOrigin))
		require.Equal(t, http.StatusOK, rec.status)
		wantAllowed(t, "200", testOrigin, rec.header)
		rec = h.call(from(req{method: "GET", target: "/api/v1/projects"}, testOrigin))
		require.Equal(t, http.StatusUnauthorized, rec.status)
		wantAllowed(t, "401", testOrigin, rec.header)
	})
	t.Run("disallowed", func(t *testing.T) {
		for _, origin := range []string{"https://evil.example.com", "https://app.example.com.evil.com", "http://app.example.com"} {
			rec := h.call(from(list, origin))
			assert.Equal(t, http.StatusOK, rec.status, origin)
			assert.Empty(t, corsHeaders(rec.header), "%s: no Access-Control-* headers", origin)
			wantVary(t, origin, rec.header)
			rec = h.call(req{method: "OPTIONS", target: "/api/v1/projects", remote: ipA,
				header: map[string]string{"Origin": origin, "Access-Control-Request-Method": "GET"}})
			assert.Empty(t, corsHeaders(rec.header), "%s preflight: no Access-Control-* headers", origin)
		}
	})
	t.Run("preflight without a token", func(t *testing.T) {
		for _, target := range []string{"/api/v1/projects", "/api/v1/projects/p1/collections/c1", "/api/v1/auth/login"} {
			rec := h.call(req{method: "OPTIONS", target: target, remote: ipA, header: map[string]string{
				"Origin": testOrigin, "Access-Control-Request-Method": "PUT",
				"Access-Control-Request-Headers": "authorization, content-type"}})
			require.Equal(t, http.StatusNoContent, rec.status, "%s: %s", target, rec.env.raw)
			assert.Empty(t, string(rec.env.raw), target)
			assert.Equal(t, testOrigin, rec.header.Get("Access-Control-Allow-Origin"), target)
			assert.Equal(t, []string{"GET, POST, PUT, DELETE, OPTIONS"}, rec.header.Values("Access-Control-Allow-Methods"), target)
			assert.Equal(t, []string{"Content-Type, Authorization, If-Match, If-None-Match, Last-Event-ID"}, rec.header.Values("Access-Control-Allow-Headers"), target)
			age, err := strconv.Atoi(rec.header.Get("Access-Control-Max-Age"))
			assert.NoError(t, err, "%s: Access-Control-Max-Age present, in seconds", target)
			assert.Positive(t, age, target)
			wantVary(t, target, rec.header)
			wantNotCounted(t, target, rec.header)
		}
	})
	t.Run("Vary on every response", func(t *testing.T) {
		for _, q := range []req{
			{method: "GET", target: "/health"},
			{method: "GET", target: "/api/v1/projects"},             // 401
			{method: "GET", target: "/api/v1/nothing-here"},         // 404
			{method: "PATCH", target: "/api/v1/projects"},           // 405
			{method: "GET", target: "/api/v1/projects/", token: ""}, // non-canonical 404
		} {
			q.remote = ipB
			wantVary(t, q.method+" "+q.target+" without Origin", h.call(q).header)
			wantVary(t, q.method+" "+q.target+" from an allowed origin", h.call(from(q, testOrigin)).header)
			wantVary(t, q.method+" "+q.target+" from another origin", h.call(from(q, "https://evil.example.com")).header)
		}
		// Without any CORS configuration too.
		plain := newServer(t, memoryKind)
		wantVary(t, "no CORS configured, /health", plain.call(req{method: "GET", target: "/health"}).header)
		rec := plain.call(req{method: "GET", target: "/api/v1/projects", header: map[string]string{"Origin": testOrigin}})
		wantVary(t, "no CORS configured, 401", rec.header)
		assert.Empty(t, corsHeaders(rec.header), "no CORS configured: no Access-Control-* headers")
	})
	t.Run("429 readable by the browser", func(t *testing.T) {
		h := newServer(t, memoryKind, hds.WithCORS(testOrigin), hds.WithRateLimit(1000, 1))
		q := req{method: "GET", target: "/api/v1/projects"}
		require.Equal(t, http.StatusUnauthorized, h.call(from(q, testOrigin)).status)
		rec := h.call(from(q, testOrigin))
		want429(t, "over the limit", rec, 60)
		wantAllowed(t, "429", testOrigin, rec.header)
	})
}

func TestCORSAnyOrigin(t *testing.T) {
	h := newServer(t, memoryKind, hds.WithCORS("*"))
	for _, origin := range []string{"https://anything.example", "http://localhost:5173"} {
		rec := h.call(req{method: "GET", target: "/api/v1/projects", remote: ipA,
			header: map[string]string{"Origin": origin}})
		assert.Equal(t, http.StatusUnauthorized, rec.status)
		wantAllowed(t, origin, origin, rec.header)
		rec = h.call(req{method: "OPTIONS", target: "/api/v1/projects", remote: ipA,
			header: map[string]string{"Origin": origin, "Access-Control-Request-Method": "DELETE"}})
		assert.Equal(t, http.StatusNoContent, rec.status, "%s preflight", origin)
		assert.Equal(t, origin, rec.header.Get("Access-Control-Allow-Origin"), "%s preflight echoes the origin", origin)
	}
}

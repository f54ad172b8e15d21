package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/middleware"
)

const appOrigin = "https://app.example.com"

// corsHeaders returns the names of the Access-Control-* headers in h.
func corsHeaders(h http.Header) []string {
	var out []string
	for name := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(name), "Access-Control-") {
			out = append(out, name)
		}
	}
	return out
}

// listValues splits every value of a comma-separated header into its
// trimmed elements.
func listValues(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}

// wantVaryOrigin checks that the response varies by Origin.
func wantVaryOrigin(t *testing.T, h http.Header, what string) {
	t.Helper()
	assert.Contains(t, listValues(h, "Vary"), "Origin", "%s: Vary: Origin (Vary %q)", what, h.Values("Vary"))
}

func corsRequest(method, origin string) *http.Request {
	r := httptest.NewRequest(method, "/api/v1/projects", nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	return r
}

func preflight(origin string) *http.Request {
	r := corsRequest(http.MethodOptions, origin)
	r.Header.Set("Access-Control-Request-Method", http.MethodPost)
	r.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	return r
}

func TestCORSAllowedOrigin(t *testing.T) {
	next := &okHandler{}
	h := middleware.CORS("https://other.example.com", appOrigin)(next)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, corsRequest(http.MethodGet, appOrigin))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.EqualValues(t, 1, next.calls.Load(), "a simple request reaches the handler")
	assert.Equal(t, []string{appOrigin}, rec.Header().Values("Access-Control-Allow-Origin"), "the origin itself, once")
	exposed := listValues(rec.Header(), "Access-Control-Expose-Headers")
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "ETag"} {
		assert.Contains(t, exposed, name, "exposed headers")
	}
	wantVaryOrigin(t, rec.Header(), "allowed origin")
}

func TestCORSDisallowedOrigin(t *testing.T) {
	h := middleware.CORS(appOrigin)
	for _, origin := range []string{
		"https://evil.example.com",
		"https://app.example.com.evil.com",
		"http://app.example.com",
		"https://app.example.com:8443",
		"https://xapp.example.com",
		"null",
	} {
		next := &okHandler{}
		rec := httptest.NewRecorder()
		h(next).ServeHTTP(rec, corsRequest(http.MethodGet, origin))
		assert.Equal(t, http.StatusOK, rec.Code, "%s: the request itself is served", origin)
		assert.Empty(t, corsHeaders(rec.Header()), "%s: no Access-Control-* headers", origin)
		wantVaryOrigin(t, rec.Header(), origin)

		rec = httptest.NewRecorder()
		h(next).ServeHTTP(rec, preflight(origin))
		assert.Empty(t, corsHeaders(rec.Header()), "%s: preflight gets no Access-Control-* headers", origin)
		wantVaryOrigin(t, rec.Header(), origin+" preflight")
	}
}

func TestCORSNoOriginsConfigured(t *testing.T) {
	rec := httptest.NewRecorder()
	middleware.CORS()(&okHandler{}).ServeHTTP(rec, corsRequest(http.MethodGet, appOrigin))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Empty(t, corsHeaders(rec.Header()))
	wantVaryOrigin(t, rec.Header(), "no origins configured")
}

func TestCORSSameOriginRequest(t *testing.T) {
	rec := httptest.NewRecorder()
	middleware.CORS(appOrigin)(&okHandler{}).ServeHTTP(rec, corsRequest(http.MethodGet, ""))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Empty(t, corsHeaders(rec.Header()), "no Origin, no Access-Control-* headers")
	wantVaryOrigin(t, rec.Header(), "no Origin")
}

func TestCORSAnyOrigin(t *testing.T) {
	h := middleware.CORS("*")(&okHandler{})
	for _, origin := range []string{"https://anything.example", "http://localhost:3000"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, corsRequest(http.MethodGet, origin))
		assert.Equal(t, origin, rec.Header().Get("Access-Control-Allow-Origin"), "* still echoes the origin")
		assert.Contains(t, listValues(rec.Header(), "Access-Control-Expose-Headers"), "X-RateLimit-Remaining")
		wantVaryOrigin(t, rec.Header(), origin)

		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, preflight(origin))
		assert.Equal(t, http.StatusNoContent, rec.Code, "%s preflight", origin)
		assert.Equal(t, origin, rec.Header().Get("Access-Control-Allow-Origin"), "%s preflight", origin)
	}
}

func TestCORSPreflight(t *testing.T) {
	next := &okHandler{}
	h := middleware.CORS(appOrigin)(next)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, preflight(appOrigin))
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.Zero(t, next.calls.Load(), "the preflight is answered before anything else runs")
	assert.Empty(t, rec.Body.String(), "204 has no body")
	hd := rec.Header()
	assert.Equal(t, []string{appOrigin}, hd.Values("Access-Control-Allow-Origin"))
	assert.Equal(t, []string{"GET, POST, PUT, DELETE, OPTIONS"}, hd.Values("Access-Control-Allow-Methods"))
	assert.Equal(t, []string{"Content-Type, Authorization, If-Match, If-None-Match, Last-Event-ID"}, hd.Values("Access-Control-Allow-Headers"))
	require.Len(t, hd.Values("Access-Control-Max-Age"), 1, "Access-Control-Max-Age")
	age, err := strconv.Atoi(hd.Get("Access-Control-Max-Age"))
	assert.NoError(t, err, "Max-Age is whole seconds")
	assert.Positive(t, age, "Max-Age")
	wantVaryOrigin(t, hd, "preflight")
}

func TestCORSOptionsWithoutRequestMethodIsNotAPreflight(t *testing.T) {
	next := &okHandler{}
	rec := httptest.NewRecorder()
	middleware.CORS(appOrigin)(next).ServeHTTP(rec, corsRequest(http.MethodOptions, appOrigin))
	assert.EqualValues(t, 1, next.calls.Load(), "a plain OPTIONS goes on to the router")
	assert.Equal(t, appOrigin, rec.Header().Get("Access-Control-Allow-Origin"))
	assert.Empty(t, rec.Header().Values("Access-Control-Allow-Methods"))
}

func TestCORSKeepsTheHandlersVary(t *testing.T) {
	h := middleware.CORS(appOrigin)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		w.WriteHeader(http.StatusOK)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, corsRequest(http.MethodGet, appOrigin))
	vary := listValues(rec.Header(), "Vary")
	assert.Contains(t, vary, "Origin")
	assert.Contains(t, vary, "Accept-Encoding")
}

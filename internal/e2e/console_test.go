package e2e_test

// The console's HTTP side (docs/api.md#the-console): where it is served,
// with which headers, under a mount prefix, and not at all without
// WithConsole. What it does in a browser is console_browser_test.go.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

const consoleCSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// mounted serves h under /hds, as docs/api.md#conventions's example
// mounts it.
func mounted(h http.Handler) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/hds/", http.StripPrefix("/hds", h))
	return httptest.NewServer(mux)
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func TestConsoleServedUnderPrefix(t *testing.T) {
	c := newServer(t, memoryKind, hds.WithConsole(true))
	srv := mounted(c.h)
	defer srv.Close()
	hc := &http.Client{CheckRedirect: noRedirect}

	res, err := hc.Get(srv.URL + "/hds/console")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMovedPermanently, res.StatusCode, "/console redirects")
	assert.Equal(t, "console/", res.Header.Get("Location"), "relative, so that the prefix stays")

	for _, tc := range []struct{ path, ctype, contains string }{
		{"/hds/console/", "text/html; charset=utf-8", `<script type="module" src="js/app.js">`},
		{"/hds/console/style.css", "text/css; charset=utf-8", ":root"},
		{"/hds/console/js/app.js", "text/javascript; charset=utf-8", "import"},
		{"/hds/console/js/api.js", "text/javascript; charset=utf-8", "sessionStorage"},
		{"/hds/console/favicon.svg", "image/svg+xml", "<svg"},
	} {
		res, err := hc.Get(srv.URL + tc.path)
		require.NoError(t, err, tc.path)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, tc.path)
		assert.Equal(t, tc.ctype, res.Header.Get("Content-Type"), tc.path)
		assert.Contains(t, string(body), tc.contains, tc.path)
		assert.Equal(t, consoleCSP, res.Header.Get("Content-Security-Policy"), tc.path)
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), tc.path)
		assert.Equal(t, "no-cache", res.Header.Get("Cache-Control"), tc.path)
		etag := res.Header.Get("ETag")
		require.Regexp(t, `^"[0-9a-f]{32}"$`, etag, tc.path)

		// Revalidation: the same tag is a 304 without a body.
		r, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		r.Header.Set("If-None-Match", etag)
		res, err = hc.Do(r)
		require.NoError(t, err, tc.path)
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusNotModified, res.StatusCode, tc.path)
		assert.Empty(t, body, tc.path)
	}

	// No inline script or style anywhere in the page (the CSP forbids
	// them, so they would not run anyway).
	res, err = hc.Get(srv.URL + "/hds/console/")
	require.NoError(t, err)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.NotContains(t, string(page), "<style")
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(string(page), -1) {
		assert.Contains(t, tag, " src=", "no inline script: %s", tag)
	}
	assert.NotContains(t, string(page), "style=")
	assert.NotContains(t, string(page), "http://", "no other origin")
	assert.NotContains(t, string(page), "https://", "no other origin")

	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/hds/console/missing.js", http.StatusNotFound},
		{http.MethodGet, "/hds/console/js/", http.StatusNotFound},
		{http.MethodPost, "/hds/console/", http.StatusMethodNotAllowed},
	} {
		r, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		res, err := hc.Do(r)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, tc.status, res.StatusCode, "%s %s", tc.method, tc.path)
		assert.Equal(t, consoleCSP, res.Header.Get("Content-Security-Policy"), "%s %s", tc.method, tc.path)
	}

	// The API beside it is unchanged.
	res, err = hc.Get(srv.URL + "/hds/api/v1/projects")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

func TestConsoleOffByDefault(t *testing.T) {
	c := newServer(t, memoryKind)
	for _, p := range []string{"/console", "/console/", "/console/js/app.js"} {
		status, _, env := c.do(http.MethodGet, p, "", "")
		assert.Equal(t, http.StatusNotFound, status, p)
		assert.Equal(t, "RESOURCE_NOT_FOUND", env.code(), p)
	}
}

// Every file the page loads is one the console serves: no other origin,
// no missing module. A static look at the imports, as a browser would
// follow them.
func TestConsoleModulesResolve(t *testing.T) {
	c := newServer(t, memoryKind, hds.WithConsole(true))
	get := func(p string) (int, string) {
		rec := httptest.NewRecorder()
		c.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		return rec.Code, rec.Body.String()
	}
	seen := map[string]bool{}
	var walk func(dir, file string)
	walk = func(dir, file string) {
		p := dir + file
		if seen[p] {
			return
		}
		seen[p] = true
		status, body := get(p)
		require.Equal(t, http.StatusOK, status, p)
		assert.NotContains(t, body, "://", "%s names no other origin", p)
		for _, line := range strings.Split(body, "\n") {
			_, from, ok := strings.Cut(line, " from '")
			if !ok || !strings.HasPrefix(strings.TrimSpace(line), "import") {
				continue
			}
			target := from[:strings.Index(from, "'")]
			d := dir + file[:strings.LastIndex(file, "/")+1]
			for strings.HasPrefix(target, "../") {
				target = target[3:]
				d = d[:strings.LastIndex(strings.TrimSuffix(d, "/"), "/")+1]
			}
			walk(d, strings.TrimPrefix(target, "./"))
		}
	}
	walk("/console/", "js/app.js")
	assert.Greater(t, len(seen), 8, "the modules the page loads: %v", seen)
}

package handler

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/openapi"
)

// TestOpenAPIConditional checks the conditional GET of the document, as
// http.ServeContent answers it: If-None-Match by weak comparison over a
// list of tags, HEAD without a body, and a query string that does not
// parse refused like everywhere under /api/v1/.
func TestOpenAPIConditional(t *testing.T) {
	h := New(Config{Version: "1.0.0"})
	serve := func(method, target, ifNoneMatch string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, nil)
		if ifNoneMatch != "" {
			r.Header.Set("If-None-Match", ifNoneMatch)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	full := serve(http.MethodGet, "/api/v1/openapi.json", "")
	require.Equal(t, http.StatusOK, full.Code)
	etag := full.Header().Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, strconv.Itoa(full.Body.Len()), full.Header().Get("Content-Length"))

	for _, tt := range []struct {
		name, match string
		status      int
	}{
		{"the tag", etag, http.StatusNotModified},
		{"any", "*", http.StatusNotModified},
		{"in a list", `"old", ` + etag, http.StatusNotModified},
		{"weak", "W/" + etag, http.StatusNotModified},
		{"another tag", `"0123"`, http.StatusOK},
		{"the tag's text unquoted inside another", `"x` + etag[1:], http.StatusOK},
	} {
		rec := serve(http.MethodGet, "/api/v1/openapi.json", tt.match)
		assert.Equal(t, tt.status, rec.Code, tt.name)
		assert.Equal(t, etag, rec.Header().Get("ETag"), tt.name)
		assert.Equal(t, openapi.CacheControl, rec.Header().Get("Cache-Control"), tt.name)
		if tt.status == http.StatusNotModified {
			assert.Zero(t, rec.Body.Len(), tt.name)
		} else {
			assert.Equal(t, full.Body.String(), rec.Body.String(), tt.name)
		}
	}

	head := serve(http.MethodHead, "/api/v1/openapi.json", "")
	assert.Equal(t, http.StatusOK, head.Code, "HEAD")
	assert.Zero(t, head.Body.Len(), "HEAD")
	assert.Equal(t, full.Header().Get("Content-Length"), head.Header().Get("Content-Length"), "HEAD")

	bad := serve(http.MethodGet, "/api/v1/openapi.json?x=%zz", "")
	assert.Equal(t, http.StatusBadRequest, bad.Code, "malformed query")
	assert.Contains(t, bad.Body.String(), `"code":"INVALID_REQUEST"`, "malformed query")
	assert.Contains(t, bad.Body.String(), `"message":"Invalid request"`, "malformed query")
}

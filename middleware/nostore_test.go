package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/middleware"
)

func TestNoStore(t *testing.T) {
	h := middleware.NoStore("/api/v1/")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/own" {
			w.Header().Set("Cache-Control", "no-cache")
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	for _, tt := range []struct{ path, want string }{
		{"/api/v1", "no-store"},
		{"/api/v1/", "no-store"},
		{"/api/v1/projects/p", "no-store"},
		{"/api/v1/own", "no-cache"},
		{"/health", ""},
		{"/api/v10", ""},
		{"/", ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		assert.Equal(t, tt.want, rec.Header().Get("Cache-Control"), tt.path)
		assert.Equal(t, http.StatusTeapot, rec.Code, tt.path)
	}
}

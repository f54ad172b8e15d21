package hds_test

// Options whose field left out is the safe choice (API.md section 11,
// v1.2: "a library that leaves a field out must fail safe").

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// TestSecurityFailsSafe checks that authentication stays on unless
// Security.AllowAnonymous says otherwise: a Security giving only a secret,
// or only a duration, keeps requiring a token; AllowAnonymous: true lets a
// request without one run as "anonymous".
func TestSecurityFailsSafe(t *testing.T) {
	for _, tc := range []struct {
		what string
		opts []hds.Option
		want int
	}{
		{"no WithSecurity", nil, http.StatusUnauthorized},
		{"only a secret", []hds.Option{hds.WithSecurity(hds.Security{JWTSecret: testSecret})}, http.StatusUnauthorized},
		{"only an expiration", []hds.Option{hds.WithSecurity(hds.Security{JWTExpiration: "2h"})}, http.StatusUnauthorized},
		{"the zero Security", []hds.Option{hds.WithSecurity(hds.Security{})}, http.StatusUnauthorized},
		{"AllowAnonymous", []hds.Option{hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: true})}, http.StatusOK},
	} {
		t.Run(tc.what, func(t *testing.T) {
			h := hds.New(append(tc.opts, hds.WithLogger(quietLogger))...)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/projects", nil))
			require.Equal(t, tc.want, rec.Code, "GET /api/v1/projects without a token: %s", rec.Body)
			if tc.want == http.StatusUnauthorized {
				var env envelope
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
				wantError(t, "no token", rec.Code, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
			}
		})
	}
}

package hds_test

// Options whose field left out is the safe choice
// (docs/api.md#13-the-go-library, v1.2: "a library that leaves a field out
// must fail safe").

import (
	"net/http"
	"testing"

	"github.com/hds-go/hds"
)

// TestSecurityFailsSafe checks that authentication stays on unless
// Security.AllowAnonymous says otherwise: a Security giving only a secret,
// or only a duration, keeps requiring a token; AllowAnonymous: true lets a
// request without one run as "anonymous".
func TestSecurityFailsSafe(t *testing.T) {
	const secret = "hds-test-secret-0123456789abcdef!!"
	for _, tc := range []struct {
		what string
		opts []hds.Option
		want int
	}{
		{"no WithSecurity", nil, http.StatusUnauthorized},
		{"only a secret", []hds.Option{hds.WithSecurity(hds.Security{JWTSecret: secret})}, http.StatusUnauthorized},
		{"only an expiration", []hds.Option{hds.WithSecurity(hds.Security{JWTExpiration: "2h"})}, http.StatusUnauthorized},
		{"the zero Security", []hds.Option{hds.WithSecurity(hds.Security{})}, http.StatusUnauthorized},
		{"AllowAnonymous", []hds.Option{hds.WithSecurity(hds.Security{JWTSecret: secret, AllowAnonymous: true})}, http.StatusOK},
	} {
		t.Run(tc.what, func(t *testing.T) {
			c := &client{t: t, h: hds.New(append(tc.opts, hds.WithLogger(quietLogger))...)}
			status, _, env := c.do("GET", "/api/v1/projects", "", "")
			if tc.want == http.StatusUnauthorized {
				wantError(t, "GET /api/v1/projects without a token", status, env, http.StatusUnauthorized,
					"AUTHENTICATION_FAILED", "No authorization token provided")
			} else if status != tc.want {
				t.Errorf("GET /api/v1/projects without a token: status %d, want %d", status, tc.want)
			}
		})
	}
}

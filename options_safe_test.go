package hds_test

// Options whose field left out is the safe choice
// (docs/api.md#the-go-library, v1.2: "a library that leaves a field out
// must fail safe").

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
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

// TestQuotasFieldLeftOutKeepsDefault checks that a store.Quotas setting
// one bound keeps the defaults of the others (a field left 0 is not "no
// bound"): with only MaxRecordsPerCluster set, the 1,001st project of a
// user is still 403 QUOTA_EXCEEDED; store.Unlimited lifts a bound; and a
// negative field other than store.Unlimited is refused.
func TestQuotasFieldLeftOutKeepsDefault(t *testing.T) {
	const secret = "hds-test-secret-0123456789abcdef!!"
	mem := memory.New()
	c := &client{t: t, h: hds.New(hds.WithStore(mem), hds.WithSecurity(hds.Security{JWTSecret: secret, AllowAnonymous: true}),
		hds.WithQuotas(store.Quotas{MaxRecordsPerCluster: 2}), hds.WithLogger(quietLogger))}
	assert.Equal(t, store.Quotas{MaxRecordsPerCluster: 2, MaxBytesPerProject: store.DefaultQuotas.MaxBytesPerProject,
		MaxProjectsPerUser: store.DefaultQuotas.MaxProjectsPerUser, MaxWebhooksPerProject: store.DefaultQuotas.MaxWebhooksPerProject,
		MaxSnapshotsPerProject: store.DefaultQuotas.MaxSnapshotsPerProject},
		mem.Quotas(), "the quotas in force")
	const tok = "" // requests run as the anonymous user
	for i := range store.DefaultQuotas.MaxProjectsPerUser {
		_, err := mem.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: store.AnonymousUserID}, Project: fmt.Sprint("p", i)})
		require.NoError(t, err)
	}
	status, _, env := c.do("POST", "/api/v1/projects/one-more", "", tok)
	wantError(t, "project 1001 with only MaxRecordsPerCluster set", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
	// The bound set is in force too.
	for _, target := range []string{"/api/v1/projects/p0/collections/c", "/api/v1/projects/p0/collections/c/clusters/k"} {
		status, _, env = c.do("POST", target, "", tok)
		require.Equal(t, http.StatusCreated, status, "POST %s: %+v", target, env.Error)
	}
	for i := range 3 {
		status, _, env = c.do("POST", "/api/v1/projects/p0/collections/c/clusters/k/records",
			fmt.Sprintf(`{"name":"r%d","type":"INTEGER","value":1}`, i), tok)
		if i < 2 {
			require.Equal(t, http.StatusCreated, status, "record %d: %+v", i, env.Error)
		} else {
			wantError(t, "a 3rd record past MaxRecordsPerCluster 2", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		}
	}

	// store.Unlimited lifts a bound: the 1,001st project is made.
	mem2 := memory.New()
	c2 := &client{t: t, h: hds.New(hds.WithStore(mem2), hds.WithSecurity(hds.Security{JWTSecret: secret, AllowAnonymous: true}),
		hds.WithQuotas(store.Quotas{MaxProjectsPerUser: store.Unlimited}), hds.WithLogger(quietLogger))}
	for i := range store.DefaultQuotas.MaxProjectsPerUser {
		_, err := mem2.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: store.AnonymousUserID}, Project: fmt.Sprint("p", i)})
		require.NoError(t, err)
	}
	status, _, env = c2.do("POST", "/api/v1/projects/one-more", "", tok)
	assert.Equal(t, http.StatusCreated, status, "project 1001 with MaxProjectsPerUser store.Unlimited: %+v", env.Error)
	assert.Equal(t, store.DefaultQuotas.MaxRecordsPerCluster, mem2.Quotas().MaxRecordsPerCluster, "a field left 0 beside Unlimited")

	// Other negatives are refused.
	_, err := hds.NewHandler(hds.WithQuotas(store.Quotas{MaxBytesPerProject: -2}))
	assert.ErrorContains(t, err, "WithQuotas: a quota must be more than 0, 0 (its default) or store.Unlimited")
}

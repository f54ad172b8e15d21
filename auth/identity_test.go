package auth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// TestIdentityInReqinfo: a request with reqinfo records its identity
// there, and every context of the request reads it.
func TestIdentityInReqinfo(t *testing.T) {
	info := &reqinfo.Info{}
	ctx := reqinfo.NewContext(context.Background(), info)
	assert.Nil(t, auth.IdentityFrom(ctx))
	assert.Nil(t, auth.UserFrom(ctx))
	u := &store.User{ID: "u1", Username: "ann"}
	claims := &auth.Claims{}
	require.True(t, auth.SetIdentity(ctx, &auth.Identity{User: u, Claims: claims}))
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	assert.Same(t, u, auth.UserFrom(inner))
	assert.Same(t, claims, auth.ClaimsFrom(inner))
	assert.Nil(t, auth.APITokenFrom(inner))
	assert.Nil(t, auth.SessionCheckFrom(inner))
}

// TestIdentityWithoutReqinfo: without reqinfo nothing is recorded, and
// the identity rides in the context instead.
func TestIdentityWithoutReqinfo(t *testing.T) {
	ctx := context.Background()
	tok := &store.APIToken{ID: "t1"}
	assert.False(t, auth.SetIdentity(ctx, &auth.Identity{APIToken: tok}))
	assert.Nil(t, auth.APITokenFrom(ctx), "SetIdentity without reqinfo records nothing")
	ctx = auth.WithIdentity(ctx, &auth.Identity{APIToken: tok})
	assert.Same(t, tok, auth.APITokenFrom(ctx))
	assert.Nil(t, auth.UserFrom(ctx))
	check := &store.SessionCheck{UserID: "u2"}
	ctx = auth.WithIdentity(context.Background(), &auth.Identity{SessionCheck: check})
	assert.Same(t, check, auth.SessionCheckFrom(ctx))
}

package auth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// TestIdentityInReqinfo: the identity authentication records in a
// request's reqinfo is read from every context of the request, and a
// context value set around it does not replace it.
func TestIdentityInReqinfo(t *testing.T) {
	info := &reqinfo.Info{}
	outer := auth.NewContext(context.Background(), &store.User{ID: "injected"})
	ctx := reqinfo.NewContext(outer, info)
	assert.Equal(t, "injected", auth.UserFrom(ctx).ID, "before authentication: the context's")
	u := &store.User{ID: "u1", Username: "ann"}
	claims := &auth.Claims{}
	info.Identity = &auth.Identity{User: u, Claims: claims}
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	assert.Same(t, u, auth.UserFrom(inner))
	assert.Same(t, claims, auth.ClaimsFrom(inner))
	assert.Nil(t, auth.APITokenFrom(inner))
	assert.Nil(t, auth.SessionCheckFrom(inner))
	assert.Same(t, u, auth.UserFrom(auth.NewContext(inner, &store.User{ID: "later"})),
		"the request's recorded identity wins over a context value")
}

// TestIdentityWithoutReqinfo: without reqinfo the identity rides in the
// context.
func TestIdentityWithoutReqinfo(t *testing.T) {
	ctx := context.Background()
	assert.Nil(t, auth.IdentityFrom(ctx))
	assert.Nil(t, auth.UserFrom(ctx))
	tok := &store.APIToken{ID: "t1"}
	ctx = auth.WithIdentity(ctx, &auth.Identity{APIToken: tok})
	assert.Same(t, tok, auth.APITokenFrom(ctx))
	assert.Nil(t, auth.UserFrom(ctx))
	check := &store.SessionCheck{UserID: "u2"}
	ctx = auth.WithIdentity(context.Background(), &auth.Identity{SessionCheck: check})
	assert.Same(t, check, auth.SessionCheckFrom(ctx))
	u := &store.User{ID: "u3"}
	assert.Same(t, u, auth.UserFrom(auth.NewContext(context.Background(), u)))
}

func TestCallerID(t *testing.T) {
	assert.Equal(t, "u1", (&auth.Identity{User: &store.User{ID: "u1"}, Claims: &auth.Claims{}}).CallerID())
	assert.Equal(t, "token:t1", (&auth.Identity{APIToken: &store.APIToken{ID: "t1"}}).CallerID())
	assert.Equal(t, "u2", (&auth.Identity{SessionCheck: &store.SessionCheck{UserID: "u2"}}).CallerID())
	assert.Equal(t, "", (&auth.Identity{}).CallerID())
}

package auth

import (
	"context"

	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// Identity is who authentication found a request to be, one of:
//   - a user proved by a token: User and Claims;
//   - a user whose token verified but whose session the store checks
//     later (store.SessionChecker): SessionCheck and Claims, User nil;
//   - an API token: APIToken alone;
//   - Anonymous, when authentication is not required: User alone.
type Identity struct {
	User         *store.User
	Claims       *Claims
	APIToken     *store.APIToken
	SessionCheck *store.SessionCheck
}

// CallerID is the id a request's log line names its caller by: the
// user's, the API token's (store.Caller.ID: "token:" and its id), or the
// user's of a deferred session check.
func (id *Identity) CallerID() string {
	switch {
	case id.User != nil:
		return id.User.ID
	case id.APIToken != nil:
		return store.Caller{TokenID: id.APIToken.ID}.ID()
	case id.SessionCheck != nil:
		return id.SessionCheck.UserID
	}
	return ""
}

type identityKey struct{}

// WithIdentity returns ctx carrying id. hds's authentication records a
// request's identity in the request's reqinfo instead (which costs no
// copy of the request) and uses this only for a request without one: a
// handler served outside hds's chain, or a host's test of its own
// handler (an AdminRoute's, say).
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// NewContext returns ctx whose request is the user u (without claims):
// WithIdentity of a user.
func NewContext(ctx context.Context, u *store.User) context.Context {
	return WithIdentity(ctx, &Identity{User: u})
}

// IdentityFrom returns the identity of ctx's request, nil before
// authentication. The identity authentication recorded in the request's
// reqinfo comes first: a context value set around hds's handler never
// replaces the caller the request's token proved.
func IdentityFrom(ctx context.Context) *Identity {
	if info, ok := reqinfo.Lookup(ctx); ok {
		if id, ok := info.Identity.(*Identity); ok {
			return id
		}
	}
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}

// noIdentity is the identity of a request authentication has not seen.
var noIdentity Identity

// identity is IdentityFrom, never nil.
func identity(ctx context.Context) *Identity {
	if id := IdentityFrom(ctx); id != nil {
		return id
	}
	return &noIdentity
}

// UserFrom returns the authenticated user of ctx's request, or nil (an
// API token, a deferred session check, no authentication).
func UserFrom(ctx context.Context) *store.User { return identity(ctx).User }

// ClaimsFrom returns the claims of the request's verified token, or nil
// for a request that sent none (Anonymous) or an API token.
func ClaimsFrom(ctx context.Context) *Claims { return identity(ctx).Claims }

// APITokenFrom returns the API token the request authenticated with, or
// nil for a user's request.
func APITokenFrom(ctx context.Context) *store.APIToken { return identity(ctx).APIToken }

// SessionCheckFrom returns the deferred session check of ctx's request,
// or nil.
func SessionCheckFrom(ctx context.Context) *store.SessionCheck { return identity(ctx).SessionCheck }

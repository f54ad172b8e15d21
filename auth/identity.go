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

type identityKey struct{}

// SetIdentity makes id the identity of the request ctx belongs to, in
// the request's reqinfo (which hds's RequestID middleware starts), and
// reports true; recorded there it costs no copy of the request. It
// reports false, recording nothing, when ctx has no reqinfo: then
// WithIdentity carries id.
func SetIdentity(ctx context.Context, id *Identity) bool {
	info, ok := reqinfo.Lookup(ctx)
	if ok {
		info.Identity = id
	}
	return ok
}

// WithIdentity returns ctx carrying id, for a request without reqinfo
// (SetIdentity).
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity of ctx's request: the one in its
// reqinfo, else the one ctx carries; nil before authentication.
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

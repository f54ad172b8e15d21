// Package auth issues and verifies the service's JSON Web Tokens (HS256
// only, with golang-jwt), hashes and checks passwords (bcrypt), and carries
// the authenticated user in a request's context.
//
// Its errors are sentinels; internal/envelope maps each to the 401 message
// of the API contract.
package auth

import (
	"context"
	"errors"

	"github.com/hds-go/hds/store"
)

// Errors returned by this package. Each maps to one 401 message of the API
// contract (docs/api.md#authentication).
var (
	// ErrNoToken: the request has no Authorization header.
	ErrNoToken = errors.New("no authorization token")
	// ErrInvalidToken: not a bearer JWT, a wrong issuer, a missing claim,
	// or a user that is unknown or not active.
	ErrInvalidToken = errors.New("invalid token")
	// ErrBadSignature: the signature does not verify, or the algorithm is
	// not HS256.
	ErrBadSignature = errors.New("invalid token signature")
	// ErrTokenExpired: the token has expired (or, on refresh, is past the
	// refresh window or the maximum session age).
	ErrTokenExpired = errors.New("token expired")
	// ErrBadCredentials: a login with an unknown user, a wrong password or
	// a disabled account; the three are indistinguishable on purpose.
	ErrBadCredentials = errors.New("bad credentials")
)

type userKey struct{}

// NewContext returns ctx carrying the authenticated user.
func NewContext(ctx context.Context, u *store.User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the authenticated user of ctx, or nil.
func UserFrom(ctx context.Context) *store.User {
	u, _ := ctx.Value(userKey{}).(*store.User)
	return u
}

// Anonymous is the built-in user that unauthenticated requests run as
// when authentication is not required.
var Anonymous = store.User{ID: store.AnonymousUserID, Username: store.AnonymousUserID, Active: true}

type claimsKey struct{}

// WithClaims returns ctx carrying the claims of the request's verified
// token.
func WithClaims(ctx context.Context, c *Claims) context.Context {
	return context.WithValue(ctx, claimsKey{}, c)
}

// ClaimsFrom returns the claims of the request's verified token, or nil
// for a request that sent none (auth.Anonymous).
func ClaimsFrom(ctx context.Context) *Claims {
	c, _ := ctx.Value(claimsKey{}).(*Claims)
	return c
}

type sessionCheckKey struct{}

// WithSessionCheck returns ctx carrying the session check authentication
// left to the store (store.SessionChecker) for a user whose token it
// verified. Such a context carries no user (UserFrom is nil) until the
// store has settled the check.
func WithSessionCheck(ctx context.Context, c *store.SessionCheck) context.Context {
	return context.WithValue(ctx, sessionCheckKey{}, c)
}

// SessionCheckFrom returns the deferred session check of ctx, or nil.
func SessionCheckFrom(ctx context.Context) *store.SessionCheck {
	c, _ := ctx.Value(sessionCheckKey{}).(*store.SessionCheck)
	return c
}

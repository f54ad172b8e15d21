// Package auth issues and verifies the service's JSON Web Tokens (HS256
// only, with golang-jwt), hashes and checks passwords (bcrypt), and carries
// who a request is (Identity: the user, an API token), recorded once per
// request.
//
// Its errors are sentinels; internal/envelope maps each to the 401 message
// of the API contract.
package auth

import (
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

// Anonymous is the built-in user that unauthenticated requests run as
// when authentication is not required.
var Anonymous = store.User{ID: store.AnonymousUserID, Username: store.AnonymousUserID, Active: true}

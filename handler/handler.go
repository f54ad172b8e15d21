// Package handler implements the routes of the hds HTTP API (API.md
// section 4) on a net/http ServeMux. routes.go lists every route on one
// screen; the other files hold one resource each. Handlers decode and
// validate the request, make one store call where they can, and encode
// the response through internal/envelope.
package handler

import (
	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// Config is what the handlers need. Every field is required.
type Config struct {
	Store  store.Store
	Users  store.UserDirectory
	Tokens *auth.Tokens
	// RequireAuth false lets requests without a token run as
	// auth.Anonymous.
	RequireAuth bool
	// Keyring seals credential values; nil when no credential key is
	// configured, and creating or updating CREDENTIAL records is refused.
	Keyring *sealing.Keyring
	// RateLimiter counts requests per user once the token is verified and
	// per client IP before that; nil means no rate limiting.
	RateLimiter *middleware.RateLimiter
	// LoginThrottle limits failed logins; nil means no throttling.
	LoginThrottle *middleware.LoginThrottle
	// ClientIP finds a request's client address.
	ClientIP middleware.ClientIP
	// MaxBodyBytes limits request bodies (413 beyond it).
	MaxBodyBytes int64
	// RequireIfMatch refuses PUT R, DELETE R and restore without If-Match
	// (428, concurrency.require_if_match).
	RequireIfMatch bool
	// MaxVersions is how many versions besides the current one each
	// record keeps (history.max_versions); 0 keeps none.
	MaxVersions int
	// Version is reported by /health.
	Version string
}

package middleware

import "github.com/hds-go/hds/internal/envelope"

// Errors of the rate limiter and the login throttle. Each is answered in
// the API's error envelope: ErrRateLimited as 429 RATE_LIMIT_EXCEEDED,
// ErrRateLimitUnavailable as 503 SERVICE_UNAVAILABLE (the cause is logged,
// never sent).
var (
	// ErrRateLimited reports a request or login over a limit.
	ErrRateLimited = envelope.ErrRateLimited
	// ErrRateLimitUnavailable reports a rate limit store that cannot be
	// reached. The error returned wraps the store's own error too.
	ErrRateLimitUnavailable = envelope.ErrRateLimitUnavailable
)

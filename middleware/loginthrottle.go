package middleware

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/ulule/limiter/v3"

	"github.com/hds-go/hds/store"
)

// LoginThrottle limits failed logins per username and per client IP in a
// fixed window. Once either has used up its failures, every further login
// for it is refused, even with the right password, until the window has
// passed; a successful login does not reset the count.
type LoginThrottle struct {
	perUser, perIP *limiter.Limiter
	now            func() time.Time
}

// NewLoginThrottle allows perUser failures per username and perIP per
// client IP in each window, counted in s.
func NewLoginThrottle(s limiter.Store, perUser, perIP int64, window time.Duration) *LoginThrottle {
	return &LoginThrottle{
		perUser: limiter.New(s, limiter.Rate{Period: window, Limit: perUser}),
		perIP:   limiter.New(s, limiter.Rate{Period: window, Limit: perIP}),
		now:     time.Now,
	}
}

// userKey bounds the key length whatever the username's.
func userKey(username string) string {
	sum := sha256.Sum256([]byte(username))
	return "login-user:" + hex.EncodeToString(sum[:16])
}

// Reserve counts a login attempt for username and ip before the password
// is checked, so that concurrent guesses cannot all slip in under the
// limit. It reports whether the attempt must be refused (a username or
// IP that already has its quota of failures in the window), and then the
// Retry-After value in seconds. A successful login gives its reservation
// back with Release; a failed one keeps it as a counted failure.
func (t *LoginThrottle) Reserve(ctx context.Context, username, ip string) (string, bool, error) {
	u, err := t.perUser.Increment(ctx, userKey(username), 1)
	if err != nil {
		return "", false, fmt.Errorf("login throttle store: %w: %v", store.ErrUnavailable, err)
	}
	i, err := t.perIP.Increment(ctx, ipKey(ip), 1)
	if err != nil {
		return "", false, fmt.Errorf("login throttle store: %w: %v", store.ErrUnavailable, err)
	}
	switch {
	case u.Reached && i.Reached:
		return retryAfter(max(u.Reset, i.Reset), t.now()), true, nil
	case u.Reached:
		return retryAfter(u.Reset, t.now()), true, nil
	case i.Reached:
		return retryAfter(i.Reset, t.now()), true, nil
	}
	return "", false, nil
}

// Release gives back the reservation of a successful login: a success is
// not a failure, though it does not reset the failures counted before.
func (t *LoginThrottle) Release(ctx context.Context, username, ip string) error {
	if _, err := t.perUser.Increment(ctx, userKey(username), -1); err != nil {
		return fmt.Errorf("login throttle store: %w: %v", store.ErrUnavailable, err)
	}
	if _, err := t.perIP.Increment(ctx, ipKey(ip), -1); err != nil {
		return fmt.Errorf("login throttle store: %w: %v", store.ErrUnavailable, err)
	}
	return nil
}

func ipKey(ip string) string { return "login-ip:" + ip }

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

// Blocked reports whether a login for username from ip must be refused,
// and if so the Retry-After value in seconds.
func (t *LoginThrottle) Blocked(ctx context.Context, username, ip string) (string, bool, error) {
	for _, check := range []struct {
		l   *limiter.Limiter
		key string
	}{{t.perUser, userKey(username)}, {t.perIP, "login-ip:" + ip}} {
		c, err := check.l.Peek(ctx, check.key)
		if err != nil {
			return "", false, fmt.Errorf("login throttle store: %w: %v", store.ErrUnavailable, err)
		}
		if c.Remaining <= 0 {
			return retryAfter(c.Reset, t.now()), true, nil
		}
	}
	return "", false, nil
}

// Failed counts a failed login for username and ip.
func (t *LoginThrottle) Failed(ctx context.Context, username, ip string) error {
	if _, err := t.perUser.Increment(ctx, userKey(username), 1); err != nil {
		return fmt.Errorf("login throttle store: %w: %v", store.ErrUnavailable, err)
	}
	if _, err := t.perIP.Increment(ctx, "login-ip:"+ip, 1); err != nil {
		return fmt.Errorf("login throttle store: %w: %v", store.ErrUnavailable, err)
	}
	return nil
}

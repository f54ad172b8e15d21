package middleware

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/ulule/limiter/v3"

	"github.com/hds-go/hds/auth"
)

// LoginThrottle limits failed logins per username and per client IP in a
// fixed window. Once either has used up its failures, every further login
// for it is refused, even with the right password, until the window has
// passed; a successful login does not reset the count.
//
// Attempts for one username are serialised within the process (striped
// locks), so that concurrent guesses cannot all pass the check before the
// first failure is counted, while concurrent correct logins are never
// refused for one another.
type LoginThrottle struct {
	perUser, perIP *limiter.Limiter
	now            func() time.Time
	stripes        [64]sync.Mutex
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

func ipKey(ip string) string { return "login-ip:" + ip }

// Attempt runs check, the password comparison, for a login by username
// from ip, unless either has had its quota of failures in the window: then
// it returns ErrRateLimited and the Retry-After value in seconds,
// without running check. A failed check is counted and returns
// auth.ErrBadCredentials; a passed one returns nil. Store failures match
// ErrRateLimitUnavailable.
func (t *LoginThrottle) Attempt(ctx context.Context, username, ip string, check func() bool) (string, error) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(username))
	mu := &t.stripes[h.Sum32()%uint32(len(t.stripes))]
	mu.Lock()
	defer mu.Unlock()

	for _, w := range []struct {
		l   *limiter.Limiter
		key string
	}{{t.perUser, userKey(username)}, {t.perIP, ipKey(ip)}} {
		c, err := w.l.Peek(ctx, w.key)
		if err != nil {
			return "", fmt.Errorf("login throttle store: %w: %w", ErrRateLimitUnavailable, err)
		}
		if c.Remaining <= 0 {
			return retryAfter(c.Reset, t.now()), ErrRateLimited
		}
	}
	if check() {
		return "", nil
	}
	if _, err := t.perUser.Increment(ctx, userKey(username), 1); err != nil {
		return "", fmt.Errorf("login throttle store: %w: %w", ErrRateLimitUnavailable, err)
	}
	if _, err := t.perIP.Increment(ctx, ipKey(ip), 1); err != nil {
		return "", fmt.Errorf("login throttle store: %w: %w", ErrRateLimitUnavailable, err)
	}
	return "", auth.ErrBadCredentials
}

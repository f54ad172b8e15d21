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
// Within the process, at most as many attempts for one username run their
// password check at once as the username has failures left, so that
// concurrent guesses cannot all pass the check before the first failure is
// counted; further attempts wait for one of those to finish, or for their
// request to end, whichever comes first. Only the
// look-up of the count and the counting of a failure are serialised per
// username: correct logins check their passwords in parallel and are never
// refused for one another.
type LoginThrottle struct {
	perUser, perIP *limiter.Limiter
	now            func() time.Time
	stripes        [64]stripe
}

// stripe serialises the counting for the usernames that hash to it, and
// holds how many of their attempts are checking a password.
type stripe struct {
	mu sync.Mutex
	// done, while attempts wait, is closed when an attempt of this stripe
	// finishes; nil when none waits.
	done     chan struct{}
	checking map[string]int64
}

// NewLoginThrottle allows perUser failures per username and perIP per
// client IP in each window, counted in s.
func NewLoginThrottle(s limiter.Store, perUser, perIP int64, window time.Duration) *LoginThrottle {
	t := &LoginThrottle{
		perUser: limiter.New(s, limiter.Rate{Period: window, Limit: perUser}),
		perIP:   limiter.New(s, limiter.Rate{Period: window, Limit: perIP}),
		now:     time.Now,
	}
	for i := range t.stripes {
		t.stripes[i].checking = make(map[string]int64)
	}
	return t
}

// userKey bounds the key length whatever the username's.
func userKey(username string) string {
	sum := sha256.Sum256([]byte(username))
	return "login-user:" + hex.EncodeToString(sum[:16])
}

func ipKey(ip string) string { return "login-ip:" + ip }

// Attempt runs check, the password comparison, for a login by username
// from ip, unless either has had its quota of failures in the window: then
// it returns ErrRateLimited and the Retry-After value in seconds, without
// running check. A failed check is counted and returns
// auth.ErrBadCredentials; a passed one returns nil. Store failures match
// ErrRateLimitUnavailable. An attempt still waiting for its turn when ctx
// ends returns ctx's error, without running check or counting anything.
func (t *LoginThrottle) Attempt(ctx context.Context, username, ip string, check func() bool) (string, error) {
	uk := userKey(username)
	h := fnv.New32a()
	_, _ = h.Write([]byte(uk))
	st := &t.stripes[h.Sum32()%uint32(len(t.stripes))]

	st.mu.Lock()
	for {
		left := int64(0)
		for i, w := range []struct {
			l   *limiter.Limiter
			key string
		}{{t.perUser, uk}, {t.perIP, ipKey(ip)}} {
			c, err := w.l.Peek(ctx, w.key)
			if err != nil {
				st.mu.Unlock()
				return "", fmt.Errorf("login throttle store: %w: %w", ErrRateLimitUnavailable, err)
			}
			if c.Remaining <= 0 {
				st.mu.Unlock()
				return retryAfter(c.Reset, t.now()), ErrRateLimited
			}
			if i == 0 {
				left = c.Remaining
			}
		}
		if st.checking[uk] < left {
			break // every attempt checking now may fail and still be within the quota
		}
		if err := st.wait(ctx); err != nil {
			st.mu.Unlock()
			return "", fmt.Errorf("login throttle: waiting for a password check: %w", err)
		}
	}
	st.checking[uk]++
	st.mu.Unlock()

	checked := false
	defer func() {
		if !checked { // check panicked: let the others go on
			st.mu.Lock()
			st.finish(uk)
			st.mu.Unlock()
		}
	}()
	ok := check() // in parallel with the other attempts for username
	checked = true

	st.mu.Lock()
	defer st.mu.Unlock()
	defer st.finish(uk) // after the failure is counted
	if ok {
		return "", nil
	}
	if _, err := t.perUser.Increment(ctx, uk, 1); err != nil {
		return "", fmt.Errorf("login throttle store: %w: %w", ErrRateLimitUnavailable, err)
	}
	if _, err := t.perIP.Increment(ctx, ipKey(ip), 1); err != nil {
		return "", fmt.Errorf("login throttle store: %w: %w", ErrRateLimitUnavailable, err)
	}
	return "", auth.ErrBadCredentials
}

// wait releases st.mu until an attempt of the stripe finishes or ctx
// ends (its error is returned), and holds st.mu again when it returns.
// The caller holds st.mu.
func (st *stripe) wait(ctx context.Context) error {
	if st.done == nil {
		st.done = make(chan struct{})
	}
	done := st.done
	st.mu.Unlock()
	defer st.mu.Lock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish ends an attempt's password check and wakes the attempts waiting
// for one. The caller holds st.mu.
func (st *stripe) finish(key string) {
	if st.checking[key]--; st.checking[key] <= 0 {
		delete(st.checking, key)
	}
	if st.done != nil {
		close(st.done)
		st.done = nil
	}
}

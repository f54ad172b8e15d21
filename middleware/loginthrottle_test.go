package middleware_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// attempt makes one login attempt whose password check gives ok, and
// checks whether it was refused and, when it was, that Retry-After is
// whole seconds within 1..maxRetry.
func attempt(t *testing.T, lt *middleware.LoginThrottle, username, ip string, ok, wantBlocked bool, maxRetry int64) {
	t.Helper()
	checked := false
	retry, err := lt.Attempt(context.Background(), username, ip, func() bool { checked = true; return ok })
	blocked := errors.Is(err, middleware.ErrRateLimited)
	if !assert.Equal(t, wantBlocked, blocked, "Attempt(%q, %q) refused (error %v)", username, ip, err) {
		return
	}
	if blocked {
		assert.False(t, checked, "a refused attempt does not check the password")
		n, perr := strconv.ParseInt(retry, 10, 64)
		require.NoError(t, perr, "Retry-After %q", retry)
		assert.True(t, n >= 1 && n <= maxRetry, "Retry-After %d within 1..%d", n, maxRetry)
		return
	}
	assert.True(t, checked, "an attempt let through checks the password")
	if ok {
		assert.NoError(t, err, "a passed check")
	} else {
		assert.ErrorIs(t, err, auth.ErrBadCredentials, "a failed check")
	}
}

// fail is a failed login that was let through.
func fail(t *testing.T, lt *middleware.LoginThrottle, username, ip string) {
	t.Helper()
	attempt(t, lt, username, ip, false, false, 0)
}

func TestLoginThrottlePerUser(t *testing.T) {
	lt := middleware.NewLoginThrottle(newMemStore(), 3, 100, time.Minute)
	fail(t, lt, "alice", "198.51.100.1")
	fail(t, lt, "alice", "198.51.100.2")
	fail(t, lt, "alice", "198.51.100.3")

	attempt(t, lt, "alice", "198.51.100.1", true, true, 60)  // even the right password
	attempt(t, lt, "alice", "203.0.113.50", true, true, 60)  // the username is blocked from any IP
	attempt(t, lt, "bob", "198.51.100.1", true, false, 60)   // another user from the same IP is not
	attempt(t, lt, "Alice", "198.51.100.1", true, false, 60) // usernames are case-sensitive
}

func TestLoginThrottlePerIP(t *testing.T) {
	lt := middleware.NewLoginThrottle(newMemStore(), 100, 3, time.Minute)
	for _, u := range []string{"u1", "u2", "u3"} {
		fail(t, lt, u, "198.51.100.1")
	}
	attempt(t, lt, "alice", "198.51.100.1", true, true, 60)
	attempt(t, lt, "alice", "198.51.100.2", true, false, 60) // the same user from another IP
}

func TestLoginThrottleSuccessesDoNotCount(t *testing.T) {
	lt := middleware.NewLoginThrottle(newMemStore(), 2, 2, time.Minute)
	for range 10 {
		attempt(t, lt, "alice", "198.51.100.1", true, false, 60)
	}
	fail(t, lt, "alice", "198.51.100.1")
	attempt(t, lt, "alice", "198.51.100.1", true, false, 60) // one failure so far: not blocked
	fail(t, lt, "alice", "198.51.100.1")
	attempt(t, lt, "alice", "198.51.100.1", true, true, 60) // two: blocked, and success did not reset
}

// concurrently runs n attempts at once with the given check result and
// returns how many had their password checked and how many were refused.
func concurrently(lt *middleware.LoginThrottle, n int, ok bool) (checked, refused int32) {
	var wg sync.WaitGroup
	var c, r atomic.Int32
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := lt.Attempt(context.Background(), "alice", "198.51.100.1", func() bool {
				c.Add(1)
				time.Sleep(time.Millisecond) // as bcrypt would
				return ok
			})
			if errors.Is(err, middleware.ErrRateLimited) {
				r.Add(1)
			}
		}()
	}
	wg.Wait()
	return c.Load(), r.Load()
}

func TestLoginThrottleConcurrentGuesses(t *testing.T) {
	lt := middleware.NewLoginThrottle(newMemStore(), 3, 100, time.Minute)
	checked, refused := concurrently(lt, 12, false)
	assert.Equal(t, int32(3), checked, "exactly the quota of concurrent guesses reaches the password check")
	assert.Equal(t, int32(9), refused, "the rest are refused")
}

func TestLoginThrottleConcurrentCorrectLogins(t *testing.T) {
	lt := middleware.NewLoginThrottle(newMemStore(), 3, 3, time.Minute)
	checked, refused := concurrently(lt, 15, true)
	assert.Equal(t, int32(15), checked, "every correct login is checked")
	assert.Zero(t, refused, "correct logins are never refused without failures")
}

func TestLoginThrottleWindowPasses(t *testing.T) {
	const window = 300 * time.Millisecond
	clock := newClockStore()
	lt := middleware.NewLoginThrottle(clock, 2, 100, window)
	fail(t, lt, "alice", "198.51.100.1")
	fail(t, lt, "alice", "198.51.100.1")
	attempt(t, lt, "alice", "198.51.100.1", true, true, 1)
	clock.advance(window + 50*time.Millisecond)
	fail(t, lt, "alice", "198.51.100.1")                    // a fresh window: one failure so far
	attempt(t, lt, "alice", "198.51.100.1", true, false, 1) // not blocked
}

func TestLoginThrottleStoreFailure(t *testing.T) {
	ctx := context.Background()
	lt := middleware.NewLoginThrottle(&failingStore{ok: newMemStore()}, 3, 100, time.Minute)
	_, err := lt.Attempt(ctx, "alice", "198.51.100.1", func() bool { return true })
	assert.ErrorIs(t, err, middleware.ErrRateLimitUnavailable, "Attempt when the store fails")
	assert.NotErrorIs(t, err, store.ErrUnavailable, "a limiter failure is not the data store's")
	assert.ErrorIs(t, err, errStoreDown, "the store's own error is kept for the log")

	// The store fails after the checks, when counting the failure.
	lt = middleware.NewLoginThrottle(&failingStore{ok: newMemStore(), failAfter: 2}, 3, 100, time.Minute)
	_, err = lt.Attempt(ctx, "alice", "198.51.100.1", func() bool { return false })
	assert.ErrorIs(t, err, middleware.ErrRateLimitUnavailable, "Attempt when counting the failure fails")
}

func TestLoginThrottleKeysAreBounded(t *testing.T) {
	// A username of any length makes a key of bounded length.
	rs := newRecordingStore()
	lt := middleware.NewLoginThrottle(rs, 3, 100, time.Minute)
	long := strings.Repeat("a", 1<<20)
	fail(t, lt, long, "198.51.100.1")
	fail(t, lt, long+"b", "198.51.100.1")
	keys := rs.recorded()
	assert.Len(t, keys, 3, "two usernames and one IP: %d keys", len(keys))
	for k := range keys {
		assert.LessOrEqual(t, len(k), 128, "key length")
	}
}

// parallelChecks runs n correct logins of one user at once, each holding
// its password check until want checks are running together (or, should
// they be serialised, until a generous safety timeout), and returns the
// most that ran together.
func parallelChecks(lt *middleware.LoginThrottle, n int, want int32) (most int32, errs []error) {
	var inside, peak atomic.Int32
	together := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range n {
		wg.Go(func() {
			_, err := lt.Attempt(context.Background(), "alice", "198.51.100.1", func() bool {
				now := inside.Add(1)
				defer inside.Add(-1)
				for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
				}
				if now >= want {
					once.Do(func() { close(together) })
				}
				select {
				case <-together:
				case <-time.After(10 * time.Second): // serialised: never together
				}
				return true
			})
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return peak.Load(), errs
}

func TestLoginThrottleCorrectLoginsCheckInParallel(t *testing.T) {
	// Finding 10 of issue 10: concurrent logins of one user must not wait
	// for one another's bcrypt; only the failure count is serialised.
	lt := middleware.NewLoginThrottle(newMemStore(), 4, 100, time.Minute)
	most, errs := parallelChecks(lt, 8, 4)
	assert.Empty(t, errs, "every correct login succeeds")
	assert.EqualValues(t, 4, most, "as many password checks at once as the user has failures left")
}

func TestLoginThrottleGuessesBoundedWhileLoginsInFlight(t *testing.T) {
	// Guesses and correct logins mixed: never more checks that may fail than
	// failures left, so at most the quota of guesses is checked.
	lt := middleware.NewLoginThrottle(newMemStore(), 3, 100, time.Minute)
	var wg sync.WaitGroup
	var guessed, refused atomic.Int32
	for i := range 20 {
		wg.Go(func() {
			ok := i%2 == 0
			_, err := lt.Attempt(context.Background(), "alice", "198.51.100.1", func() bool {
				if !ok {
					guessed.Add(1)
				}
				time.Sleep(time.Millisecond) // as bcrypt would
				return ok
			})
			if errors.Is(err, middleware.ErrRateLimited) {
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, guessed.Load(), int32(3), "at most the quota of wrong passwords is checked")
	assert.Positive(t, refused.Load(), "once the quota is used up, the rest are refused")
}

func TestLoginThrottleCheckPanics(t *testing.T) {
	lt := middleware.NewLoginThrottle(newMemStore(), 1, 100, time.Minute)
	assert.Panics(t, func() {
		_, _ = lt.Attempt(context.Background(), "alice", "198.51.100.1", func() bool { panic("bcrypt") })
	})
	// The panicked attempt no longer holds the user's only check slot.
	attempt(t, lt, "alice", "198.51.100.1", true, false, 60)
}

func TestLoginThrottleWaitEndsWithTheRequest(t *testing.T) {
	// One failure left: one password check at a time, the next attempt waits.
	lt := middleware.NewLoginThrottle(newMemStore(), 1, 100, time.Minute)
	checking, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := lt.Attempt(context.Background(), "alice", "198.51.100.1", func() bool {
			close(checking)
			<-release
			return true
		})
		first <- err
	}()
	<-checking

	ctx, cancel := context.WithCancel(context.Background())
	var checked atomic.Bool
	second := make(chan error, 1)
	go func() {
		_, err := lt.Attempt(ctx, "alice", "198.51.100.2", func() bool { checked.Store(true); return false })
		second <- err
	}()
	select {
	case err := <-second:
		require.FailNow(t, "the second attempt did not wait for the first's check", "error %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel() // the client goes away
	var err error
	select {
	case err = <-second:
	case <-time.After(5 * time.Second):
		assert.Fail(t, "the waiting attempt goes on after its request ended")
		close(release)
		require.FailNow(t, "it ended only once the slot was free", "error %v", <-second)
	}
	assert.ErrorIs(t, err, context.Canceled, "a waiting attempt whose request ends returns its context's error")
	assert.NotErrorIs(t, err, middleware.ErrRateLimited, "not a refusal")
	assert.False(t, checked.Load(), "the abandoned attempt checks no password")
	close(release)
	assert.NoError(t, <-first, "the first attempt passes")

	// It counted nothing: the one failure allowed is still there.
	fail(t, lt, "alice", "198.51.100.3")
	attempt(t, lt, "alice", "198.51.100.3", true, true, 60)
}

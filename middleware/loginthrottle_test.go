package middleware_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// attempt reserves a login attempt and checks whether it was refused
// and, when it was, that Retry-After is whole seconds within 1..maxRetry.
// An attempt let through that succeeds gives its reservation back.
func attempt(t *testing.T, lt *middleware.LoginThrottle, username, ip string, succeed, wantBlocked bool, maxRetry int64) {
	t.Helper()
	ctx := context.Background()
	retry, blocked, err := lt.Reserve(ctx, username, ip)
	require.NoError(t, err)
	if !assert.Equal(t, wantBlocked, blocked, "Reserve(%q, %q) blocked", username, ip) {
		return
	}
	if !blocked {
		if succeed {
			require.NoError(t, lt.Release(ctx, username, ip))
		}
		return
	}
	n, err := strconv.ParseInt(retry, 10, 64)
	require.NoError(t, err, "Retry-After %q", retry)
	assert.True(t, n >= 1 && n <= maxRetry, "Retry-After %d within 1..%d", n, maxRetry)
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

func TestLoginThrottleConcurrentAttempts(t *testing.T) {
	lt := middleware.NewLoginThrottle(newMemStore(), 3, 100, time.Minute)
	var wg sync.WaitGroup
	var through atomic.Int32
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, blocked, err := lt.Reserve(context.Background(), "alice", "198.51.100.1")
			assert.NoError(t, err)
			if !blocked {
				through.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(3), through.Load(), "exactly the quota of concurrent guesses reaches the password check")
}

func TestLoginThrottleWindowPasses(t *testing.T) {
	const window = 300 * time.Millisecond
	lt := middleware.NewLoginThrottle(newMemStore(), 2, 100, window)
	fail(t, lt, "alice", "198.51.100.1")
	fail(t, lt, "alice", "198.51.100.1")
	attempt(t, lt, "alice", "198.51.100.1", true, true, 1)
	time.Sleep(window + 50*time.Millisecond)
	fail(t, lt, "alice", "198.51.100.1")                    // a fresh window: one failure so far
	attempt(t, lt, "alice", "198.51.100.1", true, false, 1) // not blocked
}

func TestLoginThrottleStoreFailure(t *testing.T) {
	ctx := context.Background()
	lt := middleware.NewLoginThrottle(&failingStore{ok: newMemStore()}, 3, 100, time.Minute)
	_, blocked, err := lt.Reserve(ctx, "alice", "198.51.100.1")
	assert.ErrorIs(t, err, store.ErrUnavailable, "Reserve")
	assert.False(t, blocked)
	assert.ErrorIs(t, lt.Release(ctx, "alice", "198.51.100.1"), store.ErrUnavailable, "Release")

	// The store fails after the username's count, before the IP's.
	lt = middleware.NewLoginThrottle(&failingStore{ok: newMemStore(), failAfter: 1}, 3, 100, time.Minute)
	_, _, err = lt.Reserve(ctx, "alice", "198.51.100.1")
	assert.ErrorIs(t, err, store.ErrUnavailable, "Reserve, second counter")
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

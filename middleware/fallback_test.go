package middleware_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulule/limiter/v3"

	"github.com/hds-go/hds/middleware"
)

// switchStore is a limiter.Store that can be taken down (every call
// fails) or made to hang (every call blocks, ignoring its context, until
// released), like a Redis that has gone away or stopped answering.
type switchStore struct {
	limiter.Store
	down    atomic.Bool
	hang    atomic.Bool
	release chan struct{}
	calls   atomic.Int64
}

func newSwitchStore() *switchStore {
	return &switchStore{Store: newMemStore(), release: make(chan struct{})}
}

func (s *switchStore) before() error {
	s.calls.Add(1)
	if s.hang.Load() {
		<-s.release
	}
	if s.down.Load() {
		return errStoreDown
	}
	return nil
}

func (s *switchStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if err := s.before(); err != nil {
		return limiter.Context{}, err
	}
	return s.Store.Get(ctx, key, rate)
}

func (s *switchStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if err := s.before(); err != nil {
		return limiter.Context{}, err
	}
	return s.Store.Peek(ctx, key, rate)
}

func (s *switchStore) Increment(ctx context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	if err := s.before(); err != nil {
		return limiter.Context{}, err
	}
	return s.Store.Increment(ctx, key, n, rate)
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) lines(substr string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.b.String(), substr)
}

func TestFallbackStoreCountsLocallyWhileDown(t *testing.T) {
	ss := newSwitchStore()
	var log syncBuffer
	// A long timeout: a busy test machine must not look like an outage.
	fs := middleware.NewFallbackStore(ss, 5*time.Second, slog.New(slog.NewTextHandler(&log, nil)))
	rl := middleware.NewRateLimiter(fs, limiter.Rate{Period: time.Minute, Limit: 3})
	ctx := context.Background()

	c, err := rl.Count(ctx, "alice")
	require.NoError(t, err)
	assert.EqualValues(t, 2, c.Remaining, "counted in the shared store")
	assert.True(t, fs.Shared(ctx), "the shared store answers")

	ss.down.Store(true)
	for i, want := range []int64{2, 1, 0} {
		c, err := rl.Count(ctx, "alice")
		require.NoError(t, err, "request %d while the shared store is down", i+1)
		assert.EqualValues(t, want, c.Remaining, "request %d: counted in this process, from a fresh budget", i+1)
		assert.False(t, c.Reached, "request %d", i+1)
	}
	c, err = rl.Count(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, c.Reached, "the same limits hold while the shared store is down")
	assert.False(t, fs.Shared(ctx), "reported unavailable")
	assert.Equal(t, 1, log.lines("level=WARN"), "the outage is logged once: %s", log.b.String())
	assert.Equal(t, 0, strings.Count(log.b.String(), "alice"), "keys are not logged")

	calls := ss.calls.Load()
	for range 50 {
		_, err := rl.Count(ctx, "bob")
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, ss.calls.Load()-calls, int64(2), "while down, requests do not go to the shared store; probes at most once a second")

	ss.down.Store(false)
	require.Eventually(t, func() bool { return fs.Shared(ctx) }, 10*time.Second, 20*time.Millisecond,
		"back to the shared store once it answers")
	c, err = rl.Count(ctx, "alice")
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.Remaining, "counted in the shared store again, where alice had one request")
	assert.Equal(t, 1, log.lines("level=INFO"), "the return is logged: %s", log.b.String())
}

func TestFallbackStoreHangingStoreDoesNotHoldRequests(t *testing.T) {
	ss := newSwitchStore()
	defer close(ss.release)
	fs := middleware.NewFallbackStore(ss, 20*time.Millisecond, slog.New(slog.DiscardHandler))
	rl := middleware.NewRateLimiter(fs, limiter.Rate{Period: time.Minute, Limit: 2}, limiter.Rate{Period: time.Hour, Limit: 10})
	ls := middleware.NewLoginThrottle(fs, 3, 100, time.Minute)
	ctx := context.Background()

	// The store blocks and ignores its context; every call still returns.
	ss.hang.Store(true)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := rl.Count(ctx, "carol")
			assert.NoError(t, err, "Count while the shared store hangs")
		})
	}
	wg.Wait()
	c, err := rl.Count(ctx, "dave")
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.Remaining, "counted in this process")
	_, err = ls.Attempt(ctx, "dave", "198.51.100.1", func() bool { return true })
	assert.NoError(t, err, "logins go on while the shared store hangs")
	assert.False(t, fs.Shared(ctx), "reported unavailable")
}

func TestFallbackStoreCallerGivesUp(t *testing.T) {
	ss := newSwitchStore()
	fs := middleware.NewFallbackStore(ss, 5*time.Second, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fs.Get(ctx, "k", limiter.Rate{Period: time.Minute, Limit: 1})
	assert.ErrorIs(t, err, context.Canceled, "a request that went away gets its context's error")
	assert.True(t, fs.Shared(context.Background()), "a caller giving up does not mark the store down")
}

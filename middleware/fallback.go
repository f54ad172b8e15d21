package middleware

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ulule/limiter/v3"
	limitmemory "github.com/ulule/limiter/v3/drivers/store/memory"
)

// Defaults of FallbackStore.
const (
	// DefaultFallbackTimeout bounds each call to the shared store: a
	// request is never slowed by more than this (twice at worst, for two
	// windows) because the shared store is down or hangs.
	DefaultFallbackTimeout = 45 * time.Millisecond
	// fallbackProbeInterval is how often, at most, a store found down is
	// tried again.
	fallbackProbeInterval = time.Second
	// fallbackProbeTimeout bounds a probe of the store found down.
	fallbackProbeTimeout = 2 * time.Second
	// fallbackLogInterval is how often, at most, an outage is logged.
	fallbackLogInterval = 30 * time.Second
	// probeKey is the key a probe peeks at; it is never written.
	probeKey = "hds-probe"
)

// FallbackStore is a limiter.Store that keeps its counters in a shared
// store (ulule/limiter's Redis store, say) and, while that store cannot be
// reached, in counters of its own in this process, with the same limits
// (docs/api.md#limits-rate-limits-and-quotas). Each call to the shared
// store is bounded by a timeout; the first that fails or times out switches
// to the local counters, and from then on the shared store is probed in the
// background at most once a second, switching back once it answers. Outages
// are logged at most once every 30 seconds.
//
// Local counters start empty, so during an outage each instance allows a
// full budget of its own.
type FallbackStore struct {
	shared, local limiter.Store
	timeout       time.Duration
	logger        *slog.Logger

	down      atomic.Bool
	probing   atomic.Bool
	lastProbe atomic.Int64                      // Unix nanoseconds
	observer  atomic.Pointer[func(shared bool)] // Observe's

	mu        sync.Mutex // guards the log state below
	lastLog   time.Time
	loggedOut bool // the current outage was logged
	unlogged  int  // outages since the last line
}

// NewFallbackStore wraps shared. timeout bounds each call to it
// (DefaultFallbackTimeout when 0 or less); outages are logged to logger
// (slog.Default() when nil).
func NewFallbackStore(shared limiter.Store, timeout time.Duration, logger *slog.Logger) *FallbackStore {
	if timeout <= 0 {
		timeout = DefaultFallbackTimeout
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &FallbackStore{
		shared:  shared,
		local:   limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "hds-local", CleanUpInterval: time.Minute}),
		timeout: timeout,
		logger:  logger,
	}
}

// Observe makes fn told where the counters are: at once, then at each
// switch, true when they go back to the shared store and false when they
// go to this process's (hds.Observer.RateLimitShared). fn must not block:
// it runs on the goroutine that noticed the switch. A later call
// replaces fn; nil stops telling.
func (f *FallbackStore) Observe(fn func(shared bool)) {
	if fn == nil {
		f.observer.Store(nil)
		return
	}
	f.observer.Store(&fn)
	fn(!f.down.Load())
}

// tell tells Observe's function of a switch.
func (f *FallbackStore) tell(shared bool) {
	if fn := f.observer.Load(); fn != nil {
		(*fn)(shared)
	}
}

// op is one call of the limiter.Store interface.
type op func(ctx context.Context, s limiter.Store) (limiter.Context, error)

// Get implements limiter.Store.
func (f *FallbackStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return f.do(ctx, func(ctx context.Context, s limiter.Store) (limiter.Context, error) { return s.Get(ctx, key, rate) })
}

// Peek implements limiter.Store.
func (f *FallbackStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return f.do(ctx, func(ctx context.Context, s limiter.Store) (limiter.Context, error) { return s.Peek(ctx, key, rate) })
}

// Reset implements limiter.Store.
func (f *FallbackStore) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return f.do(ctx, func(ctx context.Context, s limiter.Store) (limiter.Context, error) { return s.Reset(ctx, key, rate) })
}

// Increment implements limiter.Store.
func (f *FallbackStore) Increment(ctx context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	return f.do(ctx, func(ctx context.Context, s limiter.Store) (limiter.Context, error) {
		return s.Increment(ctx, key, n, rate)
	})
}

// Shared reports whether the counters are in the shared store now (false
// while it is down). While it is down, a call starts a probe when none ran
// in the last second; while it is up, it asks the shared store, within
// the timeout, so that /health notices an outage with no traffic.
func (f *FallbackStore) Shared(ctx context.Context) bool {
	if f.down.Load() {
		f.probe()
		return false
	}
	_, err := f.bounded(ctx, peekProbe)
	if err != nil && ctx.Err() == nil {
		f.markDown(err)
		return false
	}
	return true
}

func peekProbe(ctx context.Context, s limiter.Store) (limiter.Context, error) {
	return s.Peek(ctx, probeKey, limiter.Rate{Period: time.Second, Limit: 1})
}

// do runs call on the shared store, or on the local one while the shared
// store is down or when it fails now.
func (f *FallbackStore) do(ctx context.Context, call op) (limiter.Context, error) {
	if err := ctx.Err(); err != nil {
		return limiter.Context{}, err
	}
	if !f.down.Load() {
		c, err := f.bounded(ctx, call)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil { // the caller gave up, not the store
			return limiter.Context{}, err
		}
		f.markDown(err)
	} else {
		f.probe()
	}
	return call(ctx, f.local)
}

// bounded runs call on the shared store and waits for it at most the
// timeout: a store that hangs, or whose client ignores the context's
// deadline, does not hold the request. A call given up on finishes in the
// background.
func (f *FallbackStore) bounded(ctx context.Context, call op) (limiter.Context, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	type result struct {
		c   limiter.Context
		err error
	}
	defer cancel() // only once the call has answered or timed out
	done := make(chan result, 1)
	go func() {
		c, err := call(ctx, f.shared)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-ctx.Done():
		return limiter.Context{}, ctx.Err()
	}
}

// markDown switches to the local counters and logs the outage, at most
// once every 30 seconds.
func (f *FallbackStore) markDown(err error) {
	if f.down.Swap(true) {
		return
	}
	f.tell(false)
	f.lastProbe.Store(time.Now().UnixNano())
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loggedOut = false
	if time.Since(f.lastLog) < fallbackLogInterval {
		f.unlogged++
		return
	}
	f.logOutage("hds: the rate limit store cannot be reached: counting in this process until it is back", err)
}

// logOutage writes an outage line. The caller holds f.mu.
func (f *FallbackStore) logOutage(msg string, err error) {
	f.logger.Warn(msg, "error", err.Error(), "earlier_outages_not_logged", f.unlogged)
	f.lastLog, f.loggedOut, f.unlogged = time.Now(), true, 0
}

// probe tries the shared store in the background, unless a probe is
// running or one started less than a second ago, and switches back to it
// when it answers.
func (f *FallbackStore) probe() {
	last := f.lastProbe.Load()
	if time.Since(time.Unix(0, last)) < fallbackProbeInterval || !f.probing.CompareAndSwap(false, true) {
		return
	}
	f.lastProbe.Store(time.Now().UnixNano())
	go func() {
		defer f.probing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), fallbackProbeTimeout)
		defer cancel()
		_, err := peekProbe(ctx, f.shared)
		f.mu.Lock()
		defer f.mu.Unlock()
		if err != nil {
			if time.Since(f.lastLog) >= fallbackLogInterval {
				f.logOutage("hds: the rate limit store is still unavailable: counting in this process", err)
			}
			return
		}
		if f.loggedOut {
			f.logger.Info("hds: the rate limit store is back: counting in it again")
		}
		f.down.Store(false)
		f.tell(true)
	}()
}

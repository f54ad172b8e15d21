package middleware

import (
	"context"
	"sync"
	"time"

	"github.com/ulule/limiter/v3"
)

// MemoryStore is a limiter.Store in this process's memory that counts as
// ulule/limiter's memory store does (a fixed window per key that starts
// at the key's first hit, and the same limiter.Context for every call),
// with less work a call: one map under one lock, the key as given (that
// store builds "prefix:key" anew on each call) and one reading of the
// clock (that store makes three). It is hds.New's store when the host
// gives none. Expired counters are dropped as calls come, at most once
// every cleanup interval. It is safe for concurrent use.
type MemoryStore struct {
	mu       sync.Mutex
	counters map[string]*memCounter
	cleanup  int64 // nanoseconds between sweeps
	swept    int64 // Unix nanoseconds of the last sweep
	now      func() time.Time
}

// memCounter is one key's count in its window, which ends at expiration
// (Unix nanoseconds).
type memCounter struct {
	value, expiration int64
}

// NewMemoryStore returns an empty MemoryStore that drops expired counters
// every cleanup (a minute when cleanup is not positive).
func NewMemoryStore(cleanup time.Duration) *MemoryStore {
	if cleanup <= 0 {
		cleanup = time.Minute
	}
	return &MemoryStore{counters: map[string]*memCounter{}, cleanup: int64(cleanup), now: time.Now}
}

// Get implements limiter.Store: it counts one hit.
func (s *MemoryStore) Get(_ context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return s.add(key, 1, rate), nil
}

// Increment implements limiter.Store: it counts n hits (n may be
// negative, to take hits back).
func (s *MemoryStore) Increment(_ context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	return s.add(key, n, rate), nil
}

// Peek implements limiter.Store: the count, unchanged.
func (s *MemoryStore) Peek(_ context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	now := s.now().UnixNano()
	s.mu.Lock()
	value, expiration := int64(0), now+int64(rate.Period)
	if c := s.counters[key]; c != nil && !c.expired(now) {
		value, expiration = c.value, c.expiration
	}
	s.mu.Unlock()
	return rateContext(rate, value, expiration), nil
}

// Reset implements limiter.Store: the key's count starts over.
func (s *MemoryStore) Reset(_ context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	now := s.now().UnixNano()
	s.mu.Lock()
	delete(s.counters, key)
	s.mu.Unlock()
	return rateContext(rate, 0, now+int64(rate.Period)), nil
}

// add counts n hits for key: a new window of rate.Period when the key
// has none running.
func (s *MemoryStore) add(key string, n int64, rate limiter.Rate) limiter.Context {
	now := s.now().UnixNano()
	s.mu.Lock()
	if now-s.swept >= s.cleanup {
		s.sweep(now)
	}
	c := s.counters[key]
	if c == nil {
		c = &memCounter{}
		s.counters[key] = c
	}
	if c.expired(now) {
		c.value, c.expiration = n, now+int64(rate.Period)
	} else {
		c.value += n
	}
	value, expiration := c.value, c.expiration
	s.mu.Unlock()
	return rateContext(rate, value, expiration)
}

// sweep drops the expired counters. s.mu is held.
func (s *MemoryStore) sweep(now int64) {
	for k, c := range s.counters {
		if c.expired(now) {
			delete(s.counters, k)
		}
	}
	s.swept = now
}

// expired reports whether the counter's window is over at now.
func (c *memCounter) expired(now int64) bool {
	return c.expiration == 0 || now > c.expiration
}

// rateContext is the limiter.Context of a count, as ulule/limiter's
// stores compute it (drivers/store/common.GetContextFromState).
func rateContext(rate limiter.Rate, count, expiration int64) limiter.Context {
	c := limiter.Context{Limit: rate.Limit, Reset: time.Unix(0, expiration).Unix(), Reached: true}
	if count <= rate.Limit {
		c.Remaining, c.Reached = rate.Limit-count, false
	}
	return c
}

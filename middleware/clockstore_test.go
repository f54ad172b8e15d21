package middleware_test

import (
	"context"
	"sync"
	"time"

	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/common"
)

// clockStore is a limiter.Store with the in-memory store's fixed windows
// (a window opens at a key's first count and lasts the rate's period) on
// a clock the test moves, so that a test of a window passing advances
// the clock instead of sleeping past it.
type clockStore struct {
	mu      sync.Mutex
	now     time.Time
	windows map[string]*clockWindow
}

type clockWindow struct {
	count      int64
	expiration time.Time
}

func newClockStore() *clockStore {
	return &clockStore{now: time.Now(), windows: map[string]*clockWindow{}}
}

// advance moves the clock by d.
func (s *clockStore) advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(d)
}

// window returns key's open window; an expired one counts as none.
func (s *clockStore) window(key string) (*clockWindow, bool) {
	w, ok := s.windows[key]
	if !ok || !s.now.Before(w.expiration) {
		return nil, false
	}
	return w, true
}

func (s *clockStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return s.Increment(ctx, key, 1, rate)
}

func (s *clockStore) Increment(_ context.Context, key string, count int64, rate limiter.Rate) (limiter.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.window(key)
	if !ok {
		w = &clockWindow{expiration: s.now.Add(rate.Period)}
		s.windows[key] = w
	}
	w.count += count
	return common.GetContextFromState(s.now, rate, w.expiration, w.count), nil
}

func (s *clockStore) Peek(_ context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.window(key); ok {
		return common.GetContextFromState(s.now, rate, w.expiration, w.count), nil
	}
	return common.GetContextFromState(s.now, rate, s.now.Add(rate.Period), 0), nil
}

func (s *clockStore) Reset(_ context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.windows, key)
	return common.GetContextFromState(s.now, rate, s.now.Add(rate.Period), 0), nil
}

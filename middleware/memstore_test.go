package middleware

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ulule/limiter/v3"
	limitmemory "github.com/ulule/limiter/v3/drivers/store/memory"
)

// TestMemoryStoreMatchesUlule runs the same calls on MemoryStore and on
// ulule/limiter's memory store, within one window, and requires the
// same answers: counts, limits, whether reached, and the reset time
// (to the second the two windows started in).
func TestMemoryStoreMatchesUlule(t *testing.T) {
	ctx := context.Background()
	ours := NewMemoryStore(time.Minute)
	theirs := limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "t", CleanUpInterval: time.Minute})
	rates := []limiter.Rate{{Period: time.Minute, Limit: 5}, {Period: time.Hour, Limit: 12}}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 3000 {
		key := fmt.Sprintf("k%d", rng.IntN(6))
		rate := rates[rng.IntN(len(rates))]
		key = fmt.Sprintf("w%d:%s", rate.Period/time.Second, key)
		op, n := rng.IntN(10), int64(rng.IntN(3)-1)
		call := func(s limiter.Store) (limiter.Context, error) {
			switch {
			case op < 5:
				return s.Get(ctx, key, rate)
			case op < 7:
				return s.Increment(ctx, key, n, rate)
			case op < 9:
				return s.Peek(ctx, key, rate)
			default:
				return s.Reset(ctx, key, rate)
			}
		}
		want, err := call(theirs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := call(ours)
		if err != nil {
			t.Fatal(err)
		}
		if got.Limit != want.Limit || got.Remaining != want.Remaining || got.Reached != want.Reached ||
			got.Reset < want.Reset-1 || got.Reset > want.Reset+1 {
			t.Fatalf("call %d (op %d on %s): got %+v, want %+v", i, op, key, got, want)
		}
	}
}

// TestMemoryStoreWindows follows one key across windows on a clock the
// test moves: the window starts at the first hit, ends a period later,
// and the next hit starts a new one; expired counters are swept.
func TestMemoryStoreWindows(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	s := NewMemoryStore(time.Minute)
	s.now = func() time.Time { return now }
	rate := limiter.Rate{Period: time.Minute, Limit: 2}
	want := func(c limiter.Context, remaining int64, reached bool, reset time.Time) {
		t.Helper()
		if c.Limit != 2 || c.Remaining != remaining || c.Reached != reached || c.Reset != reset.Unix() {
			t.Fatalf("got %+v, want remaining %d, reached %v, reset %d", c, remaining, reached, reset.Unix())
		}
	}
	start := now
	c, _ := s.Get(ctx, "k", rate)
	want(c, 1, false, start.Add(time.Minute))
	now = now.Add(30 * time.Second)
	c, _ = s.Get(ctx, "k", rate)
	want(c, 0, false, start.Add(time.Minute))
	c, _ = s.Get(ctx, "k", rate)
	want(c, 0, true, start.Add(time.Minute))
	c, _ = s.Increment(ctx, "k", -1, rate)
	want(c, 0, false, start.Add(time.Minute))
	c, _ = s.Peek(ctx, "k", rate)
	want(c, 0, false, start.Add(time.Minute))
	now = start.Add(time.Minute) // the last instant of the window
	c, _ = s.Peek(ctx, "k", rate)
	want(c, 0, false, start.Add(time.Minute))
	now = now.Add(time.Nanosecond) // over: a new window at the next hit
	c, _ = s.Peek(ctx, "k", rate)
	want(c, 2, false, now.Add(time.Minute))
	c, _ = s.Get(ctx, "k", rate)
	want(c, 1, false, now.Add(time.Minute))
	c, _ = s.Reset(ctx, "k", rate)
	want(c, 2, false, now.Add(time.Minute))
	_, _ = s.Get(ctx, "other", rate)
	now = now.Add(2 * time.Minute)
	_, _ = s.Get(ctx, "k", rate) // sweeps "other"
	if _, ok := s.counters["other"]; ok || len(s.counters) != 1 {
		t.Fatalf("after a sweep: %d counters, want only k", len(s.counters))
	}
}

// BenchmarkRateLimiterStores counts a request in hds's two default
// windows on MemoryStore and on ulule/limiter's memory store (compare
// with benchstat -col /store).
func BenchmarkRateLimiterStores(b *testing.B) {
	ctx := context.Background()
	for _, s := range []struct {
		name  string
		store limiter.Store
	}{
		{"ulule", limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "hds", CleanUpInterval: time.Minute})},
		{"memory", NewMemoryStore(time.Minute)},
	} {
		l := NewRateLimiter(s.store, limiter.Rate{Period: time.Hour, Limit: 1 << 62}, limiter.Rate{Period: time.Minute, Limit: 1 << 62})
		b.Run("store="+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Count(ctx, "u:0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package readahead

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShare(t *testing.T) {
	for _, tc := range []struct{ pool, want int }{{0, 0}, {-1, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 2}, {10, 5}} {
		assert.Equal(t, tc.want, Share(tc.pool), "pool of %d", tc.pool)
	}
}

// TestGateBoundsAndQueues: a gate of a pool of 4 admits two reads; a third
// waits until one leaves, first come first served; a wait whose context
// ends fails with its error and takes no place.
func TestGateBoundsAndQueues(t *testing.T) {
	g := NewGate(func() int { return 4 })
	r1, err := g.Enter(t.Context())
	require.NoError(t, err)
	r2, err := g.Enter(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, g.Held())

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = g.Enter(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a third read while two hold the share")
	assert.Equal(t, 2, g.Held())

	entered := make(chan func(), 1)
	go func() {
		r, err := g.Enter(context.Background())
		if err == nil {
			entered <- r
		}
	}()
	select {
	case <-entered:
		t.Fatal("a third read entered while two hold the share")
	case <-time.After(20 * time.Millisecond):
	}
	r1()
	r1() // twice is once
	var r3 func()
	select {
	case r3 = <-entered:
	case <-time.After(time.Minute):
		t.Fatal("the waiting read did not enter when a place was given back")
	}
	assert.Equal(t, 2, g.Held())
	r2()
	r3()
	assert.Equal(t, 0, g.Held())
}

// TestGateUnbounded: a pool without a bound admits every read.
func TestGateUnbounded(t *testing.T) {
	g := NewGate(func() int { return 0 })
	for range 100 {
		_, err := g.Enter(t.Context())
		require.NoError(t, err)
	}
}

// TestVisitOrderAndErrors: every item in order, then the read's error.
func TestVisitOrderAndErrors(t *testing.T) {
	boom := errors.New("boom")
	var got []int
	err := Visit(t.Context(), 10, func(int) int { return 1 }, func(_ context.Context, push func(int) error) error {
		for i := range 100 {
			if err := push(i); err != nil {
				return err
			}
		}
		return boom
	}, func(i int) error { got = append(got, i); return nil })
	assert.ErrorIs(t, err, boom)
	require.Len(t, got, 100)
	for i, v := range got {
		assert.Equal(t, i, v)
	}
}

// TestVisitBoundsTheBuffer: while the visitor holds its first item, the
// read gets no further than the limit allows, and ends as soon as the
// rest fits.
func TestVisitBoundsTheBuffer(t *testing.T) {
	var pushed atomic.Int64
	release := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		_ = Visit(context.Background(), 100, func(int) int { return 10 }, func(_ context.Context, push func(int) error) error {
			defer close(readDone)
			for i := range 50 {
				if err := push(i); err != nil {
					return err
				}
				pushed.Add(1)
			}
			return nil
		}, func(i int) error {
			if i == 0 {
				<-release
			}
			return nil
		})
	}()
	// Give the read every chance to run past the limit.
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		assert.LessOrEqual(t, pushed.Load(), int64(10), "items queued beyond 100 bytes of 10 each")
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	select {
	case <-readDone:
	case <-time.After(time.Minute):
		t.Fatal("the read did not end once the visitor took its items")
	}
	assert.Equal(t, int64(50), pushed.Load())
}

// TestVisitStops: the visitor's error is returned unchanged, the read's
// push fails and its context is canceled, and Visit returns only once the
// read has.
func TestVisitStops(t *testing.T) {
	stop := errors.New("stop")
	var readEnded atomic.Bool
	var ctxEnded atomic.Bool
	err := Visit(t.Context(), 1<<20, func(int) int { return 1 }, func(ctx context.Context, push func(int) error) error {
		defer readEnded.Store(true)
		for i := 0; ; i++ {
			if err := push(i); err != nil {
				<-ctx.Done()
				ctxEnded.Store(true)
				return err
			}
		}
	}, func(i int) error {
		if i == 3 {
			return stop
		}
		return nil
	})
	assert.Equal(t, stop, err)
	assert.True(t, readEnded.Load(), "the read ended before Visit returned")
	assert.True(t, ctxEnded.Load(), "the read's context was canceled")
}

// TestVisitPanic: a panic of the read is an error, not a crash.
func TestVisitPanic(t *testing.T) {
	err := Visit(t.Context(), 10, func(int) int { return 1 }, func(context.Context, func(int) error) error {
		panic("oops")
	}, func(int) error { return nil })
	assert.ErrorContains(t, err, "oops")
}

package progress_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hds-go/hds/internal/progress"
)

// waitDone waits for ctx to end, failing the test after a generous
// deadline.
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the context did not end")
	}
}

func TestStallEnds(t *testing.T) {
	ctx, cancel := progress.WithStall(t.Context(), 10*time.Millisecond, 0)
	defer cancel()
	waitDone(t, ctx)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("a stalled call: %v, want context.DeadlineExceeded", ctx.Err())
	}
}

// TestAdvanceKeepsAlive checks that a call making progress outlives its
// stall time many times over: it ends only once the progress stops. A
// context that ends less than the stall time after the last Advance is a
// failure; one that ends later (the loop was not scheduled for the stall
// time, on a loaded machine) is tried again.
func TestAdvanceKeepsAlive(t *testing.T) {
	const stall = 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		ctx, cancel := progress.WithStall(t.Context(), stall, 0)
		start, last := time.Now(), time.Now()
		ended := false
		for time.Since(start) < 4*stall {
			last = time.Now()
			ctx.Advance()
			time.Sleep(time.Millisecond)
			if ctx.Err() != nil {
				ended = true
				break
			}
		}
		if ended {
			cancel()
			if since := time.Since(last); since < stall {
				t.Fatalf("ended %v after the last progress, less than the stall time", since)
			}
			if attempt == 10 {
				t.Fatal("never advanced within the stall time in 10 attempts")
			}
			continue
		}
		if at, ok := ctx.Deadline(); !ok || at.Before(start.Add(4*stall)) {
			t.Errorf("deadline %v, %v: want the last progress plus the stall", at, ok)
		}
		waitDone(t, ctx)
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("once stalled: %v, want context.DeadlineExceeded", ctx.Err())
		}
		cancel()
		return
	}
}

func TestCancelAndParent(t *testing.T) {
	ctx, cancel := progress.WithStall(t.Context(), time.Hour, 0)
	cancel()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", ctx.Err())
	}
	parent, stop := context.WithCancel(t.Context())
	ctx, cancel = progress.WithStall(parent, time.Hour, 0)
	defer cancel()
	stop()
	waitDone(t, ctx)
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("parent cancelled: %v, want context.Canceled", ctx.Err())
	}
}

// TestFloor checks that a call without progress still has its floor: it
// ends once the floor has passed, not after the stall time.
func TestFloor(t *testing.T) {
	const floor = 300 * time.Millisecond
	start := time.Now()
	ctx, cancel := progress.WithStall(t.Context(), time.Millisecond, floor)
	defer cancel()
	waitDone(t, ctx)
	if d := time.Since(start); d < floor {
		t.Errorf("ended after %v, before its floor of %v", d, floor)
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("past its floor: %v, want context.DeadlineExceeded", ctx.Err())
	}
}

// Package progress gives a call whose work grows with its items (a big
// batch, an import) a deadline that follows the work done rather than a
// fixed allowance: the call fails when no item has been done for a
// while, however long it runs in all, so that a loaded machine slows it
// without cutting it off, and a call that is stuck still ends.
package progress

import (
	"context"
	"sync"
	"time"
)

// Context is a context.Context that ends, with context.DeadlineExceeded,
// when Advance has not been called for its stall time (counted from its
// creation at first), but not before its floor has passed since its
// creation; or when its parent ends.
type Context struct {
	context.Context // the cancelable child of the parent
	cancel          context.CancelFunc
	stall           time.Duration
	floor           time.Time // the deadline is never before it

	mu      sync.Mutex
	timer   *time.Timer
	at      time.Time // the deadline: the last advance plus stall
	expired bool
}

// WithStall returns a Context of parent that ends when it makes no
// progress (Advance) for stall, but not before floor has passed (a fixed
// allowance the call keeps: a deadline that follows the work only ever
// gives more time), and its cancel function, which the caller calls once
// the work is done. stall must be more than 0.
func WithStall(parent context.Context, stall, floor time.Duration) (*Context, context.CancelFunc) {
	inner, cancel := context.WithCancel(parent)
	now := time.Now()
	c := &Context{Context: inner, cancel: cancel, stall: stall, floor: now.Add(floor), at: now.Add(max(stall, floor))}
	c.mu.Lock()
	c.timer = time.AfterFunc(max(stall, floor), c.expire)
	c.mu.Unlock()
	return c, func() {
		c.mu.Lock()
		c.timer.Stop()
		c.mu.Unlock()
		cancel()
	}
}

// expire ends c when its deadline has passed (a timer that fired while
// Advance moved the deadline is set again for the rest).
func (c *Context) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if left := time.Until(c.at); left > 0 {
		c.timer.Reset(left)
		return
	}
	c.expired = true
	c.cancel()
}

// Advance records progress: the deadline moves to stall from now (when
// that is later than it is). It is cheap (no timer is reset), and does
// nothing once c has ended.
func (c *Context) Advance() {
	c.mu.Lock()
	if !c.expired {
		if at := time.Now().Add(c.stall); at.After(c.at) {
			c.at = at
		}
	}
	c.mu.Unlock()
}

// Deadline returns the current deadline: stall after the last progress,
// or the parent's when it is sooner.
func (c *Context) Deadline() (time.Time, bool) {
	c.mu.Lock()
	at := c.at
	c.mu.Unlock()
	if p, ok := c.Context.Deadline(); ok && p.Before(at) {
		return p, true
	}
	return at, true
}

// Err returns context.DeadlineExceeded once c has made no progress for
// its stall time, else the error of the context it wraps.
func (c *Context) Err() error {
	err := c.Context.Err()
	if err == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expired {
		return context.DeadlineExceeded
	}
	return err
}

// Advance calls Advance of ctx when it is a *Context, and does nothing
// otherwise: code that runs both within a call of many items and within
// others records its progress without knowing which.
func Advance(ctx context.Context) {
	if c, ok := ctx.(*Context); ok {
		c.Advance()
	}
}

// Package readahead lets a store serve a long snapshot read (an export, a
// comparison) to a client that reads slowly without holding what other
// requests need (docs/api.md#limits-rate-limits-and-quotas).
//
// Two tools, used together. A Gate bounds how many such reads hold a
// connection of a pool at once to a share of the pool (half of it), so
// that the rest always serves everything else (/health, logins, reads,
// writes) however many slow readers there are; a read beyond the share
// waits for a place. Visit runs the read in a goroutine of its own and
// hands its items to the caller through a buffer of bounded size, so that
// a read whose items fit in the buffer gives its connection (and its
// place) back as soon as the database work is done, whatever the pace of
// its client; a bigger one holds it only while its client reads.
package readahead

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Gate admits at most a share of a pool's connections to long reads: half
// of the pool's size (at least one), as the pool is sized when a read
// enters, so that a pool resized later is followed. A pool without a
// bound (size 0 or less) admits every read. A Gate is safe for
// concurrent use; its zero value is not usable (NewGate).
type Gate struct {
	pool func() int

	mu    sync.Mutex
	held  int
	queue []chan struct{} // waiting reads, first come first served
}

// NewGate returns a Gate for the pool whose size pool reports.
func NewGate(pool func() int) *Gate { return &Gate{pool: pool} }

// Share returns how many long reads the gate admits at once for a pool
// of size n (0: no bound).
func Share(n int) int {
	if n <= 0 {
		return 0
	}
	return max(1, n/2)
}

// Enter waits for a place and returns the function that gives it back
// (call it once). It fails with ctx's error when ctx ends first.
func (g *Gate) Enter(ctx context.Context) (release func(), err error) {
	g.mu.Lock()
	share := Share(g.pool())
	if share == 0 || g.held < share && len(g.queue) == 0 {
		g.held++
		g.mu.Unlock()
		return g.releaser(), nil
	}
	ready := make(chan struct{})
	g.queue = append(g.queue, ready)
	g.mu.Unlock()
	select {
	case <-ready:
		return g.releaser(), nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		for i, c := range g.queue {
			if c == ready {
				g.queue = append(g.queue[:i], g.queue[i+1:]...)
				return nil, ctx.Err()
			}
		}
		// Handed a place as ctx ended: give it on.
		g.leave()
		return nil, ctx.Err()
	}
}

// releaser returns the function that gives a place back once.
func (g *Gate) releaser() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.leave()
		})
	}
}

// leave gives a place back: to the first waiting read while the share
// allows it, else to the gate. g.mu is held.
func (g *Gate) leave() {
	share := Share(g.pool())
	if len(g.queue) > 0 && (share == 0 || g.held <= share) {
		next := g.queue[0]
		g.queue = g.queue[1:]
		close(next) // the place goes to next: held is unchanged
		return
	}
	g.held--
}

// Held returns how many reads hold a place (for tests and metrics).
func (g *Gate) Held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// errStopped ends a read whose caller stopped taking its items.
var errStopped = errors.New("readahead: the reader stopped")

// Visit runs read in a goroutine of its own and calls visit, in the
// caller's goroutine, with each item read passes to its push, in order.
// The items waiting between the two take at most limit bytes (size tells
// each one's; one item is taken whatever its size), so push blocks while
// visit lags behind by that much.
//
// Visit returns once read has returned and visit has seen every item
// pushed before that: visit's first error, unchanged (read's context is
// then canceled and its push fails), else read's error, else nil. read
// must return when push fails.
func Visit[T any](ctx context.Context, limit int, size func(T) int,
	read func(ctx context.Context, push func(T) error) error, visit func(T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := &buffer[T]{limit: limit}
	b.changed = sync.NewCond(&b.mu)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		defer func() {
			if p := recover(); p != nil { // not in the caller's goroutine: no one else would recover it
				err = fmt.Errorf("readahead: the read panicked: %v", p)
			}
			b.finish(err)
		}()
		err = read(ctx, func(it T) error { return b.push(it, size(it)) })
	}()
	var err error
	for {
		it, n, ok := b.pop()
		if !ok {
			break
		}
		if err = visit(it); err != nil {
			break
		}
		b.taken(n)
	}
	if err != nil {
		b.stop()
		cancel()
		<-done
		return err
	}
	<-done
	return b.err
}

// buffer is the queue between a read and its visitor.
type buffer[T any] struct {
	mu      sync.Mutex
	changed *sync.Cond
	limit   int
	items   []T
	sizes   []int
	bytes   int  // of the items waiting and the one being visited
	ended   bool // the read returned (err is its error)
	stopped bool // the visitor stopped
	err     error
}

// push queues it once there is room for n more bytes.
func (b *buffer[T]) push(it T, n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.bytes > 0 && b.bytes+n > b.limit && !b.stopped {
		b.changed.Wait()
	}
	if b.stopped {
		return errStopped
	}
	b.items = append(b.items, it)
	b.sizes = append(b.sizes, n)
	b.bytes += n
	b.changed.Broadcast()
	return nil
}

// pop takes the first waiting item and its size; ok is false once the
// read has ended and every item was taken.
func (b *buffer[T]) pop() (it T, n int, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.items) == 0 && !b.ended {
		b.changed.Wait()
	}
	if len(b.items) == 0 {
		return it, 0, false
	}
	var zero T
	it, n = b.items[0], b.sizes[0]
	b.items[0] = zero // let it go with the visitor
	b.items, b.sizes = b.items[1:], b.sizes[1:]
	return it, n, true
}

// taken frees the n bytes of an item the visitor is done with.
func (b *buffer[T]) taken(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bytes -= n
	b.changed.Broadcast()
}

// finish records the end of the read.
func (b *buffer[T]) finish(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended, b.err = true, err
	b.changed.Broadcast()
}

// stop makes every push fail from now on.
func (b *buffer[T]) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	b.items, b.sizes = nil, nil
	b.changed.Broadcast()
}

package store

import (
	"context"
	"errors"
	"math"
)

// EventSource delivers the entries of the projects' audit logs as they
// are committed: the change feed of
// docs/api.md#audit-log-and-change-feed reads it. The memory store fans
// out in process; the PostgreSQL store listens for its commits
// (LISTEN/NOTIFY), so that it also hears those of other instances sharing
// the database. storetest.RunEvents is its conformance suite.
// Implementations must be safe for concurrent use.
//
// Hosts rarely call it directly: WatchProject follows a project from a
// revision on, without gap or duplicate.
type EventSource interface {
	// AuditEntriesAfter returns the entries of the project with id
	// projectID whose revision is above after, oldest first, at most
	// limit of them: none for an unknown project. It checks no access:
	// callers resolve the project's Path first.
	AuditEntriesAfter(ctx context.Context, projectID string, after int64, limit int) ([]*AuditEntry, error)
	// Subscribe calls deliver with the entries of the project with id
	// projectID committed after Subscribe returns, in revision order,
	// never two calls at once, and with nil when the project is deleted
	// (deliver is not called again). deliver must not block. Entries may
	// be missed when the store loses track (a lost database connection,
	// until it is back): subscribers fill a gap between two revisions from
	// AuditEntriesAfter. cancel ends the subscription. An unknown project
	// is ErrNotFound.
	Subscribe(ctx context.Context, projectID string, deliver func(*AuditEntry)) (cancel func(), err error)
}

// ErrLagging was the error of a Watcher whose reader fell behind by more
// than its buffer.
//
// Deprecated: a Watcher no longer ends for that; it catches up from the
// log (see WatchProject). Kept for the programs that test for it.
var ErrLagging = errors.New("the subscriber fell behind")

// DefaultWatchBuffer is how many live entries a Watcher holds for a
// reader that is behind, when WatchProject is given no buffer size; past
// it, the Watcher reads what the reader missed from the log instead.
const DefaultWatchBuffer = 256

// watchPage is how many entries a Watcher reads at a time when it
// replays or fills a gap.
const watchPage = 500

// Watcher follows one project's audit log (see WatchProject).
type Watcher struct {
	// Project is the project as it was when the watch began.
	Project *Project
	// C delivers the events (every entry but credential.reveal) after
	// the revision the watch began at, in revision order, without gap or
	// duplicate; it is closed when the watch ends, and Err then says why.
	// Entries are shared: never change one.
	C <-chan *AuditEntry

	err  error
	done chan struct{}
	stop context.CancelFunc
}

// Err returns why the watch ended, once C is closed: the context's error,
// ErrNotFound (as a *NotFoundError) when the project was
// deleted, or the store's error.
func (w *Watcher) Err() error {
	<-w.done
	return w.err
}

// Close ends the watch and waits until it has ended.
func (w *Watcher) Close() {
	w.stop()
	<-w.done
}

// WatchProject follows the project p.Project, resolved and checked as any
// Path (p.Need is what the caller must hold), through src. The events
// start after revision since, replayed from the log, then go on live as
// they are committed; with since below 0 they start with the next change.
// buffer (DefaultWatchBuffer when 0 or less) bounds the live entries held
// for a reader that is behind: past it, the entries that did not fit are
// read again from the log (AuditEntriesAfter, a page at a time) once the
// reader has taken the ones before them, so that a slow reader misses
// nothing and the memory a watch holds stays bounded. It ends when ctx is
// done, when the project is deleted, and when the store fails to read
// the log. The project is
// followed by id: a rename does not end it.
//
// WatchProject is the Go API of the change feed: a host serving hds in
// its own process watches a project as GET P/events does.
func WatchProject(ctx context.Context, s Store, src EventSource, p Path, since int64, buffer int) (*Watcher, error) {
	pr, err := s.FindProject(ctx, p)
	if err != nil {
		return nil, err
	}
	if since < 0 {
		since = pr.Revision
	}
	return watch(ctx, src, pr, since, buffer)
}

func watch(ctx context.Context, src EventSource, pr *Project, after int64, buffer int) (*Watcher, error) {
	if buffer <= 0 {
		buffer = DefaultWatchBuffer
	}
	ctx, stop := context.WithCancel(ctx)
	live := make(chan *AuditEntry, buffer)
	// lagged holds a token when an entry did not fit in live since the
	// follower last took it: the follower then reads the log.
	lagged := make(chan struct{}, 1)
	cancel, err := src.Subscribe(ctx, pr.ID, func(e *AuditEntry) {
		select {
		case live <- e:
		default:
			select {
			case lagged <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		stop()
		return nil, err
	}
	out := make(chan *AuditEntry)
	w := &Watcher{Project: pr, C: out, done: make(chan struct{}), stop: stop}
	f := follower{src: src, project: pr, cursor: after, out: out, lagged: lagged}
	go func() {
		w.err = f.run(ctx, live)
		cancel()
		stop()
		close(out)
		close(w.done)
	}()
	return w, nil
}

// follower is the goroutine of a Watcher: it replays, then forwards live
// entries, filling gaps from the log and skipping what it sent. When live
// entries were dropped (lagged), it reads the log after the newest
// revision it handled to its end: an entry is committed before it is
// delivered, so every entry dropped before the follower took the token is
// in the log by then, and one dropped after puts the token back.
type follower struct {
	src     EventSource
	project *Project
	cursor  int64 // the newest revision handled
	out     chan<- *AuditEntry
	lagged  <-chan struct{}
}

func (f *follower) run(ctx context.Context, live <-chan *AuditEntry) error {
	if err := f.fill(ctx, math.MaxInt64); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-f.lagged:
			if err := f.fill(ctx, math.MaxInt64); err != nil {
				return err
			}
		case e := <-live:
			if e == nil {
				return &NotFoundError{Kind: "project", Name: f.project.Name}
			}
			if e.Revision > f.cursor+1 {
				if err := f.fill(ctx, e.Revision-1); err != nil {
					return err
				}
			}
			if err := f.send(ctx, e); err != nil {
				return err
			}
		}
	}
}

// fill reads the log after the cursor, up to revision upTo at least (or
// its end), and sends what it finds.
func (f *follower) fill(ctx context.Context, upTo int64) error {
	for f.cursor < upTo {
		page, err := f.src.AuditEntriesAfter(ctx, f.project.ID, f.cursor, watchPage)
		if err != nil {
			return err
		}
		for _, e := range page {
			if err := f.send(ctx, e); err != nil {
				return err
			}
		}
		if len(page) < watchPage {
			return nil
		}
	}
	return nil
}

// send hands e to the reader, unless it was handled already; entries that
// are not events move the cursor only.
func (f *follower) send(ctx context.Context, e *AuditEntry) error {
	if e.Revision <= f.cursor {
		return nil
	}
	f.cursor = e.Revision
	if !e.Action.IsEvent() {
		return nil
	}
	select {
	case f.out <- e:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

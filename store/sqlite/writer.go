package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/hds-go/hds/internal/progress"
	"github.com/hds-go/hds/store"
	sqlite "modernc.org/sqlite"
)

// Writes are committed in groups (group commit). One goroutine, the
// writer, owns the writing connection. A write is a request handed to it
// (in the order the callers arrive: a channel's waiting senders are
// served first in, first out); the writer begins a transaction with the
// first request waiting, runs it, then each request that arrived
// meanwhile (yielding the processor first when none has: maxYields),
// and commits them all at once: one sync of the WAL for the
// group instead of one per write, with synchronous=FULL kept, since a
// caller is answered only once the commit that holds its write is on
// disk. Each request after the first runs inside a savepoint of the
// group's transaction: one that fails is rolled back to its savepoint
// alone (and answered at once: nothing of it will be written), and the
// others stand. A request that may be run again (writeReq.replay: a
// record's create, update or delete, which writes through tx.exec,
// tx.row and tx.rows only) needs no savepoint while every member of its
// group may be run again: one that fails having written nothing (a
// record that exists, a missing cluster, a precondition: tx.wrote
// tells) is answered and the transaction goes on; one that fails having
// written rolls the group's transaction back, is answered, and the
// members run so far are run again, in order, in the next group
// (replay). The first runs without one either (a savepoint copies each
// page it changes first to a journal, which cost a 20,000-record import
// a third of its time, and makes the trigram index, FTS5, write its
// pending terms), and when it fails the transaction is rolled back and
// the group ends with it. A request of many items (writeFor: a batch,
// an import) is always the first of its group, never a later member.
// Should the transaction itself be lost (SQLite rolls a whole transaction
// back on a full disk or an I/O error) or its commit fail, every request
// of the group is answered with that error, none of them having been
// written.
//
// The statements of a request run under the writer's context, not the
// caller's: SQLite rolls back the whole transaction when a statement is
// interrupted, which would undo the group. A caller's deadline is checked
// before each statement (tx.stmtContext) and once the request is done (a
// request past its deadline is rolled back); it does not cut a statement
// short.

// maxGroup bounds the requests of one group, and groupTime (the default
// of Store.groupTime) the time a group takes in requests before it
// commits, so that the first request of a group is not kept waiting by an
// endless stream of later ones.
const (
	maxGroup  = 128
	groupTime = 50 * time.Millisecond
)

// maxYields bounds the times the writer, finding no request waiting,
// yields the processor (runtime.Gosched) before a group commits, so
// that the goroutines ready to run (requests being read and decoded)
// hand theirs over and join the group. Without it, on one CPU
// (GOMAXPROCS=1) nothing else runs while the writer does: the first
// caller to wake it was its whole group, and a group of one write paid
// a commit (a sync, a page of each index) alone. A yield with nothing
// else ready returns at once.
const maxYields = 4

// writeReq is a write waiting for the writer: f runs in a transaction,
// bounded by ctx; done receives its outcome once it is settled (committed
// or not).
type writeReq struct {
	ctx      context.Context
	f        func(t *tx) error
	progress *progress.Context // writeFor's deadline, or nil
	// replay is set when f may be run again (once a group is rolled
	// back) and writes through tx.exec, tx.row and tx.rows only
	// (writeReplay).
	replay bool
	done   chan error
}

// panicked carries a panic of a write's function from the writer to the
// caller, which panics again with it.
type panicked struct {
	v     any
	stack []byte
}

func (p *panicked) Error() string { return fmt.Sprintf("panic in a write: %v\n%s", p.v, p.stack) }

// errClosed is the error of a write after Close.
var errClosed = fmt.Errorf("sqlite: the store is closed: %w", sql.ErrConnDone)

// startWriter starts the writer goroutine, which stops when Close is
// called.
func (s *Store) startWriter() {
	s.reqs = make(chan *writeReq)
	s.quit = make(chan struct{})
	s.stopped = make(chan struct{})
	// The writer's context never ends (Done is nil): its statements are
	// never interrupted (see above), and modernc.org/sqlite starts a
	// goroutine and a progress handler for each statement whose context
	// can end.
	ctx := context.Background()
	go func() {
		defer close(s.stopped)
		for {
			select {
			case r := <-s.reqs:
				for q := []*writeReq{r}; len(q) > 0; {
					q = s.group(ctx, q)
				}
			case <-s.quit:
				return
			}
		}
	}()
}

// stopWriter stops the writer goroutine (once the group it runs is done).
func (s *Store) stopWriter() {
	if s.quit == nil {
		return
	}
	s.closeOnce.Do(func() { close(s.quit) })
	<-s.stopped
}

// submit hands f to the writer and waits for its outcome. A caller whose
// ctx ends before the writer takes the request gives up (nothing is
// written); once taken, the request is always answered.
func (s *Store) submit(ctx context.Context, f func(t *tx) error, prog *progress.Context) error {
	return s.submitReq(&writeReq{ctx: ctx, f: f, progress: prog, done: make(chan error, 1)})
}

// writeReplay is write for an f that may be run more than once (its
// group rolled back and run again without a failing member) and writes
// through tx.exec, tx.row and tx.rows only: it may run without a
// savepoint (see writeReq.replay).
func (s *Store) writeReplay(ctx context.Context, f func(t *tx) error) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	return s.submitReq(&writeReq{ctx: ctx, f: f, replay: true, done: make(chan error, 1)})
}

// submitReq hands r to the writer and waits for its outcome (submit).
func (s *Store) submitReq(r *writeReq) error {
	ctx := r.ctx
	s.queued.Add(1)
	select {
	case s.reqs <- r:
		s.queued.Add(-1)
	case <-ctx.Done():
		s.queued.Add(-1)
		return classify(ctx, ctx.Err())
	case <-s.quit:
		s.queued.Add(-1)
		return classify(ctx, errClosed)
	}
	err := <-r.done
	var p *panicked
	if errors.As(err, &p) {
		panic(p.v)
	}
	if err == nil {
		s.storage.Succeeded() // committed: the disk is not full
	} else {
		s.storage.Failed(err)
	}
	return err
}

// member is a request of a group that ran without error: its
// transaction's state, settled when the group commits.
type member struct {
	r *writeReq
	t *tx
}

// group runs q's first request and, after it, the rest of q and the
// requests that arrive while the group runs (at most maxGroup, for at
// most groupTime) in one transaction, and commits it. It returns the
// requests taken that are left for the next group: a request of many
// items (which has a group of its own) and those that follow it, or,
// when the transaction was rolled back to drop a failed member, the
// members run so far (replay) and the rest.
func (s *Store) group(ctx context.Context, q []*writeReq) []*writeReq {
	first, q := q[0], q[1:]
	if err := first.ctx.Err(); err != nil {
		first.done <- classify(first.ctx, err)
		return q
	}
	sqlTx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		first.done <- classify(first.ctx, err)
		return q
	}
	g := &writeGroup{s: s, ctx: ctx, tx: sqlTx, prepared: map[string]*sql.Stmt{}, lean: first.replay}
	if g.lean {
		g.hooks = map[string][]hookRow{}
	}
	start, yields := time.Now(), 0
	if !g.runFirst(first) {
		return q
	}
	for first.progress == nil && g.err == nil && g.replay == nil && len(g.members) < maxGroup && time.Since(start) < s.groupTime {
		if len(q) == 0 {
			r := s.waiting()
			for r == nil && yields < maxYields && time.Since(start) < s.groupTime {
				yields++
				runtime.Gosched()
				r = s.waiting()
			}
			if r == nil {
				break
			}
			q = append(q, r)
		}
		r := q[0]
		if r.progress != nil {
			break
		}
		q = q[1:]
		g.run(r)
	}
	if g.replay != nil {
		return append(g.replay, q...)
	}
	g.commit()
	return q
}

// waiting returns the request waiting to be taken, or nil when none is.
func (s *Store) waiting() *writeReq {
	select {
	case r := <-s.reqs:
		return r
	default:
		return nil
	}
}

// writeGroup is a group of writes in one transaction.
type writeGroup struct {
	s        *Store
	ctx      context.Context
	tx       *sql.Tx
	prepared map[string]*sql.Stmt // the group's statements, by text (tx.stmt)
	missed   []string             // the statements the pool had not prepared
	members  []member
	// err, once set, is why the group's transaction is lost: every
	// member is answered with it.
	err error
	// lean is set while every member may be run again (writeReq.replay):
	// a request that may be runs without a savepoint. replay, once set,
	// holds the members to run again: the transaction was rolled back.
	lean   bool
	replay []*writeReq
	// hooks, while the group is lean, holds the webhooks of the projects
	// its members wrote in (tx.projectHooks), read once a group: a
	// record's write changes none.
	hooks map[string][]hookRow
}

// savepoint names the savepoint of a request.
const savepoint = "hds_write"

// newTx is the tx of r in the group.
func (g *writeGroup) newTx(r *writeReq) *tx {
	t := &tx{Tx: g.tx, ctx: g.ctx, call: r.ctx, s: g.s, db: g.s.w, now: g.s.now(), prepared: g.prepared, progress: r.progress}
	if g.lean && r.replay {
		t.hooks = g.hooks
	}
	return t
}

// answer sends r the error of its function (a panic as it is).
func answer(r *writeReq, err error) {
	var p *panicked
	if errors.As(err, &p) {
		r.done <- err
		return
	}
	r.done <- classify(r.ctx, err)
}

// runFirst runs the first request of the group, without a savepoint:
// when it fails, the transaction is rolled back, r answered, and
// runFirst returns false (the group is over).
func (g *writeGroup) runFirst(r *writeReq) bool {
	t := g.newTx(r)
	err := g.call(r.f, t)
	g.missed = append(g.missed, t.missed...)
	if err == nil {
		// A write that ran past its deadline is not kept (WithTimeout:
		// nothing of a call that runs out of it is written).
		err = r.ctx.Err()
	}
	if err != nil {
		_ = g.tx.Rollback()
		g.s.prepare(g.ctx, g.s.w, g.missed)
		answer(r, err)
		return false
	}
	g.members = append(g.members, member{r: r, t: t})
	return true
}

// run runs r in its savepoint of the group's transaction, or without one
// while the group is lean.
func (g *writeGroup) run(r *writeReq) {
	if g.err != nil {
		r.done <- classify(r.ctx, g.err)
		return
	}
	if err := r.ctx.Err(); err != nil {
		r.done <- classify(r.ctx, err)
		return
	}
	if g.lean && r.replay {
		g.runLean(r)
		return
	}
	// A member that may not be run again is in the group: it may
	// change the webhooks.
	g.lean, g.hooks = false, nil
	if _, err := g.tx.ExecContext(g.ctx, "SAVEPOINT "+savepoint); err != nil {
		g.err = err
		r.done <- classify(r.ctx, err)
		return
	}
	t := g.newTx(r)
	err := g.call(r.f, t)
	g.missed = append(g.missed, t.missed...)
	if err == nil {
		err = r.ctx.Err()
	}
	if err != nil {
		if _, rerr := g.tx.ExecContext(g.ctx, "ROLLBACK TO "+savepoint); rerr != nil {
			// The transaction is gone (SQLite rolled it back
			// whole): nothing of the group will be written.
			g.err = rerr
		} else if _, rerr := g.tx.ExecContext(g.ctx, "RELEASE "+savepoint); rerr != nil {
			g.err = rerr
		}
		answer(r, err)
		return
	}
	if _, err := g.tx.ExecContext(g.ctx, "RELEASE "+savepoint); err != nil {
		g.err = err
		r.done <- classify(r.ctx, err)
		return
	}
	g.members = append(g.members, member{r: r, t: t})
}

// runLean runs r, which may be run again, without a savepoint, in a
// group whose members may all be run again. When r fails having written
// nothing (t.wrote) with an error of the store's (one of SQLite's, or an
// interrupted statement, may have rolled the transaction back), it is
// answered and the group goes on; otherwise the transaction is rolled
// back, r answered, and the members so far are left to run again
// (g.replay).
func (g *writeGroup) runLean(r *writeReq) {
	t := g.newTx(r)
	err := g.call(r.f, t)
	g.missed = append(g.missed, t.missed...)
	if err == nil {
		err = r.ctx.Err()
	}
	if err == nil {
		g.members = append(g.members, member{r: r, t: t})
		return
	}
	var se *sqlite.Error
	if !t.wrote && !errors.As(err, &se) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		answer(r, err)
		return
	}
	_ = g.tx.Rollback()
	g.s.replays.Add(1)
	answer(r, err)
	g.replay = make([]*writeReq, 0, len(g.members))
	for _, m := range g.members {
		g.replay = append(g.replay, m.r)
	}
	g.members = nil
	g.s.prepare(g.ctx, g.s.w, g.missed)
}

// call runs f on t, turning a panic into a *panicked error.
func (g *writeGroup) call(f func(t *tx) error, t *tx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicked{v: v, stack: debug.Stack()}
		}
	}()
	return f(t)
}

// commit commits the group's transaction (rolls it back when it is lost)
// and answers its members: the audit entries of each are published, in
// order, and logged once committed.
func (g *writeGroup) commit() {
	s := g.s
	s.pubMu.Lock()
	err := g.err
	if err == nil {
		err = g.tx.Commit()
	} else {
		_ = g.tx.Rollback()
	}
	if err == nil {
		s.commits.Add(1)
		for _, m := range g.members {
			s.hub.Publish(m.t.written...)
			for _, id := range m.t.ended {
				s.hub.End(id)
			}
		}
	}
	s.pubMu.Unlock()
	s.prepare(g.ctx, s.w, g.missed)
	if err == nil && g.members[0].r.progress != nil {
		// After a batch or an import, the WAL is copied into the
		// database now rather than at the next automatic checkpoint,
		// and (journal_size_limit) cut back once it starts over,
		// instead of staying the size of the biggest write. PASSIVE
		// waits for no reader: what a reader still needs is copied
		// by a later checkpoint.
		_, _ = s.w.ExecContext(g.ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	}
	for _, m := range g.members {
		if err != nil {
			m.r.done <- classify(m.r.ctx, err)
			continue
		}
		store.LogAudit(m.r.ctx, s.logger.Load(), m.t.written...)
		m.r.done <- nil
	}
}

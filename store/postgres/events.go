package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/hds-go/hds/internal/fanout"
	"github.com/hds-go/hds/store"
)

// The change feed (store.EventSource). Every audited transaction sends
// NOTIFY hds_events '<project id> <revision>' (auditSQL; DeleteProject
// sends revision 0), which PostgreSQL delivers at commit to every session
// listening, on every instance. Each Store listens on one connection of
// its own (pq.Listener, which reconnects with backoff) and fans out in
// process through a fanout.Hub: on a notification it reads the new
// entries of the project from hds_audit once, for all its subscribers.
// After a reconnect, and every pollInterval as a safety net, it catches
// up every watched project from hds_audit, so that nothing committed
// while the connection was lost is missed. Without a listen URL
// (WithListenURL; Open sets it) it polls every pollIntervalAlone.

var _ store.EventSource = (*Store)(nil)

// WithListenURL gives the Store the URL of its database (postgres://...)
// for the connection on which it listens for the commits of every
// instance (store.EventSource). Open sets it; without it a Store made by
// New polls for new audit entries instead, a little later.
func WithListenURL(url string) Option {
	return func(s *Store) { s.feed.url = url }
}

// Reconnection backoff of the listening connection, and the intervals at
// which watched projects are caught up from hds_audit.
const (
	listenMinBackoff  = 100 * time.Millisecond
	listenMaxBackoff  = 2 * time.Second
	pollInterval      = time.Second
	pollIntervalAlone = 200 * time.Millisecond
	catchUpPage       = 1000
)

// feed is a Store's listening side: started on the first Subscribe,
// stopped by Close.
type feed struct {
	url   string
	hub   fanout.Hub
	start sync.Once
	stop  context.CancelFunc
	done  chan struct{}
	// listening is closed once the listening connection is up (at once
	// without a listen URL).
	listening chan struct{}
	// gone holds the watched projects that catchUpAll found deleted; only
	// the listening goroutine uses it.
	gone map[string]bool
}

// AuditEntriesAfter implements store.EventSource.
func (s *Store) AuditEntriesAfter(ctx context.Context, projectID string, after int64, limit int) (_ []*store.AuditEntry, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	id, ok := store.CanonicalUUID(projectID)
	if !ok {
		return nil, nil
	}
	rows, err := s.q().rows(ctx, `SELECT `+auditColumns+` FROM hds_audit WHERE project_id = $1 AND revision > $2
		ORDER BY revision LIMIT $3`, id, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.AuditEntry
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, classify(err)
		}
		out = append(out, e)
	}
	return out, classify(rows.Err())
}

// Subscribe implements store.EventSource.
func (s *Store) Subscribe(ctx context.Context, projectID string, deliver func(*store.AuditEntry)) (_ func(), err error) {
	s.feed.start.Do(s.startFeed)
	// A commit notified before the connection listens is never heard:
	// wait for it (at most the store's timeout, or DefaultTimeout; then the catch-up that
	// follows the connection finds what was missed, unless the project
	// was deleted meanwhile).
	bound := s.timeout
	if bound <= 0 {
		bound = DefaultTimeout
	}
	wait := time.NewTimer(bound)
	select {
	case <-s.feed.listening:
	case <-wait.C:
	case <-ctx.Done():
		wait.Stop()
		return nil, ctx.Err()
	}
	wait.Stop()
	rev, err := s.revision(ctx, projectID)
	if err != nil {
		return nil, err
	}
	return s.feed.hub.Subscribe(projectID, rev, deliver), nil
}

// revision returns the revision of the project with id.
func (s *Store) revision(ctx context.Context, projectID string) (_ int64, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	id, ok := store.CanonicalUUID(projectID)
	if !ok {
		return 0, &store.NotFoundError{Kind: "project", Name: projectID}
	}
	row, err := s.q().row(ctx, `SELECT revision FROM hds_projects WHERE id = $1`, id)
	if err != nil {
		return 0, err
	}
	var rev int64
	if err := row.Scan(&rev); err != nil {
		return 0, notFoundOr(err, "project", projectID)
	}
	return rev, nil
}

// startFeed starts the goroutine that listens and catches up.
func (s *Store) startFeed() {
	ctx, stop := context.WithCancel(context.Background())
	s.feed.stop, s.feed.done, s.feed.listening = stop, make(chan struct{}), make(chan struct{})
	if s.feed.url == "" {
		close(s.feed.listening)
	}
	go func() {
		defer close(s.feed.done)
		s.listen(ctx)
	}()
}

// closeFeed stops the listening goroutine, if it runs, and waits for it.
func (s *Store) closeFeed() {
	s.feed.start.Do(func() {}) // never start after Close
	if s.feed.stop != nil {
		s.feed.stop()
		<-s.feed.done
	}
}

// listen runs until ctx is done: it hands notifications to the hub and
// catches up after a reconnect and every poll interval.
func (s *Store) listen(ctx context.Context) {
	var notify <-chan *pq.Notification
	var listening <-chan struct{}
	interval := pollIntervalAlone
	if s.feed.url != "" {
		l := pq.NewDialListener(&idleDialer{idle: listenIdle(s.timeout)},
			withConnectTimeout(s.feed.url, connectTimeout(s.timeout)), listenMinBackoff, listenMaxBackoff, nil)
		defer l.Close()
		// The pings make a silent database visible: a read of the
		// listener's connection that waits past listenIdle cuts it, and
		// the listener reconnects (see conn.go).
		go func() {
			tick := time.NewTicker(pollInterval)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					_ = l.Ping()
				}
			}
		}()
		notify = l.NotificationChannel()
		interval = pollInterval
		ch := make(chan struct{})
		listening = ch
		go func() {
			// Listen blocks until the connection is up; a commit before it
			// is found by the catch-up that follows.
			if err := l.Listen(eventsChannel); err == nil {
				close(ch)
				close(s.feed.listening)
			}
		}()
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-listening: // the channel is open: catch up once
			listening = nil
			s.catchUpAll(ctx)
		case n := <-notify:
			if n == nil { // reconnected: something may have been missed
				s.catchUpAll(ctx)
				continue
			}
			s.notified(ctx, n.Extra)
		case <-tick.C:
			s.catchUpAll(ctx)
		}
	}
}

// notified handles the payload of one notification (eventsChannel). An
// entry in the payload is published as it is, after reading any gap
// before it from hds_audit: read back, it would be lost when the project
// is deleted before the read, and a deletion's streams must first have
// every event committed before it
// (docs/api.md#audit-log-and-change-feed).
func (s *Store) notified(ctx context.Context, payload string) {
	id, rest, ok := strings.Cut(payload, " ")
	revText, entry, withEntry := strings.Cut(rest, " ")
	rev, err := strconv.ParseInt(revText, 10, 64)
	if !ok || err != nil {
		return
	}
	last, watched := s.feed.hub.Watched()[id]
	switch {
	case !watched:
	case rev == 0:
		s.feed.hub.End(id)
	case rev <= last:
	case withEntry:
		e, err := notifiedEntry(id, rev, entry)
		if err != nil || rev > last+1 {
			s.catchUp(ctx, id, last)
		}
		if err == nil {
			s.feed.hub.Publish(e) // unless the catch-up had it
		}
	default:
		s.catchUp(ctx, id, last)
	}
}

// catchUpAll catches up every watched project, and ends the watch of
// those deleted. While the Store listens, a project found deleted is
// ended by its deletion's notification, which comes after those of the
// entries committed before it (their entries in the payloads, though
// hds_audit no longer has them): catchUpAll ends it only when it is still
// watched on a later call, the deletion's notification having been lost
// with the connection.
func (s *Store) catchUpAll(ctx context.Context) {
	watched := s.feed.hub.Watched()
	if len(watched) == 0 {
		return
	}
	ids := make([]string, 0, len(watched))
	for id := range watched {
		ids = append(ids, id)
	}
	current, err := s.revisions(ctx, ids)
	if err != nil {
		return // the next tick or reconnect tries again
	}
	gone := make(map[string]bool)
	for id, last := range watched {
		rev, ok := current[id]
		switch {
		case !ok && (s.feed.url == "" || s.feed.gone[id]):
			s.feed.hub.End(id)
		case !ok:
			gone[id] = true
		case rev > last:
			s.catchUp(ctx, id, last)
		}
	}
	s.feed.gone = gone
}

// revisions returns the revision of each project of ids that exists.
func (s *Store) revisions(ctx context.Context, ids []string) (_ map[string]int64, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	rows, err := s.q().rows(ctx, `SELECT id, revision FROM hds_projects WHERE id = ANY($1::uuid[])`, pq.Array(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]int64, len(ids))
	for rows.Next() {
		var id string
		var rev int64
		if err := rows.Scan(&id, &rev); err != nil {
			return nil, classify(err)
		}
		out[id] = rev
	}
	return out, classify(rows.Err())
}

// catchUp publishes the entries of the project after revision last.
func (s *Store) catchUp(ctx context.Context, id string, last int64) {
	for {
		page, err := s.AuditEntriesAfter(ctx, id, last, catchUpPage)
		if err != nil || len(page) == 0 {
			return // retried on the next notification, tick or reconnect
		}
		s.feed.hub.Publish(page...)
		last = page[len(page)-1].Revision
		if len(page) < catchUpPage {
			return
		}
	}
}

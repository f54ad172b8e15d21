package handler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// The change feed, GET P/events (docs/api.md#18-audit-log-and-change-feed):
// Server-Sent Events read from the project's audit log
// (store.WatchProject), replayed after Last-Event-ID or ?since= and then
// live. A stream holds no store lock and no connection of the pool while it
// waits; a client that falls behind is caught up from the log
// (store.WatchProject holds a bounded buffer), and one that reads nothing
// for writeWait is dropped. A stream that ends for any reason but the
// client's leaving, the project's deletion, the token's expiry or a
// shutdown has its cause logged with its request.
// Every recheck it checks again that the caller may still read the project
// (its path resolved by the store, as any request's) and that its session
// is live; it ends at the token's expiry, when the project is deleted, and
// when the handler's Shutdown channel closes. It never sends an event after
// the entry that took the caller's access away (cutoff): that entry, when
// the caller may see it, is its last event, whether the entry reaches the
// stream first or a recheck finds the access gone first (finish).

// Defaults of the change feed (events.keepalive, events.max_streams_per_user).
const (
	DefaultEventsKeepalive   = 15 * time.Second
	DefaultMaxStreamsPerUser = 10
)

// The stream's fixed timings: how long one write may stall, how often
// access is checked again (so a stream ends within 1 second of losing
// it), and how many events are held for a client that is behind.
const (
	writeWait     = 10 * time.Second
	recheckEvery  = 500 * time.Millisecond
	streamBuffer  = 256
	eventsMessage = "text/event-stream"
)

// feed serves GET P/events.
type feed struct {
	store     store.Store
	src       store.EventSource
	sessions  store.Sessions
	access    store.Access // finds API tokens again; nil without them
	keepalive time.Duration
	shutdown  <-chan struct{}
	open      *streamCount
}

// streamCount counts the open streams of each caller on this instance.
type streamCount struct {
	mu   sync.Mutex
	max  int
	open map[string]int
}

// acquire takes one stream for key, or reports false at the limit.
func (c *streamCount) acquire(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[key] >= c.max {
		return false
	}
	c.open[key]++
	return true
}

// release gives back one stream of key.
func (c *streamCount) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[key]--; c.open[key] <= 0 {
		delete(c.open, key)
	}
}

// eventsQuery is what a stream was asked for.
type eventsQuery struct {
	since               int64 // -1: from the next change
	collection, cluster string
}

// parseEventsQuery reads since (or the Last-Event-ID header, which a
// reconnecting client sends and which wins), collection and cluster.
func parseEventsQuery(r *http.Request, v url.Values) (eventsQuery, error) {
	q := eventsQuery{since: -1}
	var err error
	if v.Has("since") {
		if q.since, err = parseRevision(v.Get("since"), "since"); err != nil {
			return q, err
		}
	}
	if ids, ok := r.Header["Last-Event-Id"]; ok {
		if len(ids) > 1 {
			return q, envelope.BadRequest("the header Last-Event-ID is given more than once")
		}
		if q.since, err = parseRevision(ids[0], "Last-Event-ID"); err != nil {
			return q, err
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"collection", &q.collection}, {"cluster", &q.cluster}} {
		if v.Has(f.name) {
			if *f.dst, err = filterText(v.Get(f.name), f.name, true); err == nil && *f.dst == "" {
				err = envelope.BadRequest(f.name + " must be a name")
			}
			if err != nil {
				return q, err
			}
		}
	}
	if q.cluster != "" && q.collection == "" {
		return q, envelope.BadRequest("cluster needs collection: ?collection=NAME&cluster=NAME")
	}
	return q, nil
}

// scoped narrows the stream of an API token whose scope is a collection
// or a cluster to that scope (docs/api.md#17-sharing-and-api-tokens: it
// sees only its scope's events): the path names the scope, so that the
// store's access check covers it, and the filters are the scope's. Filters
// outside the scope are ErrPermissionDenied.
func scoped(p *store.Path, q *eventsQuery) error {
	c := p.Caller
	if c.TokenID == "" || c.Collection == "" {
		return nil
	}
	if q.collection != "" && q.collection != c.Collection || c.Cluster != "" && q.cluster != "" && q.cluster != c.Cluster {
		return store.ErrPermissionDenied
	}
	p.Collection, p.Within, q.collection = c.Collection, store.LevelCollection, c.Collection
	if c.Cluster != "" {
		p.Cluster, p.Within, q.cluster = c.Cluster, store.LevelCluster, c.Cluster
	}
	return nil
}

// matches reports whether e passes the stream's filters: its collection
// (and cluster) as named at the time of the event.
func (q eventsQuery) matches(e *store.AuditEntry) bool {
	return (q.collection == "" || e.Collection == q.collection) && (q.cluster == "" || e.Cluster == q.cluster)
}

func (f *feed) handle() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		q, err := parseEventsQuery(r, query)
		if err != nil {
			reject(w, r, f.store, err)
			return
		}
		p := pathOf(r)
		if err := scoped(&p, &q); err != nil {
			envelope.Error(w, r, err)
			return
		}
		key := p.Caller.ID()
		if !f.open.acquire(key) {
			// A place frees when another stream of the caller ends: worth
			// trying again soon
			// (docs/api.md#8-limits-rate-limits-and-quotas: every 429 has
			// it).
			w.Header().Set(middleware.HeaderRetryAfter, "1")
			envelope.Error(w, r, &envelope.LimitError{Details: "at most " + strconv.Itoa(f.open.max) +
				" open change feed streams per user on this server: close one first"})
			return
		}
		defer f.open.release(key)
		if r.Method == http.MethodHead {
			// The answer a GET would start with, after the same checks
			// (store.WatchProject's is FindProject), and no stream.
			if _, err := f.store.FindProject(r.Context(), p); err != nil {
				envelope.Error(w, r, err)
				return
			}
			streamHeaders(w)
			w.WriteHeader(http.StatusOK)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		wt, err := store.WatchProject(ctx, f.store, f.src, p, q.since, streamBuffer)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		defer wt.Close()
		f.serve(ctx, w, r, p, q, wt)
	}
}

// streamHeaders sets the headers of a stream's answer.
func streamHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", eventsMessage)
	w.Header().Set("X-Accel-Buffering", "no") // no proxy buffering
}

// serve writes the stream until it ends.
func (f *feed) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, p store.Path, q eventsQuery, wt *store.Watcher) {
	rc := http.NewResponseController(w)
	// The server's read and write timeouts are for requests, not streams:
	// the read deadline is lifted, the write deadline moved before each
	// write.
	_ = rc.SetReadDeadline(time.Time{})
	streamHeaders(w)
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
		_, err := w.Write(b)
		if err == nil {
			err = rc.Flush()
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			reqinfo.From(r.Context()).Err = errors.New("change feed: the client read nothing for " + writeWait.String() + ": stream dropped")
		}
		return err == nil
	}
	if !write([]byte(": stream open\n\n")) {
		return
	}

	var expired <-chan time.Time
	claims := auth.ClaimsFrom(r.Context())
	var until *time.Time
	var tokenHash []byte // the API token's, found again on each recheck
	switch tok := auth.APITokenFrom(r.Context()); {
	case claims != nil && claims.ExpiresAt != nil:
		until = &claims.ExpiresAt.Time
	case tok != nil:
		until, tokenHash = tok.ExpiresAt, tok.Hash
	}
	if until != nil {
		t := time.NewTimer(time.Until(*until))
		defer t.Stop()
		expired = t.C
	}
	keepalive := time.NewTimer(f.keepalive)
	defer keepalive.Stop()
	recheck := time.NewTicker(recheckEvery)
	defer recheck.Stop()
	p.Project = wt.Project.Name
	cut := cutoffOf(p.Caller, wt.Project.Revision)
	last := wt.Project.Revision // the newest revision handled
	var b []byte
	// emit handles the event e: it follows a rename, writes e when it
	// passes the filters, and reports whether the stream goes on (not when
	// e is the entry that took the caller's access away, or the write
	// failed).
	emit := func(e *store.AuditEntry) bool {
		last = max(last, e.Revision)
		if e.Action == store.ActionProjectRename {
			p.Project = e.Project // the checks follow the project
		}
		if q.matches(e) {
			b = appendEvent(b[:0], e)
			if !write(b) {
				return false
			}
			keepalive.Reset(f.keepalive)
		}
		return !cut.at(e)
	}
	for {
		select {
		case e, ok := <-wt.C:
			if !ok {
				if err := wt.Err(); !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
					reqinfo.From(r.Context()).Err = fmt.Errorf("change feed: the stream ended: %w", err)
				}
				return // deleted, or the store failed
			}
			if !emit(e) {
				return // the write failed, or cut
			}
		case <-keepalive.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
			keepalive.Reset(f.keepalive)
		case <-recheck.C:
			switch f.recheck(ctx, p, claims, tokenHash) {
			case accessLost:
				// The entry that took access away is in the log already
				// (a change and its entry commit together) but may not
				// have reached the watch: the stream ends at it, not
				// before and not after.
				f.finish(ctx, wt.Project.ID, last, cut, emit)
				return
			case streamEnds:
				return
			}
		case <-expired:
			return
		case <-f.shutdown:
			return
		case <-ctx.Done():
			return
		}
	}
}

// cutoff names the entries that take a stream's access away
// (docs/api.md#18-audit-log-and-change-feed, v1.2): the member.delete
// naming its user and the token.delete of its API token, committed after
// the access check that opened it (revision above after: an entry replayed
// from before took no access the stream had). Such an entry is the last
// event a stream sends.
type cutoff struct {
	after    int64
	username string // of a user caller
	tokenID  string // of an API token caller
}

// cutoffOf is the cutoff of a stream opened by c at revision after.
func cutoffOf(c store.Caller, after int64) cutoff {
	if c.TokenID != "" {
		return cutoff{after: after, tokenID: c.TokenID}
	}
	if c.UserID == "" || c.UserID == store.AnonymousUserID {
		return cutoff{after: after} // nobody a member.delete names
	}
	return cutoff{after: after, username: c.ActorName()}
}

// at reports whether e is the entry that takes the stream's access away.
func (c cutoff) at(e *store.AuditEntry) bool {
	if e.Revision <= c.after {
		return false
	}
	switch e.Action {
	case store.ActionMemberDelete:
		return c.username != "" && e.Target == c.username
	case store.ActionTokenDelete:
		return c.tokenID != "" && e.Target == c.tokenID
	}
	return false
}

// finish ends a stream whose caller lost access to the project with id
// projectID: it reads the log after revision last and, when it finds the
// entry that took the access away, emits the events up to it (emit writes
// those the caller may see); otherwise it sends nothing more, since the
// entries after last may follow the loss.
func (f *feed) finish(ctx context.Context, projectID string, last int64, cut cutoff, emit func(*store.AuditEntry) bool) {
	var end int64
	_ = f.entriesAfter(ctx, projectID, last, func(e *store.AuditEntry) bool {
		if cut.at(e) {
			end = e.Revision
			return false
		}
		return true
	})
	if end == 0 {
		return
	}
	_ = f.entriesAfter(ctx, projectID, last, func(e *store.AuditEntry) bool {
		return e.Revision <= end && (!e.Action.IsEvent() || emit(e))
	})
}

// entriesAfter calls fn with each entry of the project's log after
// revision after, oldest first, until fn returns false or the log ends.
func (f *feed) entriesAfter(ctx context.Context, projectID string, after int64, fn func(*store.AuditEntry) bool) error {
	const page = 500
	for {
		entries, err := f.src.AuditEntriesAfter(ctx, projectID, after, page)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !fn(e) {
				return nil
			}
			after = e.Revision
		}
		if len(entries) < page {
			return nil
		}
	}
}

// What a recheck found.
const (
	stillAllowed = iota
	streamEnds   // the session or the user is no longer live, or the check failed
	accessLost   // the caller may no longer read the project, or its API token was revoked
)

// recheck checks again that the caller's session (or its API token, by
// tokenHash) is live and that it may read the project, as a new request
// would be checked. A project not found is left to the watch (a deletion
// ends it; a rename it has not yet delivered changes the name).
func (f *feed) recheck(ctx context.Context, p store.Path, claims *auth.Claims, tokenHash []byte) int {
	if claims != nil && f.sessions != nil {
		if _, err := middleware.SessionUser(ctx, f.sessions, claims); errors.Is(err, auth.ErrInvalidToken) {
			return streamEnds
		}
	}
	if tokenHash != nil && f.access != nil {
		// Revoked (or gone with its project): a new request would be 401.
		if _, err := f.access.FindTokenByHash(ctx, tokenHash); errors.Is(err, store.ErrNotFound) {
			return accessLost
		}
	}
	switch _, err := f.store.FindProject(ctx, p); {
	case err == nil, errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrUnavailable):
		return stillAllowed
	case errors.Is(err, store.ErrPermissionDenied):
		return accessLost
	default:
		return streamEnds
	}
}

// appendEvent appends one event of the stream: its revision as id, its
// action as event, the entry as one line of JSON.
func appendEvent(b []byte, e *store.AuditEntry) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, e.Revision, 10)
	b = append(b, "\nevent: "...)
	b = append(b, e.Action...)
	b = append(b, "\ndata: "...)
	b = appendAudit(b, e)
	return append(b, "\n\n"...)
}

// eventRoutes registers the change feed when the store has one
// (store.EventSource).
func (d *deps) eventRoutes(rt *router) {
	cfg, s, protect := d.cfg, d.cfg.Store, d.protect
	src, ok := s.(store.EventSource)
	if !ok {
		return
	}
	f := &feed{store: s, src: src, sessions: cfg.Sessions, access: cfg.Access, keepalive: cmp.Or(cfg.EventsKeepalive, DefaultEventsKeepalive),
		shutdown: cfg.Shutdown, open: &streamCount{max: cmp.Or(cfg.MaxStreamsPerUser, DefaultMaxStreamsPerUser), open: map[string]int{}}}
	rt.handle("GET "+pathP+"/events", store.RightRead, protect(f.handle()), openapi.Operation{
		ID: "streamEvents", Tag: "audit", Summary: "Watch the project's changes (Server-Sent Events)",
		Description: "A text/event-stream, not enveloped: every change of the project (every audit entry but credential.reveal) as an event with id: <revision>, event: <action> and data: <the entry as one line of JSON>, within a second of its commit, on every instance sharing the database. By default the stream starts with the next change; with Last-Event-ID: N (the header a reconnecting EventSource sends) or ?since=N it first replays every entry after revision N, without gap or duplicate. ?collection=NAME (and &cluster=NAME) narrows it to that collection (cluster), named as at the time of each event. A comment (: keep-alive) is sent when nothing else was for events.keepalive. The stream ends when the token expires or its session ends (an API token: when it expires or is revoked), when the caller loses access, when the project is deleted and when the server shuts down; a client reconnects with Last-Event-ID. At most events.max_streams_per_user streams per user on each instance: one more is 429 with Retry-After. Opening a stream counts as one request for the rate limits.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"eventsSince", "eventsCollection", "eventsCluster"}, Headers: []string{"lastEventId"},
		Status: 200, Success: "EventStream",
		Errors: underProject,
	})
}

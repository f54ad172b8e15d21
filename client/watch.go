package client

import (
	"context"
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hds-go/hds/internal/refs"
)

// Watch calls fn with cluster k of collection col of project p (as
// Cluster reads it), then again after each change to it, until ctx ends
// or an error that retrying cannot mend (docs/api.md#the-go-client).
//
// It follows the project's change feed (reconnecting with Last-Event-ID,
// so that no change is missed) and, after a change of a record the
// cluster's answer is built from (its own records, and the records its
// references reach), reads the cluster again with If-None-Match. Changes
// less than the debounce apart (1 second; WithDebounce) are one burst,
// read once after its last change. fn is never called twice in a row
// with the same tag, and never while an earlier call runs: Watch calls it
// from its own goroutine and waits for it to return.
//
// Watch returns ctx.Err() when ctx ends, and a *Error on 401, 403 or 404
// (the access taken away, the cluster or its project deleted). Network
// errors, 5xx and 429 answers are retried (after Retry-After, waiting 1
// second and doubling up to 30); a 422 (a reference that no longer
// resolves) waits for the next change. A change feed that stays silent
// for 45 seconds (three missed keep-alives) is dropped and reconnected,
// and a read with no answer within 45 seconds is retried. A
// user token is refreshed before it expires.
func (c *Client) Watch(ctx context.Context, p, col, k string, fn func(*Cluster)) error {
	return c.watch(ctx, p, col, k, -1, fn)
}

// WatchSince is Watch for a program that already runs with the cluster
// as of a revision of the project (from a cache, say): it follows the
// change feed from after revision (0: from the beginning of the
// project's history, for a state whose revision is not known) and reads
// the cluster only after a change that may change it, rather than at
// once. Its first call of fn comes after such a change, with the
// revision of the last change of its burst; it is otherwise Watch.
func (c *Client) WatchSince(ctx context.Context, p, col, k string, revision int64, fn func(*Cluster)) error {
	return c.watch(ctx, p, col, k, max(revision, 0), fn)
}

// watch is Watch (since negative) and WatchSince.
func (c *Client) watch(ctx context.Context, p, col, k string, since int64, fn func(*Cluster)) error {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	report := func(err error, retry time.Duration) {
		if c.report != nil {
			mu.Lock()
			defer mu.Unlock()
			c.report(err, retry)
		}
	}
	events := make(chan feedEvent)
	first := make(chan error, 1)
	lost := make(chan error, 1)
	f := &feed{c: c, path: projectPath(p) + "/events", events: events, first: first, lost: lost, since: since, report: report}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		f.follow(ctx)
	}()
	defer func() {
		cancel()
		<-stopped
	}()
	w := &watcher{c: c, p: p, col: col, k: k, fn: fn, report: report}
	// The stream is open (or cannot be) before the first read: no change
	// after that read is missed.
	select {
	case err := <-first:
		if err != nil && fatal(err) {
			// The read's own 401, 403 or 404, when it gets one, names
			// the cluster rather than the change feed.
			rctx, rcancel := context.WithTimeout(ctx, c.answerWithin())
			_, _, rerr := c.fetch(rctx, p, col, k, "")
			rcancel()
			if rerr != nil && fatal(rerr) {
				return rerr
			}
			return err
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	if ctx.Err() != nil { // report ended it
		return ctx.Err()
	}
	return w.loop(ctx, events, lost, since < 0)
}

// clusterKey names a cluster of the project.
type clusterKey struct{ collection, cluster string }

// watcher is the state of one Watch; only its loop touches it.
type watcher struct {
	c         *Client
	p, col, k string
	fn        func(*Cluster)
	report    func(err error, retry time.Duration)

	last     *Cluster            // what fn was last called with
	watched  map[clusterKey]bool // nil: every change may matter
	revision int64               // the last change seen
	pending  bool                // a change waits for its read
	wait     time.Duration       // the last wait before a retry
}

// loop runs until ctx ends or an error that retrying cannot mend. It
// reads the cluster at once when now is set, else after the first change.
func (w *watcher) loop(ctx context.Context, events <-chan feedEvent, lost <-chan error, now bool) error {
	read := time.NewTimer(0) // the first read, at once
	if !now {
		read.Stop()
	}
	w.pending = now
	refresh := time.NewTimer(time.Hour)
	w.setRefresh(refresh)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-lost:
			return err
		case ev := <-events:
			w.changed(ev, read)
		case <-refresh.C:
			// Bounded as a read is: a refresh that gets no answer is
			// tried again later (and by the next request).
			rctx, cancel := context.WithTimeout(ctx, w.c.answerWithin())
			_, _ = w.c.currentToken(rctx)
			cancel()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.setRefresh(refresh)
		case <-read.C:
			if !w.pending {
				continue
			}
			if err := w.read(ctx, read, events); err != nil {
				return err
			}
		}
	}
}

// changed notes a change of the project: one that may change the
// cluster's answer makes a read, the debounce after it.
func (w *watcher) changed(ev feedEvent, read *time.Timer) bool {
	w.revision = ev.revision
	if !w.matters(ev) {
		return false
	}
	w.pending = true
	w.wait = 0
	read.Reset(w.c.timing.debounce)
	return true
}

// setRefresh sets t to when the token is due for a refresh.
func (w *watcher) setRefresh(t *time.Timer) {
	at, ok := w.c.nextRefresh()
	if !ok {
		t.Stop()
		return
	}
	// A refresh refused leaves the token as it is: not tried again in a
	// loop.
	t.Reset(max(time.Until(at), w.c.timing.firstWait))
}

// read reads the cluster and calls fn when it changed. It returns an
// error only when Watch should return it; a read to retry sets timer. A
// read that a change overtook (one waiting in events when it ends) calls
// nothing: the read after that change does, so that a burst is one call.
func (w *watcher) read(ctx context.Context, timer *time.Timer, events <-chan feedEvent) error {
	revision := w.revision
	tag := ""
	if w.last != nil {
		tag = w.last.Tag
	}
	// A read that gets no answer within the idle limit is retried, as a
	// silent change feed is reconnected.
	within := w.c.answerWithin()
	rctx, cancel := context.WithTimeout(ctx, within)
	got, changed, err := w.c.fetch(rctx, w.p, w.col, w.k, tag)
	timedOut := err != nil && ctx.Err() == nil && rctx.Err() != nil // before cancel, which sets rctx.Err
	cancel()
	if timedOut {
		err = &RequestError{Method: "GET", Path: clusterPath(w.p, w.col, w.k), Err: noAnswer{within}}
	}
	switch {
	case err == nil:
		w.pending, w.wait = false, 0
	case ctx.Err() != nil:
		return ctx.Err()
	case fatal(err):
		return err
	case retryable(err):
		w.wait = min(max(2*w.wait, w.c.timing.firstWait), w.c.timing.maxWait)
		retry := max(w.wait, retryAfter(err))
		w.report(err, retry)
		timer.Reset(retry)
		return nil
	default:
		// A 422 (a reference that no longer resolves), or another answer
		// that only a change can mend: wait for the next change.
		w.pending = false
		w.report(err, 0)
		return nil
	}
	if !changed || w.same(got) {
		return nil
	}
	select {
	case ev := <-events:
		if w.changed(ev, timer) {
			return nil
		}
	default:
	}
	w.watched = w.reach(ctx, got)
	got.Revision = revision
	w.last = got
	w.fn(got)
	return nil
}

// same reports whether got is what fn was last called with: the same tag
// or, from a server without cluster tags, the same records.
func (w *watcher) same(got *Cluster) bool {
	if w.last == nil {
		return false
	}
	if got.Tag != "" || w.last.Tag != "" {
		return got.Tag == w.last.Tag
	}
	return reflect.DeepEqual(got.Records, w.last.Records) && slices.Equal(got.Env, w.last.Env)
}

// matters reports whether a change may change the cluster's answer: a
// change of a record of a cluster it is built from, and any other change
// that may rename, delete or take away access (a rename or deletion of a
// cluster, collection or project, a change of membership or of tokens).
func (w *watcher) matters(ev feedEvent) bool {
	if strings.HasPrefix(ev.action, "record.") {
		return w.watched == nil || w.watched[clusterKey{ev.collection, ev.cluster}]
	}
	switch ev.action {
	case "project.create", "token.create", "webhook.create", "webhook.delete", "credential.reveal", "ping":
		return false
	}
	return true
}

// maxReach bounds the records and clusters reach visits.
const maxReach = 1000

// reach returns the clusters got's answer is built from: its own and,
// through references, every cluster a reference reaches, followed
// through the values of the records they name
// (docs/api.md#references-between-records). Values are read as stored
// and masked (a credential is never scanned for references). A cluster
// that cannot be read is watched all the same; when the clusters cannot
// be known, nil (every change matters).
func (w *watcher) reach(ctx context.Context, got *Cluster) map[clusterKey]bool {
	own := clusterKey{w.col, w.k}
	watched := map[clusterKey]bool{own: true}
	if !w.c.resolve {
		return watched // references are not resolved: only its own records count
	}
	texts := w.c.envFile // an environment file has no types: its values are read
	for _, r := range got.Records {
		if r.Type == "STRING" || r.Type == "[]STRING" {
			texts = true
			break
		}
	}
	if !texts {
		return watched // no value that may hold a reference
	}
	data := map[clusterKey]map[string]json.RawMessage{}
	type item struct {
		at   clusterKey
		name string // "" for every record of the cluster
	}
	queue := []item{{at: own}}
	seen := map[item]bool{}
	for len(queue) > 0 {
		if len(seen) >= maxReach {
			return nil
		}
		it := queue[0]
		queue = queue[1:]
		if seen[it] {
			continue
		}
		seen[it] = true
		watched[it.at] = true
		records, ok := data[it.at]
		if !ok {
			records = w.stored(ctx, it.at)
			data[it.at] = records
		}
		var values []json.RawMessage
		if it.name == "" {
			for _, v := range records {
				values = append(values, v)
			}
		} else if v, ok := records[it.name]; ok {
			values = append(values, v)
		}
		for _, v := range values {
			for _, s := range stringsOf(v) {
				for _, part := range refs.Parse(s) {
					if part.Ref == nil {
						continue
					}
					to := it.at
					if part.Ref.Cluster != "" {
						to.cluster = part.Ref.Cluster
					}
					if part.Ref.Collection != "" {
						to.collection = part.Ref.Collection
					}
					queue = append(queue, item{at: to, name: part.Ref.Name})
				}
			}
		}
	}
	return watched
}

// stored returns the values of a cluster's records as stored and masked
// (GET K), or nil when it cannot be read.
func (w *watcher) stored(ctx context.Context, at clusterKey) map[string]json.RawMessage {
	ctx, cancel := context.WithTimeout(ctx, w.c.answerWithin())
	defer cancel()
	resp, err := w.c.send(ctx, "GET", clusterPath(w.p, at.collection, at.cluster), url.Values{}, nil)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil
	}
	var env struct {
		Data struct {
			Data map[string]json.RawMessage `json:"data"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&env) != nil {
		return nil
	}
	return env.Data.Data
}

// stringsOf returns the strings of a value: itself, or the elements of
// an array.
func stringsOf(v json.RawMessage) []string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return []string{s}
	}
	var list []string
	if json.Unmarshal(v, &list) == nil {
		return list
	}
	return nil
}

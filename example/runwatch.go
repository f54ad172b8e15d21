package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hds-go/hds/internal/refs"
)

// run -watch (docs/api.md#programs-that-follow-their-configuration-run--watch-and--cache):
// CMD restarted when the environment it was started with changes.

// clusterKey names a cluster of the project.
type clusterKey struct{ collection, cluster string }

// fetchResult is the outcome of a fetch made while watching.
type fetchResult struct {
	vars    []string
	watched map[clusterKey]bool // the clusters the environment was built from
	err     error
}

// watcher is the state of run -watch; only its loop touches it.
type watcher struct {
	e       *env
	t       *runTarget
	command []string
	opts    watchOptions

	current   *child
	vars      []string            // CMD's environment
	watched   map[clusterKey]bool // nil: every change may matter (started from the cache)
	following bool                // false once the access is lost

	burstRevision int64 // the revision of the last change of the burst
	pending       bool  // a change waits for its fetch
	fetching      bool
	fetchedAfter  bool // a change came while fetching: that fetch is not the newest
	due           bool // the debounce of a change ended while fetching or restarting
	retryWait     time.Duration

	stopping    bool     // CMD was asked to stop for a restart
	nextVars    []string // the environment of the restart
	terminating bool     // run was asked to stop: no restart any more
	// stopBy is when what is left of CMD's process group is killed: -grace
	// after the signal of a restart or the first one passed on; zero
	// before either.
	stopBy time.Time
}

// runWatch starts CMD and restarts it whenever the environment it was
// started with changes, until CMD exits on its own.
func runWatch(ctx context.Context, e *env, t *runTarget, command []string, opts watchOptions) error {
	feedCtx, stopFeed := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFeed()
	events := make(chan feedEvent)
	first := make(chan error, 1)
	lost := make(chan error, 1)
	f := &feed{c: t.c, path: projectPath(t.p) + "/events", timeout: t.timeout, events: events, first: first, lost: lost, stderr: e.stderr}
	go f.follow(feedCtx)
	// The stream is open (or cannot be) before the first fetch: no change
	// after that fetch is missed.
	var firstErr error
	select {
	case firstErr = <-first:
	case <-ctx.Done():
		return fmt.Errorf("run: %w", ctx.Err())
	}
	var vars []string
	var fromCache bool
	var err error
	if errors.As(firstErr, new(noAnswer)) && t.cache != nil {
		// The server did not answer within -timeout: start from the
		// cache now rather than wait as long again for the environment.
		vars, fromCache, err = t.fromCache(e, firstErr)
	} else {
		vars, fromCache, err = t.firstEnv(ctx, e)
	}
	if err != nil {
		return err
	}
	if firstErr != nil && accessLost(firstErr) {
		// The environment came, the feed was refused. (Anything else, a
		// 429 for one, the feed retries.)
		return fmt.Errorf("run: %w", firstErr)
	}
	if fromCache && firstErr == nil {
		// The feed is open but the environment could not be fetched: the
		// cache may be older than changes made before the feed opened,
		// which an open feed never sends. Follow it from the beginning
		// instead, as a reconnection that never got an event does: the
		// changes it replays cost a fetch, retried until the server
		// answers, and name the revision of the restart.
		stopFeed()
		feedCtx, stopFeed = context.WithCancel(context.WithoutCancel(ctx))
		defer stopFeed()
		f = &feed{c: t.c, path: f.path, timeout: t.timeout, events: events, first: first, lost: lost, replay: true, stderr: e.stderr}
		go f.follow(feedCtx)
	}
	w := &watcher{e: e, t: t, command: command, opts: opts, vars: vars, following: true}
	if !fromCache {
		w.watched = reach(ctx, t)
	}
	signals, stop := notifySignals()
	defer stop()
	if w.current, err = startChild(e, command, vars); err != nil {
		return err
	}
	return w.loop(ctx, signals, events, lost, stopFeed)
}

// loop runs until CMD exits on its own (or after run was asked to stop).
func (w *watcher) loop(ctx context.Context, signals <-chan os.Signal, events <-chan feedEvent, lost <-chan error, stopFeed func()) error {
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	grace := time.NewTimer(time.Hour)
	grace.Stop()
	fetched := make(chan fetchResult, 1)
	fetchCtx := context.WithoutCancel(ctx)
	for {
		select {
		case s := <-signals:
			w.current.signal(s) // SIGHUP and SIGQUIT too: the terminal sends them to run's group only
			if passedOn(s) {
				w.terminating = true
				w.pending = false
				debounce.Stop()
				if !w.stopping {
					w.stopBy = time.Now().Add(w.opts.grace)
				}
			}
		case <-w.current.done:
			if !w.stopping || w.terminating {
				stopFeed()
				// What CMD left in its group: the signal it had, or
				// SIGTERM when CMD ended on its own; then -grace.
				var sig syscall.Signal
				if w.stopBy.IsZero() {
					sig, w.stopBy = syscall.SIGTERM, time.Now().Add(w.opts.grace)
				}
				w.current.endGroup(sig, w.stopBy)
				return w.current.err
			}
			grace.Stop()
			w.current.endGroup(0, w.stopBy) // nothing of the old environment survives the restart
			w.stopping, w.stopBy = false, time.Time{}
			c, err := startChild(w.e, w.command, w.nextVars)
			if err != nil {
				stopFeed()
				return err
			}
			w.current, w.vars = c, w.nextVars
			if w.pending && !w.fetching && w.due {
				// A change came while CMD was stopping and its
				// -debounce has passed: fetch now. (Else its timer
				// still runs.)
				debounce.Reset(0)
			}
		case <-grace.C:
			if w.stopping {
				w.current.signal(syscall.SIGKILL)
			}
		case ev := <-events:
			if !w.following || w.terminating || !w.matters(ev) {
				continue
			}
			w.burstRevision = ev.revision
			w.pending = true
			w.retryWait = 0
			if w.fetching {
				w.fetchedAfter = true
			}
			debounce.Reset(w.opts.debounce)
		case err := <-lost:
			w.loseAccess(err, stopFeed)
		case <-debounce.C:
			if w.fetching || w.stopping {
				w.due = true // fetched once that is over
				continue
			}
			if !w.pending || !w.following || w.terminating {
				continue
			}
			w.fetching, w.fetchedAfter, w.due = true, false, false
			go func() { fetched <- w.fetchWatched(fetchCtx) }()
		case r := <-fetched:
			w.fetching = false
			if !w.following || w.terminating {
				continue
			}
			if r.err != nil && accessLost(r.err) {
				w.loseAccess(r.err, stopFeed)
				continue
			}
			if w.fetchedAfter {
				// A newer change came meanwhile: fetch again, for the
				// newest environment, -debounce after that change (now,
				// when that time has passed while fetching).
				if w.due {
					debounce.Reset(0)
				}
				continue
			}
			if r.err != nil {
				w.fetchFailed(r.err, debounce)
				continue
			}
			w.watched = r.watched
			w.pending = false
			if slices.Equal(r.vars, w.vars) {
				continue
			}
			fmt.Fprintf(w.e.stderr, "hds: configuration changed (revision %d), restarting\n", w.burstRevision)
			w.stopping, w.nextVars = true, r.vars
			w.current.signal(w.opts.signal)
			w.stopBy = time.Now().Add(w.opts.grace)
			grace.Reset(w.opts.grace)
		}
	}
}

// fetchWatched fetches the environment and the clusters it is built from.
func (w *watcher) fetchWatched(ctx context.Context) fetchResult {
	vars, err := w.t.fetch(ctx, w.e)
	if err != nil && vars == nil {
		return fetchResult{err: err}
	}
	if err != nil { // fetched; only the cache could not be written
		fmt.Fprintf(w.e.stderr, "hds: %v\n", err)
	}
	return fetchResult{vars: vars, watched: reach(ctx, w.t)}
}

// fetchFailed handles a fetch that failed while watching: a server that cannot be reached is tried again (1 s,
// doubling up to 30 s), anything else (a reference that does not
// resolve) waits for the next change. CMD keeps running as it is.
func (w *watcher) fetchFailed(err error, debounce *time.Timer) {
	switch {
	case unreachable(err):
		w.retryWait = min(max(2*w.retryWait, feedFirstWait), feedMaxWait)
		fmt.Fprintf(w.e.stderr, "hds: cannot fetch the configuration (%v): trying again in %s\n", err, w.retryWait)
		debounce.Reset(w.retryWait)
	default:
		w.pending = false
		fmt.Fprintf(w.e.stderr, "hds: cannot fetch the configuration (%v): %s keeps running as it is\n", err, w.command[0])
	}
}

// loseAccess stops following: the token was revoked or lost its access.
func (w *watcher) loseAccess(err error, stopFeed func()) {
	if !w.following {
		return
	}
	w.following, w.pending = false, false
	stopFeed()
	fmt.Fprintf(w.e.stderr, "hds: the access to %s was lost (%v): no longer following its changes; %s keeps running\n",
		w.t.clusterFlag, err, w.command[0])
}

// matters reports whether a change may change the environment: a change
// of a record of a cluster the environment was built from, and any
// rename, creation or deletion of a cluster, collection or project, and
// any change of membership (the caller's own rights may change).
func (w *watcher) matters(ev feedEvent) bool {
	if strings.HasPrefix(ev.action, "record.") {
		return w.watched == nil || w.watched[clusterKey{ev.collection, ev.cluster}]
	}
	switch ev.action {
	case "project.rename", "project.transfer", "collection.create", "collection.rename", "collection.delete",
		"cluster.create", "cluster.rename", "cluster.delete", "member.put", "member.delete", "token.delete":
		return true
	}
	return false
}

// reach returns the clusters the environment is built from: the
// cluster's own and, when references are resolved, every cluster a
// reference reaches, followed through the values of the records they
// name (docs/api.md#20-references-between-records). Values are read as
// stored and masked (a credential is never scanned for references); a
// cluster that cannot be read is watched all the same.
func reach(ctx context.Context, t *runTarget) map[clusterKey]bool {
	own := clusterKey{t.col, t.k}
	watched := map[clusterKey]bool{own: true}
	if !t.resolve {
		return watched
	}
	data := map[clusterKey]map[string]json.RawMessage{}
	type item struct {
		at   clusterKey
		name string // "" for every record of the cluster
	}
	queue := []item{{at: own}}
	seen := map[item]bool{}
	for len(queue) > 0 && len(seen) < 1000 {
		it := queue[0]
		queue = queue[1:]
		if seen[it] {
			continue
		}
		seen[it] = true
		watched[it.at] = true
		records, ok := data[it.at]
		if !ok {
			records = clusterData(ctx, t, it.at)
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

// clusterData returns the values of a cluster's records, as stored (GET
// K), or nil when it cannot be read.
func clusterData(ctx context.Context, t *runTarget, k clusterKey) map[string]json.RawMessage {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	resp, err := t.c.do(ctx, "GET", projectPath(t.p, k.collection, k.cluster), url.Values{}, nil)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
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

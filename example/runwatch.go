package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/hds-go/hds/client"
)

// run -watch (docs/api.md#programs-that-follow-their-configuration-run--watch-and--cache):
// CMD restarted when the environment it was started with changes. The
// following is client.Watch's (the change feed, its reconnections, the
// debounce, If-None-Match, the retries and the end on 401, 403 or 404);
// what is run's own is CMD, its restarts and signals, the cache and the
// lines on stderr.

// watchMsg is what Watch tells run: a call of its function (k), or an
// error it retries (err, retried after retry; 0: it waits for the next
// change). Watch waits until run closes done.
type watchMsg struct {
	k     *client.Cluster
	err   error
	retry time.Duration
	done  chan struct{}
}

// watching is one client.Watch (or WatchSince) of run -watch.
type watching struct {
	msgs   chan watchMsg
	ended  chan error // what Watch returned
	cancel context.CancelFunc
}

// follow starts following the cluster: with Watch when since is
// negative, else with WatchSince(since).
func follow(ctx context.Context, e *env, t *runTarget, opts watchOptions, since int64) (*watching, error) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &watching{msgs: make(chan watchMsg), ended: make(chan error, 1), cancel: cancel}
	tell := func(m watchMsg) {
		m.done = make(chan struct{})
		select {
		case f.msgs <- m:
		case <-ctx.Done():
			return
		}
		select {
		case <-m.done:
		case <-ctx.Done():
		}
	}
	c, err := newEnvClient(t.c, t.resolve, client.WithDebounce(opts.debounce), client.WithRequestTimeout(t.timeout),
		client.WithWatchErrors(func(err error, retry time.Duration) { tell(watchMsg{err: err, retry: retry}) }))
	if err != nil {
		cancel()
		return nil, err
	}
	fn := func(k *client.Cluster) { tell(watchMsg{k: k}) }
	go func() {
		if since < 0 {
			f.ended <- c.Watch(ctx, t.p, t.col, t.k, fn)
		} else {
			f.ended <- c.WatchSince(ctx, t.p, t.col, t.k, since, fn)
		}
	}()
	return f, nil
}

// stop ends the Watch and waits until it has returned.
func (f *watching) stop() {
	f.cancel()
	<-f.ended
	f.ended <- context.Canceled // for the next stop
}

// watcher is the state of run -watch; only its loop touches it.
type watcher struct {
	e       *env
	t       *runTarget
	command []string
	opts    watchOptions

	f         *watching
	current   *child
	vars      []string // CMD's environment
	following bool     // false once the access is lost

	stopping    bool          // CMD was asked to stop for a restart
	nextVars    []string      // the environment of the restart
	restarted   chan struct{} // closed once the restart is done: Watch waits for it
	terminating bool          // run was asked to stop: no restart any more
	// stopBy is when what is left of CMD's process group is killed: -grace
	// after the signal of a restart or the first one passed on; zero
	// before either.
	stopBy time.Time
}

// runWatch starts CMD and restarts it whenever the environment it was
// started with changes, until CMD exits on its own.
func runWatch(ctx context.Context, e *env, t *runTarget, command []string, opts watchOptions) error {
	f, err := follow(ctx, e, t, opts, -1)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	w := &watcher{e: e, t: t, command: command, opts: opts, f: f, following: true}
	defer func() { w.f.stop() }()
	vars, err := w.first(ctx)
	if err != nil {
		return err
	}
	signals, stop := notifySignals()
	defer stop()
	if w.current, err = startChild(e, command, vars); err != nil {
		return err
	}
	w.vars = vars
	return w.loop(signals)
}

// first is the environment CMD starts with: the first call of Watch, or,
// when the server cannot be reached and there is a cache, the cached
// one (saying so on stderr; Watch then follows the change feed from the
// beginning of the project's history, for the changes the cache may
// miss).
func (w *watcher) first(ctx context.Context) ([]string, error) {
	noToken := w.t.c.token == ""
	for {
		var m watchMsg
		select {
		case m = <-w.f.msgs:
		case err := <-w.f.ended:
			w.f.ended <- err
			return nil, fmt.Errorf("run: %w", runError(err, noToken))
		case <-ctx.Done():
			return nil, fmt.Errorf("run: %w", ctx.Err())
		}
		if m.k != nil {
			vars := w.fetched(m.k)
			close(m.done)
			return vars, nil
		}
		feedErr := w.feedError(m.err)
		err := runError(m.err, noToken)
		switch {
		case feedErr && !(timedOut(m.err) && w.t.cache != nil):
			// The change feed retries; Watch reads the environment all
			// the same, and its failure decides.
			close(m.done)
			continue
		case w.t.cache == nil || !unreachable(err):
			close(m.done)
			return nil, fmt.Errorf("run: %w", err)
		}
		// The server did not answer the change feed within -timeout, or
		// cannot be reached for the environment: start from the cache
		// now (rather than wait as long again for the environment).
		w.f.cancel()
		close(m.done)
		w.f.stop()
		vars, _, err := w.t.fromCache(w.e, err)
		if err != nil {
			return nil, err
		}
		f, err := follow(ctx, w.e, w.t, w.opts, 0)
		if err != nil {
			return nil, fmt.Errorf("run: %w", err)
		}
		w.f = f
		return vars, nil
	}
}

// feedError reports whether err is the change feed's (GET P/events), not
// a read of the environment's.
func (w *watcher) feedError(err error) bool {
	events := projectPath(w.t.p) + "/events"
	var re *client.RequestError
	var ae *client.Error
	return errors.As(err, &re) && re.Path == events || errors.As(err, &ae) && ae.Path == events
}

// timedOut reports whether err is a request that got no answer in time.
func timedOut(err error) bool {
	var to interface{ Timeout() bool }
	return errors.As(err, &to) && to.Timeout()
}

// fetched is the environment of k, written to the cache; it says once
// when records were left out, and when the cache could not be written.
func (w *watcher) fetched(k *client.Cluster) []string {
	if k.Skipped > 0 && !w.t.skippedShown {
		w.t.skippedShown = true
		fmt.Fprintf(w.e.stderr, "run: %d records of %s left out: their names are not environment variable names\n",
			k.Skipped, w.t.clusterFlag)
	}
	if w.t.cache != nil {
		if err := w.t.cache.write(k.Env, time.Now()); err != nil {
			fmt.Fprintf(w.e.stderr, "hds: %v\n", err)
		}
	}
	return k.Env
}

// loop runs until CMD exits on its own (or after run was asked to stop).
func (w *watcher) loop(signals <-chan os.Signal) error {
	grace := time.NewTimer(time.Hour)
	grace.Stop()
	ended := w.f.ended
	for {
		select {
		case s := <-signals:
			w.current.signal(s) // SIGHUP and SIGQUIT too: the terminal sends them to run's group only
			if passedOn(s) {
				w.terminating = true
				if !w.stopping {
					w.stopBy = time.Now().Add(w.opts.grace)
				}
			}
		case <-w.current.done:
			if !w.stopping || w.terminating {
				w.f.stop()
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
				return err
			}
			w.current, w.vars = c, w.nextVars
			close(w.restarted) // Watch goes on
		case <-grace.C:
			if w.stopping {
				w.current.signal(syscall.SIGKILL)
			}
		case m := <-w.f.msgs:
			if m.k == nil {
				w.retried(m.err, m.retry)
				close(m.done)
				continue
			}
			if w.terminating {
				close(m.done)
				continue
			}
			vars := w.fetched(m.k)
			if slices.Equal(vars, w.vars) {
				close(m.done)
				continue
			}
			fmt.Fprintf(w.e.stderr, "hds: configuration changed (revision %d), restarting\n", m.k.Revision)
			w.stopping, w.nextVars, w.restarted = true, vars, m.done
			w.current.signal(w.opts.signal)
			w.stopBy = time.Now().Add(w.opts.grace)
			grace.Reset(w.opts.grace)
		case err := <-ended:
			w.f.ended <- err // for stop
			ended = nil
			w.loseAccess(err)
		}
	}
}

// retried says on stderr what Watch retries: a fetch that failed (tried
// again, or, for a reference that does not resolve, waiting for the next
// change while CMD keeps running as it is) and a change feed given up for
// its silence. The change feed's failed connections it leaves unsaid.
func (w *watcher) retried(err error, retry time.Duration) {
	var re *client.RequestError
	switch {
	case errors.Is(err, client.ErrSilent) && errors.As(err, &re):
		fmt.Fprintf(w.e.stderr, "hds: %v (the server sends a keep-alive every 15 s): reconnecting\n", re.Err)
	case w.feedError(err):
	case retry > 0:
		fmt.Fprintf(w.e.stderr, "hds: cannot fetch the configuration (%v): trying again in %s\n", runError(err, w.t.c.token == ""), retry)
	default:
		fmt.Fprintf(w.e.stderr, "hds: cannot fetch the configuration (%v): %s keeps running as it is\n",
			runError(err, w.t.c.token == ""), w.command[0])
	}
}

// loseAccess stops following: Watch ended on a 401, 403 or 404, the
// token revoked or its access taken away.
func (w *watcher) loseAccess(err error) {
	var ae *client.Error
	if !w.following || !errors.As(err, &ae) {
		return
	}
	w.following = false
	fmt.Fprintf(w.e.stderr, "hds: the access to %s was lost (%v): no longer following its changes; %s keeps running\n",
		w.t.clusterFlag, runError(err, w.t.c.token == ""), w.command[0])
}

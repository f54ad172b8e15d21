package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/hds-go/hds/client"
)

const runUsage = `run [-url URL] [-resolve=false] [-timeout D] [-cache FILE] -cluster P/C/K -- CMD ARGS...   run CMD with the cluster's records in its environment
run -watch [-signal SIG] [-grace D] [-debounce D] [other run flags] -cluster P/C/K -- CMD ARGS...   and restart CMD when they change
`

// runTarget is what run fetches: the environment of one cluster.
type runTarget struct {
	c            *apiClient     // for the reads of run -watch's reach
	env          *client.Client // for the environment
	p, col, k    string
	resolve      bool
	timeout      time.Duration // of each fetch
	cache        *envCache     // nil without -cache
	clusterFlag  string        // P/C/K as given
	skippedShown bool
}

// watchOptions are the flags of run -watch.
type watchOptions struct {
	signal   syscall.Signal
	grace    time.Duration
	debounce time.Duration
}

// runRun runs "run [flags] -cluster P/C/K -- CMD ARGS..."
// (docs/api.md#programs-that-follow-their-configuration-run--watch-and--cache): it fetches
// the cluster's environment file (GET K?format=env&reveal=true, with
// resolve=true unless -resolve=false: references resolved), starts
// CMD with those variables added to the environment, and exits with CMD's
// status. With -cache it keeps the environment sealed in a file and
// starts from it when the server cannot be reached; with -watch it
// follows the change feed and restarts CMD when its environment changes.
// No value is ever printed, not even on errors.
func runRun(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	clusterFlag := fs.String("cluster", "", "the cluster, as `PROJECT/COLLECTION/CLUSTER`")
	resolveFlag := fs.Bool("resolve", true, "resolve the references between records (false: the values as stored)")
	timeoutFlag := fs.Duration("timeout", 10*time.Second, "how long to wait for the server's answer to a fetch")
	cacheFlag := fs.String("cache", "", "keep the environment in this `FILE`, sealed with $HDS_CACHE_KEY, and start from it when the server cannot be reached")
	watchFlag := fs.Bool("watch", false, "follow the project's changes and restart CMD when its environment changes")
	signalFlag := fs.String("signal", "TERM", "with -watch, the `SIGNAL` that asks CMD to stop for a restart: TERM, INT, HUP, QUIT, USR1 or USR2")
	graceFlag := fs.Duration("grace", 10*time.Second, "with -watch, how long CMD may take to stop before it is killed")
	debounceFlag := fs.Duration("debounce", time.Second, "with -watch, how long to wait after the last change of a burst")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	names := strings.Split(*clusterFlag, "/")
	if len(names) != 3 || names[0] == "" || names[1] == "" || names[2] == "" {
		return usagef("run: -cluster must name a cluster as PROJECT/COLLECTION/CLUSTER")
	}
	command := fs.Args()
	if len(command) == 0 {
		return usagef("run: give the command to run after --")
	}
	var watchOnly []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "signal" || f.Name == "grace" || f.Name == "debounce" {
			watchOnly = append(watchOnly, "-"+f.Name)
		}
	})
	if !*watchFlag && len(watchOnly) > 0 {
		return usagef("run: %s only applies with -watch", watchOnly[0])
	}
	sig, ok := restartSignals[strings.TrimPrefix(*signalFlag, "SIG")]
	if !ok {
		return usagef("run: -signal must be one of TERM, INT, HUP, QUIT, USR1, USR2, got %q", *signalFlag)
	}
	switch {
	case *graceFlag < 0:
		return usagef("run: -grace must not be negative, got %s", *graceFlag)
	case *debounceFlag < 0:
		return usagef("run: -debounce must not be negative, got %s", *debounceFlag)
	case *timeoutFlag <= 0:
		return usagef("run: -timeout must be longer than zero, got %s", *timeoutFlag)
	}
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	envClient, err := newEnvClient(c, *resolveFlag)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	t := &runTarget{c: c, env: envClient, p: names[0], col: names[1], k: names[2], resolve: *resolveFlag, timeout: *timeoutFlag,
		clusterFlag: *clusterFlag}
	if *cacheFlag != "" {
		if t.cache, err = newEnvCache(e, *cacheFlag, *clusterFlag); err != nil {
			return fmt.Errorf("run: %w", err)
		}
	}
	if *watchFlag {
		return runWatch(ctx, e, t, command, watchOptions{signal: sig, grace: *graceFlag, debounce: *debounceFlag})
	}
	vars, _, err := t.firstEnv(ctx, e)
	if err != nil {
		return err
	}
	return runCommand(e, command, vars)
}

// noAnswer is the cause of a request the server did not answer within
// d (-timeout).
type noAnswer struct{ d time.Duration }

func (n noAnswer) Error() string { return fmt.Sprintf("no answer within %s", n.d) }

// fetch fetches the environment within the time-out, writes it to the
// cache, and says once when records were left out.
func (t *runTarget) fetch(ctx context.Context, e *env) ([]string, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, t.timeout, noAnswer{t.timeout})
	defer cancel()
	vars, skipped, err := fetchEnv(ctx, t.env, t.c.token == "", t.p, t.col, t.k)
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != nil && unreachable(err) {
			err = &unreachableError{fmt.Errorf("GET %s: %w", projectPath(t.p, t.col, t.k), context.Cause(ctx))}
		}
		return nil, err
	}
	if skipped > 0 && !t.skippedShown {
		t.skippedShown = true
		fmt.Fprintf(e.stderr, "run: %d records of %s left out: their names are not environment variable names\n",
			skipped, t.clusterFlag)
	}
	if t.cache != nil {
		if err := t.cache.write(vars, time.Now()); err != nil {
			return vars, err
		}
	}
	return vars, nil
}

// firstEnv is the environment CMD starts with: fetched, or, when the
// server cannot be reached and there is a cache, the cached one (saying
// so on stderr). fromCache reports the latter.
func (t *runTarget) firstEnv(ctx context.Context, e *env) (vars []string, fromCache bool, err error) {
	vars, err = t.fetch(ctx, e)
	switch {
	case err == nil:
		return vars, false, nil
	case vars != nil: // fetched, but the cache could not be written
		return nil, false, fmt.Errorf("run: %w", err)
	case t.cache == nil || !unreachable(err):
		return nil, false, fmt.Errorf("run: %w", err)
	}
	return t.fromCache(e, err)
}

// fromCache is the environment of the cache, for a server that cannot
// be reached (err says why), said on stderr.
func (t *runTarget) fromCache(e *env, err error) ([]string, bool, error) {
	vars, at, cerr := t.cache.read()
	if cerr != nil {
		return nil, false, fmt.Errorf("run: the server cannot be reached (%v) and %w", err, cerr)
	}
	age := max(time.Since(at), 0) / time.Second
	fmt.Fprintf(e.stderr, "hds: the server cannot be reached (%v): starting from the cache %s, written %d seconds ago\n",
		err, t.cache.path, age)
	return vars, true, nil
}

// fetchEnv fetches the environment file of cluster p/c/k through the
// client made by newEnvClient and returns its variables as NAME=value
// entries and the number of records it left out. Its errors are as
// apiClient.do's (runError; noToken: c sends no token).
func fetchEnv(ctx context.Context, c *client.Client, noToken bool, p, col, k string) ([]string, int, error) {
	got, err := c.Cluster(ctx, p, col, k)
	if err != nil {
		return nil, 0, runError(err, noToken)
	}
	return got.Env, got.Skipped, nil
}

// newEnvClient is the client of the package client that run reads the
// environment with: the server, token and HTTP client of c, the
// environment file with credentials revealed, references resolved unless
// resolve is false, with the extra options. The URL was checked by newAPIClient, which allows
// http:// to any host.
func newEnvClient(c *apiClient, resolve bool, extra ...client.Option) (*client.Client, error) {
	opts := append([]client.Option{client.WithToken(c.token), client.WithHTTPClient(c.http), client.WithPlainHTTP(), client.WithEnvFile()}, extra...)
	if !resolve {
		opts = append(opts, client.WithoutResolve())
	}
	return client.New(c.base, opts...)
}

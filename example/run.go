package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const runUsage = `run [-url URL] [-resolve=false] [-timeout D] [-cache FILE] -cluster P/C/K -- CMD ARGS...   run CMD with the cluster's records in its environment
run -watch [-signal SIG] [-grace D] [-debounce D] [other run flags] -cluster P/C/K -- CMD ARGS...   and restart CMD when they change
`

// runTarget is what run fetches: the environment of one cluster.
type runTarget struct {
	c            *apiClient
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
	t := &runTarget{c: c, p: names[0], col: names[1], k: names[2], resolve: *resolveFlag, timeout: *timeoutFlag,
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
	vars, skipped, err := fetchEnv(ctx, t.c, t.p, t.col, t.k, t.resolve)
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

// fetchEnv fetches the environment file of cluster p/c/k, credentials
// revealed, references resolved when resolve is set, and returns its variables as NAME=value entries and the
// number of records it left out.
func fetchEnv(ctx context.Context, c *apiClient, p, col, k string, resolve bool) ([]string, int, error) {
	path := projectPath(p, col, k)
	query := url.Values{"format": {"env"}, "reveal": {"true"}}
	if resolve {
		query.Set("resolve", "true")
	}
	resp, err := c.do(ctx, "GET", path, query, nil)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, &unreachableError{fmt.Errorf("GET %s: %w", path, err)}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return nil, 0, fmt.Errorf("GET %s: the server did not answer with an environment file (Content-Type %q): "+
			"it may be older than API v1.1", path, ct)
	}
	vars, err := parseEnvFile(body)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", path, err)
	}
	skipped, _ := strconv.Atoi(resp.Header.Get("X-Hds-Skipped-Records"))
	return vars, skipped, nil
}

// errMalformedEnv is the error of an environment file that is not as
// docs/api.md#environment-files writes it. It never quotes the file: it
// holds values.
var errMalformedEnv = errors.New("the environment file is malformed")

// parseEnvFile reads an environment file as GET K?format=env writes it:
// lines NAME='value' in POSIX single quotes (a quote inside the value
// ends the quoted string, comes escaped as \' and a new one opens), each
// line ending with a newline. It returns NAME=value entries.
func parseEnvFile(b []byte) ([]string, error) {
	var vars []string
	for len(b) > 0 {
		eq := bytes.IndexByte(b, '=')
		if eq < 0 || !isEnvName(b[:eq]) {
			return nil, errMalformedEnv
		}
		entry := append([]byte(nil), b[:eq+1]...)
		b = b[eq+1:]
		for {
			if len(b) == 0 || b[0] != '\'' {
				return nil, errMalformedEnv
			}
			end := bytes.IndexByte(b[1:], '\'')
			if end < 0 {
				return nil, errMalformedEnv
			}
			entry = append(entry, b[1:1+end]...)
			b = b[end+2:]
			if !bytes.HasPrefix(b, []byte(`\'`)) {
				break
			}
			entry = append(entry, '\'')
			b = b[2:]
		}
		if len(b) == 0 || b[0] != '\n' {
			return nil, errMalformedEnv
		}
		b = b[1:]
		vars = append(vars, string(entry))
	}
	return vars, nil
}

// isEnvName reports whether name is [A-Za-z_][A-Za-z0-9_]*.
func isEnvName(name []byte) bool {
	for i, c := range name {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return len(name) > 0
}

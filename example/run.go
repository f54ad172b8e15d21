package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

const runUsage = `run [-url URL] [-resolve=false] -cluster P/C/K -- CMD ARGS...   run CMD with the cluster's records in its environment
`

// runRun runs "run [-url URL] [-resolve=false] -cluster P/C/K -- CMD ARGS...": it fetches
// the cluster's environment file (GET K?format=env&reveal=true, with
// resolve=true unless -resolve=false: references resolved), starts
// CMD with those variables added to the environment, and exits with CMD's
// status. No value is ever printed, not even on errors.
func runRun(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	urlFlag := clientFlags(fs)
	clusterFlag := fs.String("cluster", "", "the cluster, as `PROJECT/COLLECTION/CLUSTER`")
	resolveFlag := fs.Bool("resolve", true, "resolve the references between records (false: the values as stored)")
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
	c, err := newAPIClient(e, *urlFlag)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	vars, skipped, err := fetchEnv(ctx, c, names[0], names[1], names[2], *resolveFlag)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if skipped > 0 {
		fmt.Fprintf(e.stderr, "run: %d records of %s left out: their names are not environment variable names\n",
			skipped, *clusterFlag)
	}
	return runCommand(e, command, vars)
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
		return nil, 0, fmt.Errorf("GET %s: %w", path, err)
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

// exitError ends the program with code, after printing err when it is
// not nil (main does both).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return "exit status " + strconv.Itoa(e.code)
}

func (e *exitError) Unwrap() error { return e.err }

// runCommand starts command with vars added to the process's environment
// (a variable of the cluster wins over one of the same name), waits for
// it and returns nil when it succeeds, or an exitError with its status:
// its exit code, 128+N when signal N ended it (as shells report it), 127
// when it cannot be found and 126 when it cannot be started. While it
// runs, SIGINT, SIGQUIT and SIGHUP (which a terminal sends to the whole
// process group, the command included) do not end this process, and
// SIGTERM is passed on to the command.
func runCommand(e *env, command []string, vars []string) error {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), vars...) // for duplicate names, exec uses the last
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP)
	defer signal.Stop(signals)
	if err := cmd.Start(); err != nil {
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return &exitError{code: code, err: fmt.Errorf("run: %w", err)}
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-signals:
				if s == syscall.SIGTERM {
					_ = cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return &exitError{code: code}
	}
	// Copying the command's output failed (our stdout went away).
	return &exitError{code: 1, err: fmt.Errorf("run: %w", err)}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the programs the run tests start, so that no
// build is needed: "hds-test-child LOG MODE" is CMD, a program that
// records its starts, environment and signals in LOG, and
// "hds-test-example ARGS..." is the example itself (main), for the tests
// that send signals to run.

// helperMain runs the program os.Args names, if any, and never returns
// then.
func helperMain() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case "hds-test-child":
		childMain(os.Args[2], os.Args[3])
	case "hds-test-example":
		os.Args = append([]string{"example"}, os.Args[2:]...)
		main()
		os.Exit(0)
	}
}

// childMain is CMD: it writes "start PID ENV" to log (ENV the APP_*
// variables as JSON) once its signals are caught, and "signal PID NAME"
// for each signal. SIGUSR2 makes it exit with status 3 (CMD ending on its
// own). In mode "die" any other signal ends it, as that signal (its
// status is 128+N; SIGUSR1 with exit status 128+N); in mode "stubborn" it
// ignores them.
func childMain(log, mode string) {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	pid := os.Getpid()
	vars := map[string]string{}
	for _, kv := range os.Environ() {
		if name, value, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "APP_") {
			vars[name] = value
		}
	}
	b, _ := json.Marshal(vars)
	appendLine(log, fmt.Sprintf("start %d %s", pid, b))
	for s := range signals {
		sig := s.(syscall.Signal)
		appendLine(log, fmt.Sprintf("signal %d %s", pid, signalName(sig)))
		if sig == syscall.SIGUSR2 {
			os.Exit(3)
		}
		if mode != "die" {
			continue
		}
		if sig == syscall.SIGUSR1 {
			os.Exit(128 + int(sig)) // the runtime takes no action on a SIGUSR1 it does not catch
		}
		// SIGTERM, SIGINT, SIGHUP and SIGQUIT end a Go program that does
		// not catch them, as that signal.
		signal.Reset(sig)
		_ = syscall.Kill(pid, sig)
		time.Sleep(time.Minute)
	}
}

// signalName is the name -signal gives sig.
func signalName(sig syscall.Signal) string {
	for name, s := range restartSignals {
		if s == sig {
			return name
		}
	}
	return sig.String()
}

// appendLine appends one line to the file at path.
func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		panic(err)
	}
}

// childCommand is CMD: the test binary as a child writing to log.
func childCommand(t *testing.T, log, mode string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "hds-test-child", log, mode}
}

// childStart is one start of CMD, as its log says.
type childStart struct {
	pid  int
	vars map[string]string
}

// childLog reads the log of the children.
type childLog struct {
	t    *testing.T
	path string
}

// lines returns the log's lines.
func (l childLog) lines() []string {
	b, err := os.ReadFile(l.path)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// starts returns every start so far.
func (l childLog) starts() []childStart {
	var starts []childStart
	for _, line := range l.lines() {
		rest, ok := strings.CutPrefix(line, "start ")
		if !ok {
			continue
		}
		pidText, varsText, _ := strings.Cut(rest, " ")
		pid, _ := strconv.Atoi(pidText)
		s := childStart{pid: pid}
		if err := json.Unmarshal([]byte(varsText), &s.vars); err != nil {
			l.t.Fatalf("log line %q: %v", line, err)
		}
		starts = append(starts, s)
	}
	return starts
}

// waitStarts waits for the n-th start and returns it.
func (l childLog) waitStarts(n int) childStart {
	l.t.Helper()
	l.waitUntil(fmt.Sprintf("start %d of CMD", n), func() bool { return len(l.starts()) >= n })
	return l.starts()[n-1]
}

// has reports whether the log holds line.
func (l childLog) has(line string) bool {
	for _, got := range l.lines() {
		if got == line {
			return true
		}
	}
	return false
}

// waitUntil waits until cond holds, failing the test after a minute.
func (l childLog) waitUntil(what string, cond func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			l.t.Fatalf("no %s after a minute; the log of CMD:\n%s", what, strings.Join(l.lines(), "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killChildren kills every child the log names that may still run.
func (l childLog) killChildren() {
	for _, s := range l.starts() {
		_ = syscall.Kill(s.pid, syscall.SIGKILL)
	}
}

// runInBackground is run started in process, returning when CMD ends.
type runInBackground struct {
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

// startRun runs the program with args and env in the background; the
// test's end kills the children of log.
func startRun(t *testing.T, log childLog, args []string, env map[string]string) *runInBackground {
	t.Helper()
	r := &runInBackground{stderr: &syncBuffer{}, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = run(context.Background(), append([]string{"example"}, args...), environ(env), strings.NewReader(""), &syncBuffer{}, r.stderr)
	}()
	t.Cleanup(func() {
		log.killChildren()
		select {
		case <-r.done:
		case <-time.After(time.Minute):
			t.Error("run did not return after its children were killed")
		}
	})
	return r
}

// wait waits for run to return and returns its exit status.
func (r *runInBackground) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		t.Fatalf("run did not return within a minute; stderr:\n%s", r.stderr.String())
	}
	if r.err == nil {
		return 0
	}
	var exit *exitError
	if ee, ok := r.err.(*exitError); ok {
		exit = ee
		if exit.err == nil {
			return exit.code
		}
	}
	t.Fatalf("run returned %v", r.err)
	return 0
}

// waitStderr waits until run's stderr holds s.
func (r *runInBackground) waitStderr(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(r.stderr.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on stderr after a minute:\n%s", s, r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// breaker is a proxy in front of a server whose connections the test
// can break: while broken, every request is answered 503 and the open
// streams are cut.
type breaker struct {
	url    string
	srv    *httptest.Server
	mu     sync.Mutex
	broken bool
	target *url.URL // the server behind
}

// newBreaker starts a proxy of backend.
func newBreaker(t *testing.T, backend string, broken bool) *breaker {
	t.Helper()
	target, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	b := &breaker{broken: broken, target: target}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			b.mu.Lock()
			defer b.mu.Unlock()
			pr.SetURL(b.target)
		},
		FlushInterval: -1, // events as they come
	}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		broken := b.broken
		b.mu.Unlock()
		if broken {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"success":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"Service unavailable"}}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	b.url = b.srv.URL
	return b
}

// cut breaks the connections until mend.
func (b *breaker) cut() {
	b.mu.Lock()
	b.broken = true
	b.mu.Unlock()
	b.srv.CloseClientConnections()
}

// mend lets requests through again, to backend when not "".
func (b *breaker) mend(t *testing.T, backend string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if backend != "" {
		target, err := url.Parse(backend)
		if err != nil {
			t.Fatal(err)
		}
		b.target = target
	}
	b.broken = false
}

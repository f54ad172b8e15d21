package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCacheKey is HDS_CACHE_KEY in the tests.
var testCacheKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))

// TestRunCache: -cache writes the environment sealed, mode 0600, and run
// starts CMD from it when the server cannot be reached (connection
// refused, no answer within -timeout, a 5xx), saying so in one line.
func TestRunCache(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	setRecord(t, base, token, "k", "APP_SECRET", "cache-secret-value", http.StatusCreated)
	dir := t.TempDir()
	cache := filepath.Join(dir, "env.cache")
	out := filepath.Join(dir, "env")
	env := map[string]string{"HDS_TOKEN": token, "HDS_CACHE_KEY": testCacheKey}
	script := []string{"sh", "-c", `env -0 > "$0"`, out}

	_, stderr, err := runOnce(t, append([]string{"run", "-url", base, "-cache", cache, "-cluster", "p/c/k", "--"}, script...), env, "")
	require.NoError(t, err)
	assert.Empty(t, stderr)
	info, err := os.Stat(cache)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	sealed, err := os.ReadFile(cache)
	require.NoError(t, err)
	assert.NotContains(t, string(sealed), "cache-secret-value")
	assert.NotContains(t, string(sealed), "APP_")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary file left: %v", entries)

	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"success":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"Service unavailable"}}`))
	}))
	defer down.Close()
	const route = "GET /api/v1/projects/p/collections/c/clusters/k: "
	for _, tc := range []struct{ what, url, why string }{
		{"refused", "http://127.0.0.1:1", "dial tcp 127.0.0.1:1: connect: connection refused"},
		{"no answer", hang.URL, "no answer within 300ms"},
		{"5xx", down.URL, "503 SERVICE_UNAVAILABLE: Service unavailable"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			require.NoError(t, os.Remove(out))
			_, stderr, err := runOnce(t, append([]string{"run", "-url", tc.url, "-timeout", "300ms", "-cache", cache,
				"-cluster", "p/c/k", "--"}, script...), env, "")
			require.NoError(t, err)
			assert.Regexp(t, "^"+regexp.QuoteMeta("hds: the server cannot be reached ("+route+tc.why+"): starting from the cache "+
				cache+", written ")+`\d+`+regexp.QuoteMeta(" seconds ago\n")+"$", stderr)
			vars := readEnv0(t, out)
			assert.Equal(t, "cache-secret-value", vars["APP_SECRET"])
			assert.Equal(t, "postgres://h1/app", vars["APP_DSN"])
		})
	}
}

// TestRunCacheErrors: access taken away never falls back to the cache,
// and every misuse of the cache or of a flag is one line and a non-zero
// exit, without starting CMD.
func TestRunCacheErrors(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	viewer := mustCall(t, "POST", base+"/api/v1/projects/p/tokens", token,
		map[string]any{"name": "viewer", "role": "viewer"}, http.StatusCreated)["data"].(map[string]any)["token"].(string)
	dir := t.TempDir()
	cache := filepath.Join(dir, "env.cache")
	_, _, err := runOnce(t, []string{"run", "-url", base, "-cache", cache, "-cluster", "p/c/k", "--", "true"},
		map[string]string{"HDS_TOKEN": token, "HDS_CACHE_KEY": testCacheKey}, "")
	require.NoError(t, err)
	otherCluster := filepath.Join(dir, "other.cache")
	_, _, err = runOnce(t, []string{"run", "-url", base, "-cache", otherCluster, "-cluster", "p/c/db", "--", "true"},
		map[string]string{"HDS_TOKEN": token, "HDS_CACHE_KEY": testCacheKey}, "")
	require.NoError(t, err)

	marker := filepath.Join(dir, "started")
	cmd := []string{"--", "sh", "-c", `touch "$0"`, marker}
	withKey := func(key string) map[string]string { return map[string]string{"HDS_TOKEN": token, "HDS_CACHE_KEY": key} }
	key16 := base64.StdEncoding.EncodeToString(make([]byte, 16))
	otherKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{4}, 32))
	const route = "run: GET /api/v1/projects/p/collections/c/clusters/k: "
	const down = "run: the server cannot be reached (GET /api/v1/projects/p/collections/c/clusters/k: dial tcp 127.0.0.1:1: connect: connection refused) and the cache "
	for _, tc := range []struct {
		what string
		args []string
		env  map[string]string
		want string
	}{
		{"401", []string{"-url", base, "-cache", cache}, map[string]string{"HDS_TOKEN": "nope", "HDS_CACHE_KEY": testCacheKey},
			route + "401 AUTHENTICATION_FAILED: Invalid or expired token"},
		{"403", []string{"-url", base, "-cache", cache}, map[string]string{"HDS_TOKEN": viewer, "HDS_CACHE_KEY": testCacheKey},
			route + "403 AUTHORIZATION_FAILED: Insufficient permissions"},
		{"404", []string{"-url", base, "-cache", cache, "-cluster", "p/c/nope"}, withKey(testCacheKey),
			`run: GET /api/v1/projects/p/collections/c/clusters/nope: 404 RESOURCE_NOT_FOUND: Resource not found: cluster "nope" not found`},
		{"401 with -watch", []string{"-watch", "-url", base, "-cache", cache}, map[string]string{"HDS_TOKEN": "nope", "HDS_CACHE_KEY": testCacheKey},
			route + "401 AUTHENTICATION_FAILED: Invalid or expired token"},
		{"no key", []string{"-url", base, "-cache", cache}, map[string]string{"HDS_TOKEN": token},
			"run: -cache needs HDS_CACHE_KEY, the standard base64 of 32 bytes (make one with: openssl rand -base64 32)"},
		{"key not base64", []string{"-url", base, "-cache", cache}, withKey("not base64!"),
			"run: HDS_CACHE_KEY is not valid standard base64 (the key is not shown; make one with: openssl rand -base64 32)"},
		{"short key", []string{"-url", base, "-cache", cache}, withKey(key16),
			"run: HDS_CACHE_KEY must be the base64 of exactly 32 bytes, it decodes to 16 bytes (the key is not shown; make one with: openssl rand -base64 32)"},
		{"missing cache", []string{"-url", "http://127.0.0.1:1", "-cache", filepath.Join(dir, "nope")}, withKey(testCacheKey),
			down + filepath.Join(dir, "nope") + " cannot be read: no such file or directory"},
		{"another key", []string{"-url", "http://127.0.0.1:1", "-cache", cache}, withKey(otherKey),
			down + cache + " does not open with HDS_CACHE_KEY (another key, another cluster, or damaged)"},
		{"another cluster", []string{"-url", "http://127.0.0.1:1", "-cache", otherCluster}, withKey(testCacheKey),
			down + otherCluster + " does not open with HDS_CACHE_KEY (another key, another cluster, or damaged)"},
		{"missing cache with -watch", []string{"-watch", "-url", "http://127.0.0.1:1", "-cache", filepath.Join(dir, "nope")}, withKey(testCacheKey),
			down + filepath.Join(dir, "nope") + " cannot be read: no such file or directory"},
		{"cache not writable", []string{"-url", base, "-cache", filepath.Join(dir, "no-dir", "env.cache")}, withKey(testCacheKey),
			"run: write the cache " + filepath.Join(dir, "no-dir", "env.cache") + ": open " + filepath.Join(dir, "no-dir") + "/"},
		{"signal without -watch", []string{"-url", base, "-signal", "HUP"}, withKey(testCacheKey),
			"run: -signal only applies with -watch (usage: example run -h)"},
		{"grace without -watch", []string{"-url", base, "-grace", "1s"}, withKey(testCacheKey),
			"run: -grace only applies with -watch (usage: example run -h)"},
		{"debounce without -watch", []string{"-url", base, "-debounce", "1s"}, withKey(testCacheKey),
			"run: -debounce only applies with -watch (usage: example run -h)"},
		{"bad signal", []string{"-watch", "-url", base, "-signal", "KILL"}, withKey(testCacheKey),
			`run: -signal must be one of TERM, INT, HUP, QUIT, USR1, USR2, got "KILL" (usage: example run -h)`},
		{"negative grace", []string{"-watch", "-url", base, "-grace", "-1s"}, withKey(testCacheKey),
			"run: -grace must not be negative, got -1s (usage: example run -h)"},
		{"negative debounce", []string{"-watch", "-url", base, "-debounce", "-1s"}, withKey(testCacheKey),
			"run: -debounce must not be negative, got -1s (usage: example run -h)"},
		{"zero timeout", []string{"-url", base, "-timeout", "0s"}, withKey(testCacheKey),
			"run: -timeout must be longer than zero, got 0s (usage: example run -h)"},
		{"bad duration", []string{"-watch", "-url", base, "-grace", "soon"}, withKey(testCacheKey),
			`run: invalid value "soon" for flag -grace: parse error (usage: example run -h)`},
		{"bad watch", []string{"-watch=maybe", "-url", base}, withKey(testCacheKey),
			`run: invalid boolean value "maybe" for -watch: parse error (usage: example run -h)`},
	} {
		t.Run(tc.what, func(t *testing.T) {
			args := append([]string{"run"}, tc.args...)
			if !strings.Contains(strings.Join(tc.args, " "), "-cluster") {
				args = append(args, "-cluster", "p/c/k")
			}
			stdout, stderr, err := runOnce(t, append(args, cmd...), tc.env, "")
			require.Error(t, err)
			if strings.HasSuffix(tc.want, ": ") || strings.HasSuffix(tc.want, "/") {
				assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%q does not start with %q", err.Error(), tc.want)
			} else {
				assert.Equal(t, tc.want, err.Error())
			}
			assert.NotContains(t, err.Error(), "\n", "one line")
			var exit *exitError
			assert.False(t, errors.As(err, &exit), "exit status 1")
			assert.Empty(t, stdout)
			assert.NotContains(t, stderr, "hds:", "no fallback")
			assert.NotContains(t, err.Error(), testCacheKey)
			assert.NoFileExists(t, marker, "CMD was started")
		})
	}
}

// TestRunWatchFromCache: run -watch starts from the cache while the
// server cannot be reached, keeps trying, and restarts CMD once it gets
// through to a different environment, which it caches.
func TestRunWatchFromCache(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	dir := t.TempDir()
	cache := filepath.Join(dir, "env.cache")
	env := map[string]string{"HDS_TOKEN": token, "HDS_CACHE_KEY": testCacheKey}
	_, _, err := runOnce(t, []string{"run", "-url", base, "-cache", cache, "-cluster", "p/c/k", "--", "true"}, env, "")
	require.NoError(t, err)
	rev := setRecord(t, base, token, "k", "APP_A", "2", http.StatusOK)

	front := newBreaker(t, base, true)
	log := childLog{t: t, path: filepath.Join(dir, "log")}
	r := startRun(t, log, append([]string{"run", "-watch", "-url", front.url, "-cache", cache, "-cluster", "p/c/k",
		"-debounce", "100ms", "--"}, childCommand(t, log.path, "die")...), env)
	first := log.waitStarts(1)
	assert.Equal(t, "1", first.vars["APP_A"], "from the cache")
	assert.Contains(t, r.stderr.String(), "hds: the server cannot be reached (GET /api/v1/projects/p/collections/c/clusters/k: 503 SERVICE_UNAVAILABLE: Service unavailable): starting from the cache "+cache)

	front.mend(t, "")
	second := log.waitStarts(2)
	assert.Equal(t, "2", second.vars["APP_A"])
	r.waitStderr(t, restartLine(rev))
	require.NoError(t, syscall.Kill(second.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))

	// The cache holds the new environment.
	out := filepath.Join(dir, "env")
	_, _, err = runOnce(t, []string{"run", "-url", "http://127.0.0.1:1", "-cache", cache, "-cluster", "p/c/k", "--",
		"sh", "-c", `env -0 > "$0"`, out}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "2", readEnv0(t, out)["APP_A"])
}

// TestRunWatchFromCacheFeedOpen: when only the environment cannot be
// fetched at start (a 5xx) while the change feed opens, run -watch starts
// from the cache and still gets through to the newer environment once
// the server answers, with no further change to wake it, naming the
// newest change in its restart line.
func TestRunWatchFromCacheFeedOpen(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	dir := t.TempDir()
	cache := filepath.Join(dir, "env.cache")
	env := map[string]string{"HDS_TOKEN": token, "HDS_CACHE_KEY": testCacheKey}
	_, _, err := runOnce(t, []string{"run", "-url", base, "-cache", cache, "-cluster", "p/c/k", "--", "true"}, env, "")
	require.NoError(t, err)
	rev := setRecord(t, base, token, "k", "APP_A", "2", http.StatusOK)

	// A front that answers 503 to the environment file until told not
	// to, and lets everything else (the change feed) through.
	target, err := url.Parse(base)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	var failing atomic.Bool
	failing.Store(true)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() && r.URL.Query().Get("format") == "env" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"success":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"Service unavailable"}}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	log := childLog{t: t, path: filepath.Join(dir, "log")}
	r := startRun(t, log, append([]string{"run", "-watch", "-url", front.URL, "-cache", cache, "-cluster", "p/c/k",
		"-debounce", "100ms", "--"}, childCommand(t, log.path, "die")...), env)
	assert.Equal(t, "1", log.waitStarts(1).vars["APP_A"], "from the cache")
	r.waitStderr(t, "starting from the cache "+cache)

	failing.Store(false)
	second := log.waitStarts(2)
	assert.Equal(t, "2", second.vars["APP_A"])
	r.waitStderr(t, restartLine(rev))
	require.NoError(t, syscall.Kill(second.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))
}

// TestRunWatchFromCacheNoAnswer: a server that does not answer makes
// run -watch start from the cache after one -timeout: the change feed,
// opened first, got no answer, so the environment is not asked for too
// (which would wait a second -timeout).
func TestRunWatchFromCacheNoAnswer(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	dir := t.TempDir()
	cache := filepath.Join(dir, "env.cache")
	env := map[string]string{"HDS_TOKEN": token, "HDS_CACHE_KEY": testCacheKey}
	_, _, err := runOnce(t, []string{"run", "-url", base, "-cache", cache, "-cluster", "p/c/k", "--", "true"}, env, "")
	require.NoError(t, err)

	var envAsked atomic.Int32
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "env" {
			envAsked.Add(1)
		}
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	log := childLog{t: t, path: filepath.Join(dir, "log")}
	r := startRun(t, log, append([]string{"run", "-watch", "-url", hang.URL, "-timeout", "300ms", "-cache", cache,
		"-cluster", "p/c/k", "--"}, childCommand(t, log.path, "die")...), env)
	first := log.waitStarts(1)
	assert.Equal(t, "1", first.vars["APP_A"], "from the cache")
	assert.Regexp(t, "^"+regexp.QuoteMeta("hds: the server cannot be reached (GET /api/v1/projects/p/events: no answer within 300ms): "+
		"starting from the cache "+cache+", written ")+`\d+`+regexp.QuoteMeta(" seconds ago\n"), r.stderr.String())
	assert.Zero(t, envAsked.Load(), "the environment was asked for after the feed got no answer")
	require.NoError(t, syscall.Kill(first.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))
}

// TestRunSignals: SIGINT and SIGTERM sent to run reach CMD as they are,
// with or without -watch, and run exits with CMD's status: 128+N when
// the signal ended it, CMD's own when it did not.
func TestRunSignals(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct {
		what  string
		watch bool
		sig   syscall.Signal
		mode  string
		want  int
	}{
		{"TERM", false, syscall.SIGTERM, "die", 128 + 15},
		{"INT", false, syscall.SIGINT, "die", 128 + 2},
		{"TERM with -watch", true, syscall.SIGTERM, "die", 128 + 15},
		{"INT with -watch", true, syscall.SIGINT, "die", 128 + 2},
		{"ignored", false, syscall.SIGTERM, "stubborn", 3},
		{"ignored with -watch", true, syscall.SIGTERM, "stubborn", 3},
	} {
		t.Run(tc.what, func(t *testing.T) {
			t.Parallel()
			log := childLog{t: t, path: filepath.Join(t.TempDir(), "log")}
			args := []string{"hds-test-example", "run", "-url", base, "-cluster", "p/c/k"}
			if tc.watch {
				args = append(args, "-watch")
			}
			cmd := exec.Command(exe, append(append(args, "--"), childCommand(t, log.path, tc.mode)...)...)
			cmd.Env = append(os.Environ(), "HDS_TOKEN="+token)
			var stderr syncBuffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); log.killChildren() })
			child := log.waitStarts(1)
			require.NoError(t, cmd.Process.Signal(tc.sig))
			log.waitUntil("the signal at CMD", func() bool { return log.has("signal " + strconv.Itoa(child.pid) + " " + signalName(tc.sig)) })
			if tc.mode == "stubborn" {
				require.NoError(t, syscall.Kill(child.pid, syscall.SIGUSR2))
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var waited error // the subtests run in parallel: not the test's err
			select {
			case waited = <-done:
			case <-time.After(time.Minute):
				t.Fatal("run did not end within a minute of CMD")
			}
			var exit *exec.ExitError
			require.ErrorAs(t, waited, &exit, "stderr: %s", stderr.String())
			assert.Equal(t, tc.want, exit.ExitCode(), "stderr: %s", stderr.String())
			assert.Empty(t, stderr.String())
			assert.Len(t, log.starts(), 1)
		})
	}
}

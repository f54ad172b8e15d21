package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/client"
)

// watchServer is clientServer with rate limits the tests' polling of
// the audit log stays under.
func watchServer(t *testing.T) (string, string) {
	t.Helper()
	path := writeConfig(t, `{
  "security": {"jwt_secret": "`+testJWTSecret+`", "credential_key": "`+testKey+`"},
  "rate_limit": {"per_minute": 1000000, "per_hour": 1000000},
  "users": [{"username": "alice", "password": "`+testPassword+`"}]
}`)
	s := start(t, []string{"-config", path}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	return s.url, login(t, s.url, "alice", testPassword)
}

// watchFixture creates project p with cluster c/k holding APP_A=1 and
// APP_DSN, a reference to the record host of cluster c/db, c/db itself,
// and c/other, which nothing refers to.
func watchFixture(t *testing.T, base, token string) {
	t.Helper()
	p := base + "/api/v1/projects/p"
	mustCall(t, "POST", p, token, nil, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/c", token, nil, http.StatusCreated)
	for _, k := range []string{"k", "db", "other"} {
		mustCall(t, "POST", p+"/collections/c/clusters/"+k, token, nil, http.StatusCreated)
	}
	setRecord(t, base, token, "k", "APP_A", "1", http.StatusCreated)
	setRecord(t, base, token, "k", "APP_DSN", "postgres://${db/host}/app", http.StatusCreated)
	setRecord(t, base, token, "db", "host", "h1", http.StatusCreated)
	setRecord(t, base, token, "other", "APP_X", "1", http.StatusCreated)
}

// setRecord creates (want 201) or updates (want 200) the STRING record
// name of cluster c/k and returns the revision of the change.
func setRecord(t *testing.T, base, token, k, name, value string, want int) int64 {
	t.Helper()
	path := base + "/api/v1/projects/p/collections/c/clusters/" + k + "/records/" + name
	method := "PUT"
	if want == http.StatusCreated {
		method = "POST"
	}
	mustCall(t, method, path, token, map[string]any{"type": "STRING", "value": value}, want)
	return newestRevision(t, base, token, "")
}

// newestRevision returns the revision of the project's newest audit
// entry of action (any when "").
func newestRevision(t *testing.T, base, token, action string) int64 {
	t.Helper()
	query := "?limit=1"
	if action != "" {
		query += "&action=" + action
	}
	env := mustCall(t, "GET", base+"/api/v1/projects/p/audit"+query, token, nil, http.StatusOK)
	items := env["data"].(map[string]any)["items"].([]any)
	require.NotEmpty(t, items)
	return int64(items[0].(map[string]any)["revision"].(float64))
}

// reveals counts the reveals of the project: every fetch of run writes one.
func reveals(t *testing.T, base, token string) int {
	t.Helper()
	env := mustCall(t, "GET", base+"/api/v1/projects/p/audit?limit=1&action=credential.reveal", token, nil, http.StatusOK)
	return int(env["data"].(map[string]any)["total"].(float64))
}

// restartLine is the line run -watch writes for each restart.
func restartLine(revision int64) string {
	return fmt.Sprintf("hds: configuration changed (revision %d), restarting\n", revision)
}

// TestRunWatch: run -watch restarts CMD when a record of its cluster or a
// record a reference reaches changes, with -signal, once for a burst, and
// not for a change that leaves the environment as it was; CMD ending on
// its own ends run with its status.
func TestRunWatch(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	log := childLog{t: t, path: filepath.Join(t.TempDir(), "log")}
	r := startRun(t, log, append([]string{"run", "-watch", "-url", base, "-cluster", "p/c/k", "-signal", "USR1",
		"-debounce", "3s", "--"}, childCommand(t, log.path, "die")...), map[string]string{"HDS_TOKEN": token})

	first := log.waitStarts(1)
	assert.Equal(t, map[string]string{"APP_A": "1", "APP_DSN": "postgres://h1/app"}, first.vars)

	// A change that leaves the environment as it is: fetched (one more
	// reveal), no restart.
	fetched := reveals(t, base, token)
	setRecord(t, base, token, "k", "APP_A", "1", http.StatusOK)
	log.waitUntil("a fetch after a no-op change", func() bool { return reveals(t, base, token) > fetched })

	// A change of the cluster: a restart with the new value, after -signal.
	rev := setRecord(t, base, token, "k", "APP_A", "2", http.StatusOK)
	second := log.waitStarts(2)
	assert.Equal(t, map[string]string{"APP_A": "2", "APP_DSN": "postgres://h1/app"}, second.vars)
	assert.True(t, log.has(fmt.Sprintf("signal %d USR1", first.pid)), "CMD got -signal")
	assert.Contains(t, r.stderr.String(), restartLine(rev))

	// A change of a record a reference reaches.
	rev = setRecord(t, base, token, "db", "host", "h2", http.StatusOK)
	third := log.waitStarts(3)
	assert.Equal(t, "postgres://h2/app", third.vars["APP_DSN"])
	assert.Contains(t, r.stderr.String(), restartLine(rev))

	// A burst: one restart, with the newest environment, naming the last
	// change.
	records := base + "/api/v1/projects/p/collections/c/clusters/k/records/"
	mustCall(t, "PUT", records+"APP_A", token, map[string]any{"value": "3"}, http.StatusOK)
	mustCall(t, "PUT", records+"APP_A", token, map[string]any{"value": "4"}, http.StatusOK)
	mustCall(t, "POST", records+"APP_B", token, map[string]any{"type": "STRING", "value": "5"}, http.StatusCreated)
	rev = newestRevision(t, base, token, "")
	fourth := log.waitStarts(4)
	assert.Equal(t, map[string]string{"APP_A": "4", "APP_B": "5", "APP_DSN": "postgres://h2/app"}, fourth.vars)
	r.waitStderr(t, restartLine(rev))

	// A reference that does not resolve: said in one line, CMD kept; once
	// it is gone, the environment is as before: no restart.
	mustCall(t, "POST", records+"APP_BROKEN", token, map[string]any{"type": "STRING", "value": "${nope}"}, http.StatusCreated)
	r.waitStderr(t, "hds: cannot fetch the configuration (GET /api/v1/projects/p/collections/c/clusters/k: "+
		"422 UNRESOLVED_REFERENCE: Unresolved reference: record APP_BROKEN: ${nope}: not found): "+
		childCommand(t, log.path, "die")[0]+" keeps running as it is\n")
	fetched = reveals(t, base, token)
	mustCall(t, "DELETE", records+"APP_BROKEN", token, nil, http.StatusNoContent)
	log.waitUntil("a fetch after the delete", func() bool { return reveals(t, base, token) > fetched })

	// CMD ends on its own: run ends with its status.
	require.NoError(t, syscall.Kill(fourth.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))
	assert.Len(t, log.starts(), 4, "a restart for each change of the environment, no other")
	assert.Equal(t, 3, strings.Count(r.stderr.String(), "hds: configuration changed"), r.stderr.String())
	assert.NotContains(t, r.stderr.String(), "h2", "no value on stderr")
	assert.NotContains(t, r.stderr.String(), "postgres://")
}

// TestRunWatchGrace: a CMD that does not stop on -signal is killed after
// -grace and started again.
func TestRunWatchGrace(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	log := childLog{t: t, path: filepath.Join(t.TempDir(), "log")}
	r := startRun(t, log, append([]string{"run", "-watch", "-url", base, "-cluster", "p/c/k", "-grace", "200ms",
		"-debounce", "0s", "--"}, childCommand(t, log.path, "stubborn")...), map[string]string{"HDS_TOKEN": token})
	first := log.waitStarts(1)
	setRecord(t, base, token, "k", "APP_A", "2", http.StatusOK)
	second := log.waitStarts(2)
	assert.Equal(t, "2", second.vars["APP_A"])
	assert.True(t, log.has(fmt.Sprintf("signal %d TERM", first.pid)), "TERM first")
	assert.ErrorIs(t, syscall.Kill(first.pid, 0), syscall.ESRCH, "the first CMD was killed")
	require.NoError(t, syscall.Kill(second.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))
}

// TestRunWatchFeedBreak: when the change feed breaks, run reconnects and
// misses no change made during the break, whether or not it had received
// an event before it.
func TestRunWatchFeedBreak(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	front := newBreaker(t, base, false)
	log := childLog{t: t, path: filepath.Join(t.TempDir(), "log")}
	r := startRun(t, log, append([]string{"run", "-watch", "-url", front.url, "-cluster", "p/c/k",
		"-debounce", "100ms", "--"}, childCommand(t, log.path, "die")...), map[string]string{"HDS_TOKEN": token})
	log.waitStarts(1)

	// A break before any event.
	front.cut()
	rev := setRecord(t, base, token, "k", "APP_A", "2", http.StatusOK)
	front.mend(t, "")
	assert.Equal(t, "2", log.waitStarts(2).vars["APP_A"])
	r.waitStderr(t, restartLine(rev))

	// A break after one: the stream goes on after it.
	front.cut()
	rev = setRecord(t, base, token, "k", "APP_A", "3", http.StatusOK)
	front.mend(t, "")
	third := log.waitStarts(3)
	assert.Equal(t, "3", third.vars["APP_A"])
	r.waitStderr(t, restartLine(rev))

	require.NoError(t, syscall.Kill(third.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))
}

// TestRunWatchServerRestart: the server stops (ending the stream) and a
// new one starts on the same SQLite file; a change made on the new server
// before run gets through again reaches CMD.
func TestRunWatchServerRestart(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, `{
  "database_url": "sqlite:`+filepath.Join(t.TempDir(), "hds.db")+`",
  "security": {"jwt_secret": "`+testJWTSecret+`", "credential_key": "`+testKey+`"},
  "rate_limit": {"per_minute": 1000000, "per_hour": 1000000},
  "users": [{"username": "alice", "password": "`+testPassword+`"}]
}`)
	env := map[string]string{"HDS_ADDR": "127.0.0.1:0"}
	first := start(t, []string{"-config", config}, env)
	token := login(t, first.url, "alice", testPassword)
	watchFixture(t, first.url, token)
	front := newBreaker(t, first.url, false)
	log := childLog{t: t, path: filepath.Join(t.TempDir(), "log")}
	r := startRun(t, log, append([]string{"run", "-watch", "-url", front.url, "-cluster", "p/c/k",
		"-debounce", "100ms", "--"}, childCommand(t, log.path, "die")...), map[string]string{"HDS_TOKEN": token})
	log.waitStarts(1)
	rev := setRecord(t, first.url, token, "k", "APP_A", "2", http.StatusOK)
	log.waitStarts(2)
	r.waitStderr(t, restartLine(rev))

	// The server goes; run's reconnections get 503 until the new one is
	// behind the proxy.
	front.cut()
	require.NoError(t, first.stop(t))
	second := start(t, []string{"-config", config}, env)
	rev = setRecord(t, second.url, token, "db", "host", "h2", http.StatusOK)
	front.mend(t, second.url)
	third := log.waitStarts(3)
	assert.Equal(t, map[string]string{"APP_A": "2", "APP_DSN": "postgres://h2/app"}, third.vars)
	r.waitStderr(t, restartLine(rev))
	require.NoError(t, syscall.Kill(third.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))
}

// TestRunWatchAccessLost: when run's API token is revoked, run says so,
// leaves CMD running, and ends with CMD's status.
func TestRunWatchAccessLost(t *testing.T) {
	t.Parallel()
	base, owner := watchServer(t)
	watchFixture(t, base, owner)
	created := mustCall(t, "POST", base+"/api/v1/projects/p/tokens", owner,
		map[string]any{"name": "app", "role": "reader"}, http.StatusCreated)["data"].(map[string]any)
	log := childLog{t: t, path: filepath.Join(t.TempDir(), "log")}
	r := startRun(t, log, append([]string{"run", "-watch", "-url", base, "-cluster", "p/c/k", "-debounce", "0s", "--"},
		childCommand(t, log.path, "die")...), map[string]string{"HDS_TOKEN": created["token"].(string)})
	first := log.waitStarts(1)

	mustCall(t, "DELETE", base+"/api/v1/projects/p/tokens/"+created["id"].(string), owner, nil, http.StatusNoContent)
	// Found by the fetch a token.delete event triggers, or by the
	// reconnection of the feed the revocation ends.
	r.waitStderr(t, "hds: the access to p/c/k was lost (GET /api/v1/projects/p/")
	assert.Regexp(t, `^hds: the access to p/c/k was lost \(GET /api/v1/projects/p/\S+: 401 AUTHENTICATION_FAILED: Invalid or expired token\)`,
		r.stderr.String())
	assert.Contains(t, r.stderr.String(), "): no longer following its changes; "+childCommand(t, log.path, "die")[0]+" keeps running\n")
	assert.Equal(t, 1, strings.Count(r.stderr.String(), "\n"), "one line:\n%s", r.stderr.String())
	assert.NoError(t, syscall.Kill(first.pid, 0), "CMD still runs")
	assert.False(t, log.has(fmt.Sprintf("signal %d TERM", first.pid)))

	require.NoError(t, syscall.Kill(first.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))
	assert.Len(t, log.starts(), 1)
}

// TestRunWatchRetriedLines: what client.Watch retries, run -watch says in
// one line each: a change feed given up for its silence (the feed itself
// is client's, tested there: TestWatchSilentStreamReported), a fetch
// tried again, a fetch that waits for the next change; a failed
// connection of the change feed it leaves unsaid.
func TestRunWatchRetriedLines(t *testing.T) {
	var stderr strings.Builder
	w := &watcher{e: &env{stderr: &stderr}, t: &runTarget{c: &apiClient{token: "tok"}, p: "p"}, command: []string{"cmd"}}
	const events, k = "/api/v1/projects/p/events", "/api/v1/projects/p/collections/c/clusters/k"
	w.retried(&client.RequestError{Method: "GET", Path: events, Err: fmt.Errorf("%w for %s", client.ErrSilent, 45*time.Second)}, time.Second)
	w.retried(&client.Error{Status: 503, Code: "SERVICE_UNAVAILABLE", Message: "Service unavailable", Method: "GET", Path: events}, time.Second)
	w.retried(&client.Error{Status: 503, Code: "SERVICE_UNAVAILABLE", Message: "Service unavailable", Method: "GET", Path: k}, 2*time.Second)
	w.retried(&client.Error{Status: 422, Code: "UNRESOLVED_REFERENCE", Message: "Unresolved reference", Details: "record A: ${x}: not found",
		Method: "GET", Path: k}, 0)
	assert.Equal(t, "hds: not a byte from the change feed for 45s (the server sends a keep-alive every 15 s): reconnecting\n"+
		"hds: cannot fetch the configuration (GET "+k+": 503 SERVICE_UNAVAILABLE: Service unavailable): trying again in 2s\n"+
		"hds: cannot fetch the configuration (GET "+k+": 422 UNRESOLVED_REFERENCE: Unresolved reference: record A: ${x}: not found): cmd keeps running as it is\n",
		stderr.String())
}

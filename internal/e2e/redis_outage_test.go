package e2e_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulule/limiter/v3"
	limitredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/middleware"
)

// privateRedis is a redis-server of the test's own on a free port, so
// that it can be stopped, frozen and started again without touching the
// shared one.
type privateRedis struct {
	t    *testing.T
	port string
	cmd  *exec.Cmd
}

// startPrivateRedis starts redis-server, or skips the test without one
// (fails under HDS_REQUIRE_REDIS=1).
func startPrivateRedis(t *testing.T) *privateRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("HDS_REQUIRE_REDIS") == "1" {
			require.NoError(t, err, "redis-server is required (HDS_REQUIRE_REDIS=1)")
		}
		t.Skipf("no redis-server (set HDS_REQUIRE_REDIS=1 to fail instead): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close())
	r := &privateRedis{t: t, port: port}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *privateRedis) addr() string { return "127.0.0.1:" + r.port }

func (r *privateRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", r.port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.t.TempDir())
	require.NoError(r.t, r.cmd.Start())
	c := redis.NewClient(&redis.Options{Addr: r.addr()})
	defer c.Close()
	require.Eventually(r.t, func() bool { return c.Ping(context.Background()).Err() == nil },
		10*time.Second, 20*time.Millisecond, "redis-server on %s starts", r.addr())
}

// stop kills the server (a crash, not a clean shutdown).
func (r *privateRedis) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGCONT) // in case it is frozen
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// freeze makes the server hang: connections stay open, nothing answers.
func (r *privateRedis) freeze(frozen bool) {
	sig := syscall.SIGCONT
	if frozen {
		sig = syscall.SIGSTOP
	}
	require.NoError(r.t, r.cmd.Process.Signal(sig))
}

type healthBody struct {
	Status string `json:"status"`
	Checks struct {
		Store     string `json:"store"`
		Storage   string `json:"storage"`
		RateLimit string `json:"rate_limit"`
	} `json:"checks"`
}

// health is c's GET /health.
func (c *client) health() (int, healthBody) {
	c.t.Helper()
	res := c.call(req{method: http.MethodGet, target: "/health", remote: ipA})
	var b healthBody
	require.NoError(c.t, json.Unmarshal(res.env.raw, &b), "/health body %s", res.env.raw)
	return res.status, b
}

// logBuffer collects log output from concurrent writers.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRedisOutageFallsBackToLocalCounters(t *testing.T) {
	// Issue 10 finding 8, docs/api.md#limits-rate-limits-and-quotas and
	// docs/api.md#health (v1.1).
	rd := startPrivateRedis(t)
	client := redis.NewClient(&redis.Options{Addr: rd.addr(), DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = client.Close() })
	rs, err := limitredis.NewStoreWithOptions(client, limiter.StoreOptions{Prefix: "hds-outage-test"})
	require.NoError(t, err)
	var log logBuffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	// A timeout longer than the default, so that a busy test machine does
	// not look like an outage; the default's bound is held by the
	// middleware tests.
	fs := middleware.NewFallbackStore(rs, 250*time.Millisecond, logger)
	h := newServer(t, memoryKind, hds.WithRateLimit(1000, 3), hds.WithRateLimitStore(fs), hds.WithLogger(logger))

	code, hb := h.health()
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, healthBody{Status: "ok", Checks: hb.Checks}, healthBody{Status: hb.Status, Checks: hb.Checks})
	assert.Equal(t, "ok", hb.Checks.Store, "checks.store")
	assert.Equal(t, "ok", hb.Checks.RateLimit, "checks.rate_limit with Redis up")

	token := h.loginAt(ipB, "alice", "alice-password")
	rec := h.call(projectsFrom(ipA, token))
	require.Equal(t, http.StatusOK, rec.status)
	assert.EqualValues(t, 2, rateRemaining(t, "Redis up", rec.header), "counted in Redis")
	keys, err := client.Keys(context.Background(), "hds-outage-test*").Result()
	require.NoError(t, err)
	assert.NotEmpty(t, keys, "the counters are in Redis")

	// Redis goes away: requests are served and counted in this process.
	rd.stop()
	var slowest time.Duration
	timed := func(f func()) {
		start := time.Now()
		f()
		slowest = max(slowest, time.Since(start))
	}
	for i, want := range []int64{2, 1, 0} {
		timed(func() { rec = h.call(projectsFrom(ipA, token)) })
		require.Equal(t, http.StatusOK, rec.status, "request %d with Redis down: %s", i+1, rec.env.raw)
		assert.EqualValues(t, want, rateRemaining(t, "Redis down", rec.header), "request %d: counted in this process", i+1)
	}
	timed(func() { rec = h.call(projectsFrom(ipA, token)) })
	want429(t, "the same limit with Redis down", rec, 60)
	timed(func() { rec = h.loginFrom(ipB, "alice", "alice-password") })
	assert.Equal(t, http.StatusOK, rec.status, "login with Redis down: %s", rec.env.raw)
	code, hb = h.health()
	assert.Equal(t, http.StatusOK, code, "/health stays 200")
	assert.Equal(t, "degraded", hb.Status)
	assert.Equal(t, "ok", hb.Checks.Store, "checks.store")
	assert.Equal(t, "unavailable", hb.Checks.RateLimit, "checks.rate_limit with Redis down")
	assert.Equal(t, 1, strings.Count(log.String(), "rate limit store cannot be reached"), "the outage is logged once:\n%s", log.String())
	assert.NotContains(t, log.String(), "alice", "no user names in the outage log")

	// Redis is back: the shared counters are used again, by themselves.
	rd.start()
	require.Eventually(t, func() bool { _, hb := h.health(); return hb.Status == "ok" }, 10*time.Second, 50*time.Millisecond,
		"/health is ok again once Redis is back")
	rec = h.call(projectsFrom(ipA, token))
	require.Equal(t, http.StatusOK, rec.status, "served from the restarted Redis (empty), not the used-up local count: %s", rec.env.raw)
	assert.EqualValues(t, 2, rateRemaining(t, "Redis back", rec.header), "counted in Redis again")

	// Redis hangs (frozen): requests are still served, within the timeout.
	// (bob, whose local budget is untouched: alice used hers up above.)
	bob := h.loginAt(ipB, "bob", "bob-password")
	rd.freeze(true)
	for i := range 2 {
		timed(func() { rec = h.call(projectsFrom(ipA, bob)) })
		assert.Equal(t, http.StatusOK, rec.status, "request %d with Redis frozen: %s", i+1, rec.env.raw)
	}
	_, hb = h.health()
	assert.Equal(t, "degraded", hb.Status, "/health with Redis frozen")
	rd.freeze(false)
	require.Eventually(t, func() bool { _, hb := h.health(); return hb.Status == "ok" }, 10*time.Second, 50*time.Millisecond,
		"/health is ok again once Redis answers")
	t.Logf("slowest request while Redis was down or frozen: %v (timeout 250ms)", slowest)
}

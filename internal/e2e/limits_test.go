package e2e_test

// Limits and rate limiting (docs/api.md#limits-rate-limits-and-quotas),
// black-box through hds.New: which window the headers show, what is counted
// against whom, client IPs behind proxies, the login throttle, and counters
// shared by two instances on one Redis or kept locally when the shared
// store fails. The limiter and the throttle themselves are unit-tested in
// middleware.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulule/limiter/v3"
	limitmemory "github.com/ulule/limiter/v3/drivers/store/memory"
	limitredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/middleware"
)

// projectsFrom is a GET of the project list from remote, with token when
// not empty.
func projectsFrom(remote, token string) req {
	return req{method: http.MethodGet, target: "/api/v1/projects", remote: remote, token: token}
}

// TestRateLimitOptions: WithRateLimit(perHour, perMinute) reaches the
// limiter; the headers show the window closest to running out; the reset
// stays put within a window; the request over the limit is refused with a
// Retry-After within the window; a window of 0 is off. (The limiter's own
// arithmetic is middleware's TestRateLimiter*.)
func TestRateLimitOptions(t *testing.T) {
	tests := []struct {
		name   string
		setup  serverSetup
		opts   []hds.Option
		limit  int64         // the limit of the window closest to running out; 0: nothing counted
		window time.Duration // that window
		send   int64         // requests sent; when send == limit the next is refused
	}{
		{"minute window closest", serverSetup{}, []hds.Option{hds.WithRateLimit(1000, 5)}, 5, time.Minute, 5},
		{"defaults: the 100/minute window is closer to running out than 1000/hour", serverSetup{defaultLimits: true}, nil, 100, time.Minute, 3},
		{"hour window closest", serverSetup{}, []hds.Option{hds.WithRateLimit(3, 100)}, 3, time.Hour, 3},
		{"minute window off", serverSetup{}, []hds.Option{hds.WithRateLimit(2, 0)}, 2, time.Hour, 2},
		{"both windows off", serverSetup{}, []hds.Option{hds.WithRateLimit(0, 0)}, 0, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startServer(t, memoryKind, tt.setup, tt.opts...)
			list := projectsFrom(ipA, c.loginAt(ipB, "alice", "alice-password"))
			window := int64(tt.window / time.Second)
			start := time.Now().Unix()
			var firstReset int64
			for i := int64(1); i <= tt.send; i++ {
				what := fmt.Sprintf("request %d", i)
				res := c.call(list)
				require.Equal(t, http.StatusOK, res.status, "%s: %s", what, res.env.raw)
				assert.Empty(t, res.header.Values("Retry-After"), "%s: no Retry-After", what)
				if tt.limit == 0 {
					wantNotCounted(t, what, res.header)
					continue
				}
				limit, remaining, reset := rateHeaders(t, what, res.header)
				assert.Equal(t, tt.limit, limit, "%s: X-RateLimit-Limit is the window's closest to running out", what)
				assert.Equal(t, tt.limit-i, remaining, "%s: X-RateLimit-Remaining decreases by one", what)
				if i == 1 {
					firstReset = reset
					assert.True(t, reset >= start && reset <= time.Now().Unix()+window,
						"%s: X-RateLimit-Reset %d is Unix seconds within the window (now %d)", what, reset, start)
				} else {
					assert.Equal(t, firstReset, reset, "%s: X-RateLimit-Reset stays put in a window", what)
				}
			}
			if tt.limit == 0 || tt.send < tt.limit {
				return
			}
			res := c.call(list)
			want429(t, "over the limit", res, window)
			limit, remaining, reset := rateHeaders(t, "over the limit", res.header)
			assert.Equal(t, tt.limit, limit, "over the limit: X-RateLimit-Limit")
			assert.Zero(t, remaining, "over the limit: X-RateLimit-Remaining")
			assert.Equal(t, firstReset, reset, "over the limit: X-RateLimit-Reset")
			if tt.window == time.Hour {
				now := time.Now().Unix()
				assert.True(t, reset > now+3500 && reset <= now+3600, "over the limit: reset %d is an hour away (now %d)", reset, now)
				assert.Greater(t, retryAfter(t, "over the limit", res.header), int64(3500), "Retry-After is about an hour")
			}
			want429(t, "and the next", c.call(list), window)
		})
	}
}

func TestRateLimitPerUser(t *testing.T) {
	h := newServer(t, memoryKind, hds.WithRateLimit(1000, 3))
	// Both log in from the same IP: two of that IP's three requests.
	alice := h.loginAt(ipA, "alice", "alice-password")
	bob := h.loginAt(ipA, "bob", "bob-password")

	for i := 1; i <= 3; i++ {
		require.Equal(t, http.StatusOK, h.call(projectsFrom(ipA, alice)).status, "alice request %d", i)
	}
	want429(t, "alice request 4", h.call(projectsFrom(ipA, alice)), 60)

	rec := h.call(projectsFrom(ipA, bob))
	assert.Equal(t, http.StatusOK, rec.status, "bob is not limited by alice's traffic from the same IP")
	assert.EqualValues(t, 2, rateRemaining(t, "bob", rec.header), "bob's own budget")

	// The IP's own bucket holds only the two logins so far.
	rec = h.call(projectsFrom(ipA, ""))
	rec.wantError(t, "no token", http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
	assert.EqualValues(t, 0, rateRemaining(t, "no token", rec.header), "two logins and this request")
	want429(t, "no token again", h.call(projectsFrom(ipA, "")), 60)
	assert.Equal(t, http.StatusOK, h.call(projectsFrom(ipA, bob)).status, "bob still passes")
}

func TestRateLimitBeforeAuthCountedByIP(t *testing.T) {
	// docs/api.md#limits-rate-limits-and-quotas: what fails before
	// authentication is counted against the client IP, 404s from routing
	// included (and docs/api.md#conventions makes a non-canonical path a
	// routing 404); /health and preflights are not counted at all.
	h := newServer(t, memoryKind, hds.WithRateLimit(1000, 8), hds.WithCORS(testOrigin))
	steps := []struct {
		what    string
		q       req
		status  int
		counted bool
	}{
		{"failed login", req{method: "POST", target: "/api/v1/auth/login", body: `{"username":"alice","password":"wrong"}`}, 401, true},
		{"no token", req{method: "GET", target: "/api/v1/projects"}, 401, true},
		{"garbage token", req{method: "GET", target: "/api/v1/projects", token: "not-a-jwt"}, 401, true},
		{"health", req{method: "GET", target: "/health"}, 200, false},
		{"preflight", req{method: "OPTIONS", target: "/api/v1/projects",
			header: map[string]string{"Origin": testOrigin, "Access-Control-Request-Method": "POST"}}, 204, false},
		{"unknown route", req{method: "GET", target: "/api/v1/nothing-here"}, 404, true},
		{"wrong method", req{method: "PATCH", target: "/api/v1/projects"}, 405, true},
		{"refresh without token", req{method: "POST", target: "/api/v1/auth/refresh"}, 401, true},
		{"trailing slash", req{method: "GET", target: "/api/v1/projects/"}, 404, true},
		{"double slash", req{method: "GET", target: "/api/v1//projects"}, 404, true},
	}
	remaining := int64(8)
	for _, s := range steps {
		s.q.remote = ipA
		rec := h.call(s.q)
		require.Equal(t, s.status, rec.status, "%s: %s", s.what, rec.env.raw)
		if !s.counted {
			wantNotCounted(t, s.what, rec.header)
			continue
		}
		remaining--
		assert.EqualValues(t, remaining, rateRemaining(t, s.what, rec.header), "%s is counted against the IP", s.what)
	}
	require.EqualValues(t, 0, remaining)
	want429(t, "the next request from the IP", h.call(projectsFrom(ipA, "")), 60)
	rec := h.loginFrom(ipA, "alice", "alice-password")
	want429(t, "a login from the IP", rec, 60)

	// Another IP has its own bucket.
	rec = h.call(projectsFrom(ipB, ""))
	assert.Equal(t, http.StatusUnauthorized, rec.status, "another IP")
	assert.EqualValues(t, 7, rateRemaining(t, "another IP", rec.header))
	// And the exhausted IP's user, once logged in elsewhere, has a bucket of
	// her own even from that IP.
	token := h.loginAt(ipB, "alice", "alice-password")
	rec = h.call(projectsFrom(ipA, token))
	assert.Equal(t, http.StatusOK, rec.status, "alice's token from the exhausted IP")
	assert.EqualValues(t, 7, rateRemaining(t, "alice", rec.header))
}

func TestAnonymousCountedByIP(t *testing.T) {
	h := newServer(t, memoryKind, hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: true}), hds.WithRateLimit(1000, 2))
	for i := 1; i <= 2; i++ {
		rec := h.call(projectsFrom(ipA, ""))
		require.Equal(t, http.StatusOK, rec.status, "anonymous request %d: %s", i, rec.env.raw)
		assert.EqualValues(t, 2-i, rateRemaining(t, "anonymous", rec.header))
	}
	want429(t, "anonymous request 3", h.call(projectsFrom(ipA, "")), 60)
	rec := h.call(projectsFrom(ipB, ""))
	assert.Equal(t, http.StatusOK, rec.status, "anonymous from another IP has its own bucket")
	assert.EqualValues(t, 1, rateRemaining(t, "anonymous from another IP", rec.header))
}

// TestClientIPBehindProxies: the rate limit counts by the client IP that
// WithTrustedProxies makes of X-Forwarded-For (middleware/clientip_test.go
// covers the parsing).
func TestClientIPBehindProxies(t *testing.T) {
	t.Run("spoofed X-Forwarded-For ignored without trusted proxies", func(t *testing.T) {
		h := newServer(t, memoryKind, hds.WithRateLimit(1000, 2))
		const remote = "203.0.113.9:5555"
		for i, hdr := range []map[string]string{
			{"X-Forwarded-For": "1.1.1.1"},
			{"X-Forwarded-For": "2.2.2.2", "X-Real-IP": "2.2.2.2"},
		} {
			rec := h.call(req{method: "GET", target: "/api/v1/projects", remote: remote, header: hdr})
			require.Equal(t, http.StatusUnauthorized, rec.status)
			assert.EqualValues(t, 1-i, rateRemaining(t, fmt.Sprint(hdr), rec.header), "one bucket whatever the headers say")
		}
		rec := h.call(req{method: "GET", target: "/api/v1/projects", remote: remote,
			header: map[string]string{"X-Forwarded-For": "3.3.3.3", "X-Real-IP": "4.4.4.4"}})
		want429(t, "a third invented address", rec, 60)
	})
	t.Run("X-Forwarded-For honoured from trusted proxies", func(t *testing.T) {
		h := newServer(t, memoryKind, hds.WithRateLimit(1000, 2), hds.WithTrustedProxies("192.0.2.0/24"))
		const proxy = "192.0.2.1:1234"
		xff := func(v string) req {
			return req{method: "GET", target: "/api/v1/projects", remote: proxy,
				header: map[string]string{"X-Forwarded-For": v}}
		}
		// Both name client 2.2.2.2: the right-most untrusted address.
		rec := h.call(xff("1.1.1.1, 2.2.2.2"))
		assert.EqualValues(t, 1, rateRemaining(t, "2.2.2.2 first", rec.header))
		rec = h.call(xff("spoofed, 2.2.2.2, 192.0.2.7"))
		assert.EqualValues(t, 0, rateRemaining(t, "2.2.2.2 second", rec.header), "same client behind an inner proxy")
		want429(t, "2.2.2.2 third", h.call(xff("9.9.9.9, 2.2.2.2")), 60)

		// Another client behind the same proxy has its own bucket, whatever it
		// prepends.
		rec = h.call(xff("2.2.2.2, 3.3.3.3"))
		assert.Equal(t, http.StatusUnauthorized, rec.status, "3.3.3.3")
		assert.EqualValues(t, 1, rateRemaining(t, "3.3.3.3", rec.header))
		// The proxy itself, without the header, is a client of its own.
		rec = h.call(projectsFrom(proxy, ""))
		assert.EqualValues(t, 1, rateRemaining(t, "the proxy", rec.header))
		// A client not behind a trusted proxy cannot borrow another's bucket.
		rec = h.call(req{method: "GET", target: "/api/v1/projects", remote: "203.0.113.9:1",
			header: map[string]string{"X-Forwarded-For": "4.4.4.4"}})
		assert.EqualValues(t, 1, rateRemaining(t, "direct client", rec.header))
		rec = h.call(xff("4.4.4.4"))
		assert.EqualValues(t, 1, rateRemaining(t, "4.4.4.4 via the proxy", rec.header), "4.4.4.4 was not charged for the direct client")
	})
}

// recordingLimiterStore passes every call to a limiter.Store and records
// the keys asked for.
type recordingLimiterStore struct {
	limiter.Store
	mu   sync.Mutex
	keys map[string]int
}

func (s *recordingLimiterStore) note(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key]++
}

func (s *recordingLimiterStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s.note(key)
	return s.Store.Get(ctx, key, rate)
}

func (s *recordingLimiterStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s.note(key)
	return s.Store.Peek(ctx, key, rate)
}

func (s *recordingLimiterStore) Increment(ctx context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	s.note(key)
	return s.Store.Increment(ctx, key, n, rate)
}

// TestForgedTokenSubjectsCountedByIP: a token whose subject cannot be
// trusted is counted against the client IP, so forged subjects never
// become counter keys: memory cannot be grown by inventing subjects.
func TestForgedTokenSubjectsCountedByIP(t *testing.T) {
	rs := &recordingLimiterStore{
		Store: limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "prot", CleanUpInterval: time.Minute}),
		keys:  make(map[string]int),
	}
	h := newServer(t, memoryKind, hds.WithRateLimit(1_000_000, 1_000_000), hds.WithRateLimitStore(rs))

	const forged = 500
	wrongSecret := []byte("not-the-server-secret-0123456789abc")
	for i := range forged {
		sub := fmt.Sprintf("forged-subject-%d", i)
		tok := sign(t, claims(sub), jwt.SigningMethodHS256, wrongSecret)
		rec := h.call(projectsFrom(ipA, tok))
		require.Equal(t, http.StatusUnauthorized, rec.status, sub)
		rec.wantError(t, sub, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid token signature")
		require.EqualValues(t, 1_000_000-1-i, rateRemaining(t, sub, rec.header), "%s counted in the IP's bucket", sub)
	}
	// A well-signed token for a subject that is no user, and an unsigned
	// one, are counted by IP too.
	for i, tok := range []string{
		sign(t, claims("forged-unknown-user"), jwt.SigningMethodHS256, []byte(testSecret)),
		sign(t, claims("forged-none"), jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType),
	} {
		rec := h.call(projectsFrom(ipA, tok))
		require.Equal(t, http.StatusUnauthorized, rec.status)
		assert.EqualValues(t, 1_000_000-1-forged-i, rateRemaining(t, "token "+strconv.Itoa(i), rec.header))
	}

	rs.mu.Lock()
	defer rs.mu.Unlock()
	t.Logf("%d forged subjects made %d counter keys", forged+2, len(rs.keys))
	for k := range rs.keys {
		assert.NotContains(t, k, "forged", "a forged subject became a counter key")
		assert.Contains(t, k, "198.51.100.10", "every key is the client IP's")
	}
	assert.LessOrEqual(t, len(rs.keys), 2, "one key per window for the one IP: %v", rs.keys)
}

// TestLoginThrottle: WithLoginThrottle(perUser, perIP, window) reaches
// the login handler, keyed by the username and by the client IP. (The
// throttle's own behaviour: the window passing, concurrent guesses, is
// middleware's TestLoginThrottle*.)
func TestLoginThrottle(t *testing.T) {
	t.Run("per user", func(t *testing.T) {
		c := newServer(t, memoryKind, hds.WithLoginThrottle(3, 100, time.Minute))
		for i := 1; i <= 2; i++ {
			c.loginFrom(ipA, "alice", "wrong").wantError(t, fmt.Sprintf("failure %d", i),
				http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")
		}
		c.loginAt(ipA, "alice", "alice-password") // a success does not reset the failures
		c.loginFrom(ipA, "alice", "wrong").wantError(t, "failure 3",
			http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")
		want429(t, "right password after 3 failures", c.loginFrom(ipA, "alice", "alice-password"), 60)
		want429(t, "right password from another IP", c.loginFrom(ipB, "alice", "alice-password"), 60)
		want429(t, "wrong password again", c.loginFrom(ipA, "alice", "wrong"), 60)
		c.loginAt(ipA, "bob", "bob-password") // another user from the same IP
	})
	t.Run("per IP", func(t *testing.T) {
		c := newServer(t, memoryKind, hds.WithLoginThrottle(100, 3, time.Minute))
		for _, u := range []string{"bob", "nobody", "alice"} {
			require.Equal(t, http.StatusUnauthorized, c.loginFrom(ipA, u, "wrong").status, u)
		}
		want429(t, "alice from the throttled IP", c.loginFrom(ipA, "alice", "alice-password"), 60)
		want429(t, "bob from the throttled IP", c.loginFrom(ipA, "bob", "bob-password"), 60)
		c.loginAt(ipB, "alice", "alice-password") // from another IP
	})
	t.Run("window", func(t *testing.T) {
		// Retry-After is bounded by the window given, not the default one.
		c := newServer(t, memoryKind, hds.WithLoginThrottle(2, 100, 10*time.Second))
		require.Equal(t, http.StatusUnauthorized, c.loginFrom(ipA, "alice", "wrong").status)
		require.Equal(t, http.StatusUnauthorized, c.loginFrom(ipA, "alice", "wrong").status)
		want429(t, "inside the window", c.loginFrom(ipA, "alice", "alice-password"), 10)
	})
}

// redisLimiterStore returns a limiter store on the local Redis under a key
// prefix of its own, removed when the test ends. Without Redis the test is
// skipped, unless HDS_REQUIRE_REDIS=1.
func redisLimiterStore(t *testing.T) limiter.Store {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", DialTimeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		if os.Getenv("HDS_REQUIRE_REDIS") == "1" {
			require.NoError(t, err, "Redis on 127.0.0.1:6379 is required (HDS_REQUIRE_REDIS=1)")
		}
		t.Skipf("no Redis on 127.0.0.1:6379 (set HDS_REQUIRE_REDIS=1 to fail instead): %v", err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	prefix := "hds-prot-test-" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			_ = client.Del(ctx, keys...).Err()
		}
		_ = client.Close()
	})
	s, err := limitredis.NewStoreWithOptions(client, limiter.StoreOptions{Prefix: prefix})
	require.NoError(t, err)
	return s
}

func TestTwoInstancesShareRedisCounters(t *testing.T) {
	s := redisLimiterStore(t)
	// Each instance falls back on its own; a long timeout, so that a busy
	// test machine does not look like an outage.
	opts := func() []hds.Option {
		return []hds.Option{hds.WithRateLimit(1000, 4), hds.WithLoginThrottle(2, 100, time.Minute),
			hds.WithRateLimitStore(middleware.NewFallbackStore(s, 5*time.Second, nil))}
	}
	a := newServer(t, memoryKind, opts()...)
	b := a.attach(opts()...)

	token := a.loginAt(ipA, "alice", "alice-password")
	for i, h := range []*client{a, b, a, b} {
		what := fmt.Sprintf("request %d (instance %c)", i+1, "ab"[i%2])
		rec := h.call(projectsFrom(ipA, token))
		require.Equal(t, http.StatusOK, rec.status, "%s: %s", what, rec.env.raw)
		assert.EqualValues(t, 3-i, rateRemaining(t, what, rec.header), "%s: one count for both instances", what)
	}
	want429(t, "request 5 (instance a)", a.call(projectsFrom(ipA, token)), 60)
	want429(t, "request 6 (instance b)", b.call(projectsFrom(ipA, token)), 60)

	// The login throttle is shared too: failures on each instance add up.
	require.Equal(t, http.StatusUnauthorized, a.loginFrom(ipB, "bob", "wrong").status)
	require.Equal(t, http.StatusUnauthorized, b.loginFrom(ipB, "bob", "wrong").status)
	want429(t, "bob after a failure on each instance", a.loginFrom(ipB, "bob", "bob-password"), 60)
}

// flakyLimiterStore is a limiter.Store that fails every call while down,
// like a Redis that has gone away.
type flakyLimiterStore struct {
	limiter.Store
	down atomic.Bool
}

var errLimiterDown = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

func (s *flakyLimiterStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if s.down.Load() {
		return limiter.Context{}, errLimiterDown
	}
	return s.Store.Get(ctx, key, rate)
}

func (s *flakyLimiterStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if s.down.Load() {
		return limiter.Context{}, errLimiterDown
	}
	return s.Store.Peek(ctx, key, rate)
}

func (s *flakyLimiterStore) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if s.down.Load() {
		return limiter.Context{}, errLimiterDown
	}
	return s.Store.Reset(ctx, key, rate)
}

func (s *flakyLimiterStore) Increment(ctx context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	if s.down.Load() {
		return limiter.Context{}, errLimiterDown
	}
	return s.Store.Increment(ctx, key, n, rate)
}

func TestLimiterStoreFailureFallsBack(t *testing.T) {
	// docs/api.md#limits-rate-limits-and-quotas (v1.1): a rate limit
	// store that fails is never a reason to refuse a request; each instance
	// counts on its own.
	fs := &flakyLimiterStore{Store: limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "prot", CleanUpInterval: time.Minute})}
	h := newServer(t, memoryKind, hds.WithRateLimitStore(fs), hds.WithCORS(testOrigin))
	token := h.loginAt(ipA, "alice", "alice-password")
	fs.down.Store(true)

	for _, c := range []struct {
		what   string
		q      req
		status int
	}{
		{"authenticated request", req{method: "GET", target: "/api/v1/projects", token: token}, http.StatusOK},
		{"no token", req{method: "GET", target: "/api/v1/projects"}, http.StatusUnauthorized},
		{"login", req{method: "POST", target: "/api/v1/auth/login", body: `{"username":"alice","password":"alice-password"}`}, http.StatusOK},
		{"unknown route", req{method: "GET", target: "/api/v1/nothing-here"}, http.StatusNotFound},
		{"create", req{method: "POST", target: "/api/v1/projects", token: token, body: `{"name":"p1"}`}, http.StatusCreated},
	} {
		c.q.remote = ipA
		var rec response
		require.NotPanics(t, func() { rec = h.call(c.q) }, c.what)
		assert.Equal(t, c.status, rec.status, "%s: %s", c.what, rec.env.raw)
		assert.NotEmpty(t, rec.header.Get("X-RateLimit-Remaining"), "%s: still counted", c.what)
	}
	rec := h.call(req{method: "GET", target: "/health", remote: ipA})
	assert.Equal(t, http.StatusOK, rec.status, "/health")
	assert.Contains(t, string(rec.env.raw), `"status":"degraded"`, "/health")
	assert.Equal(t, http.StatusNoContent, h.call(req{method: "OPTIONS", target: "/api/v1/projects", remote: ipA,
		header: map[string]string{"Origin": testOrigin, "Access-Control-Request-Method": "GET"}}).status, "preflight")
}

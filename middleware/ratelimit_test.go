package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulule/limiter/v3"
	limitmemory "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// errStoreDown is what failingStore answers, like a Redis that cannot be
// reached.
var errStoreDown = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

// failingStore is a limiter.Store whose every call fails. With failAfter
// set, the first failAfter calls go to ok and the later ones fail.
type failingStore struct {
	ok        limiter.Store
	failAfter int64
	calls     atomic.Int64
}

func (s *failingStore) fail() bool { return s.calls.Add(1) > s.failAfter }

func (s *failingStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if s.fail() {
		return limiter.Context{}, errStoreDown
	}
	return s.ok.Get(ctx, key, rate)
}

func (s *failingStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if s.fail() {
		return limiter.Context{}, errStoreDown
	}
	return s.ok.Peek(ctx, key, rate)
}

func (s *failingStore) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if s.fail() {
		return limiter.Context{}, errStoreDown
	}
	return s.ok.Reset(ctx, key, rate)
}

func (s *failingStore) Increment(ctx context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	if s.fail() {
		return limiter.Context{}, errStoreDown
	}
	return s.ok.Increment(ctx, key, n, rate)
}

// recordingStore passes every call to a limiter.Store and records the
// keys it was asked about.
type recordingStore struct {
	limiter.Store
	mu   sync.Mutex
	keys map[string]int
}

func newRecordingStore() *recordingStore {
	return &recordingStore{Store: newMemStore(), keys: make(map[string]int)}
}

func (s *recordingStore) record(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key]++
}

func (s *recordingStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s.record(key)
	return s.Store.Get(ctx, key, rate)
}

func (s *recordingStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s.record(key)
	return s.Store.Peek(ctx, key, rate)
}

func (s *recordingStore) Increment(ctx context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	s.record(key)
	return s.Store.Increment(ctx, key, n, rate)
}

func (s *recordingStore) recorded() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.keys))
	for k, v := range s.keys {
		out[k] = v
	}
	return out
}

func newMemStore() limiter.Store {
	return limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "test", CleanUpInterval: time.Minute})
}

// errorEnvelope is the error body of docs/api.md#errors.
type errorEnvelope struct {
	Success *bool `json:"success"`
	Error   *struct {
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Details *string `json:"details"`
	} `json:"error"`
}

// wantErrorEnvelope checks that rec holds an error envelope with status,
// code and (when not empty) message.
func wantErrorEnvelope(t *testing.T, rec *httptest.ResponseRecorder, status int, code, message string) {
	t.Helper()
	assert.Equal(t, status, rec.Code, "status; body %s", rec.Body)
	assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"), "Content-Type")
	var env errorEnvelope
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&env), "error envelope")
	require.NotNil(t, env.Success, "success field")
	assert.False(t, *env.Success, "success")
	require.NotNil(t, env.Error, "error field")
	assert.Equal(t, code, env.Error.Code, "error.code")
	if message != "" {
		assert.Equal(t, message, env.Error.Message, "error.message")
	}
	assert.NotNil(t, env.Error.Details, "error.details is present")
}

// okHandler answers 200 and counts its calls.
type okHandler struct{ calls atomic.Int64 }

func (h *okHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.calls.Add(1)
	w.WriteHeader(http.StatusOK)
}

// byHeader keys requests by their X-Test-Key header.
func byHeader(r *http.Request) string { return "k:" + r.Header.Get("X-Test-Key") }

func get(key string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
	r.Header.Set("X-Test-Key", key)
	return r
}

// rateHeaders returns the three X-RateLimit headers of a response as
// numbers, checking that each is set exactly once.
func rateHeaders(t *testing.T, h http.Header) (limit, remaining, reset int64) {
	t.Helper()
	nums := make([]int64, 3)
	for i, name := range []string{middleware.HeaderLimit, middleware.HeaderRemaining, middleware.HeaderReset} {
		vals := h.Values(name)
		if !assert.Len(t, vals, 1, "%s set exactly once", name) {
			continue
		}
		n, err := strconv.ParseInt(vals[0], 10, 64)
		assert.NoError(t, err, "%s is an integer: %q", name, vals[0])
		nums[i] = n
	}
	return nums[0], nums[1], nums[2]
}

// retryAfter returns the Retry-After header in seconds, checking that it
// is set exactly once.
func retryAfter(t *testing.T, h http.Header) int64 {
	t.Helper()
	vals := h.Values(middleware.HeaderRetryAfter)
	require.Len(t, vals, 1, "Retry-After set exactly once")
	n, err := strconv.ParseInt(vals[0], 10, 64)
	require.NoError(t, err, "Retry-After is whole seconds: %q", vals[0])
	return n
}

func TestRateLimiterHeadersDecreaseAndSixthRequestIsRefused(t *testing.T) {
	// The minute window is the one closest to running out.
	rl := middleware.NewRateLimiter(newMemStore(),
		limiter.Rate{Period: time.Minute, Limit: 5}, limiter.Rate{Period: time.Hour, Limit: 1000})
	next := &okHandler{}
	h := rl.Limit(byHeader)(next)

	start := time.Now().Unix()
	var firstReset int64
	for i := 1; i <= 5; i++ {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, get("alice"))
		require.Equal(t, http.StatusOK, rec.Code, "request %d passes", i)
		limit, remaining, reset := rateHeaders(t, rec.Header())
		assert.EqualValues(t, 5, limit, "request %d: X-RateLimit-Limit is the minute window's", i)
		assert.EqualValues(t, 5-i, remaining, "request %d: X-RateLimit-Remaining decreases by one", i)
		if i == 1 {
			firstReset = reset
			assert.GreaterOrEqual(t, reset, start, "X-RateLimit-Reset is in Unix seconds, not in the past")
			assert.LessOrEqual(t, reset, time.Now().Unix()+60, "X-RateLimit-Reset within the minute window")
		} else {
			assert.Equal(t, firstReset, reset, "request %d: a fixed window keeps its reset", i)
		}
		assert.Empty(t, rec.Header().Values(middleware.HeaderRetryAfter), "request %d: no Retry-After below the limit", i)
	}
	require.EqualValues(t, 5, next.calls.Load(), "the five requests reached the handler")

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get("alice"))
	wantErrorEnvelope(t, rec, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
	limit, remaining, reset := rateHeaders(t, rec.Header())
	assert.EqualValues(t, 5, limit, "429: X-RateLimit-Limit of the minute window")
	assert.EqualValues(t, 0, remaining, "429: X-RateLimit-Remaining")
	assert.Equal(t, firstReset, reset, "429: X-RateLimit-Reset")
	ra := retryAfter(t, rec.Header())
	assert.True(t, ra >= 1 && ra <= 60, "Retry-After %d is within the minute window (1..60)", ra)
	assert.EqualValues(t, 5, next.calls.Load(), "the refused request did not reach the handler")
}

func TestRateLimiterHourWindow(t *testing.T) {
	// Rates in any order: the hour window is listed first here.
	rl := middleware.NewRateLimiter(newMemStore(),
		limiter.Rate{Period: time.Hour, Limit: 3}, limiter.Rate{Period: time.Minute, Limit: 100})
	h := rl.Limit(byHeader)(&okHandler{})

	for i := 1; i <= 3; i++ {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, get("alice"))
		require.Equal(t, http.StatusOK, rec.Code, "request %d passes", i)
		limit, remaining, reset := rateHeaders(t, rec.Header())
		assert.EqualValues(t, 3, limit, "request %d: the hour window is closest to running out", i)
		assert.EqualValues(t, 3-i, remaining, "request %d: remaining", i)
		assert.Greater(t, reset, time.Now().Unix()+60, "request %d: reset is the hour window's", i)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get("alice"))
	wantErrorEnvelope(t, rec, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
	limit, remaining, reset := rateHeaders(t, rec.Header())
	assert.EqualValues(t, 3, limit, "429 shows the hour window")
	assert.EqualValues(t, 0, remaining)
	now := time.Now().Unix()
	assert.True(t, reset > now+3500 && reset <= now+3600, "reset %d is about an hour away (now %d)", reset, now)
	ra := retryAfter(t, rec.Header())
	assert.True(t, ra > 3500 && ra <= 3600, "Retry-After %d is about an hour", ra)
}

func TestRateLimiterKeysAreIsolated(t *testing.T) {
	rl := middleware.NewRateLimiter(newMemStore(), limiter.Rate{Period: time.Minute, Limit: 2})
	h := rl.Limit(byHeader)(&okHandler{})
	for i := range 3 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, get("alice"))
		if i < 2 {
			require.Equal(t, http.StatusOK, rec.Code, "alice request %d", i+1)
		} else {
			require.Equal(t, http.StatusTooManyRequests, rec.Code, "alice request %d", i+1)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get("bob"))
	assert.Equal(t, http.StatusOK, rec.Code, "bob is not limited by alice's traffic")
	_, remaining, _ := rateHeaders(t, rec.Header())
	assert.EqualValues(t, 1, remaining, "bob has his own budget")
}

func TestRateLimiterWindowPasses(t *testing.T) {
	const period = 300 * time.Millisecond
	clock := newClockStore()
	rl := middleware.NewRateLimiter(clock, limiter.Rate{Period: period, Limit: 2})
	h := rl.Limit(byHeader)(&okHandler{})
	codes := func() []int {
		var out []int
		for range 3 {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, get("alice"))
			out = append(out, rec.Code)
		}
		return out
	}
	refused := []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests}
	require.Equal(t, refused, codes(), "first window")
	clock.advance(period + 50*time.Millisecond)
	assert.Equal(t, refused, codes(), "a new window starts once the old one has passed")
}

func TestRateLimiterCountShortestWindowFirst(t *testing.T) {
	// A request refused by the short window does not spend the long
	// window's budget.
	ctx := context.Background()
	const period = 300 * time.Millisecond
	clock := newClockStore()
	rl := middleware.NewRateLimiter(clock,
		limiter.Rate{Period: time.Hour, Limit: 5}, limiter.Rate{Period: period, Limit: 3})
	for i := 1; i <= 6; i++ {
		c, err := rl.Count(ctx, "alice")
		require.NoError(t, err)
		assert.Equal(t, i > 3, c.Reached, "count %d reached", i)
	}
	clock.advance(period + 50*time.Millisecond)
	c, err := rl.Count(ctx, "alice")
	require.NoError(t, err)
	assert.False(t, c.Reached)
	assert.EqualValues(t, 5, c.Limit, "the hour window is now the closer one")
	assert.EqualValues(t, 1, c.Remaining, "only the 3 passed requests and this one spent hour budget")
}

func TestRateLimiterSubSecondWindowsAreSeparate(t *testing.T) {
	// Two windows never share a counter, whatever their periods.
	ctx := context.Background()
	rl := middleware.NewRateLimiter(newMemStore(),
		limiter.Rate{Period: 1500 * time.Millisecond, Limit: 3}, limiter.Rate{Period: time.Second, Limit: 100})
	for i := 1; i <= 4; i++ {
		c, err := rl.Count(ctx, "alice")
		require.NoError(t, err)
		assert.Equal(t, i > 3, c.Reached, "count %d reached (limit 3)", i)
		if i <= 3 {
			assert.EqualValues(t, 3-i, c.Remaining, "count %d remaining", i)
		}
	}
	rl = middleware.NewRateLimiter(newMemStore(),
		limiter.Rate{Period: 200 * time.Millisecond, Limit: 3}, limiter.Rate{Period: 400 * time.Millisecond, Limit: 100})
	for i := 1; i <= 4; i++ {
		c, err := rl.Count(ctx, "bob")
		require.NoError(t, err)
		assert.Equal(t, i > 3, c.Reached, "sub-second windows: count %d reached (limit 3)", i)
	}
}

func TestRateLimiterConcurrentRequestsCountedExactly(t *testing.T) {
	rl := middleware.NewRateLimiter(newMemStore(), limiter.Rate{Period: time.Minute, Limit: 20})
	next := &okHandler{}
	h := rl.Limit(byHeader)(next)
	var wg sync.WaitGroup
	var refused atomic.Int64
	for range 50 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, get("alice"))
			if rec.Code == http.StatusTooManyRequests {
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 20, next.calls.Load(), "exactly the limit passes")
	assert.EqualValues(t, 30, refused.Load(), "the rest is refused")
}

func TestRateLimiterStoreFailureIs503(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failAfter int64
	}{
		{"every call fails", 0},
		{"second window fails", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &failingStore{ok: newMemStore(), failAfter: tc.failAfter}
			rl := middleware.NewRateLimiter(s,
				limiter.Rate{Period: time.Minute, Limit: 100}, limiter.Rate{Period: time.Hour, Limit: 1000})
			next := &okHandler{}
			h := rl.Limit(byHeader)(next)
			rec := httptest.NewRecorder()
			require.NotPanics(t, func() { h.ServeHTTP(rec, get("alice")) })
			wantErrorEnvelope(t, rec, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "Service unavailable")
			assert.NotContains(t, rec.Body.String(), "6379", "the store's error is not sent")
			assert.NotContains(t, rec.Body.String(), "refused", "the store's error is not sent")
			assert.Zero(t, next.calls.Load(), "the handler is not reached")

			_, err := rl.Count(context.Background(), "bob")
			assert.ErrorIs(t, err, middleware.ErrRateLimitUnavailable, "Count reports the store as unavailable")
			assert.NotErrorIs(t, err, store.ErrUnavailable, "a limiter failure is not the data store's")
		})
	}
}

func TestRateLimiterDisabled(t *testing.T) {
	for name, rl := range map[string]*middleware.RateLimiter{
		"nil":             nil,
		"zero limits":     middleware.NewRateLimiter(newMemStore(), limiter.Rate{Period: time.Hour}, limiter.Rate{Period: time.Minute}),
		"no rates at all": middleware.NewRateLimiter(newMemStore()),
	} {
		next := &okHandler{}
		rec := httptest.NewRecorder()
		rl.Limit(byHeader)(next).ServeHTTP(rec, get("alice"))
		assert.Equal(t, http.StatusOK, rec.Code, name)
		assert.Empty(t, rec.Header().Values(middleware.HeaderLimit), "%s: nothing counted", name)
	}
	// One window turned off leaves the other.
	rl := middleware.NewRateLimiter(newMemStore(), limiter.Rate{Period: time.Hour, Limit: 0}, limiter.Rate{Period: time.Minute, Limit: 1})
	h := rl.Limit(byHeader)(&okHandler{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get("alice"))
	assert.Equal(t, http.StatusOK, rec.Code)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, get("alice"))
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, "the minute window still applies")
}

// TestAuthenticateCountsRejectedRequestsByIP wires Authenticate and the
// rate limiter as the router does: a request whose token does not verify
// is counted under its client IP before its 401 is written, so that the
// subject of a forged token never becomes a counter key.
func TestAuthenticateCountsRejectedRequestsByIP(t *testing.T) {
	ctx := context.Background()
	users := memory.New()
	alice, err := users.CreateUser(ctx, &store.User{Username: "alice", PasswordHash: []byte("x"), Active: true})
	require.NoError(t, err)
	secret := []byte(strings.Repeat("s", 32))
	tokens, err := auth.NewTokens(auth.TokenConfig{Secret: secret, Issuer: "hds", Expiration: time.Hour})
	require.NoError(t, err)

	rs := newRecordingStore()
	rl := middleware.NewRateLimiter(rs, limiter.Rate{Period: time.Minute, Limit: 1_000_000})
	clientIP, err := middleware.NewClientIP()
	require.NoError(t, err)
	byIP := rl.Limit(func(r *http.Request) string { return "ip:" + clientIP.Of(r) })
	byUser := rl.Limit(func(r *http.Request) string {
		if u := auth.UserFrom(r.Context()); u != nil {
			return "user:" + u.ID
		}
		return "ip:" + clientIP.Of(r)
	})
	next := &okHandler{}
	h := middleware.Authenticate(tokens, users, nil, true, byIP)(byUser(next))

	const forged = 1000
	forger := []byte(strings.Repeat("f", 32))
	for i := range forged {
		now := time.Now()
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
			"sub": fmt.Sprintf("forged-subject-%d", i), "iss": "hds", "jti": strconv.Itoa(i),
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "orig_iat": now.Unix(),
		}).SignedString(forger)
		require.NoError(t, err)
		r := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
		r.RemoteAddr = "198.51.100.7:4321"
		r.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		require.Equal(t, http.StatusUnauthorized, rec.Code, "forged token %d", i)
		_, remaining, _ := rateHeaders(t, rec.Header())
		require.EqualValues(t, 1_000_000-1-i, remaining, "forged token %d is counted in the IP's bucket", i)
	}
	// A genuine token is counted against its user.
	tok, err := tokens.Issue(alice.ID, time.Time{})
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
	r.RemoteAddr = "198.51.100.7:4321"
	r.Header.Set("Authorization", "Bearer "+tok)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.EqualValues(t, 1, next.calls.Load())

	keys := rs.recorded()
	assert.Len(t, keys, 2, "one IP key and one user key, whatever the forged subjects: %v", keys)
	for k, n := range keys {
		assert.NotContains(t, k, "forged", "a forged subject became a key")
		switch {
		case strings.Contains(k, "ip:198.51.100.7"):
			assert.Equal(t, forged, n, "every forged request counted by IP")
		case strings.Contains(k, "user:"+alice.ID):
			assert.Equal(t, 1, n)
		default:
			t.Errorf("unexpected key %q", k)
		}
	}
}

// heapAfterGC returns the live heap after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

const mib = 1 << 20

// TestRateLimiterMemoryBoundedAfterMillionClients feeds 1,000,000
// distinct client IPs through the limiter on ulule's memory store with
// short windows and checks that, once the windows have expired and the
// cleaner has run, the live heap is back near where it started: expired
// windows are dropped. A control run without a cleaner shows what the
// keys would otherwise retain.
func TestRateLimiterMemoryBoundedAfterMillionClients(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds 1,000,000 keys")
	}
	const (
		clients = 1_000_000
		control = 100_000
		slack   = 20 * mib
	)
	ctx := context.Background()
	ipKey := func(i int) string {
		return "ip:" + netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String()
	}
	rates := []limiter.Rate{{Period: 50 * time.Millisecond, Limit: 10}, {Period: 100 * time.Millisecond, Limit: 100}}

	// Control: no cleaner, so nothing is dropped.
	base := heapAfterGC()
	s := limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "ctl", CleanUpInterval: 0})
	rl := middleware.NewRateLimiter(s, rates...)
	for i := range control {
		_, err := rl.Count(ctx, ipKey(i))
		require.NoError(t, err)
	}
	retained := int64(heapAfterGC()) - int64(base)
	runtime.KeepAlive(s)
	t.Logf("control, no cleaner: %d keys retain %.1f MiB (%.0f bytes per client, 2 windows)",
		control, float64(retained)/mib, float64(retained)/control)
	require.Greater(t, retained, int64(5*mib), "the control must show the keys' memory, or the measurement below means nothing")
	s, rl = nil, nil

	base = heapAfterGC()
	s = limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "mem", CleanUpInterval: 10 * time.Millisecond})
	rl = middleware.NewRateLimiter(s, rates...)
	started := time.Now()
	var peak uint64
	for i := range clients {
		c, err := rl.Count(ctx, ipKey(i))
		require.NoError(t, err)
		if c.Reached {
			t.Fatalf("client %d refused on its first request", i)
		}
		if i%100_000 == 99_999 {
			peak = max(peak, heapAfterGC())
		}
	}
	fed := time.Since(started)

	// Every window has expired 100ms after the last request, and the
	// cleaner runs every 10ms: wait, up to a deadline generous enough for
	// a loaded machine, for the heap to fall back.
	var after uint64
	deadline := time.Now().Add(30 * time.Second)
	for {
		after = heapAfterGC()
		if after <= base+slack || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	runtime.KeepAlive(s)
	t.Logf("%d distinct client IPs in %v: heap baseline %.1f MiB, live peak while feeding %.1f MiB, after expiry and cleanup %.1f MiB (%+.1f MiB)",
		clients, fed.Round(time.Millisecond), float64(base)/mib, float64(peak)/mib, float64(after)/mib,
		(float64(after)-float64(base))/mib)
	assert.LessOrEqual(t, after, base+slack, "expired windows are dropped: the heap falls back near the baseline")
}

// BenchmarkRateLimiterCount is the cost rate limiting adds to a request:
// one Count over the two default windows on the in-memory store (the
// budget is 1 us).
func BenchmarkRateLimiterCount(b *testing.B) {
	l := middleware.NewRateLimiter(newMemStore(),
		limiter.Rate{Period: time.Hour, Limit: 1 << 40}, limiter.Rate{Period: time.Minute, Limit: 1 << 40})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Count(ctx, "user:01a204e7-7edc-758d-a1d9-e9941fbe811d"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

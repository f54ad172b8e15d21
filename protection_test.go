package hds_test

// Protection under load and abuse (API.md sections 8 and 9), black-box
// through hds.New: rate limits, login throttling, client IPs behind
// proxies, CORS, and counters shared by two instances on one Redis.
// Every top-level name here starts with "prot".

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
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
	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

const (
	protSecret = "prot-jwt-secret-0123456789abcdefghij" // 36 bytes
	protOrigin = "https://app.example.com"
	protIPA    = "198.51.100.10:40000"
	protIPB    = "198.51.100.20:40000"
)

// protUsers returns a memory store holding an active user per name, each
// with the password name+"-pw".
func protUsers(t *testing.T, names ...string) *memory.Store {
	t.Helper()
	m := memory.New()
	for _, name := range names {
		hash, err := bcrypt.GenerateFromPassword([]byte(name+"-pw"), bcrypt.MinCost)
		require.NoError(t, err)
		_, err = m.CreateUser(context.Background(), &store.User{Username: name, PasswordHash: hash, Active: true})
		require.NoError(t, err)
	}
	return m
}

// protServer returns hds.New on m with a fixed JWT secret, authentication
// required, no request log, and opts.
func protServer(m *memory.Store, opts ...hds.Option) http.Handler {
	base := []hds.Option{
		hds.WithStore(m), hds.WithUsers(m),
		hds.WithSecurity(hds.Security{JWTSecret: protSecret, RequireAuth: true}),
		hds.WithLogger(slog.New(slog.DiscardHandler)),
	}
	return hds.New(append(base, opts...)...)
}

// protReq is one request: its method and target, the connection's
// remote address, and optional body, token and headers.
type protReq struct {
	method, target, remote string
	body, token            string
	header                 map[string]string
}

func protDo(h http.Handler, q protReq) *httptest.ResponseRecorder {
	var r *http.Request
	if q.body != "" {
		r = httptest.NewRequest(q.method, q.target, strings.NewReader(q.body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(q.method, q.target, nil)
	}
	if q.remote != "" {
		r.RemoteAddr = q.remote
	}
	if q.token != "" {
		r.Header.Set("Authorization", "Bearer "+q.token)
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// protGet is an authenticated (when token is set) GET of the project list.
func protGet(h http.Handler, remote, token string) *httptest.ResponseRecorder {
	return protDo(h, protReq{method: http.MethodGet, target: "/api/v1/projects", remote: remote, token: token})
}

func protLoginRec(h http.Handler, remote, username, password string) *httptest.ResponseRecorder {
	body, _ := json.Marshal(map[string]string{"username": username, "password": password})
	return protDo(h, protReq{method: http.MethodPost, target: "/api/v1/auth/login", remote: remote, body: string(body)})
}

// protLogin logs username in with its right password and returns the token.
func protLogin(t *testing.T, h http.Handler, remote, username string) string {
	t.Helper()
	rec := protLoginRec(h, remote, username, username+"-pw")
	require.Equal(t, http.StatusOK, rec.Code, "login %s: %s", username, rec.Body)
	var env struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
	require.NotEmpty(t, env.Data.Token, "login %s: data.token", username)
	return env.Data.Token
}

// protWantError checks an error envelope's status, code and message
// (message only when not empty).
func protWantError(t *testing.T, what string, rec *httptest.ResponseRecorder, status int, code, message string) {
	t.Helper()
	assert.Equal(t, status, rec.Code, "%s: status (body %s)", what, rec.Body)
	assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"), "%s: Content-Type", what)
	var env struct {
		Success *bool `json:"success"`
		Error   *struct {
			Code    string  `json:"code"`
			Message string  `json:"message"`
			Details *string `json:"details"`
		} `json:"error"`
	}
	if !assert.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env), "%s: envelope", what) {
		return
	}
	if assert.NotNil(t, env.Success, "%s: success", what) {
		assert.False(t, *env.Success, "%s: success", what)
	}
	if !assert.NotNil(t, env.Error, "%s: error", what) {
		return
	}
	assert.Equal(t, code, env.Error.Code, "%s: error.code", what)
	if message != "" {
		assert.Equal(t, message, env.Error.Message, "%s: error.message", what)
	}
	assert.NotNil(t, env.Error.Details, "%s: error.details", what)
}

// protRate returns the X-RateLimit headers, checking each is set once.
func protRate(t *testing.T, what string, rec *httptest.ResponseRecorder) (limit, remaining, reset int64) {
	t.Helper()
	var nums [3]int64
	for i, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		vals := rec.Header().Values(name)
		if !assert.Len(t, vals, 1, "%s: %s set exactly once", what, name) {
			continue
		}
		n, err := strconv.ParseInt(vals[0], 10, 64)
		assert.NoError(t, err, "%s: %s = %q", what, name, vals[0])
		nums[i] = n
	}
	return nums[0], nums[1], nums[2]
}

// protRemaining is X-RateLimit-Remaining.
func protRemaining(t *testing.T, what string, rec *httptest.ResponseRecorder) int64 {
	t.Helper()
	_, remaining, _ := protRate(t, what, rec)
	return remaining
}

// protNotCounted checks that a response carries no rate limit headers.
func protNotCounted(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		assert.Empty(t, rec.Header().Values(name), "%s: not counted, so no %s", what, name)
	}
}

// protRetryAfter returns Retry-After in seconds, checking it is set once.
func protRetryAfter(t *testing.T, what string, rec *httptest.ResponseRecorder) int64 {
	t.Helper()
	vals := rec.Header().Values("Retry-After")
	require.Len(t, vals, 1, "%s: Retry-After set exactly once", what)
	n, err := strconv.ParseInt(vals[0], 10, 64)
	require.NoError(t, err, "%s: Retry-After %q is whole seconds", what, vals[0])
	return n
}

// protWant429 checks a rate limit refusal with a Retry-After of
// 1..maxRetry seconds.
func protWant429(t *testing.T, what string, rec *httptest.ResponseRecorder, maxRetry int64) {
	t.Helper()
	protWantError(t, what, rec, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
	ra := protRetryAfter(t, what, rec)
	assert.True(t, ra >= 1 && ra <= maxRetry, "%s: Retry-After %d within 1..%d", what, ra, maxRetry)
}

func TestProtRateLimitHeadersAndSixthRequestRefused(t *testing.T) {
	m := protUsers(t, "alice")
	h := protServer(m, hds.WithRateLimit(1000, 5))
	token := protLogin(t, h, protIPA, "alice")

	start := time.Now().Unix()
	var firstReset int64
	for i := 1; i <= 5; i++ {
		what := fmt.Sprintf("request %d", i)
		rec := protGet(h, protIPA, token)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", what, rec.Body)
		limit, remaining, reset := protRate(t, what, rec)
		assert.EqualValues(t, 5, limit, "%s: X-RateLimit-Limit is the minute window's", what)
		assert.EqualValues(t, 5-i, remaining, "%s: X-RateLimit-Remaining decreases by one", what)
		if i == 1 {
			firstReset = reset
			assert.True(t, reset >= start && reset <= time.Now().Unix()+60,
				"%s: X-RateLimit-Reset %d is Unix seconds within the minute (now %d)", what, reset, start)
		} else {
			assert.Equal(t, firstReset, reset, "%s: X-RateLimit-Reset stays put in a window", what)
		}
		assert.Empty(t, rec.Header().Values("Retry-After"), "%s: no Retry-After", what)
	}
	rec := protGet(h, protIPA, token)
	protWant429(t, "request 6", rec, 60)
	limit, remaining, reset := protRate(t, "request 6", rec)
	assert.EqualValues(t, 5, limit, "request 6: X-RateLimit-Limit")
	assert.EqualValues(t, 0, remaining, "request 6: X-RateLimit-Remaining")
	assert.Equal(t, firstReset, reset, "request 6: X-RateLimit-Reset")
	protWant429(t, "request 7", protGet(h, protIPA, token), 60)
}

func TestProtRateLimitDefaults(t *testing.T) {
	m := protUsers(t, "alice")
	h := protServer(m)
	token := protLogin(t, h, protIPA, "alice")
	for i := 1; i <= 3; i++ {
		limit, remaining, _ := protRate(t, "default limits", protGet(h, protIPA, token))
		assert.EqualValues(t, 100, limit, "the 100/minute window is closer to running out than 1000/hour")
		assert.EqualValues(t, 100-i, remaining)
	}
}

func TestProtRateLimitHourWindow(t *testing.T) {
	m := protUsers(t, "alice")
	h := protServer(m, hds.WithRateLimit(3, 100))
	token := protLogin(t, h, protIPA, "alice")
	for i := 1; i <= 3; i++ {
		what := fmt.Sprintf("request %d", i)
		rec := protGet(h, protIPA, token)
		require.Equal(t, http.StatusOK, rec.Code, what)
		limit, remaining, _ := protRate(t, what, rec)
		assert.EqualValues(t, 3, limit, "%s: the hour window is closest to running out", what)
		assert.EqualValues(t, 3-i, remaining, what)
	}
	rec := protGet(h, protIPA, token)
	protWantError(t, "request 4", rec, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
	limit, remaining, reset := protRate(t, "request 4", rec)
	assert.EqualValues(t, 3, limit, "request 4: headers show the hour window")
	assert.EqualValues(t, 0, remaining, "request 4")
	now := time.Now().Unix()
	assert.True(t, reset > now+3500 && reset <= now+3600, "request 4: reset %d is an hour away (now %d)", reset, now)
	ra := protRetryAfter(t, "request 4", rec)
	assert.True(t, ra > 3500 && ra <= 3600, "request 4: Retry-After %d is about an hour", ra)
}

func TestProtRateLimitPerUser(t *testing.T) {
	m := protUsers(t, "alice", "bob")
	h := protServer(m, hds.WithRateLimit(1000, 3))
	// Both log in from the same IP: two of that IP's three requests.
	alice := protLogin(t, h, protIPA, "alice")
	bob := protLogin(t, h, protIPA, "bob")

	for i := 1; i <= 3; i++ {
		require.Equal(t, http.StatusOK, protGet(h, protIPA, alice).Code, "alice request %d", i)
	}
	protWant429(t, "alice request 4", protGet(h, protIPA, alice), 60)

	rec := protGet(h, protIPA, bob)
	assert.Equal(t, http.StatusOK, rec.Code, "bob is not limited by alice's traffic from the same IP")
	assert.EqualValues(t, 2, protRemaining(t, "bob", rec), "bob's own budget")

	// The IP's own bucket holds only the two logins so far.
	rec = protGet(h, protIPA, "")
	protWantError(t, "no token", rec, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
	assert.EqualValues(t, 0, protRemaining(t, "no token", rec), "two logins and this request")
	protWant429(t, "no token again", protGet(h, protIPA, ""), 60)
	assert.Equal(t, http.StatusOK, protGet(h, protIPA, bob).Code, "bob still passes")
}

func TestProtRateLimitBeforeAuthCountedByIP(t *testing.T) {
	m := protUsers(t, "alice")
	h := protServer(m, hds.WithRateLimit(1000, 6), hds.WithCORS(protOrigin))
	steps := []struct {
		what    string
		q       protReq
		status  int
		counted bool
	}{
		{"failed login", protReq{method: "POST", target: "/api/v1/auth/login", body: `{"username":"alice","password":"wrong"}`}, 401, true},
		{"no token", protReq{method: "GET", target: "/api/v1/projects"}, 401, true},
		{"garbage token", protReq{method: "GET", target: "/api/v1/projects", token: "not-a-jwt"}, 401, true},
		{"health", protReq{method: "GET", target: "/health"}, 200, false},
		{"preflight", protReq{method: "OPTIONS", target: "/api/v1/projects",
			header: map[string]string{"Origin": protOrigin, "Access-Control-Request-Method": "POST"}}, 204, false},
		{"unknown route", protReq{method: "GET", target: "/api/v1/nothing-here"}, 404, true},
		{"wrong method", protReq{method: "PATCH", target: "/api/v1/projects"}, 405, true},
		{"refresh without token", protReq{method: "POST", target: "/api/v1/auth/refresh"}, 401, true},
	}
	remaining := int64(6)
	for _, s := range steps {
		s.q.remote = protIPA
		rec := protDo(h, s.q)
		require.Equal(t, s.status, rec.Code, "%s: %s", s.what, rec.Body)
		if !s.counted {
			protNotCounted(t, s.what, rec)
			continue
		}
		remaining--
		assert.EqualValues(t, remaining, protRemaining(t, s.what, rec), "%s is counted against the IP", s.what)
	}
	require.EqualValues(t, 0, remaining)
	protWant429(t, "the next request from the IP", protGet(h, protIPA, ""), 60)
	rec := protLoginRec(h, protIPA, "alice", "alice-pw")
	protWant429(t, "a login from the IP", rec, 60)

	// Another IP has its own bucket.
	rec = protGet(h, protIPB, "")
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "another IP")
	assert.EqualValues(t, 5, protRemaining(t, "another IP", rec))
	// And the exhausted IP's user, once logged in elsewhere, has a bucket of
	// her own even from that IP.
	token := protLogin(t, h, protIPB, "alice")
	rec = protGet(h, protIPA, token)
	assert.Equal(t, http.StatusOK, rec.Code, "alice's token from the exhausted IP")
	assert.EqualValues(t, 5, protRemaining(t, "alice", rec))
}

func TestProtRateLimitNonCanonicalPathCounted(t *testing.T) {
	// API.md section 8: 404s from routing are counted against the client
	// IP, and section 1 makes a non-canonical path a routing 404.
	h := protServer(protUsers(t), hds.WithRateLimit(1000, 2))
	for i, target := range []string{"/api/v1/projects/", "/api/v1//projects"} {
		rec := protDo(h, protReq{method: "GET", target: target, remote: protIPA})
		require.Equal(t, http.StatusNotFound, rec.Code, target)
		assert.EqualValues(t, 1-i, protRemaining(t, target, rec), "%s is counted", target)
	}
	protWant429(t, "third request", protDo(h, protReq{method: "GET", target: "/api/v1/projects/", remote: protIPA}), 60)
}

func TestProtHealthAndPreflightNotCounted(t *testing.T) {
	h := protServer(protUsers(t), hds.WithRateLimit(1000, 1), hds.WithCORS(protOrigin))
	for range 5 {
		rec := protDo(h, protReq{method: "GET", target: "/health", remote: protIPA})
		require.Equal(t, http.StatusOK, rec.Code)
		protNotCounted(t, "/health", rec)
		rec = protDo(h, protReq{method: "OPTIONS", target: "/api/v1/projects", remote: protIPA,
			header: map[string]string{"Origin": protOrigin, "Access-Control-Request-Method": "GET"}})
		require.Equal(t, http.StatusNoContent, rec.Code)
		protNotCounted(t, "preflight", rec)
	}
	rec := protGet(h, protIPA, "")
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "the IP's single request is still available")
	assert.EqualValues(t, 0, protRemaining(t, "first counted request", rec))
}

func TestProtSpoofedForwardedForIgnoredWithoutTrustedProxies(t *testing.T) {
	h := protServer(protUsers(t), hds.WithRateLimit(1000, 2))
	const remote = "203.0.113.9:5555"
	for i, hdr := range []map[string]string{
		{"X-Forwarded-For": "1.1.1.1"},
		{"X-Forwarded-For": "2.2.2.2", "X-Real-IP": "2.2.2.2"},
	} {
		rec := protDo(h, protReq{method: "GET", target: "/api/v1/projects", remote: remote, header: hdr})
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		assert.EqualValues(t, 1-i, protRemaining(t, fmt.Sprint(hdr), rec), "one bucket whatever the headers say")
	}
	rec := protDo(h, protReq{method: "GET", target: "/api/v1/projects", remote: remote,
		header: map[string]string{"X-Forwarded-For": "3.3.3.3", "X-Real-IP": "4.4.4.4"}})
	protWant429(t, "a third invented address", rec, 60)
}

func TestProtForwardedForHonouredFromTrustedProxies(t *testing.T) {
	h := protServer(protUsers(t), hds.WithRateLimit(1000, 2), hds.WithTrustedProxies("192.0.2.0/24"))
	const proxy = "192.0.2.1:1234"
	xff := func(v string) protReq {
		return protReq{method: "GET", target: "/api/v1/projects", remote: proxy,
			header: map[string]string{"X-Forwarded-For": v}}
	}
	// Both name client 2.2.2.2: the right-most untrusted address.
	rec := protDo(h, xff("1.1.1.1, 2.2.2.2"))
	assert.EqualValues(t, 1, protRemaining(t, "2.2.2.2 first", rec))
	rec = protDo(h, xff("spoofed, 2.2.2.2, 192.0.2.7"))
	assert.EqualValues(t, 0, protRemaining(t, "2.2.2.2 second", rec), "same client behind an inner proxy")
	protWant429(t, "2.2.2.2 third", protDo(h, xff("9.9.9.9, 2.2.2.2")), 60)

	// Another client behind the same proxy has its own bucket, whatever it
	// prepends.
	rec = protDo(h, xff("2.2.2.2, 3.3.3.3"))
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "3.3.3.3")
	assert.EqualValues(t, 1, protRemaining(t, "3.3.3.3", rec))
	// The proxy itself, without the header, is a client of its own.
	rec = protGet(h, proxy, "")
	assert.EqualValues(t, 1, protRemaining(t, "the proxy", rec))
	// A client not behind a trusted proxy cannot borrow another's bucket.
	rec = protDo(h, protReq{method: "GET", target: "/api/v1/projects", remote: "203.0.113.9:1",
		header: map[string]string{"X-Forwarded-For": "4.4.4.4"}})
	assert.EqualValues(t, 1, protRemaining(t, "direct client", rec))
	rec = protDo(h, xff("4.4.4.4"))
	assert.EqualValues(t, 1, protRemaining(t, "4.4.4.4 via the proxy", rec), "4.4.4.4 was not charged for the direct client")
}

// protRecordingStore passes every call to a limiter.Store and records
// the keys asked for.
type protRecordingStore struct {
	limiter.Store
	mu   sync.Mutex
	keys map[string]int
}

func (s *protRecordingStore) note(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key]++
}

func (s *protRecordingStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s.note(key)
	return s.Store.Get(ctx, key, rate)
}

func (s *protRecordingStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s.note(key)
	return s.Store.Peek(ctx, key, rate)
}

func (s *protRecordingStore) Increment(ctx context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	s.note(key)
	return s.Store.Increment(ctx, key, n, rate)
}

// protToken signs claims for sub with secret and method.
func protToken(t *testing.T, sub string, method jwt.SigningMethod, secret any) string {
	t.Helper()
	now := time.Now()
	tok, err := jwt.NewWithClaims(method, jwt.MapClaims{
		"sub": sub, "iss": "hds", "jti": sub, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "orig_iat": now.Unix(),
	}).SignedString(secret)
	require.NoError(t, err)
	return tok
}

// TestProtForgedTokenSubjectsCountedByIP: a token whose subject cannot be
// trusted is counted against the client IP, so forged subjects never
// become counter keys: memory cannot be grown by inventing subjects.
func TestProtForgedTokenSubjectsCountedByIP(t *testing.T) {
	rs := &protRecordingStore{
		Store: limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "prot", CleanUpInterval: time.Minute}),
		keys:  make(map[string]int),
	}
	m := protUsers(t, "alice")
	h := protServer(m, hds.WithRateLimit(1_000_000, 1_000_000), hds.WithRateLimitStore(rs))

	const forged = 500
	wrongSecret := []byte("not-the-server-secret-0123456789abc")
	for i := range forged {
		sub := fmt.Sprintf("forged-subject-%d", i)
		tok := protToken(t, sub, jwt.SigningMethodHS256, wrongSecret)
		rec := protGet(h, protIPA, tok)
		require.Equal(t, http.StatusUnauthorized, rec.Code, sub)
		protWantError(t, sub, rec, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid token signature")
		require.EqualValues(t, 1_000_000-1-i, protRemaining(t, sub, rec), "%s counted in the IP's bucket", sub)
	}
	// A well-signed token for a subject that is no user, and an unsigned
	// one, are counted by IP too.
	for i, tok := range []string{
		protToken(t, "forged-unknown-user", jwt.SigningMethodHS256, []byte(protSecret)),
		protToken(t, "forged-none", jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType),
	} {
		rec := protGet(h, protIPA, tok)
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		assert.EqualValues(t, 1_000_000-1-forged-i, protRemaining(t, "token "+strconv.Itoa(i), rec))
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

func TestProtLoginThrottlePerUser(t *testing.T) {
	m := protUsers(t, "alice", "bob")
	h := protServer(m, hds.WithLoginThrottle(3, 100, time.Minute))
	for i := 1; i <= 3; i++ {
		rec := protLoginRec(h, protIPA, "alice", "wrong")
		protWantError(t, fmt.Sprintf("failure %d", i), rec, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")
	}
	protWant429(t, "right password after 3 failures", protLoginRec(h, protIPA, "alice", "alice-pw"), 60)
	protWant429(t, "right password from another IP", protLoginRec(h, protIPB, "alice", "alice-pw"), 60)
	protWant429(t, "wrong password again", protLoginRec(h, protIPA, "alice", "wrong"), 60)
	protLogin(t, h, protIPA, "bob") // another user from the same IP
}

func TestProtLoginThrottlePerIP(t *testing.T) {
	m := protUsers(t, "alice", "bob")
	h := protServer(m, hds.WithLoginThrottle(100, 3, time.Minute))
	for _, u := range []string{"bob", "nobody", "alice"} {
		rec := protLoginRec(h, protIPA, u, "wrong")
		require.Equal(t, http.StatusUnauthorized, rec.Code, u)
	}
	protWant429(t, "alice from the throttled IP", protLoginRec(h, protIPA, "alice", "alice-pw"), 60)
	protWant429(t, "bob from the throttled IP", protLoginRec(h, protIPA, "bob", "bob-pw"), 60)
	protLogin(t, h, protIPB, "alice") // from another IP
}

func TestProtLoginSuccessDoesNotResetFailures(t *testing.T) {
	m := protUsers(t, "alice")
	h := protServer(m, hds.WithLoginThrottle(3, 100, time.Minute))
	require.Equal(t, http.StatusUnauthorized, protLoginRec(h, protIPA, "alice", "wrong").Code)
	require.Equal(t, http.StatusUnauthorized, protLoginRec(h, protIPA, "alice", "wrong").Code)
	protLogin(t, h, protIPA, "alice")
	require.Equal(t, http.StatusUnauthorized, protLoginRec(h, protIPA, "alice", "wrong").Code, "third failure")
	protWant429(t, "right password", protLoginRec(h, protIPA, "alice", "alice-pw"), 60)
}

func TestProtLoginThrottleWindowPasses(t *testing.T) {
	const window = 300 * time.Millisecond
	m := protUsers(t, "alice")
	h := protServer(m, hds.WithLoginThrottle(2, 100, window))
	require.Equal(t, http.StatusUnauthorized, protLoginRec(h, protIPA, "alice", "wrong").Code)
	require.Equal(t, http.StatusUnauthorized, protLoginRec(h, protIPA, "alice", "wrong").Code)
	protWant429(t, "inside the window", protLoginRec(h, protIPA, "alice", "alice-pw"), 1)
	time.Sleep(window + 50*time.Millisecond)
	protLogin(t, h, protIPA, "alice")
}

// protRedisStore returns a limiter store on the local Redis under a key
// prefix of its own, removed when the test ends. Without Redis the test is
// skipped, unless HDS_REQUIRE_REDIS=1.
func protRedisStore(t *testing.T) limiter.Store {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", DialTimeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		if os.Getenv("HDS_REQUIRE_REDIS") == "1" {
			t.Fatalf("Redis on 127.0.0.1:6379 is required (HDS_REQUIRE_REDIS=1): %v", err)
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

func TestProtTwoInstancesShareRedisCounters(t *testing.T) {
	s := protRedisStore(t)
	m := protUsers(t, "alice", "bob")
	// Each instance falls back on its own; a long timeout, so that a busy
	// test machine does not look like an outage.
	opts := func() []hds.Option {
		return []hds.Option{hds.WithRateLimit(1000, 4), hds.WithLoginThrottle(2, 100, time.Minute),
			hds.WithRateLimitStore(middleware.NewFallbackStore(s, 5*time.Second, nil))}
	}
	a, b := protServer(m, opts()...), protServer(m, opts()...)

	token := protLogin(t, a, protIPA, "alice")
	for i, h := range []http.Handler{a, b, a, b} {
		what := fmt.Sprintf("request %d (instance %c)", i+1, "ab"[i%2])
		rec := protGet(h, protIPA, token)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", what, rec.Body)
		assert.EqualValues(t, 3-i, protRemaining(t, what, rec), "%s: one count for both instances", what)
	}
	protWant429(t, "request 5 (instance a)", protGet(a, protIPA, token), 60)
	protWant429(t, "request 6 (instance b)", protGet(b, protIPA, token), 60)

	// The login throttle is shared too: failures on each instance add up.
	require.Equal(t, http.StatusUnauthorized, protLoginRec(a, protIPB, "bob", "wrong").Code)
	require.Equal(t, http.StatusUnauthorized, protLoginRec(b, protIPB, "bob", "wrong").Code)
	protWant429(t, "bob after a failure on each instance", protLoginRec(a, protIPB, "bob", "bob-pw"), 60)
}

// protFlakyStore is a limiter.Store that fails every call while down,
// like a Redis that has gone away.
type protFlakyStore struct {
	limiter.Store
	down atomic.Bool
}

var protErrDown = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

func (s *protFlakyStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if s.down.Load() {
		return limiter.Context{}, protErrDown
	}
	return s.Store.Get(ctx, key, rate)
}

func (s *protFlakyStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if s.down.Load() {
		return limiter.Context{}, protErrDown
	}
	return s.Store.Peek(ctx, key, rate)
}

func (s *protFlakyStore) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if s.down.Load() {
		return limiter.Context{}, protErrDown
	}
	return s.Store.Reset(ctx, key, rate)
}

func (s *protFlakyStore) Increment(ctx context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	if s.down.Load() {
		return limiter.Context{}, protErrDown
	}
	return s.Store.Increment(ctx, key, n, rate)
}

func TestProtLimiterStoreFailureFallsBack(t *testing.T) {
	// API.md section 8 (v1.1): a rate limit store that fails is never a
	// reason to refuse a request; each instance counts on its own.
	fs := &protFlakyStore{Store: limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "prot", CleanUpInterval: time.Minute})}
	m := protUsers(t, "alice")
	h := protServer(m, hds.WithRateLimitStore(fs), hds.WithCORS(protOrigin))
	token := protLogin(t, h, protIPA, "alice")
	fs.down.Store(true)

	for _, c := range []struct {
		what   string
		q      protReq
		status int
	}{
		{"authenticated request", protReq{method: "GET", target: "/api/v1/projects", token: token}, http.StatusOK},
		{"no token", protReq{method: "GET", target: "/api/v1/projects"}, http.StatusUnauthorized},
		{"login", protReq{method: "POST", target: "/api/v1/auth/login", body: `{"username":"alice","password":"alice-pw"}`}, http.StatusOK},
		{"unknown route", protReq{method: "GET", target: "/api/v1/nothing-here"}, http.StatusNotFound},
		{"create", protReq{method: "POST", target: "/api/v1/projects", token: token, body: `{"name":"p1"}`}, http.StatusCreated},
	} {
		c.q.remote = protIPA
		var rec *httptest.ResponseRecorder
		require.NotPanics(t, func() { rec = protDo(h, c.q) }, c.what)
		assert.Equal(t, c.status, rec.Code, "%s: %s", c.what, rec.Body)
		assert.NotEmpty(t, rec.Header().Get("X-RateLimit-Remaining"), "%s: still counted", c.what)
	}
	rec := protDo(h, protReq{method: "GET", target: "/health", remote: protIPA})
	assert.Equal(t, http.StatusOK, rec.Code, "/health")
	assert.Contains(t, rec.Body.String(), `"status":"degraded"`, "/health")
	assert.Equal(t, http.StatusNoContent, protDo(h, protReq{method: "OPTIONS", target: "/api/v1/projects", remote: protIPA,
		header: map[string]string{"Origin": protOrigin, "Access-Control-Request-Method": "GET"}}).Code, "preflight")
}

// protCORSHeaders returns the names of the Access-Control-* headers.
func protCORSHeaders(rec *httptest.ResponseRecorder) []string {
	var out []string
	for name := range rec.Header() {
		if strings.HasPrefix(name, "Access-Control-") {
			out = append(out, name)
		}
	}
	return out
}

// protList splits a comma-separated header's values.
func protList(rec *httptest.ResponseRecorder, name string) []string {
	var out []string
	for _, v := range rec.Header().Values(name) {
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}

func protWantVary(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	assert.Contains(t, protList(rec, "Vary"), "Origin", "%s: Vary: Origin", what)
}

func protWantAllowed(t *testing.T, what, origin string, rec *httptest.ResponseRecorder) {
	t.Helper()
	assert.Equal(t, []string{origin}, rec.Header().Values("Access-Control-Allow-Origin"), "%s: Access-Control-Allow-Origin", what)
	exposed := protList(rec, "Access-Control-Expose-Headers")
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"} {
		assert.Contains(t, exposed, name, "%s: Access-Control-Expose-Headers", what)
	}
	protWantVary(t, what, rec)
}

func TestProtCORS(t *testing.T) {
	m := protUsers(t, "alice")
	h := protServer(m, hds.WithCORS(protOrigin))
	token := protLogin(t, h, protIPB, "alice")
	from := func(q protReq, origin string) protReq {
		q.remote = protIPA
		q.header = map[string]string{"Origin": origin}
		return q
	}
	list := protReq{method: "GET", target: "/api/v1/projects", token: token}

	t.Run("allowed", func(t *testing.T) {
		rec := protDo(h, from(list, protOrigin))
		require.Equal(t, http.StatusOK, rec.Code)
		protWantAllowed(t, "200", protOrigin, rec)
		rec = protDo(h, from(protReq{method: "GET", target: "/api/v1/projects"}, protOrigin))
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		protWantAllowed(t, "401", protOrigin, rec)
	})
	t.Run("disallowed", func(t *testing.T) {
		for _, origin := range []string{"https://evil.example.com", "https://app.example.com.evil.com", "http://app.example.com"} {
			rec := protDo(h, from(list, origin))
			assert.Equal(t, http.StatusOK, rec.Code, origin)
			assert.Empty(t, protCORSHeaders(rec), "%s: no Access-Control-* headers", origin)
			protWantVary(t, origin, rec)
			rec = protDo(h, protReq{method: "OPTIONS", target: "/api/v1/projects", remote: protIPA,
				header: map[string]string{"Origin": origin, "Access-Control-Request-Method": "GET"}})
			assert.Empty(t, protCORSHeaders(rec), "%s preflight: no Access-Control-* headers", origin)
		}
	})
	t.Run("preflight without a token", func(t *testing.T) {
		for _, target := range []string{"/api/v1/projects", "/api/v1/projects/p1/collections/c1", "/api/v1/auth/login"} {
			rec := protDo(h, protReq{method: "OPTIONS", target: target, remote: protIPA, header: map[string]string{
				"Origin": protOrigin, "Access-Control-Request-Method": "PUT",
				"Access-Control-Request-Headers": "authorization, content-type"}})
			require.Equal(t, http.StatusNoContent, rec.Code, "%s: %s", target, rec.Body)
			assert.Empty(t, rec.Body.String(), target)
			assert.Equal(t, protOrigin, rec.Header().Get("Access-Control-Allow-Origin"), target)
			assert.Equal(t, []string{"GET, POST, PUT, DELETE, OPTIONS"}, rec.Header().Values("Access-Control-Allow-Methods"), target)
			assert.Equal(t, []string{"Content-Type, Authorization, If-Match, If-None-Match, Last-Event-ID"}, rec.Header().Values("Access-Control-Allow-Headers"), target)
			age, err := strconv.Atoi(rec.Header().Get("Access-Control-Max-Age"))
			assert.NoError(t, err, "%s: Access-Control-Max-Age present, in seconds", target)
			assert.Positive(t, age, target)
			protWantVary(t, target, rec)
			protNotCounted(t, target, rec)
		}
	})
	t.Run("Vary on every response", func(t *testing.T) {
		for _, q := range []protReq{
			{method: "GET", target: "/health"},
			{method: "GET", target: "/api/v1/projects"},             // 401
			{method: "GET", target: "/api/v1/nothing-here"},         // 404
			{method: "PATCH", target: "/api/v1/projects"},           // 405
			{method: "GET", target: "/api/v1/projects/", token: ""}, // non-canonical 404
		} {
			q.remote = protIPB
			protWantVary(t, q.method+" "+q.target+" without Origin", protDo(h, q))
			protWantVary(t, q.method+" "+q.target+" from an allowed origin", protDo(h, from(q, protOrigin)))
			protWantVary(t, q.method+" "+q.target+" from another origin", protDo(h, from(q, "https://evil.example.com")))
		}
		// Without any CORS configuration too.
		plain := protServer(m)
		protWantVary(t, "no CORS configured, /health", protDo(plain, protReq{method: "GET", target: "/health"}))
		rec := protDo(plain, protReq{method: "GET", target: "/api/v1/projects", header: map[string]string{"Origin": protOrigin}})
		protWantVary(t, "no CORS configured, 401", rec)
		assert.Empty(t, protCORSHeaders(rec), "no CORS configured: no Access-Control-* headers")
	})
	t.Run("429 readable by the browser", func(t *testing.T) {
		h := protServer(m, hds.WithCORS(protOrigin), hds.WithRateLimit(1000, 1))
		q := protReq{method: "GET", target: "/api/v1/projects"}
		require.Equal(t, http.StatusUnauthorized, protDo(h, from(q, protOrigin)).Code)
		rec := protDo(h, from(q, protOrigin))
		protWant429(t, "over the limit", rec, 60)
		protWantAllowed(t, "429", protOrigin, rec)
	})
}

func TestProtCORSAnyOrigin(t *testing.T) {
	h := protServer(protUsers(t), hds.WithCORS("*"))
	for _, origin := range []string{"https://anything.example", "http://localhost:5173"} {
		rec := protDo(h, protReq{method: "GET", target: "/api/v1/projects", remote: protIPA,
			header: map[string]string{"Origin": origin}})
		assert.Equal(t, http.StatusUnauthorized, rec.Code)
		protWantAllowed(t, origin, origin, rec)
		rec = protDo(h, protReq{method: "OPTIONS", target: "/api/v1/projects", remote: protIPA,
			header: map[string]string{"Origin": origin, "Access-Control-Request-Method": "DELETE"}})
		assert.Equal(t, http.StatusNoContent, rec.Code, "%s preflight", origin)
		assert.Equal(t, origin, rec.Header().Get("Access-Control-Allow-Origin"), "%s preflight echoes the origin", origin)
	}
}

func TestProtLoginThrottleConcurrentGuesses(t *testing.T) {
	// API.md section 8 limits failed logins per username: guesses sent all
	// at once must not get more password checks than the limit.
	// A hash cost near production's, so that a password check takes long
	// enough for the guesses to overlap as they would in production.
	m := memory.New()
	hash, err := bcrypt.GenerateFromPassword([]byte("alice-pw"), bcrypt.DefaultCost-2)
	require.NoError(t, err)
	_, err = m.CreateUser(context.Background(), &store.User{Username: "alice", PasswordHash: hash, Active: true})
	require.NoError(t, err)
	h := protServer(m, hds.WithLoginThrottle(3, 100, time.Minute))
	const guesses = 12
	var wg sync.WaitGroup
	var checked, refused atomic.Int64
	start := make(chan struct{})
	for i := range guesses {
		wg.Go(func() {
			<-start
			rec := protLoginRec(h, fmt.Sprintf("198.51.100.%d:1", 100+i), "alice", fmt.Sprintf("guess-%d", i))
			switch rec.Code {
			case http.StatusUnauthorized:
				checked.Add(1)
			case http.StatusTooManyRequests:
				refused.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	t.Logf("%d concurrent guesses: %d checked (401), %d refused (429)", guesses, checked.Load(), refused.Load())
	assert.LessOrEqual(t, checked.Load(), int64(3), "at most 3 failed logins per username in the window")
	assert.EqualValues(t, guesses, checked.Load()+refused.Load(), "every guess is 401 or 429")
}

func TestProtAnonymousCountedByIP(t *testing.T) {
	m := protUsers(t)
	h := hds.New(hds.WithStore(m), hds.WithUsers(m), hds.WithLogger(slog.New(slog.DiscardHandler)),
		hds.WithSecurity(hds.Security{JWTSecret: protSecret, RequireAuth: false}), hds.WithRateLimit(1000, 2))
	for i := 1; i <= 2; i++ {
		rec := protGet(h, protIPA, "")
		require.Equal(t, http.StatusOK, rec.Code, "anonymous request %d: %s", i, rec.Body)
		assert.EqualValues(t, 2-i, protRemaining(t, "anonymous", rec))
	}
	protWant429(t, "anonymous request 3", protGet(h, protIPA, ""), 60)
	rec := protGet(h, protIPB, "")
	assert.Equal(t, http.StatusOK, rec.Code, "anonymous from another IP has its own bucket")
	assert.EqualValues(t, 1, protRemaining(t, "anonymous from another IP", rec))
}

func TestProtRateLimitWindowsTurnedOff(t *testing.T) {
	m := protUsers(t, "alice")
	h := protServer(m, hds.WithRateLimit(0, 0))
	token := protLogin(t, h, protIPA, "alice")
	for range 3 {
		rec := protGet(h, protIPA, token)
		require.Equal(t, http.StatusOK, rec.Code)
		protNotCounted(t, "both windows off", rec)
	}
	h = protServer(m, hds.WithRateLimit(2, 0))
	token = protLogin(t, h, protIPA, "alice")
	for i := 1; i <= 2; i++ {
		rec := protGet(h, protIPA, token)
		require.Equal(t, http.StatusOK, rec.Code)
		limit, remaining, _ := protRate(t, "minute window off", rec)
		assert.EqualValues(t, 2, limit, "only the hour window counts")
		assert.EqualValues(t, 2-i, remaining)
	}
	protWant429(t, "hour window used up", protGet(h, protIPA, token), 3600)
}

func TestProtInvalidProtectionOptionsPanic(t *testing.T) {
	for name, opt := range map[string]hds.Option{
		"trusted proxy garbage":  hds.WithTrustedProxies("not-a-cidr"),
		"negative rate limit":    hds.WithRateLimit(-1, 100),
		"nil rate limit store":   hds.WithRateLimitStore(nil),
		"zero login failures":    hds.WithLoginThrottle(0, 100, time.Minute),
		"zero login window":      hds.WithLoginThrottle(10, 100, 0),
		"empty CORS origin":      hds.WithCORS(""),
		"CORS origin with space": hds.WithCORS(" https://app.example.com"),
	} {
		func() {
			defer func() {
				p := recover()
				if assert.NotNil(t, p, "%s: New panics", name) {
					assert.True(t, strings.HasPrefix(fmt.Sprint(p), "hds: "), "%s: panic %q starts with \"hds: \"", name, p)
				}
			}()
			hds.New(opt)
		}()
	}
}

package e2e_test

// The toolkit of the black-box suite, the one set of helpers every
// *_test.go file of internal/e2e uses: start a server on every store kind
// (newServer; storeKinds is the one list of kinds, the benchmarks' too),
// send a request (do, call and their kin, all through exchange), decode
// the envelope (envelope.decode), check an error (wantError, want429),
// read the rate limit headers, and forge tokens. Assertions are
// testify's.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/sqlite"
)

// storeKind is one Store/UserDirectory implementation the suite runs
// against: the in-memory store, PostgreSQL and SQLite (a file of the
// test's own directory).
type storeKind struct {
	name string
	new  func(t testing.TB) (store.Projects, store.Accounts)
}

var storeKinds = []storeKind{
	{name: "memory", new: func(testing.TB) (store.Projects, store.Accounts) {
		m := memory.New()
		return m, m
	}},
	{name: "postgres", new: func(t testing.TB) (store.Projects, store.Accounts) {
		pg := postgres.New(pgtest.New(t))
		return pg, pg
	}},
	{name: "sqlite", new: func(t testing.TB) (store.Projects, store.Accounts) {
		lite, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hds.db"))
		require.NoError(t, err)
		t.Cleanup(func() { lite.Close() })
		return lite, lite
	}},
}

// memoryKind is the memory store, for tests whose subject does not
// depend on the store (rate limits, CORS, options).
var memoryKind = storeKinds[0]

// kindNamed returns the store kind of storeKinds named name, for a test
// or benchmark of one store's own behaviour.
func kindNamed(t testing.TB, name string) storeKind {
	t.Helper()
	for _, k := range storeKinds {
		if k.name == name {
			return k
		}
	}
	t.Fatalf("no store kind %q in storeKinds", name)
	return storeKind{}
}

// TestMain drops the PostgreSQL template database after the run.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// forEachKind runs f once per store kind, as a subtest named after it.
func forEachKind(t *testing.T, f func(t *testing.T, kind storeKind)) {
	t.Helper()
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) { f(t, kind) })
	}
}

const (
	testSecret = "hds-test-secret-0123456789abcdef!!" // 34 bytes
	testIssuer = "hds"                                // the default issuer
	jsonType   = "application/json; charset=utf-8"
	testOrigin = "https://app.example.com" // an origin given to WithCORS

	// ipA and ipB are two clients' remote addresses.
	ipA = "198.51.100.10:40000"
	ipB = "198.51.100.20:40000"
)

// testKey is a 32-byte credential key.
var testKey = bytes.Repeat([]byte{0x4b}, 32)

var (
	// timeRE is docs/api.md#conventions's timestamp format.
	timeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)
	// idRE is a lowercase canonical UUID version 7.
	idRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

// allTypes are the 20 types of docs/api.md#record-types-and-values.
var allTypes = []string{
	"STRING", "INTEGER", "FLOAT", "BOOLEAN", "DATE", "TIME", "DATETIME", "UUID", "NULL", "CREDENTIAL",
	"[]STRING", "[]INTEGER", "[]FLOAT", "[]BOOLEAN", "[]DATE", "[]TIME", "[]DATETIME", "[]UUID", "[]NULL", "[]CREDENTIAL",
}

// quietLogger drops the per-request log lines.
var quietLogger = slog.New(slog.DiscardHandler)

// client talks to one hds handler through httptest and can reach its store
// and user directory directly.
type client struct {
	t      testing.TB
	h      http.Handler
	store  store.Projects
	users  store.Accounts
	ids    map[string]string // username -> user id
	tokens map[string]string // username -> token (cached logins)
	// mount is the prefix the handler is mounted under, "" at the root.
	mount string
	// api is the OpenAPI document the handler serves; every exchange is
	// validated against it (openapi_test.go). Nil: fetched on each use.
	api *contract
}

// newServer returns a client of hds.New with a fresh store of kind, the
// test JWT secret (authentication required), quiet logs, rate limits out of the
// way, and two users: alice and bob (passwords "alice-password" and
// "bob-password"). opts are applied after these defaults, so they win.
func newServer(t testing.TB, kind storeKind, opts ...hds.Option) *client {
	t.Helper()
	return startServer(t, kind, serverSetup{}, opts...)
}

// newServerWrapped is newServer with the store passed through wrap (when
// not nil) before it is given to hds.New. A thin alias of startServer.
func newServerWrapped(t testing.TB, kind storeKind, wrap func(store.Store) store.Store, opts ...hds.Option) *client {
	t.Helper()
	return startServer(t, kind, serverSetup{wrap: wrap}, opts...)
}

// accessStore is a wrapped store with the members and API tokens of the
// store it wraps.
type accessStore struct {
	store.Store
	store.Access
}

// serverSetup is how startServer departs from newServer's defaults.
type serverSetup struct {
	// wrap, when not nil, wraps the store before it is given to hds.New;
	// the client's store stays the unwrapped one.
	wrap func(store.Store) store.Store
	// defaultLimits keeps hds's default rate limits instead of lifting
	// them out of the way.
	defaultLimits bool
}

// startServer is the one way the suite starts a server: newServer with
// the departures of setup.
func startServer(t testing.TB, kind storeKind, setup serverSetup, opts ...hds.Option) *client {
	t.Helper()
	st, users := kind.new(t)
	served := st
	if setup.wrap != nil {
		wrapped := setup.wrap(st)
		var ok bool
		if served, ok = wrapped.(store.Projects); !ok { // the wrapper hides Access: pass the store's own
			served = accessStore{wrapped, st}
		}
	}
	c := &client{t: t, store: st, users: users, ids: map[string]string{}, tokens: map[string]string{}}
	c.h = hds.New(append(baseOptions(served, users, setup), opts...)...)
	c.api = contractOf(t, c.h, "")
	c.addUser("alice", "alice-password")
	c.addUser("bob", "bob-password")
	return c
}

// baseOptions are the options every server of the suite starts with.
func baseOptions(st store.Projects, users store.Accounts, setup serverSetup) []hds.Option {
	opts := []hds.Option{
		hds.WithStore(st),
		hds.WithUsers(users),
		hds.WithSecurity(hds.Security{JWTSecret: testSecret}),
		hds.WithLogger(quietLogger),
	}
	if !setup.defaultLimits {
		opts = append(opts, hds.WithRateLimit(1_000_000, 1_000_000))
	}
	return opts
}

// addUser creates an active user directly in the directory (bcrypt at
// MinCost to keep the suite fast) and returns its id.
func (c *client) addUser(username, password string) string {
	c.t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	require.NoError(c.t, err, "hash password of %s", username)
	u, err := c.users.CreateUser(c.t.Context(), &store.User{Username: username, PasswordHash: hash, Active: true})
	require.NoError(c.t, err, "create user %s", username)
	c.ids[username] = u.ID
	return u.ID
}

// login logs in and returns the token; any failure is fatal.
func (c *client) login(username, password string) string {
	c.t.Helper()
	return c.loginAt("", username, password)
}

// loginAt is login from the remote address remote (httptest's default
// when empty).
func (c *client) loginAt(remote, username, password string) string {
	c.t.Helper()
	res := c.loginFrom(remote, username, password)
	require.Equal(c.t, http.StatusOK, res.status, "login %s: %s", username, res.env.raw)
	var out struct {
		Token string `json:"token"`
	}
	res.env.decode(c.t, &out)
	require.NotEmpty(c.t, out.Token, "login %s: no token in %s", username, res.env.raw)
	return out.Token
}

// loginFrom sends a login from remote and returns the response, whatever
// it is.
func (c *client) loginFrom(remote, username, password string) response {
	c.t.Helper()
	body, _ := json.Marshal(map[string]string{"username": username, "password": password})
	return c.call(req{method: http.MethodPost, target: "/api/v1/auth/login", body: string(body), remote: remote})
}

// token returns a (cached) token of alice or bob.
func (c *client) token(username string) string {
	c.t.Helper()
	if tok, ok := c.tokens[username]; ok {
		return tok
	}
	tok := c.login(username, username+"-password")
	c.tokens[username] = tok
	return tok
}

// envelope is the response envelope of docs/api.md#errors.
type envelope struct {
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Message string          `json:"message"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details string `json:"details"`
	} `json:"error"`
	raw []byte
}

// code, message and details of an error envelope ("" for a success).
func (e envelope) code() string {
	if e.Error == nil {
		return ""
	}
	return e.Error.Code
}

func (e envelope) message() string {
	if e.Error == nil {
		return ""
	}
	return e.Error.Message
}

func (e envelope) details() string {
	if e.Error == nil {
		return ""
	}
	return e.Error.Details
}

// decode unmarshals the envelope's data into v; failure is fatal.
func (e envelope) decode(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(e.Data, v), "decode data %s", e.Data)
}

// request builds a request; a non-empty body is sent as application/json.
func request(method, target, body, token string) *http.Request {
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, target, nil)
	} else {
		r = httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

// req is one request: method and target, and optionally a body (sent as
// application/json), a bearer token, the connection's remote address
// (httptest's default when empty) and extra headers.
type req struct {
	method, target string
	body, token    string
	remote         string
	header         map[string]string
}

// build returns q as an *http.Request.
func (q req) build() *http.Request {
	r := request(q.method, q.target, q.body, q.token)
	if q.remote != "" {
		r.RemoteAddr = q.remote
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	return r
}

// response is one checked response: status, headers and envelope.
type response struct {
	status int
	header http.Header
	env    envelope
}

// call sends q, checked as do checks, and returns the response. /health
// is not enveloped (docs/api.md#health): it is checked as raw checks,
// and its body is in env.raw only.
func (c *client) call(q req) response {
	c.t.Helper()
	r := q.build()
	if strings.HasSuffix(r.URL.Path, "/health") {
		res := c.raw(r)
		body, _ := io.ReadAll(res.Body)
		return response{status: res.StatusCode, header: res.Header, env: envelope{raw: body}}
	}
	status, h, env := c.send(r)
	return response{status: status, header: h, env: env}
}

// do sends a request and returns the status, headers and envelope. It
// reports any response that breaks the envelope rules of
// docs/api.md#conventions and docs/api.md#errors: the content type, the
// shape of the envelope, a 204 with a body; and any exchange that breaks
// the OpenAPI document.
func (c *client) do(method, target, body, token string) (int, http.Header, envelope) {
	c.t.Helper()
	return c.send(request(method, target, body, token))
}

// sendWith sends a request with extra headers (name, value pairs).
func (c *client) sendWith(method, target, body, token string, headers ...string) (int, http.Header, envelope) {
	c.t.Helper()
	r := request(method, target, body, token)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return c.send(r)
}

// exchange is the one place a request of the suite reaches the handler:
// it serves r and checks the exchange against the OpenAPI document. The
// request helpers (do, sendWith, call, mustDo, send, raw) build the
// request and check the answer; they all end here.
func (c *client) exchange(r *http.Request) (*http.Response, []byte) {
	c.t.Helper()
	reqBody := readBody(r)
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	res.Body = io.NopCloser(bytes.NewReader(body))
	c.checkContract(r, reqBody, res, body)
	return res, body
}

// send serves r and checks the response as do does.
func (c *client) send(r *http.Request) (int, http.Header, envelope) {
	c.t.Helper()
	res, body := c.exchange(r)
	what := r.Method + " " + r.URL.String()
	env := envelope{raw: body}
	if res.StatusCode == http.StatusNoContent {
		assert.Empty(c.t, body, "%s: 204 with a body", what)
		return res.StatusCode, res.Header, env
	}
	assert.NoError(c.t, checkEnvelope(res.StatusCode, res.Header, body), what)
	_ = json.Unmarshal(body, &env)
	env.raw = body
	return res.StatusCode, res.Header, env
}

// raw serves r and returns the recorded response, checked against the
// OpenAPI document only.
func (c *client) raw(r *http.Request) *http.Response {
	c.t.Helper()
	res, _ := c.exchange(r)
	return res
}

// checkEnvelope reports how a response breaks the envelope contract:
// Content-Type application/json; charset=utf-8; {"success": true, "data",
// "message" (non-empty)} or {"success": false, "error": {"code",
// "message", "details" (a string)}}; an error for every 4xx/5xx and only
// for them.
func checkEnvelope(status int, h http.Header, body []byte) error {
	if ct := h.Get("Content-Type"); ct != jsonType {
		return fmt.Errorf("status %d: Content-Type %q, want %q", status, ct, jsonType)
	}
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&top); err != nil {
		return fmt.Errorf("status %d: body is not a JSON object: %v: %q", status, err, body)
	}
	if dec.More() {
		return fmt.Errorf("status %d: trailing data after the envelope: %q", status, body)
	}
	var success bool
	if err := json.Unmarshal(top["success"], &success); err != nil {
		return fmt.Errorf("status %d: \"success\" missing or not a boolean: %q", status, body)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range top {
			if !yield(k) {
				return
			}
		}
	})
	if success {
		if status >= 400 {
			return fmt.Errorf("status %d with success true: %q", status, body)
		}
		if !slices.Equal(keys, []string{"data", "message", "success"}) {
			return fmt.Errorf("status %d: success envelope has fields %v, want data, message, success", status, keys)
		}
		var msg string
		if err := json.Unmarshal(top["message"], &msg); err != nil || msg == "" || len(msg) > 80 {
			return fmt.Errorf("status %d: success message missing, empty or not short: %q", status, body)
		}
		return nil
	}
	if status < 400 {
		return fmt.Errorf("status %d with success false: %q", status, body)
	}
	if !slices.Equal(keys, []string{"error", "success"}) {
		return fmt.Errorf("status %d: error envelope has fields %v, want error, success", status, keys)
	}
	var e map[string]json.RawMessage
	if err := json.Unmarshal(top["error"], &e); err != nil {
		return fmt.Errorf("status %d: \"error\" is not an object: %q", status, body)
	}
	for _, f := range []string{"code", "message", "details"} {
		var s string
		if err := json.Unmarshal(e[f], &s); err != nil {
			return fmt.Errorf("status %d: error.%s missing or not a string: %q", status, f, body)
		}
		if s == "" && f != "details" {
			return fmt.Errorf("status %d: error.%s is empty: %q", status, f, body)
		}
	}
	if len(e) != 3 {
		return fmt.Errorf("status %d: error has extra fields: %q", status, body)
	}
	return nil
}

// wantError checks that a response is the given error: its status,
// error.code and, when wantMessage is not empty, error.message. (The
// envelope's shape, content type and details are checked by send.)
func wantError(t testing.TB, what string, status int, env envelope, wantStatus int, wantCode, wantMessage string) {
	t.Helper()
	assert.Equal(t, wantStatus, status, "%s: status (error %s %q, details %q)", what, env.code(), env.message(), env.details())
	assert.Equal(t, wantCode, env.code(), "%s: error.code (message %q)", what, env.message())
	if wantMessage != "" {
		assert.Equal(t, wantMessage, env.message(), "%s: error.message", what)
	}
}

// wantError is wantError (the function) on a response.
func (res response) wantError(t testing.TB, what string, wantStatus int, wantCode, wantMessage string) {
	t.Helper()
	wantError(t, what, res.status, res.env, wantStatus, wantCode, wantMessage)
}

// wantDetails checks that an error's details contain every one of subs.
func wantDetails(t testing.TB, what string, env envelope, subs ...string) {
	t.Helper()
	for _, s := range subs {
		assert.Contains(t, env.details(), s, "%s: details", what)
	}
}

// mustDo sends a request that must answer wantStatus, fatally otherwise.
func (c *client) mustDo(method, target, body, token string, wantStatus int) envelope {
	c.t.Helper()
	status, _, env := c.do(method, target, body, token)
	require.Equal(c.t, wantStatus, status, "%s %s: %s", method, target, env.raw)
	return env
}

// The rate limit headers of docs/api.md#limits-rate-limits-and-quotas.
var rateLimitHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}

// rateHeaders returns the X-RateLimit headers, checking each is set once.
func rateHeaders(t testing.TB, what string, h http.Header) (limit, remaining, reset int64) {
	t.Helper()
	var nums [3]int64
	for i, name := range rateLimitHeaders {
		vals := h.Values(name)
		if !assert.Len(t, vals, 1, "%s: %s set exactly once", what, name) {
			continue
		}
		n, err := strconv.ParseInt(vals[0], 10, 64)
		assert.NoError(t, err, "%s: %s = %q", what, name, vals[0])
		nums[i] = n
	}
	return nums[0], nums[1], nums[2]
}

// rateRemaining is X-RateLimit-Remaining.
func rateRemaining(t testing.TB, what string, h http.Header) int64 {
	t.Helper()
	_, remaining, _ := rateHeaders(t, what, h)
	return remaining
}

// wantNotCounted checks that a response carries no rate limit headers.
func wantNotCounted(t testing.TB, what string, h http.Header) {
	t.Helper()
	for _, name := range rateLimitHeaders {
		assert.Empty(t, h.Values(name), "%s: not counted, so no %s", what, name)
	}
}

// retryAfter returns Retry-After in seconds, checking it is set once.
func retryAfter(t testing.TB, what string, h http.Header) int64 {
	t.Helper()
	vals := h.Values("Retry-After")
	require.Len(t, vals, 1, "%s: Retry-After set exactly once", what)
	n, err := strconv.ParseInt(vals[0], 10, 64)
	require.NoError(t, err, "%s: Retry-After %q is whole seconds", what, vals[0])
	return n
}

// want429 checks a rate limit refusal with a Retry-After of 1..maxRetry
// seconds.
func want429(t testing.TB, what string, res response, maxRetry int64) {
	t.Helper()
	res.wantError(t, what, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
	ra := retryAfter(t, what, res.header)
	assert.True(t, ra >= 1 && ra <= maxRetry, "%s: Retry-After %d within 1..%d", what, ra, maxRetry)
}

// headerList splits a comma-separated header's values.
func headerList(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}

// Path builders; names are percent-encoded.
func pathP(p string) string       { return "/api/v1/projects/" + url.PathEscape(p) }
func pathC(p, c string) string    { return pathP(p) + "/collections/" + url.PathEscape(c) }
func pathK(p, c, k string) string { return pathC(p, c) + "/clusters/" + url.PathEscape(k) }
func pathR(p, c, k, r string) string {
	return pathK(p, c, k) + "/records/" + url.PathEscape(r)
}

// tree creates project p, collection c and cluster k (path forms) as the
// owner of token.
func (c *client) tree(token, p, col, k string) {
	c.t.Helper()
	c.mustDo("POST", pathP(p), "", token, http.StatusCreated)
	c.mustDo("POST", pathC(p, col), "", token, http.StatusCreated)
	c.mustDo("POST", pathK(p, col, k), "", token, http.StatusCreated)
}

// addRecord creates a record through the body form and returns it.
func (c *client) addRecord(token, kpath, name, typ, value string) recordJSON {
	c.t.Helper()
	body := fmt.Sprintf(`{"name":%q,"type":%q,"value":%s}`, name, typ, value)
	env := c.mustDo("POST", kpath+"/records", body, token, http.StatusCreated)
	var r recordJSON
	env.decode(c.t, &r)
	return r
}

// The JSON shapes of docs/api.md#data-model.
type projectJSON struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	OwnerID         string `json:"owner_id"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
	CollectionCount int    `json:"collection_count"`
}

type collectionJSON struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Project      string `json:"project"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
	ClusterCount int    `json:"cluster_count"`
	RecordCount  int    `json:"record_count"`
}

type clusterJSON struct {
	ID          string                     `json:"id"`
	Name        string                     `json:"name"`
	Project     string                     `json:"project"`
	Collection  string                     `json:"collection"`
	CreatedAt   string                     `json:"created_at"`
	UpdatedAt   string                     `json:"updated_at"`
	RecordCount int                        `json:"record_count"`
	Data        map[string]json.RawMessage `json:"data"`
}

type recordJSON struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Type      string          `json:"type"`
	Value     json.RawMessage `json:"value"`
	Version   int64           `json:"version"`
	CreatedAt string          `json:"created_at"`
	UpdatedAt string          `json:"updated_at"`
}

type listJSON[T any] struct {
	Items  []T `json:"items"`
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// wantFields checks that a JSON object's field names are exactly want.
func wantFields(t testing.TB, what string, data json.RawMessage, want ...string) {
	t.Helper()
	var m map[string]json.RawMessage
	if !assert.NoError(t, json.Unmarshal(data, &m), "%s: not a JSON object: %s", what, data) {
		return
	}
	got := slices.Sorted(maps.Keys(m))
	assert.Equal(t, slices.Sorted(slices.Values(want)), got, "%s: fields", what)
}

// wantTimestamps checks that timestamps are in docs/api.md#conventions's
// format and recent.
func wantTimestamps(t testing.TB, what string, stamps ...string) {
	t.Helper()
	for _, s := range stamps {
		if !assert.Regexp(t, timeRE, s, "%s: timestamp is RFC 3339 UTC with six fraction digits", what) {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, s)
		if assert.NoError(t, err, "%s: timestamp %q", what, s) {
			assert.WithinDuration(t, time.Now(), ts, time.Minute, "%s: timestamp %q is the current time", what, s)
		}
	}
}

// waitPast returns once the clock has passed the timestamp ts
// (docs/api.md#conventions's format, microseconds), so that the next
// write's timestamp is later than ts: a direct check of the clock, where a
// sleep would guess.
func waitPast(t testing.TB, ts string) {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, ts)
	require.NoError(t, err, "timestamp %q", ts)
	for !time.Now().UTC().Truncate(time.Microsecond).After(at) {
		runtime.Gosched()
	}
}

// wantID checks that an id is a lowercase UUIDv7.
func wantID(t testing.TB, what, id string) {
	t.Helper()
	assert.Regexp(t, idRE, id, "%s: id is a lowercase canonical UUID version 7", what)
}

// compact returns the compact form of a JSON text (for comparing values).
func compact(t testing.TB, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if !assert.NoError(t, json.Compact(&b, raw), "compact %q", raw) {
		return string(raw)
	}
	return b.String()
}

// claims returns a complete, valid set of claims for user id sub.
func claims(sub string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"sub":      sub,
		"iss":      testIssuer,
		"iat":      now.Unix(),
		"exp":      now.Add(time.Hour).Unix(),
		"jti":      randomID(),
		"orig_iat": now.Unix(),
	}
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// with returns a copy of m with the given changes; a nil value deletes
// the claim.
func with(m jwt.MapClaims, changes map[string]any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, v := range m {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// sign forges a token.
func sign(t testing.TB, m jwt.MapClaims, method jwt.SigningMethod, key any) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(method, m).SignedString(key)
	require.NoError(t, err, "sign token")
	return tok
}

// hs256 signs m with the test secret.
func hs256(t testing.TB, m jwt.MapClaims) string {
	t.Helper()
	return sign(t, m, jwt.SigningMethodHS256, []byte(testSecret))
}

// parseToken verifies a token issued by the server (HS256, the test
// secret) and returns its claims.
func parseToken(t testing.TB, tok string) jwt.MapClaims {
	t.Helper()
	m := jwt.MapClaims{}
	_, err := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithoutClaimsValidation()).
		ParseWithClaims(tok, m, func(*jwt.Token) (any, error) { return []byte(testSecret), nil })
	require.NoError(t, err, "issued token verifies with HS256 and the secret")
	return m
}

// attach returns a client of a second handler serving c's store and user
// directory (the same JWT secret, so tokens carry over), with opts.
func (c *client) attach(opts ...hds.Option) *client {
	c.t.Helper()
	a := &client{t: c.t, store: c.store, users: c.users, ids: c.ids, tokens: c.tokens}
	a.h = hds.New(append(baseOptions(c.store, c.users, serverSetup{}), opts...)...)
	a.api = contractOf(c.t, a.h, "")
	return a
}

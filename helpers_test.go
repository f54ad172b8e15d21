package hds_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/postgres"
)

// storeKind is one Store/UserDirectory implementation the suite runs
// against. A second kind (PostgreSQL) is added by appending to storeKinds.
type storeKind struct {
	name string
	new  func(t testing.TB) (store.Store, store.UserDirectory)
}

var storeKinds = []storeKind{
	{name: "memory", new: func(testing.TB) (store.Store, store.UserDirectory) {
		m := memory.New()
		return m, m
	}},
	{name: "postgres", new: func(t testing.TB) (store.Store, store.UserDirectory) {
		pg := postgres.New(pgtest.New(t))
		return pg, pg
	}},
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
)

// testKey is a 32-byte credential key.
var testKey = bytes.Repeat([]byte{0x4b}, 32)

var (
	// timeRE is section 1's timestamp format.
	timeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)
	// idRE is a lowercase canonical UUID version 7.
	idRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

// allTypes are the 20 types of API.md section 3.
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
	store  store.Store
	users  store.UserDirectory
	ids    map[string]string // username -> user id
	tokens map[string]string // username -> token (cached logins)
	// mount is the prefix the handler is mounted under, "" at the root.
	mount string
	// api is the OpenAPI document the handler serves; every exchange is
	// validated against it (openapi_test.go). Nil: fetched on each use.
	api *contract
}

// newServer returns a client of hds.New with a fresh store of kind, the
// test JWT secret (RequireAuth true), quiet logs, rate limits out of the
// way, and two users: alice and bob (passwords "alice-password" and
// "bob-password"). opts are applied after these defaults, so they win.
func newServer(t testing.TB, kind storeKind, opts ...hds.Option) *client {
	t.Helper()
	return newServerWrapped(t, kind, nil, opts...)
}

// newServerWrapped is newServer with the store passed through wrap (when
// not nil) before it is given to hds.New.
func newServerWrapped(t testing.TB, kind storeKind, wrap func(store.Store) store.Store, opts ...hds.Option) *client {
	t.Helper()
	st, users := kind.new(t)
	served := st
	if wrap != nil {
		served = wrap(st)
	}
	all := append([]hds.Option{
		hds.WithStore(served),
		hds.WithUsers(users),
		hds.WithSecurity(hds.Security{JWTSecret: testSecret, RequireAuth: true}),
		hds.WithLogger(quietLogger),
		hds.WithRateLimit(1_000_000, 1_000_000),
	}, opts...)
	c := &client{t: t, h: hds.New(all...), store: st, users: users,
		ids: map[string]string{}, tokens: map[string]string{}}
	c.api = contractOf(t, c.h, "")
	c.addUser("alice", "alice-password")
	c.addUser("bob", "bob-password")
	return c
}

// addUser creates an active user directly in the directory (bcrypt at
// MinCost to keep the suite fast) and returns its id.
func (c *client) addUser(username, password string) string {
	c.t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		c.t.Fatalf("hash password of %s: %v", username, err)
	}
	u, err := c.users.CreateUser(c.t.Context(), &store.User{Username: username, PasswordHash: hash, Active: true})
	if err != nil {
		c.t.Fatalf("create user %s: %v", username, err)
	}
	c.ids[username] = u.ID
	return u.ID
}

// login logs in and returns the token; any failure is fatal.
func (c *client) login(username, password string) string {
	c.t.Helper()
	body, _ := json.Marshal(map[string]string{"username": username, "password": password})
	status, _, env := c.do("POST", "/api/v1/auth/login", string(body), "")
	if status != http.StatusOK {
		c.t.Fatalf("login %s: status %d, %s", username, status, env.raw)
	}
	var out struct {
		Token string `json:"token"`
	}
	env.decode(c.t, &out)
	if out.Token == "" {
		c.t.Fatalf("login %s: no token in %s", username, env.raw)
	}
	return out.Token
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

// envelope is the response envelope of API.md section 7.
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
	if err := json.Unmarshal(e.Data, v); err != nil {
		t.Fatalf("decode data %s: %v", e.Data, err)
	}
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

// do sends a request and returns the status, headers and envelope. It
// reports (t.Errorf) any response that breaks the envelope rules of API.md
// sections 1 and 7: the content type, the shape of the envelope, a 204
// with a body; and any exchange that breaks the OpenAPI document.
func (c *client) do(method, target, body, token string) (int, http.Header, envelope) {
	c.t.Helper()
	return c.send(request(method, target, body, token))
}

// send serves r and checks the response as do does.
func (c *client) send(r *http.Request) (int, http.Header, envelope) {
	c.t.Helper()
	reqBody := readBody(r)
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	c.checkContract(r, reqBody, res, body)
	what := r.Method + " " + r.URL.String()
	env := envelope{raw: body}
	if res.StatusCode == http.StatusNoContent {
		if len(body) != 0 {
			c.t.Errorf("%s: 204 with a body: %q", what, body)
		}
		return res.StatusCode, res.Header, env
	}
	if err := checkEnvelope(res.StatusCode, res.Header, body); err != nil {
		c.t.Errorf("%s: %v", what, err)
	}
	_ = json.Unmarshal(body, &env)
	env.raw = body
	return res.StatusCode, res.Header, env
}

// raw serves r and returns the recorded response, checked against the
// OpenAPI document only.
func (c *client) raw(r *http.Request) *http.Response {
	c.t.Helper()
	reqBody := readBody(r)
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	res.Body = io.NopCloser(bytes.NewReader(body))
	c.checkContract(r, reqBody, res, body)
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

// wantError reports a response that is not the given error. An empty
// message is not checked.
func wantError(t testing.TB, what string, status int, env envelope, wantStatus int, wantCode, wantMessage string) {
	t.Helper()
	if status != wantStatus || env.code() != wantCode || (wantMessage != "" && env.message() != wantMessage) {
		t.Errorf("%s: got %d %s %q (details %q), want %d %s %q",
			what, status, env.code(), env.message(), env.details(), wantStatus, wantCode, wantMessage)
	}
}

// wantDetails reports an error whose details do not contain every one of
// subs.
func wantDetails(t testing.TB, what string, env envelope, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(env.details(), s) {
			t.Errorf("%s: details %q do not mention %q", what, env.details(), s)
		}
	}
}

// mustDo sends a request that must answer wantStatus, fatally otherwise.
func (c *client) mustDo(method, target, body, token string, wantStatus int) envelope {
	c.t.Helper()
	status, _, env := c.do(method, target, body, token)
	if status != wantStatus {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, target, status, wantStatus, env.raw)
	}
	return env
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

// The JSON shapes of API.md section 2.
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

// wantFields reports a JSON object whose field names are not exactly want.
func wantFields(t testing.TB, what string, data json.RawMessage, want ...string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Errorf("%s: not a JSON object: %s", what, data)
		return
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s: fields %v, want %v", what, got, want)
	}
}

// wantTimestamps reports timestamps that are not in section 1's format or
// not recent.
func wantTimestamps(t testing.TB, what string, stamps ...string) {
	t.Helper()
	for _, s := range stamps {
		if !timeRE.MatchString(s) {
			t.Errorf("%s: timestamp %q is not RFC 3339 UTC with six fraction digits", what, s)
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || time.Since(ts) > time.Minute || time.Until(ts) > time.Minute {
			t.Errorf("%s: timestamp %q is not the current time (%v)", what, s, err)
		}
	}
}

// wantID reports an id that is not a lowercase UUIDv7.
func wantID(t testing.TB, what, id string) {
	t.Helper()
	if !idRE.MatchString(id) {
		t.Errorf("%s: id %q is not a lowercase canonical UUID version 7", what, id)
	}
}

// compact returns the compact form of a JSON text (for comparing values).
func compact(t testing.TB, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Errorf("compact %q: %v", raw, err)
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
	if err != nil {
		t.Fatalf("sign token: %v", err)
	}
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
	if err != nil {
		t.Fatalf("issued token does not verify with HS256 and the secret: %v", err)
	}
	return m
}

// attach returns a client of a second handler serving c's store and user
// directory (the same JWT secret, so tokens carry over), with opts.
func (c *client) attach(opts ...hds.Option) *client {
	c.t.Helper()
	all := append([]hds.Option{
		hds.WithStore(c.store),
		hds.WithUsers(c.users),
		hds.WithSecurity(hds.Security{JWTSecret: testSecret, RequireAuth: true}),
		hds.WithLogger(quietLogger),
		hds.WithRateLimit(1_000_000, 1_000_000),
	}, opts...)
	a := &client{t: c.t, h: hds.New(all...), store: c.store, users: c.users, ids: c.ids, tokens: c.tokens}
	a.api = contractOf(c.t, a.h, "")
	return a
}

package client

// The server the end-to-end tests of this package talk to: the real
// handler (hds.New with the memory store) behind httptest. Tests may import
// the server; the package itself never does (imports_test.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

const testSecret = "hds-client-test-secret-0123456789abcdef"

// testServer is one hds handler served over HTTP, with the user alice.
type testServer struct {
	t     testing.TB
	srv   *httptest.Server
	token string // alice's

	mu   sync.Mutex
	seen []seen // the requests served, in order
}

// seen is a request the server served.
type seen struct {
	method, path, query    string
	lastEventID, noneMatch string
	status                 int
	at                     time.Time // when it was noted
}

// served returns the requests served so far that match.
func (s *testServer) served(match func(seen) bool) []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []seen
	for _, r := range s.seen {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}

// statusWriter keeps the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// record notes every request served by h in s.seen, once its headers
// are written (a stream's too) or it ends.
func (s *testServer) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		note := sync.OnceFunc(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.seen = append(s.seen, seen{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery,
				lastEventID: r.Header.Get("Last-Event-ID"), noneMatch: r.Header.Get("If-None-Match"), status: sw.status, at: time.Now()})
		})
		if r.Header.Get("Accept") == "text/event-stream" {
			// A stream is noted once it is open.
			h.ServeHTTP(&noteOnHeader{statusWriter: sw, note: note}, r)
		} else {
			h.ServeHTTP(sw, r)
		}
		note()
	})
}

// noteOnHeader notes the request when its headers are written.
type noteOnHeader struct {
	*statusWriter
	note func()
}

func (w *noteOnHeader) WriteHeader(status int) {
	w.statusWriter.WriteHeader(status)
	w.note()
}

// newTestServer serves hds.New with a memory store, a credential key,
// quiet logs, rate limits out of the way and the user alice (logged in);
// opts come after these defaults.
func newTestServer(t testing.TB, opts ...hds.Option) *testServer {
	t.Helper()
	st := memory.New()
	hash, err := bcrypt.GenerateFromPassword([]byte("alice-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateUser(context.Background(), &store.User{Username: "alice", PasswordHash: hash, Active: true}); err != nil {
		t.Fatal(err)
	}
	base := []hds.Option{
		hds.WithStore(st), hds.WithUsers(st),
		hds.WithSecurity(hds.Security{JWTSecret: testSecret}),
		hds.WithCredentialKey(bytes.Repeat([]byte{0x4b}, 32)),
		hds.WithLogger(slog.New(slog.DiscardHandler)),
		hds.WithRateLimit(1_000_000, 1_000_000),
	}
	s := &testServer{t: t}
	s.srv = httptest.NewServer(s.record(hds.New(append(base, opts...)...)))
	t.Cleanup(s.srv.Close)
	s.login()
	return s
}

// login logs alice in again: the test's own requests use the new token.
func (s *testServer) login() {
	s.t.Helper()
	s.token = ""
	var login struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	s.decode(s.must("POST", "/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, http.StatusOK), &login)
	s.token = login.Data.Token
}

// do sends a request with alice's token and returns the status and body.
func (s *testServer) do(method, path, body string) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// must is do, failing the test on another status than want.
func (s *testServer) must(method, path, body string, want int) []byte {
	s.t.Helper()
	status, out := s.do(method, path, body)
	if status != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, out)
	}
	return out
}

// decode decodes a body into v.
func (s *testServer) decode(body []byte, v any) {
	s.t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		s.t.Fatalf("decode %s: %v", body, err)
	}
}

// tree creates project p, collection col and cluster k.
func (s *testServer) tree(p, col, k string) {
	s.t.Helper()
	s.must("POST", projectPath(p), "", http.StatusCreated)
	s.must("POST", projectPath(p)+"/collections/"+col, "", http.StatusCreated)
	s.must("POST", clusterPath(p, col, k), "", http.StatusCreated)
}

// put creates or updates record name of cluster p/col/k.
func (s *testServer) put(p, col, k, name, typ, value string) {
	s.t.Helper()
	path := clusterPath(p, col, k) + "/records/" + name
	body := `{"type":"` + typ + `","value":` + value + `}`
	if status, _ := s.do("GET", path, ""); status == http.StatusOK {
		s.must("PUT", path, body, http.StatusOK)
		return
	}
	s.must("POST", path, body, http.StatusCreated)
}

// apiToken makes an API token of project p with role and returns it.
func (s *testServer) apiToken(p, role string) string {
	s.t.Helper()
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	s.decode(s.must("POST", projectPath(p)+"/tokens", `{"name":"t-`+role+`","role":"`+role+`"}`, http.StatusCreated), &out)
	return out.Data.Token
}

// client returns a client of the server with opts (alice's token unless
// opts give another), with Watch's waits shortened for tests.
func (s *testServer) client(opts ...Option) *Client {
	s.t.Helper()
	c, err := New(s.srv.URL, append([]Option{WithToken(s.token)}, opts...)...)
	if err != nil {
		s.t.Fatal(err)
	}
	c.timing = fastTiming
	return c
}

// fastTiming is Watch's timing shortened for tests. Only waits are
// shortened; no test asserts how fast anything happens.
var fastTiming = timing{
	debounce:      50 * time.Millisecond,
	idle:          45 * time.Second,
	firstWait:     20 * time.Millisecond,
	maxWait:       200 * time.Millisecond,
	refreshBefore: 5 * time.Minute,
}

// eventually polls cond every 10 ms until it holds, failing the test
// after a generous deadline.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package hds_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulule/limiter/v3"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// finished is one RequestFinished fact.
type finished struct {
	method, route string
	status        int
}

// recorder is an hds.Observer that remembers every fact.
type recorder struct {
	mu         sync.Mutex
	started    []string
	finished   []finished
	storeErrs  []string
	opened     int
	closed     int
	deliveries []string
	pending    []int
	shared     []bool
	logins     int
	backups    []string
}

// observer returns the hds.Observer that records into r.
func (r *recorder) observer() hds.Observer {
	lock := func(f func()) { r.mu.Lock(); defer r.mu.Unlock(); f() }
	return hds.Observer{
		RequestStarted: func(m string) { lock(func() { r.started = append(r.started, m) }) },
		RequestFinished: func(m, route string, status int, d time.Duration) {
			lock(func() { r.finished = append(r.finished, finished{m, route, status}) })
		},
		StoreError:        func(kind string) { lock(func() { r.storeErrs = append(r.storeErrs, kind) }) },
		EventStreamOpened: func() { lock(func() { r.opened++ }) },
		EventStreamClosed: func() { lock(func() { r.closed++ }) },
		WebhookDelivery:   func(o string) { lock(func() { r.deliveries = append(r.deliveries, o) }) },
		WebhookPending:    func(n int) { lock(func() { r.pending = append(r.pending, n) }) },
		RateLimitShared:   func(s bool) { lock(func() { r.shared = append(r.shared, s) }) },
		LoginFailed:       func() { lock(func() { r.logins++ }) },
		Backup:            func(o string) { lock(func() { r.backups = append(r.backups, o) }) },
	}
}

// eventually polls cond, under r's lock, until it holds or 10 seconds
// have passed: the observer is told on a goroutine of its own.
func (r *recorder) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("%s: not told within 10s; facts: started %v finished %v store errors %v streams %d/%d deliveries %v pending %v shared %v logins %d",
				what, r.started, r.finished, r.storeErrs, r.opened, r.closed, r.deliveries, r.pending, r.shared, r.logins)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// failingStore is a memory store whose FindProjects and Ping fail with
// err while it is set.
type failingStore struct {
	*memory.Store
	mu  sync.Mutex
	err error
}

func (s *failingStore) fail(err error) { s.mu.Lock(); s.err = err; s.mu.Unlock() }

func (s *failingStore) current() error { s.mu.Lock(); defer s.mu.Unlock(); return s.err }

func (s *failingStore) FindProjects(ctx context.Context, userID string, q store.ListQuery) ([]*store.Project, int, error) {
	if err := s.current(); err != nil {
		return nil, 0, err
	}
	return s.Store.FindProjects(ctx, userID, q)
}

func (s *failingStore) Ping(ctx context.Context) error {
	if err := s.current(); err != nil {
		return err
	}
	return s.Store.Ping(ctx)
}

// serve sends one request to h and returns the status.
func serve(h http.Handler, method, target, body, token string) int {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// login creates the user alice (password "correct horse") in mem and
// returns a token of hers got from h.
func login(t *testing.T, h http.Handler, mem *memory.Store) string {
	t.Helper()
	hash, err := auth.HashPassword("correct horse")
	require.NoError(t, err)
	_, err = mem.CreateUser(t.Context(), &store.User{Username: "alice", PasswordHash: hash, Active: true})
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, "/api/v1/auth/login", strings.NewReader(`{"username":"alice","password":"correct horse"}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code, "login: %s", w.Body)
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	return out.Data.Token
}

// TestObserverRequests: each request is told as it starts (its method)
// and as it ends (method, route pattern, status), the route never holding
// a name of the path: "unmatched" for routing's 404 and 405, "/console/"
// for console paths, OTHER for a method the contract does not list.
func TestObserverRequests(t *testing.T) {
	var rec recorder
	mem := memory.New()
	h := hds.New(hds.WithStore(mem), hds.WithUsers(mem), hds.WithLogger(quietLogger),
		hds.WithConsole(true), hds.WithObserver(rec.observer()))
	token := login(t, h, mem)

	requests := []struct {
		method, target, body string
		want                 finished
	}{
		{"GET", "/health", "", finished{"GET", "/health", 200}},
		{"POST", "/api/v1/projects/secret-project", "", finished{"POST", "/api/v1/projects/{project}", 201}},
		{"GET", "/api/v1/projects/secret-project/collections/hidden-collection", "",
			finished{"GET", "/api/v1/projects/{project}/collections/{collection}", 404}},
		{"HEAD", "/api/v1/projects/secret-project", "", finished{"HEAD", "/api/v1/projects/{project}", 200}},
		{"DELETE", "/api/v1/users/bob-the-user", "", finished{"DELETE", "/api/v1/users/{username}", 403}},
		{"GET", "/no/such/secret-path", "", finished{"GET", "unmatched", 404}},
		{"PATCH", "/health", "", finished{"PATCH", "unmatched", 405}},
		{"BREW", "/api/v1/projects/secret-project", "", finished{"OTHER", "unmatched", 405}},
		{"GET", "/console/", "", finished{"GET", "/console/", 200}},
		{"GET", "/console/no-such-file.js", "", finished{"GET", "/console/", 404}},
	}
	for _, r := range requests {
		assert.Equal(t, r.want.status, serve(h, r.method, r.target, r.body, token), "%s %s", r.method, r.target)
	}
	// The login's own request comes first.
	rec.eventually(t, "every request finished", func() bool { return len(rec.finished) == len(requests)+1 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, finished{"POST", "/api/v1/auth/login", 200}, rec.finished[0], "the login")
	for i, r := range requests {
		assert.Equal(t, r.want, rec.finished[i+1], "%s %s", r.method, r.target)
	}
	wantStarted := []string{"POST"}
	for _, r := range requests {
		wantStarted = append(wantStarted, r.want.method)
	}
	assert.Equal(t, wantStarted, rec.started, "each request's start, with its method")
	assert.Empty(t, rec.storeErrs, "no store error")
	assert.Zero(t, rec.logins, "no failed login")
	assert.Equal(t, []bool{false}, rec.shared, "without a shared rate limit store: local, told once")
	all := fmt.Sprint(rec.started, rec.finished)
	for _, name := range []string{"secret", "hidden", "bob", "alice", token} {
		assert.NotContains(t, all, name, "facts never hold a name from the path")
	}
}

// TestObserverStoreErrors: a request answered with a store error tells
// its kind: timeout, unavailable, or other for an unexpected error (a
// 500); the errors of the table (404) and a panic are none. A failed
// /health check is one too.
func TestObserverStoreErrors(t *testing.T) {
	var rec recorder
	s := &failingStore{Store: memory.New()}
	h := hds.New(hds.WithStore(s), hds.WithUsers(s.Store), hds.WithLogger(quietLogger), hds.WithObserver(rec.observer()))
	token := login(t, h, s.Store)
	cases := []struct {
		err    error
		status int
		kind   string
	}{
		{fmt.Errorf("%w: %w", store.ErrUnavailable, context.DeadlineExceeded), 503, "timeout"},
		{fmt.Errorf("%w: dial tcp: connection refused", store.ErrUnavailable), 503, "unavailable"},
		{store.ErrStorageFull, 503, "unavailable"},
		{errors.New("bad row"), 500, "other"},
		{&store.NotFoundError{Kind: "project", Name: "x"}, 404, ""},
	}
	for _, c := range cases {
		s.fail(c.err)
		assert.Equal(t, c.status, serve(h, "GET", "/api/v1/projects", "", token), "%v", c.err)
	}
	s.fail(fmt.Errorf("%w: dial tcp: connection refused", store.ErrUnavailable))
	assert.Equal(t, 503, serve(h, "GET", "/health", "", ""), "health with the store down")
	s.fail(context.DeadlineExceeded)
	assert.Equal(t, 503, serve(h, "GET", "/health", "", ""), "health with the store slow")
	s.fail(nil)
	assert.Equal(t, 200, serve(h, "GET", "/health", "", ""), "health")

	rec.eventually(t, "every request finished", func() bool { return len(rec.finished) == len(cases)+4 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, []string{"timeout", "unavailable", "unavailable", "other", "unavailable", "timeout"}, rec.storeErrs)
	for i, c := range cases {
		assert.Equal(t, finished{"GET", "/api/v1/projects", c.status}, rec.finished[i+1], "%v", c.err)
	}
}

// TestObserverLoginFailures: an unknown user, a wrong password and a
// wrong current password of a password change are failed logins; a good
// login is none.
func TestObserverLoginFailures(t *testing.T) {
	var rec recorder
	mem := memory.New()
	h := hds.New(hds.WithStore(mem), hds.WithUsers(mem), hds.WithLogger(quietLogger), hds.WithObserver(rec.observer()))
	token := login(t, h, mem)
	assert.Equal(t, 401, serve(h, "POST", "/api/v1/auth/login", `{"username":"alice","password":"wrong"}`, ""))
	assert.Equal(t, 401, serve(h, "POST", "/api/v1/auth/login", `{"username":"nobody","password":"wrong"}`, ""))
	assert.Equal(t, 400, serve(h, "POST", "/api/v1/auth/password", `{"current_password":"wrong","new_password":"new one"}`, token))
	assert.Equal(t, 400, serve(h, "POST", "/api/v1/auth/login", `{"username":"alice"}`, ""), "no password: not a login")
	rec.eventually(t, "the requests", func() bool { return len(rec.finished) == 5 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, 3, rec.logins, "failed logins")
}

// downStore is a limiter.Store whose every call fails.
type downStore struct{}

var errDown = errors.New("redis: connection refused")

func (downStore) Get(context.Context, string, limiter.Rate) (limiter.Context, error) {
	return limiter.Context{}, errDown
}
func (downStore) Peek(context.Context, string, limiter.Rate) (limiter.Context, error) {
	return limiter.Context{}, errDown
}
func (downStore) Reset(context.Context, string, limiter.Rate) (limiter.Context, error) {
	return limiter.Context{}, errDown
}
func (downStore) Increment(context.Context, string, int64, limiter.Rate) (limiter.Context, error) {
	return limiter.Context{}, errDown
}

// TestObserverRateLimitShared: with a shared rate limit store the
// observer is told "shared" at once, and "local" when a request finds
// the store down.
func TestObserverRateLimitShared(t *testing.T) {
	var rec recorder
	h := hds.New(hds.WithLogger(quietLogger), hds.WithRateLimitStore(downStore{}), hds.WithObserver(rec.observer()))
	rec.eventually(t, "the state at start", func() bool { return len(rec.shared) == 1 })
	assert.Equal(t, 401, serve(h, "GET", "/api/v1/projects", "", ""), "counted, then refused")
	rec.eventually(t, "the switch", func() bool { return len(rec.shared) == 2 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, []bool{true, false}, rec.shared, "shared at start, local once the store failed")
}

// TestObserverEventStreams: a change-feed stream is told as it opens
// and as it closes.
func TestObserverEventStreams(t *testing.T) {
	var rec recorder
	mem := memory.New()
	h := hds.New(hds.WithStore(mem), hds.WithUsers(mem), hds.WithLogger(quietLogger), hds.WithObserver(rec.observer()))
	token := login(t, h, mem)
	require.Equal(t, 201, serve(h, "POST", "/api/v1/projects/p", "", token))
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/projects/p/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, ": stream open\n", line)
	rec.eventually(t, "the stream opened", func() bool { return rec.opened == 1 })
	rec.mu.Lock()
	assert.Zero(t, rec.closed, "still open")
	rec.mu.Unlock()
	cancel()
	_ = res.Body.Close()
	rec.eventually(t, "the stream closed", func() bool { return rec.closed == 1 })
	rec.eventually(t, "the stream's request finished", func() bool {
		return slices.ContainsFunc(rec.finished, func(f finished) bool { return f.route == "/api/v1/projects/{project}/events" })
	})
}

// TestObserverWebhooks: each attempt at a delivery is told with its
// outcome (succeeded; retried when another attempt follows; failed when
// none does), and the number of pending deliveries is told.
func TestObserverWebhooks(t *testing.T) {
	var rec recorder
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer broken.Close()
	mem := memory.New()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	h := hds.New(hds.WithStore(mem), hds.WithUsers(mem), hds.WithLogger(quietLogger), hds.WithCredentialKey(testKey),
		hds.WithShutdown(ctx), hds.WithObserver(rec.observer()),
		hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true, MaxAttempts: 2}))
	rec.eventually(t, "the pending count at start", func() bool { return slices.Equal(rec.pending[:min(1, len(rec.pending))], []int{0}) })
	token := login(t, h, mem)
	require.Equal(t, 201, serve(h, "POST", "/api/v1/projects/p", "", token))
	for _, url := range []string{ok.URL, broken.URL} {
		require.Equal(t, 201, serve(h, "POST", "/api/v1/projects/p/webhooks",
			`{"url":"`+url+`","actions":["collection.create"]}`, token), "create a webhook")
	}
	require.Equal(t, 201, serve(h, "POST", "/api/v1/projects/p/collections/c", "", token))
	// The broken receiver's delivery is tried again a second later, then
	// given up.
	rec.eventually(t, "three attempts", func() bool { return len(rec.deliveries) == 3 })
	rec.eventually(t, "nothing pending", func() bool { return len(rec.pending) > 1 && rec.pending[len(rec.pending)-1] == 0 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	d := slices.Clone(rec.deliveries)
	slices.Sort(d)
	assert.Equal(t, []string{"failed", "retried", "succeeded"}, d, "the attempts' outcomes")
	assert.Equal(t, "failed", rec.deliveries[2], "the broken one's last attempt")
}

// TestObserverPanicsAndBlocks: a panic in the observer is recovered and
// logged, and later facts are told; an observer that blocks holds no
// request, and the facts it cannot take are dropped and counted in the
// log.
func TestObserverPanicsAndBlocks(t *testing.T) {
	t.Run("Panic", func(t *testing.T) {
		var logs syncBuffer
		var rec recorder
		obs := rec.observer()
		obs.RequestStarted = func(string) { panic("observer bug") }
		h := hds.New(hds.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), hds.WithObserver(obs))
		assert.Equal(t, 200, serve(h, "GET", "/health", "", ""))
		assert.Equal(t, 200, serve(h, "GET", "/health", "", ""))
		rec.eventually(t, "both requests finished", func() bool { return len(rec.finished) == 2 })
		out := logs.String()
		assert.Contains(t, out, "the observer panicked")
		assert.Contains(t, out, "hook=RequestStarted")
		assert.Contains(t, out, "observer bug")
	})
	t.Run("Block", func(t *testing.T) {
		var logs syncBuffer
		release := make(chan struct{})
		defer close(release)
		h := hds.New(hds.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), hds.WithObserver(hds.Observer{
			RequestFinished: func(string, string, int, time.Duration) { <-release },
		}))
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 4200 { // more facts than the queue holds
				serve(h, "GET", "/health", "", "")
			}
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("requests held by an observer that blocks")
		}
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logs.String(), "facts dropped") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		assert.Contains(t, logs.String(), "the observer is behind: facts dropped")
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent use (a log sink).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var _ io.Writer = (*syncBuffer)(nil)

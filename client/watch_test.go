package client

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hds-go/hds"
)

// Watch against the real handler (docs/api.md#the-go-client). Waits are
// shortened (fastTiming); every wait for an outcome polls with a generous
// deadline.

// watched gathers the calls of one Watch.
type watched struct {
	mu        sync.Mutex
	calls     []*Cluster
	active    int
	maxActive int
	done      chan error // Watch's result
	cancel    context.CancelFunc
	// hold, when not nil, makes each call wait until it is closed.
	hold chan struct{}
}

// watch starts c.Watch on web/prod/k in a goroutine.
func watch(t *testing.T, c *Client, p, col, k string) *watched {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watched{done: make(chan error, 1), cancel: cancel}
	go func() {
		w.done <- c.Watch(ctx, p, col, k, w.call)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			t.Error("Watch did not return after its context ended")
		}
	})
	return w
}

func (w *watched) call(k *Cluster) {
	w.mu.Lock()
	w.active++
	w.maxActive = max(w.maxActive, w.active)
	w.calls = append(w.calls, k)
	hold := w.hold
	w.mu.Unlock()
	if hold != nil {
		<-hold
	}
	w.mu.Lock()
	w.active--
	w.mu.Unlock()
}

// n returns the number of calls so far.
func (w *watched) n() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls)
}

// last returns the last call's cluster.
func (w *watched) last() *Cluster {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[len(w.calls)-1]
}

// value returns record name's value in the last call, or nil.
func (w *watched) value(name string) any {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.calls) == 0 {
		return nil
	}
	return w.calls[len(w.calls)-1].Records[name].Value
}

// result waits for Watch to return.
func (w *watched) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-w.done:
		w.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not return")
		return nil
	}
}

// reads returns the GET K requests with If-None-Match the server served
// for cluster path k with status (0: any).
func (s *testServer) reads(k string, status int) int {
	return len(s.served(func(r seen) bool {
		return r.method == "GET" && r.path == k && strings.Contains(r.query, "types=true") && (status == 0 || r.status == status)
	}))
}

// A burst of changes is one call after its last change, with the newest
// values; a change that leaves the cluster as it was calls nothing; calls
// never overlap and never repeat a tag.
func TestWatchCoalesces(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	s.tree("web2", "prod", "k")
	s.put("web", "prod", "k", "port", "INTEGER", "1")
	c := s.client()
	// Long enough that the writes of the burst, back to back, are less
	// than it apart even on a loaded machine.
	c.timing.debounce = 3 * time.Second
	w := watch(t, c, "web", "prod", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	if got := w.value("port"); got != int64(1) {
		t.Fatalf("first call: port %v", got)
	}
	if w.last().Revision != 0 {
		t.Errorf("first call: revision %d, want 0", w.last().Revision)
	}
	for i := 2; i <= 6; i++ {
		s.put("web", "prod", "k", "port", "INTEGER", strconv.Itoa(i))
	}
	eventually(t, "the call after the burst", func() bool { return w.n() >= 2 })
	if got := w.value("port"); got != int64(6) {
		t.Errorf("after the burst: port %v, want the newest, 6", got)
	}
	if w.last().Revision == 0 {
		t.Errorf("after the burst: no revision")
	}
	// A change that matters (a collection created) but leaves the
	// cluster as it was: read again, 304, no call.
	k := clusterPath("web", "prod", "k")
	before := s.reads(k, http.StatusNotModified)
	s.must("POST", projectPath("web")+"/collections/other", "", http.StatusCreated)
	eventually(t, "the read after the collection was created", func() bool { return s.reads(k, http.StatusNotModified) > before })
	// A change in another project calls nothing (its feed is another).
	s.put("web2", "prod", "k", "port", "INTEGER", "7")
	// One more change, to know every earlier one was handled.
	s.put("web", "prod", "k", "host", "STRING", `"h"`)
	eventually(t, "the call after the last change", func() bool { return w.value("host") == "h" })
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.calls) != 3 {
		t.Errorf("%d calls, want 3 (first, burst, last change)", len(w.calls))
	}
	for i := 1; i < len(w.calls); i++ {
		if w.calls[i].Tag == w.calls[i-1].Tag {
			t.Errorf("calls %d and %d have the same tag %s", i-1, i, w.calls[i].Tag)
		}
	}
	if w.maxActive != 1 {
		t.Errorf("%d calls at a time", w.maxActive)
	}
}

// Changes while fn runs wait for it: one call at a time, then one call
// with the newest values.
func TestWatchOneCallAtATime(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	s.put("web", "prod", "k", "port", "INTEGER", "1")
	w := &watched{}
	w.hold = make(chan struct{})
	c := s.client()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Watch(ctx, "web", "prod", "k", w.call) }()
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	// fn is still running: changes now wait for it.
	for i := 2; i <= 4; i++ {
		s.put("web", "prod", "k", "port", "INTEGER", strconv.Itoa(i))
	}
	close(w.hold) // every later call returns at once
	eventually(t, "the newest value", func() bool { return w.value("port") == int64(4) })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Watch returned %v, want context.Canceled", err)
	}
	if w.maxActive != 1 {
		t.Errorf("%d calls at a time", w.maxActive)
	}
}

// Deleting the cluster ends Watch with the server's 404.
func TestWatchEndsWhenClusterDeleted(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	w := watch(t, s.client(), "web", "prod", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	s.must("DELETE", clusterPath("web", "prod", "k"), "", http.StatusNoContent)
	err := w.result(t)
	var e *Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != "RESOURCE_NOT_FOUND" {
		t.Errorf("Watch returned %v, want a 404 *Error", err)
	}
}

// A missing cluster or a refused token ends Watch at once.
func TestWatchRefused(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	for _, tc := range []struct {
		what      string
		c         *Client
		p, col, k string
		status    int
	}{
		{"missing cluster", s.client(), "web", "prod", "nope", 404},
		{"missing project", s.client(), "nope", "prod", "k", 404},
		{"bad token", s.client(WithToken("nonsense")), "web", "prod", "k", 401},
	} {
		err := tc.c.Watch(t.Context(), tc.p, tc.col, tc.k, func(*Cluster) { t.Errorf("%s: called", tc.what) })
		var e *Error
		if !errors.As(err, &e) || e.Status != tc.status {
			t.Errorf("%s: %v, want %d", tc.what, err, tc.status)
		}
	}
}

// A revoked API token ends Watch with 401.
func TestWatchEndsWhenTokenRevoked(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	tok := s.apiToken("web", "reader")
	w := watch(t, s.client(WithToken(tok)), "web", "prod", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	var list struct {
		Data struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		} `json:"data"`
	}
	s.decode(s.must("GET", projectPath("web")+"/tokens", "", http.StatusOK), &list)
	s.must("DELETE", projectPath("web")+"/tokens/"+list.Data.Items[0].ID, "", http.StatusNoContent)
	err := w.result(t)
	var e *Error
	if !errors.As(err, &e) || e.Status != 401 || e.Code != "AUTHENTICATION_FAILED" {
		t.Errorf("Watch returned %v, want a 401 *Error", err)
	}
}

// A stream the server drops is reconnected with Last-Event-ID: a change
// made meanwhile is not missed.
func TestWatchReconnects(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	s.put("web", "prod", "k", "port", "INTEGER", "1")
	w := watch(t, s.client(), "web", "prod", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	s.put("web", "prod", "k", "port", "INTEGER", "2") // an event, so that the reconnection names it
	eventually(t, "the second call", func() bool { return w.value("port") == int64(2) })
	events := func(r seen) bool { return strings.HasSuffix(r.path, "/events") && r.status == http.StatusOK }
	opened := len(s.served(events))
	s.srv.CloseClientConnections()
	s.put("web", "prod", "k", "port", "INTEGER", "3")
	eventually(t, "the change made while the stream was down", func() bool { return w.value("port") == int64(3) })
	eventually(t, "the reconnection", func() bool { return len(s.served(events)) > opened })
	again := s.served(events)[opened]
	if again.lastEventID == "" || again.lastEventID == "0" {
		t.Errorf("the reconnection sent Last-Event-ID %q, want the revision of the last event", again.lastEventID)
	}
}

// A reference that no longer resolves (422) waits for the next change;
// a change of a record a reference reaches, in another cluster, is one.
func TestWatchReferences(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	s.must("POST", clusterPath("web", "prod", "db"), "", http.StatusCreated)
	s.must("POST", clusterPath("web", "prod", "noise"), "", http.StatusCreated)
	s.put("web", "prod", "db", "host", "STRING", `"db1"`)
	s.put("web", "prod", "k", "url", "STRING", `"pg://${db/host}"`)
	w := watch(t, s.client(), "web", "prod", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	if got := w.value("url"); got != "pg://db1" {
		t.Fatalf("url %v", got)
	}
	s.put("web", "prod", "db", "host", "STRING", `"db2"`)
	eventually(t, "the change of the referenced record", func() bool { return w.value("url") == "pg://db2" })
	// Changes of a cluster nothing references read nothing.
	k := clusterPath("web", "prod", "k")
	reads := s.reads(k, 0)
	for i := 0; i < 3; i++ {
		s.put("web", "prod", "noise", "x", "INTEGER", strconv.Itoa(i))
	}
	// The referenced record goes away: 422, no call, Watch goes on.
	s.must("DELETE", clusterPath("web", "prod", "db")+"/records/host", "", http.StatusNoContent)
	eventually(t, "the 422", func() bool { return s.reads(k, http.StatusUnprocessableEntity) == 1 })
	if got := s.reads(k, 0); got != reads+1 {
		t.Errorf("%d reads after the changes of noise and db, want 1 (noise matters not)", got-reads)
	}
	s.put("web", "prod", "db", "host", "STRING", `"db3"`)
	eventually(t, "the call once it resolves again", func() bool { return w.value("url") == "pg://db3" })
	if n := w.n(); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}
}

// A user token is refreshed before it expires, and Watch goes on past
// the first token's expiry.
func TestWatchRefreshesUserToken(t *testing.T) {
	s := newTestServer(t, hds.WithSecurity(hds.Security{JWTSecret: testSecret, JWTExpiration: "8s"}))
	s.tree("web", "prod", "k")
	s.put("web", "prod", "k", "port", "INTEGER", "1")
	c := s.client()
	first := s.token
	_, exp, ok := tokenTimes(first)
	if !ok {
		t.Fatal("the login token has no exp")
	}
	w := watch(t, c, "web", "prod", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	// Due half its lifetime (4 s) before it expires: a margin no slow
	// machine eats up.
	eventually(t, "the refresh", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.token != first
	})
	refreshes := s.served(func(r seen) bool { return r.path == "/api/v1/auth/refresh" && r.status == http.StatusOK })
	if len(refreshes) == 0 || !refreshes[0].at.Before(exp) {
		t.Errorf("the token was not refreshed before it expired: %v", refreshes)
	}
	for time.Now().Before(exp.Add(1100 * time.Millisecond)) {
		time.Sleep(50 * time.Millisecond)
	}
	s.login()
	s.put("web", "prod", "k", "port", "INTEGER", "2")
	eventually(t, "a call after the first token expired", func() bool { return w.value("port") == int64(2) })
	select {
	case err := <-w.done:
		t.Errorf("Watch returned %v", err)
	default:
	}
}

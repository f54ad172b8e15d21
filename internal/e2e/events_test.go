package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// eventWait is how long the tests wait for an event or the end of a
// stream: the contract's 1 second, with room for a loaded machine.
const eventWait = 3 * time.Second

// sseEvent is one event of a stream.
type sseEvent struct {
	id, event string
	data      auditJSON
	raw       string
}

// sseStream reads a change feed over a real connection.
type sseStream struct {
	t      testing.TB
	res    *http.Response
	events chan sseEvent
	// comments receives the comment lines (": keep-alive").
	comments chan string
	done     chan struct{}
}

// getStream sends GET path and returns the response, whatever it is.
func getStream(t testing.TB, base, path, token string, headers ...string) *http.Response {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	require.NoError(t, err)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err, "GET %s", path)
	return res
}

// stream opens GET path and starts reading it.
func stream(t testing.TB, base, path, token string, headers ...string) *sseStream {
	t.Helper()
	res := getStream(t, base, path, token, headers...)
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.FailNow(t, "stream refused", "GET %s: %d %s", path, res.StatusCode, body)
	}
	s := &sseStream{t: t, res: res, events: make(chan sseEvent, 1000), comments: make(chan string, 1000), done: make(chan struct{})}
	t.Cleanup(func() { res.Body.Close() })
	go s.read()
	return s
}

func (s *sseStream) read() {
	defer close(s.done)
	sc := bufio.NewScanner(s.res.Body)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.raw != "" {
				s.events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
			s.comments <- line
		default:
			ev.raw += line + "\n"
			name, value, _ := strings.Cut(line, ": ")
			switch name {
			case "id":
				ev.id = value
			case "event":
				ev.event = value
			case "data":
				_ = json.Unmarshal([]byte(value), &ev.data)
			}
		}
	}
}

// next returns the next event, failing the test when none comes in time.
func (s *sseStream) next(what string) sseEvent {
	s.t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-s.done:
		select {
		case ev := <-s.events:
			return ev
		default:
		}
		require.FailNow(s.t, "the stream ended", what)
	case <-time.After(eventWait):
		require.FailNow(s.t, "no event in time", what)
	}
	return sseEvent{}
}

// quiet checks that no event comes for a while.
func (s *sseStream) quiet(what string) {
	s.t.Helper()
	select {
	case ev := <-s.events:
		assert.Fail(s.t, "unexpected event", "%s: %s", what, ev.raw)
	case <-time.After(300 * time.Millisecond):
	}
}

// ends checks that the stream ends in time: it waits for the end up to
// eventWait, the contract's 1 second with room for a loaded machine. How
// soon events arrive is measured by BenchmarkEvents, not asserted: on a
// shared machine a wall-clock bound of a second flakes.
func (s *sseStream) ends(what string) {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(eventWait):
		assert.Fail(s.t, "the stream goes on", what)
	}
}

// notBefore checks that a stream that has just ended did not end before
// the instant at (an expiry): as the tests checked it within 1.5 seconds
// either side, the side a slow machine cannot break.
func notBefore(t testing.TB, at time.Time, what string) {
	t.Helper()
	assert.False(t, time.Now().Before(at.Add(-1500*time.Millisecond)), "%s: it ended before %s", what, at)
}

// serve starts a real HTTP server for c's handler.
func (c *client) serve() string {
	srv := httptest.NewServer(c.h)
	c.t.Cleanup(srv.Close)
	return srv.URL
}

func TestEventsStream(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		c.addRecord(alice, pathK("p", "c", "k"), "a", "INTEGER", "1")                       // 4
		c.mustDo("GET", pathR("p", "c", "k", "a")+"?reveal=true", "", alice, http.StatusOK) // 5: not an event

		s := stream(t, base, pathP("p")+"/events", alice, "Last-Event-ID", "0")
		assert.Equal(t, "text/event-stream", s.res.Header.Get("Content-Type"), "Content-Type")
		assert.Equal(t, "no-store", s.res.Header.Get("Cache-Control"), "Cache-Control")
		for i, want := range []string{"project.create", "collection.create", "cluster.create", "record.create"} {
			ev := s.next("replay " + want)
			assert.Equal(t, strconv.Itoa(i+1), ev.id, "id is the revision")
			assert.Equal(t, want, ev.event, "event is the action")
			assert.Equal(t, int64(i+1), ev.data.Revision, "data is the entry")
		}
		c.mustDo("PUT", pathR("p", "c", "k", "a"), `{"value":2}`, alice, http.StatusOK)
		start := time.Now()
		ev := s.next("live")
		t.Logf("%s: an event reached the stream %s after its request", kind.name, time.Since(start))
		assert.Equal(t, "6", ev.id, "the next change, live, without the reveal")
		assert.Equal(t, "record.update", ev.event)
		assert.Equal(t, "a", str(ev.data.Record))
		assert.Equal(t, c.ids["alice"], str(ev.data.Actor))
		lines := strings.Split(strings.TrimSpace(ev.raw), "\n")
		require.Len(t, lines, 3, "id, event and one line of data")
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(lines[2], "data: ")), &m))
		wantFields(t, "data", json.RawMessage(strings.TrimPrefix(lines[2], "data: ")), auditFields...)
		s.quiet("no duplicate")

		// From the next change; ?since= replays; the header wins.
		now := stream(t, base, pathP("p")+"/events", alice)
		since := stream(t, base, pathP("p")+"/events?since=4", alice)
		both := stream(t, base, pathP("p")+"/events?since=1", alice, "Last-Event-ID", "5")
		assert.Equal(t, "6", since.next("since=4").id, "after 4: 6 (5 is a reveal)")
		assert.Equal(t, "6", both.next("Last-Event-ID wins").id)
		now.quiet("nothing before the next change")
		c.mustDo("DELETE", pathR("p", "c", "k", "a"), "", alice, http.StatusNoContent)
		for _, st := range []*sseStream{s, now, since, both} {
			assert.Equal(t, "7", st.next("the delete").id)
		}
		beyond := stream(t, base, pathP("p")+"/events?since=8", alice)
		c.mustDo("POST", pathC("p", "d"), "", alice, http.StatusCreated) // 8
		beyond.quiet("8 is not after 8")
		c.mustDo("POST", pathC("p", "e"), "", alice, http.StatusCreated) // 9
		assert.Equal(t, "9", beyond.next("a since beyond the newest waits").id)

		assert.Equal(t, "8", s.next("collection d").id)
		assert.Equal(t, "9", s.next("collection e").id)
		// A rename does not end a stream.
		c.mustDo("PUT", pathP("p")+"?rename=q", "", alice, http.StatusOK)
		assert.Equal(t, "project.rename", s.next("the rename").event)
		c.mustDo("POST", pathC("q", "f"), "", alice, http.StatusCreated)
		assert.Equal(t, "collection.create", s.next("after the rename").event)
	})
}

func TestEventsFilters(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		c.mustDo("POST", pathK("p", "c", "other"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("p", "d", "k"), "", alice, http.StatusNotFound)
		c.mustDo("POST", pathC("p", "d"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("p", "d", "k"), "", alice, http.StatusCreated)
		coll := stream(t, base, pathP("p")+"/events?collection=c", alice)
		clus := stream(t, base, pathP("p")+"/events?collection=c&cluster=k", alice)
		c.addRecord(alice, pathK("p", "d", "k"), "x", "INTEGER", "1")
		c.addRecord(alice, pathK("p", "c", "other"), "y", "INTEGER", "1")
		c.addRecord(alice, pathK("p", "c", "k"), "z", "INTEGER", "1")
		assert.Equal(t, "y", str(coll.next("collection c").data.Record), "only collection c")
		assert.Equal(t, "z", str(coll.next("collection c").data.Record))
		assert.Equal(t, "z", str(clus.next("cluster c/k").data.Record), "only cluster c/k")
		// Names as they are at the time of each event.
		c.mustDo("PUT", pathK("p", "c", "k")+"?rename=k2", "", alice, http.StatusOK)
		assert.Equal(t, "cluster.rename", coll.next("the rename").event)
		c.addRecord(alice, pathK("p", "c", "k2"), "w", "INTEGER", "1")
		assert.Equal(t, "w", str(coll.next("in the renamed cluster").data.Record))
		clus.quiet("k2 is not k")
		c.mustDo("POST", pathK("p", "c", "k"), "", alice, http.StatusCreated)
		assert.Equal(t, "cluster.create", clus.next("a new cluster named k").event)
	})
}

func TestEventsErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		events := pathP("p") + "/events"
		for _, tc := range []struct {
			query   string
			header  []string
			details string
		}{
			{"?since=-1", nil, "since must be a revision: a decimal integer of 0 or more"},
			{"?since=abc", nil, "since must be a revision"},
			{"?since=1e3", nil, "since must be a revision"},
			{"?since=", nil, "since must be a revision"},
			{"", []string{"Last-Event-ID", "x"}, "Last-Event-ID must be a revision"},
			{"", []string{"Last-Event-ID", "-3"}, "Last-Event-ID must be a revision"},
			{"", []string{"Last-Event-ID", "1", "Last-Event-ID", "2"}, "the header Last-Event-ID is given more than once"},
			{"?cluster=k", nil, "cluster needs collection"},
			{"?collection=", nil, "collection must be a name"},
			{"?collection=c&cluster=", nil, "cluster must be a name"},
			{"?since=1&since=2", nil, "the query parameter since is given more than once"},
		} {
			status, _, env := c.sendWith("GET", events+tc.query, "", alice, tc.header...)
			what := fmt.Sprintf("GET P/events%s %v", tc.query, tc.header)
			wantError(t, what, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			wantDetails(t, what, env, tc.details)
		}
		status, _, env := c.do("GET", events, "", c.token("bob"))
		wantError(t, "someone else's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		status, _, env = c.do("GET", events+"?since=x", "", c.token("bob"))
		wantError(t, "someone else's project, bad input", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		status, _, env = c.do("GET", pathP("nope")+"/events", "", alice)
		wantError(t, "a missing project", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		wantDetails(t, "a missing project", env, `project "nope" not found`)
		status, _, env = c.do("GET", events, "", "")
		wantError(t, "no token", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
		status, h, env := c.do("DELETE", events, "", alice)
		wantError(t, "DELETE", status, env, http.StatusMethodNotAllowed, "INVALID_REQUEST", "Method not allowed")
		assert.Equal(t, "GET, HEAD", h.Get("Allow"))
	})
}

func TestEventsLimits(t *testing.T) {
	c := newServer(t, memoryKind, hds.WithEvents(40*time.Millisecond, 2), hds.WithRateLimit(1000, 5))
	base := c.serve()
	alice := c.token("alice")
	c.tree(alice, "p", "c", "k") // 3 requests of the 5 a minute
	first := stream(t, base, pathP("p")+"/events", alice)
	select {
	case line := <-first.comments:
		assert.Equal(t, ": stream open", line)
	case <-time.After(eventWait):
		require.FailNow(t, "no first comment")
	}
	select {
	case line := <-first.comments:
		assert.Equal(t, ": keep-alive", line, "a keep-alive comment after events.keepalive of silence")
	case <-time.After(eventWait):
		assert.Fail(t, "no keep-alive comment")
	}
	second := getStream(t, base, pathP("p")+"/events", alice)
	t.Cleanup(func() { second.Body.Close() })
	require.Equal(t, http.StatusOK, second.StatusCode, "a second stream")
	assert.Equal(t, "0", second.Header.Get("X-RateLimit-Remaining"), "opening a stream counts as one request")
	third := getStream(t, base, pathP("p")+"/events", alice)
	body, _ := io.ReadAll(third.Body)
	third.Body.Close()
	var env envelope
	require.NoError(t, json.Unmarshal(body, &env), "%s", body)
	assert.Equal(t, http.StatusTooManyRequests, third.StatusCode, "past the rate limit: %s", body)
	assert.Equal(t, "RATE_LIMIT_EXCEEDED", env.code())
	assert.Equal(t, "Rate limit exceeded", env.message())

	// The stream limit, without the rate limit in the way.
	c2 := newServer(t, memoryKind, hds.WithEvents(time.Hour, 2))
	base2 := c2.serve()
	alice2 := c2.token("alice")
	c2.tree(alice2, "p", "c", "k")
	a := stream(t, base2, pathP("p")+"/events", alice2)
	stream(t, base2, pathP("p")+"/events", alice2)
	over := getStream(t, base2, pathP("p")+"/events", alice2)
	body, _ = io.ReadAll(over.Body)
	over.Body.Close()
	env = envelope{}
	require.NoError(t, json.Unmarshal(body, &env), "%s", body)
	assert.Equal(t, http.StatusTooManyRequests, over.StatusCode, "a third stream")
	assert.Equal(t, "RATE_LIMIT_EXCEEDED", env.code())
	assert.Equal(t, "Rate limit exceeded", env.message())
	assert.Contains(t, env.details(), "at most 2 open change feed streams per user")
	bob := c2.token("bob")
	c2.mustDo("POST", pathP("b"), "", bob, http.StatusCreated)
	stream(t, base2, pathP("b")+"/events", bob) // per user
	a.res.Body.Close()
	a.ends("closed by the client")
	require.Eventually(t, func() bool {
		res := getStream(t, base2, pathP("p")+"/events", alice2)
		defer res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, eventWait, 20*time.Millisecond, "a stream closed frees its place")
}

func TestEventsEnd(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		ctx, shutdown := context.WithCancel(context.Background())
		defer shutdown()
		c := newServer(t, kind, hds.WithShutdown(ctx))
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		c.tree(alice, "q", "c", "k")
		deleted := stream(t, base, pathP("p")+"/events", alice)
		c.mustDo("DELETE", pathP("p"), "", alice, http.StatusNoContent)
		deleted.ends("the project is deleted")

		loggedOut := stream(t, base, pathP("q")+"/events", alice)
		other := c.login("alice", "alice-password")
		c.mustDo("POST", "/api/v1/auth/logout", "", alice, http.StatusNoContent)
		loggedOut.ends("the session ended")

		disabled := stream(t, base, pathP("q")+"/events", other)
		require.NoError(t, c.users.SetUserActive(t.Context(), "alice", false))
		disabled.ends("the user is disabled")
		require.NoError(t, c.users.SetUserActive(t.Context(), "alice", true))

		bob := c.token("bob")
		c.mustDo("POST", pathP("b"), "", bob, http.StatusCreated)
		down := stream(t, base, pathP("b")+"/events", bob)
		start := time.Now()
		shutdown()
		down.ends("the server shuts down")
		t.Logf("shutdown ended the stream in %s", time.Since(start)) // ends waits up to eventWait

		// A token that expires.
		short := newServer(t, kind, hds.WithSecurity(hds.Security{JWTSecret: testSecret, JWTExpiration: "2s"}))
		sbase := short.serve()
		tok := short.token("alice")
		short.mustDo("POST", pathP("p"), "", tok, http.StatusCreated)
		expiring := stream(t, sbase, pathP("p")+"/events", tok)
		exp := time.Unix(int64(parseToken(t, tok)["exp"].(float64)), 0)
		expiring.ends("the token expires")
		notBefore(t, exp, "the token's stream ends at its expiry")
	})
}

// TestEventsWriteTimeout checks that the server's write and read timeouts
// do not cut a stream.
func TestEventsWriteTimeout(t *testing.T) {
	c := newServer(t, memoryKind, hds.WithEvents(50*time.Millisecond, 10))
	srv := httptest.NewUnstartedServer(c.h)
	srv.Config.WriteTimeout = 200 * time.Millisecond
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	alice := c.token("alice")
	c.tree(alice, "p", "c", "k")
	s := stream(t, srv.URL, pathP("p")+"/events", alice)
	time.Sleep(800 * time.Millisecond)
	c.addRecord(alice, pathK("p", "c", "k"), "late", "INTEGER", "1")
	assert.Equal(t, "late", str(s.next("an event after the timeouts").data.Record))
}

// TestEventsTwoInstances opens a stream on one instance and changes the
// project through another on the same PostgreSQL database.
func TestEventsTwoInstances(t *testing.T) {
	url := pgtest.NewURL(t)
	pg1, pg2 := pgtest.Open(t, url, postgres.WithListenURL(url)), pgtest.Open(t, url, postgres.WithListenURL(url))
	one := startServer(t, storeKind{name: "pg1", new: func(testing.TB) (store.Projects, store.Accounts) { return pg1, pg1 }}, serverSetup{})
	two := &client{t: t, store: pg2, users: pg2, ids: one.ids, tokens: one.tokens}
	two.h = hds.New(baseOptions(pg2, pg2, serverSetup{})...)
	two.api = contractOf(t, two.h, "")
	alice := one.token("alice")
	one.tree(alice, "p", "c", "k")
	s := stream(t, two.serve(), pathP("p")+"/events", alice)
	start := time.Now()
	one.addRecord(alice, pathK("p", "c", "k"), "a", "INTEGER", "1")
	ev := s.next("a change made on the other instance")
	elapsed := time.Since(start)
	t.Logf("an event written via instance 1 reached a stream on instance 2 in %s", elapsed) // next waits up to eventWait
	assert.Equal(t, "a", str(ev.data.Record))
}

// TestEventsDatabaseOutage cuts the connection of an instance to
// PostgreSQL while a stream is open on it and changes are made through
// another instance; after the database is back, a client resuming with
// Last-Event-ID misses nothing.
func TestEventsDatabaseOutage(t *testing.T) {
	url := pgtest.NewURL(t)
	proxy, proxied := pgtest.NewProxy(t, url)
	open := func(dbURL string) *postgres.Store {
		return pgtest.Open(t, dbURL, postgres.WithListenURL(dbURL), postgres.WithTimeout(time.Second))
	}
	writer, cut := open(url), open(proxied)
	w := startServer(t, storeKind{name: "writer", new: func(testing.TB) (store.Projects, store.Accounts) { return writer, writer }}, serverSetup{})
	r := &client{t: t, store: cut, users: cut, ids: w.ids, tokens: w.tokens}
	r.h = hds.New(baseOptions(cut, cut, serverSetup{})...)
	r.api = contractOf(t, r.h, "")
	base := r.serve()
	alice := w.token("alice")
	w.tree(alice, "p", "c", "k")
	s := stream(t, base, pathP("p")+"/events", alice, "Last-Event-ID", "0")
	last := ""
	for range 3 {
		last = s.next("before the outage").id
	}
	proxy.Cut()
	for _, name := range []string{"a", "b", "c"} {
		w.addRecord(alice, pathK("p", "c", "k"), name, "INTEGER", "1")
	}
	proxy.Restore(t)
	w.addRecord(alice, pathK("p", "c", "k"), "d", "INTEGER", "1")
	// The stream either survived and delivers everything, or ended: then
	// the client resumes from the last id it read.
	var got []string
	deadline := time.After(15 * time.Second)
	for len(got) < 4 {
		select {
		case ev := <-s.events:
			got = append(got, str(ev.data.Record))
			last = ev.id
		case <-s.done:
			require.Eventually(t, func() bool {
				res := getStream(t, base, pathP("p")+"/events", alice, "Last-Event-ID", last)
				res.Body.Close()
				return res.StatusCode == http.StatusOK
			}, 10*time.Second, 100*time.Millisecond, "the instance serves streams again")
			s = stream(t, base, pathP("p")+"/events", alice, "Last-Event-ID", last)
		case <-deadline:
			require.FailNow(t, "events missing after the outage", "got %v", got)
		}
	}
	assert.Equal(t, []string{"a", "b", "c", "d"}, got, "nothing missed, nothing twice")
}

// TestEventsAPITokenEnds checks that a change feed opened with an
// API token ends within a second of the token's revocation and of its
// expiry (docs/api.md#audit-log-and-change-feed: "when the token expires
// (or is revoked)").
func TestEventsAPITokenEnds(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")

		revoked := c.apiToken(alice, "p", `{"name":"feed","role":"viewer"}`)
		s := stream(t, base, pathP("p")+"/events", revoked.Token)
		c.mustDo("DELETE", pathP("p")+"/tokens/"+revoked.ID, "", alice, http.StatusNoContent)
		start := time.Now()
		s.ends("the API token is revoked")
		t.Logf("the revocation ended the stream in %s", time.Since(start))

		scoped := c.apiToken(alice, "p", `{"name":"scoped","role":"viewer","collection":"c","cluster":"k"}`)
		s = stream(t, base, pathP("p")+"/events", scoped.Token)
		c.mustDo("DELETE", pathP("p")+"/tokens/"+scoped.ID, "", alice, http.StatusNoContent)
		s.ends("the scoped API token is revoked")

		expiring := c.apiToken(alice, "p", `{"name":"short","role":"viewer","expires_in":2}`)
		require.NotNil(t, expiring.ExpiresAt)
		exp, err := time.Parse(time.RFC3339Nano, *expiring.ExpiresAt)
		require.NoError(t, err)
		s = stream(t, base, pathP("p")+"/events", expiring.Token)
		s.ends("the API token expires")
		notBefore(t, exp, "the API token's stream ends at its expiry")
	})
}

// TestEventsStreamLimitRetryAfter checks that the 429 of one stream
// too many carries Retry-After, as every 429 does
// (docs/api.md#limits-rate-limits-and-quotas and
// docs/api.md#audit-log-and-change-feed).
func TestEventsStreamLimitRetryAfter(t *testing.T) {
	c := newServer(t, memoryKind, hds.WithEvents(time.Hour, 1))
	base := c.serve()
	alice := c.token("alice")
	c.tree(alice, "p", "c", "k")
	stream(t, base, pathP("p")+"/events", alice)
	over := getStream(t, base, pathP("p")+"/events", alice)
	body, _ := io.ReadAll(over.Body)
	over.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, over.StatusCode, "%s", body)
	after, err := strconv.Atoi(over.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After in seconds, got %q", over.Header.Get("Retry-After"))
	assert.Positive(t, after)
}

// TestEventsLostAccess checks that a stream ends within a second
// when its caller loses access to the project
// (docs/api.md#audit-log-and-change-feed): a member removed, on the
// instance that removed it.
func TestEventsLostAccess(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		base := c.serve()
		alice := c.token("alice")
		bob := c.token("bob")
		c.tree(alice, "p", "c", "k")
		c.share(alice, "p", "bob", "viewer")
		s := stream(t, base, pathP("p")+"/events", bob)
		c.addRecord(alice, pathK("p", "c", "k"), "n", "INTEGER", "1")
		assert.Equal(t, "record.create", s.next("an event while a member").event)
		c.mustDo("DELETE", pathP("p")+"/members/bob", "", alice, http.StatusNoContent)
		start := time.Now()
		s.ends("the member is removed")
		t.Logf("the removal ended the stream in %s", time.Since(start))
	})
}

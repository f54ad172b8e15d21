package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Watch's edge cases against a scripted server: what the real handler
// does not do on demand (a silent stream, 5xx, 429, a connection cut).

// answer is one scripted answer of GET K.
type answer struct {
	status     int
	tag        string
	retryAfter string
	cut        bool // close the connection without an answer
	hang       bool // answer nothing until the client gives up
	wait       chan struct{}
	// waiting, when not nil, is closed once the read came; the answer
	// waits for wait to be closed.
	waiting chan struct{}
}

// fakeServer answers GET K from a script and serves a change feed whose
// events the test sends.
type fakeServer struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	script []answer
	reads  []time.Time // when each GET K came
	feeds  []string    // the Last-Event-ID of each feed connection
	// feedStatus answers feed connections after the first (0: 200).
	feedStatus int
	events     chan string // an event to send on the open stream
	silent     bool        // the stream sends nothing, keep-alives included
	closeFeed  chan struct{}
}

func newFakeServer(t *testing.T, script ...answer) *fakeServer {
	f := &fakeServer{t: t, script: script, events: make(chan string), closeFeed: make(chan struct{}, 1)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/v1/projects/p/events":
		f.mu.Lock()
		f.feeds = append(f.feeds, r.Header.Get("Last-Event-ID"))
		n, status := len(f.feeds), f.feedStatus
		f.mu.Unlock()
		if n > 1 && status != 0 {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"success":false,"error":{"code":"AUTHORIZATION_FAILED","message":"Insufficient permissions","details":""}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-f.events:
				fmt.Fprint(w, ev)
				w.(http.Flusher).Flush()
			case <-f.closeFeed:
				return
			case <-r.Context().Done():
				return
			}
		}
	case "/api/v1/projects/p/collections/c/clusters/k":
		if r.URL.Query().Get("types") != "true" {
			// Watch reads the stored values for references: none.
			fmt.Fprintf(w, `{"success":true,"data":{"name":"k","project":"p","collection":"c","data":{"v":"x"}},"message":"OK"}`)
			return
		}
		f.mu.Lock()
		f.reads = append(f.reads, time.Now())
		var a answer
		if len(f.script) > 0 {
			a, f.script = f.script[0], f.script[1:]
		} else {
			a = answer{status: http.StatusNotModified}
		}
		f.mu.Unlock()
		if a.wait != nil {
			close(a.waiting)
			<-a.wait
		}
		switch {
		case a.hang:
			<-r.Context().Done()
		case a.cut:
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		case a.status == http.StatusOK:
			w.Header().Set("ETag", a.tag)
			fmt.Fprintf(w, `{"success":true,"data":{"name":"k","project":"p","collection":"c","data":{"v":%q},"types":{"v":"STRING"}},"message":"OK"}`, a.tag)
		default:
			if a.retryAfter != "" {
				w.Header().Set("Retry-After", a.retryAfter)
			}
			w.WriteHeader(a.status)
			fmt.Fprintf(w, `{"success":false,"error":{"code":"X","message":"m","details":""}}`)
		}
	default:
		http.NotFound(w, r)
	}
}

// send sends a change of record v of c/k with revision rev.
func (f *fakeServer) send(rev int) {
	f.events <- fmt.Sprintf("id: %d\nevent: record.update\ndata: {\"revision\":%d,\"action\":\"record.update\",\"collection\":\"c\",\"cluster\":\"k\",\"record\":\"v\"}\n\n", rev, rev)
}

func (f *fakeServer) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reads)
}

func (f *fakeServer) feedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.feeds)
}

func (f *fakeServer) client() *Client {
	c, err := New(f.srv.URL)
	if err != nil {
		f.t.Fatal(err)
	}
	c.timing = fastTiming
	return c
}

// Network errors, 5xx and 429 are retried (429 after Retry-After) until
// the read succeeds.
func TestWatchRetries(t *testing.T) {
	f := newFakeServer(t,
		answer{status: 200, tag: `"a"`},
		answer{cut: true},
		answer{status: 503},
		answer{status: 500},
		answer{status: 429, retryAfter: "1"},
		answer{status: 200, tag: `"b"`},
	)
	w := watch(t, f.client(), "p", "c", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	f.send(1)
	eventually(t, "the call after the retries", func() bool { return w.value("v") == `"b"` })
	f.mu.Lock()
	reads := f.reads
	f.mu.Unlock()
	if len(reads) != 6 {
		t.Fatalf("%d reads, want 6", len(reads))
	}
	if gap := reads[5].Sub(reads[4]); gap < time.Second {
		t.Errorf("the read after the 429 came %s after it, before its Retry-After (1 s)", gap)
	}
	if w.n() != 2 {
		t.Errorf("%d calls, want 2", w.n())
	}
}

// A read that gets no answer within the idle limit is given up and
// retried.
func TestWatchHungReadRetried(t *testing.T) {
	f := newFakeServer(t, answer{status: 200, tag: `"a"`}, answer{hang: true}, answer{status: 200, tag: `"b"`})
	c := f.client()
	c.timing.idle = 300 * time.Millisecond
	w := watch(t, c, "p", "c", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	f.send(1)
	eventually(t, "the call after the hung read", func() bool { return w.value("v") == `"b"` })
	if n := f.readCount(); n != 3 {
		t.Errorf("%d reads, want 3", n)
	}
}

// A 422 waits for the next change: no retry until then.
func TestWatch422WaitsForTheNextChange(t *testing.T) {
	f := newFakeServer(t,
		answer{status: 200, tag: `"a"`},
		answer{status: 422},
		answer{status: 200, tag: `"b"`},
	)
	w := watch(t, f.client(), "p", "c", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	f.send(1)
	eventually(t, "the 422", func() bool { return f.readCount() == 2 })
	// Retries would come within fastTiming.maxWait (200 ms); none may.
	time.Sleep(500 * time.Millisecond)
	if n := f.readCount(); n != 2 {
		t.Fatalf("%d reads after the 422 before any change, want none", n-2)
	}
	f.send(2)
	eventually(t, "the call after the next change", func() bool { return w.value("v") == `"b"` })
}

// A stream silent for the idle limit is dropped and reconnected from the
// last event seen; one the server ends is reconnected too.
func TestWatchIdleStreamReconnected(t *testing.T) {
	f := newFakeServer(t, answer{status: 200, tag: `"a"`}, answer{status: 200, tag: `"b"`}, answer{status: 200, tag: `"c"`})
	c := f.client()
	c.timing.idle = 300 * time.Millisecond
	w := watch(t, c, "p", "c", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	f.send(7)
	eventually(t, "the second call", func() bool { return w.value("v") == `"b"` })
	// Nothing more comes: the stream is dropped and reconnected.
	eventually(t, "the reconnection after silence", func() bool { return f.feedCount() >= 2 })
	f.mu.Lock()
	if f.feeds[0] != "" || f.feeds[1] != "7" {
		t.Errorf("Last-Event-ID of the connections: %q, want \"\" then \"7\"", f.feeds)
	}
	f.mu.Unlock()
	f.send(8)
	eventually(t, "a call from the new stream", func() bool { return w.value("v") == `"c"` })
}

// A reconnection refused with 403 ends Watch with it.
func TestWatchFeedRefused(t *testing.T) {
	f := newFakeServer(t, answer{status: 200, tag: `"a"`})
	f.feedStatus = http.StatusForbidden
	w := watch(t, f.client(), "p", "c", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	f.closeFeed <- struct{}{}
	err := w.result(t)
	var e *Error
	if !errors.As(err, &e) || e.Status != 403 || e.Code != "AUTHORIZATION_FAILED" || e.Message != "Insufficient permissions" {
		t.Errorf("Watch returned %v, want the 403", err)
	}
}

// A server that answers 200 with the tag of the last call (one that
// ignores If-None-Match) calls nothing: never twice with the same tag.
func TestWatchSameTagNotCalledTwice(t *testing.T) {
	f := newFakeServer(t, answer{status: 200, tag: `"a"`}, answer{status: 200, tag: `"a"`}, answer{status: 200, tag: `"b"`})
	w := watch(t, f.client(), "p", "c", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	f.send(1)
	eventually(t, "the second read", func() bool { return f.readCount() == 2 })
	f.send(2)
	eventually(t, "the call with the new tag", func() bool { return w.value("v") == `"b"` })
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.calls) != 2 || w.calls[0].Tag != `"a"` || w.calls[1].Tag != `"b"` {
		t.Errorf("calls %v, want one with \"a\" then one with \"b\"", w.calls)
	}
}

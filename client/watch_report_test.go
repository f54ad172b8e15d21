package client

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hds-go/hds"
)

// What run -watch needs of Watch: the errors it retries reported
// (WithWatchErrors), WatchSince, WithRequestTimeout, WithDebounce(0).

// reports gathers what Watch reports.
type reports struct {
	mu  sync.Mutex
	got []reported
}

type reported struct {
	err   error
	retry time.Duration
}

func (r *reports) report(err error, retry time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, reported{err, retry})
}

// find returns the first report that matches, if any.
func (r *reports) find(match func(reported) bool) (reported, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.got {
		if match(x) {
			return x, true
		}
	}
	return reported{}, false
}

// A read retried is reported with its wait; a 422, which waits for the
// next change, with 0.
func TestWatchReportsReadErrors(t *testing.T) {
	f := newFakeServer(t, answer{status: 200, tag: `"a"`}, answer{status: 503}, answer{status: 200, tag: `"b"`},
		answer{status: 422})
	var r reports
	c := f.client()
	WithWatchErrors(r.report)(c)
	w := watch(t, c, "p", "c", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	f.send(1)
	eventually(t, "the call after the 503", func() bool { return w.value("v") == `"b"` })
	got, ok := r.find(func(x reported) bool { return true })
	var e *Error
	if !ok || !errors.As(got.err, &e) || e.Status != 503 || e.Method != "GET" || e.Path != "/api/v1/projects/p/collections/c/clusters/k" ||
		got.retry <= 0 {
		t.Fatalf("report %+v, want the 503 of GET K with a wait", got)
	}
	f.send(2)
	eventually(t, "the 422 reported", func() bool {
		_, ok := r.find(func(x reported) bool { return errors.As(x.err, &e) && e.Status == 422 })
		return ok
	})
	got, _ = r.find(func(x reported) bool { return errors.As(x.err, &e) && e.Status == 422 })
	if got.retry != 0 {
		t.Errorf("the 422 is reported with a wait of %s, want 0 (it waits for the next change)", got.retry)
	}
}

// A stream silent for the idle limit is reported as ErrSilent (naming
// the limit) and reconnected from the last event, so that the next change
// arrives; a stream whose keep-alives come is never given up. (The
// assertions of run's TestFeedSilentReconnects, whose feed is this one.)
func TestWatchSilentStreamReported(t *testing.T) {
	s := newTestServer(t, hds.WithEvents(50*time.Millisecond, 10))
	s.tree("web", "prod", "k")
	s.put("web", "prod", "k", "v", "STRING", `"1"`)
	var r reports
	c := s.client(WithWatchErrors(r.report))
	c.timing.idle = 500 * time.Millisecond
	w := watch(t, c, "web", "prod", "k")
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	// Keep-alives every 50 ms keep the stream: four idle limits pass
	// without a report.
	time.Sleep(2 * time.Second)
	if _, ok := r.find(func(reported) bool { return true }); ok {
		t.Fatalf("a stream with its keep-alives was given up: %v", r.got)
	}

	f := newFakeServer(t, answer{status: 200, tag: `"a"`}, answer{status: 200, tag: `"b"`})
	var fr reports
	fc := f.client()
	WithWatchErrors(fr.report)(fc)
	fc.timing.idle = 300 * time.Millisecond
	fw := watch(t, fc, "p", "c", "k")
	eventually(t, "the first call", func() bool { return fw.n() == 1 })
	f.send(7)
	eventually(t, "the silence reported", func() bool {
		_, ok := fr.find(func(x reported) bool { return errors.Is(x.err, ErrSilent) })
		return ok
	})
	got, _ := fr.find(func(x reported) bool { return errors.Is(x.err, ErrSilent) })
	var re *RequestError
	if !errors.As(got.err, &re) || re.Path != "/api/v1/projects/p/events" || re.Err.Error() != "not a byte from the change feed for 300ms" {
		t.Errorf("report %v, want the change feed silent for 300ms", got.err)
	}
	eventually(t, "the reconnection", func() bool { return f.feedCount() >= 2 })
	f.mu.Lock()
	if f.feeds[1] != "7" {
		t.Errorf("the reconnection's Last-Event-ID is %q, want \"7\"", f.feeds[1])
	}
	f.mu.Unlock()
}

// WatchSince follows the feed from after the revision and reads only
// after a change, calling fn with its revision.
func TestWatchSince(t *testing.T) {
	f := newFakeServer(t, answer{status: 200, tag: `"a"`})
	c := f.client()
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan *Cluster, 4)
	done := make(chan error, 1)
	go func() { done <- c.WatchSince(ctx, "p", "c", "k", 5, func(k *Cluster) { calls <- k }) }()
	defer func() {
		cancel()
		<-done
	}()
	eventually(t, "the feed", func() bool { return f.feedCount() == 1 })
	f.mu.Lock()
	if f.feeds[0] != "5" {
		t.Errorf("Last-Event-ID %q, want \"5\"", f.feeds[0])
	}
	f.mu.Unlock()
	time.Sleep(300 * time.Millisecond) // several debounces of fastTiming
	if n := f.readCount(); n != 0 {
		t.Fatalf("%d reads before any change, want none", n)
	}
	f.send(6)
	select {
	case k := <-calls:
		if k.Revision != 6 || k.Tag != `"a"` {
			t.Errorf("call with revision %d, tag %s; want 6, \"a\"", k.Revision, k.Tag)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no call after the change")
	}
}

// WithRequestTimeout bounds each read: one that gets no answer within it
// is reported as a time-out naming it, and retried.
func TestWatchRequestTimeout(t *testing.T) {
	f := newFakeServer(t, answer{hang: true}, answer{status: 200, tag: `"a"`})
	var r reports
	c := f.client()
	WithRequestTimeout(300 * time.Millisecond)(c)
	WithWatchErrors(r.report)(c)
	w := watch(t, c, "p", "c", "k")
	eventually(t, "the call after the hung read", func() bool { return w.n() == 1 })
	got, ok := r.find(func(reported) bool { return true })
	var re *RequestError
	var to interface{ Timeout() bool }
	if !ok || !errors.As(got.err, &re) || re.Answered || re.Err.Error() != "no answer within 300ms" ||
		!errors.As(got.err, &to) || !to.Timeout() || got.retry <= 0 {
		t.Errorf("report %+v, want a time-out of 300ms, retried", got)
	}
}

// WithDebounce(0) reads at once after a change; a negative one is
// ignored. WithRequestTimeout ignores what is not positive.
func TestWatchOptionsBounds(t *testing.T) {
	c, err := New("http://127.0.0.1:1", WithDebounce(0), WithRequestTimeout(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if c.timing.debounce != 0 || c.answerWithin() != defaultTiming.idle {
		t.Errorf("debounce %s, answerWithin %s; want 0 and %s", c.timing.debounce, c.answerWithin(), defaultTiming.idle)
	}
	c, _ = New("http://127.0.0.1:1", WithDebounce(-time.Second))
	if c.timing.debounce != defaultTiming.debounce {
		t.Errorf("WithDebounce(-1s): debounce %s, want the default", c.timing.debounce)
	}
}

// A change feed refused at the start ends Watch with the read's own
// 401, 403 or 404, which names the cluster, without calling fn.
func TestWatchRefusedAtStartNamesTheCluster(t *testing.T) {
	s := newTestServer(t)
	w := watch(t, s.client(), "nope", "c", "k")
	err := w.result(t)
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusNotFound || !strings.HasSuffix(e.Path, "/clusters/k") {
		t.Errorf("Watch returned %v, want the 404 of GET K", err)
	}
	if w.n() != 0 {
		t.Errorf("%d calls, want none", w.n())
	}
}

// feedHoldsEvent reports whether the goroutine of a client's change feed
// has read an event and waits to hand it to the watcher: parked in the
// select of feed.read, rather than reading the stream (IO wait).
func feedHoldsEvent() bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for ; n == len(buf); n = runtime.Stack(buf, true) {
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		head, frames, _ := strings.Cut(g, "\n")
		if strings.Contains(head, " [select") && strings.HasPrefix(frames, "github.com/hds-go/hds/client.(*feed).read(") {
			return true
		}
	}
	return false
}

// A read that a change overtook (the change came while it waited for its
// answer) calls nothing: the read after that change does, with the newer
// answer, so that run -watch restarts once, with the newest environment.
func TestWatchOvertakenReadCallsNothing(t *testing.T) {
	release, came := make(chan struct{}), make(chan struct{})
	f := newFakeServer(t, answer{status: 200, tag: `"a"`}, answer{status: 200, tag: `"b"`, wait: release, waiting: came},
		answer{status: 200, tag: `"c"`})
	w := watch(t, f.client(), "p", "c", "k")
	// The held read is let go before the watch stops and the server
	// closes, should the test fail while it waits.
	letGo := sync.OnceFunc(func() { close(release) })
	t.Cleanup(letGo)
	eventually(t, "the first call", func() bool { return w.n() == 1 })
	f.send(1)
	select {
	case <-came:
	case <-time.After(30 * time.Second):
		t.Fatal("no read after the change")
	}
	go f.send(2) // taken by the client's feed while the read waits
	// The read ends only once the feed holds the change for the watcher,
	// whatever the machine's load (a sleep of 200 ms assumed it did).
	eventually(t, "the feed holding the second change", feedHoldsEvent)
	letGo()
	eventually(t, "the call after the second change", func() bool { return w.value("v") == `"c"` })
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.calls) != 2 || w.calls[1].Revision != 2 {
		t.Errorf("%d calls (the last of revision %d), want 2: \"a\" then \"c\" of revision 2, never the overtaken \"b\"", len(w.calls), w.calls[len(w.calls)-1].Revision)
	}
}

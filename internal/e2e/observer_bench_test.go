package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hds-go/hds"
)

// benchObserver counts what a Prometheus observer counts (requests by
// method, route and code; durations in buckets by route; in-flight),
// with atomics behind a read-locked map, so that the benchmark measures
// what the library adds to a request: the facts queued, not a metrics
// library.
type benchObserver struct {
	mu       sync.RWMutex
	series   map[string]*atomic.Int64
	inFlight atomic.Int64
}

// bucketBounds are Prometheus's default buckets, in seconds.
var bucketBounds = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

func (o *benchObserver) add(key string) {
	o.mu.RLock()
	c := o.series[key]
	o.mu.RUnlock()
	if c == nil {
		o.mu.Lock()
		if c = o.series[key]; c == nil {
			c = new(atomic.Int64)
			o.series[key] = c
		}
		o.mu.Unlock()
	}
	c.Add(1)
}

func (o *benchObserver) observer() hds.Observer {
	o.series = map[string]*atomic.Int64{}
	return hds.Observer{
		RequestStarted: func(string) { o.inFlight.Add(1) },
		RequestFinished: func(method, route string, status int, d time.Duration) {
			o.inFlight.Add(-1)
			o.add(method + " " + route + " " + strconv.Itoa(status))
			for i, le := range bucketBounds {
				if d.Seconds() <= le {
					o.add(route + " le " + strconv.Itoa(i))
					break
				}
			}
		},
		StoreError:  func(kind string) { o.add("store " + kind) },
		LoginFailed: func() { o.add("login") },
	}
}

// BenchmarkObserver measures the cost of an observer (issue 43): a
// single GET of a record and a list of 100 through the bare handler
// (kind=bare), through hds without an observer (kind=hds) and with one
// (kind=observed), interleaved in one run so that a loaded machine
// weighs on all three alike. Compare with
// benchstat -col /kind.
func BenchmarkObserver(b *testing.B) {
	plain := newBenchFixture(b, memoryKind, 0)
	var counts benchObserver
	observed := newBenchFixture(b, memoryKind, 0, hds.WithObserver(counts.observer()))
	ops := []struct{ name, path string }{
		{"GetRecord", "/api/v1/projects/p/collections/c/clusters/k/records/rec-042"},
		{"List100", "/api/v1/projects/p/collections/c/clusters/k/records"},
	}
	for _, op := range ops {
		var out struct {
			Data json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(plain.do(http.MethodGet, op.path, "").Body.Bytes(), &out)
		bare := baselineHandler(typedPayload(b, out.Data))
		b.Run(op.name+"/kind=bare", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				bare.ServeHTTP(w, plain.request(http.MethodGet, "/x", ""))
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
		for _, v := range []struct {
			kind string
			f    *benchFixture
		}{{"hds", plain}, {"observed", observed}} {
			b.Run(op.name+"/kind="+v.kind, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					v.f.mustDo(b, http.MethodGet, op.path, "", 200)
				}
			})
		}
	}
	if n := counts.inFlight.Load(); n < 0 {
		b.Fatalf("in flight %d", n)
	}
}

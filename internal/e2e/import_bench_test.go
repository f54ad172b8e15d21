package e2e_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// headWriter is a ResponseWriter that keeps the status and the first
// bytes of the body and drops the rest, so that a big answer does not
// grow the heap the benchmark samples as a recorder's would.
type headWriter struct {
	h      http.Header
	status int
	head   []byte
}

func (w *headWriter) Header() http.Header { return w.h }

func (w *headWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *headWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if n := min(len(b), 500-len(w.head)); n > 0 {
		w.head = append(w.head, b[:n]...)
	}
	return len(b), nil
}

// mustSend is mustDo without keeping the answer.
func (f *benchFixture) mustSend(b testing.TB, method, path, body string, want int) {
	w := &headWriter{h: http.Header{}}
	f.h.ServeHTTP(w, f.request(method, path, body))
	if w.status != want {
		b.Fatalf("%s %s: %d %s", method, path, w.status, w.head)
	}
}

// BenchmarkImportBig sends POST P/import of a document of 150,000 small
// records (3 clusters of 50,000) and two of 1 MiB, about 15 MB, into a
// new project, through the full handler, and reports the peak growth of
// the heap over what it held before (heap-MB), that growth over the
// body's size (x-body), and the bytes allocated per body byte
// (alloc-x-body):
//
//	go test -run '^$' -bench BenchmarkImportBig -benchtime 1x .
func BenchmarkImportBig(b *testing.B) {
	body := bigImportDoc(3, 50_000, 2, 1<<20)
	for _, kind := range storeKinds {
		b.Run(kind.name, func(b *testing.B) {
			f := newBenchFixture(b, kind, 0)
			i := 0
			benchBigBody(b, body, func() {
				i++
				project := fmt.Sprint("imp", i)
				f.mustDo(b, http.MethodPost, "/api/v1/projects/"+project, "", http.StatusCreated)
			}, func() {
				f.mustSend(b, http.MethodPost, "/api/v1/projects/"+fmt.Sprint("imp", i)+"/import", body, http.StatusOK)
			})
		})
	}
}

// BenchmarkBatchBig sends POST P/batch of 1,000 creates of 15 KiB
// values (about 15 MB) into a new cluster, and reports what
// BenchmarkImportBig does:
//
//	go test -run '^$' -bench BenchmarkBatchBig -benchtime 1x .
func BenchmarkBatchBig(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"create_parents":true,"operations":[`)
	for j := range 1000 {
		if j > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"op":"create","collection":"c","cluster":"big","record":"r%04d","type":"STRING","value":"%04d%s"}`,
			j, j, strings.Repeat("v", 15<<10-4))
	}
	sb.WriteString(`]}`)
	body := sb.String()
	for _, kind := range storeKinds {
		b.Run(kind.name, func(b *testing.B) {
			f := newBenchFixture(b, kind, 0)
			i := 0
			benchBigBody(b, body, func() {
				i++
				f.mustDo(b, http.MethodPost, "/api/v1/projects/"+fmt.Sprint("bat", i), "", http.StatusCreated)
			}, func() {
				f.mustSend(b, http.MethodPost, "/api/v1/projects/"+fmt.Sprint("bat", i)+"/batch", body, http.StatusOK)
			})
		})
	}
}

// benchBigBody times send after setup, each round, and reports the peak
// heap growth during send (heap-MB, x-body), what it allocated per body
// byte (alloc-x-body) and what the heap still holds after it, collected
// (kept-x-body: the memory store's new records and audit entries). The
// heap is sampled as heapGrowth does, without a memory limit.
func benchBigBody(b *testing.B, body string, setup, send func()) {
	var peak, alloc uint64
	var kept int64
	rounds := 0
	for b.Loop() {
		b.StopTimer()
		setup()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		growth := heapGrowth(-1, send)
		b.StopTimer()
		runtime.ReadMemStats(&after)
		peak = max(peak, growth)
		alloc += after.TotalAlloc - before.TotalAlloc
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = max(kept, int64(after.HeapAlloc)-int64(before.HeapAlloc))
		rounds++
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
	b.ReportMetric(float64(peak)/float64(len(body)), "x-body")
	b.ReportMetric(float64(alloc)/float64(rounds)/float64(len(body)), "alloc-x-body")
	b.ReportMetric(float64(kept)/float64(len(body)), "kept-x-body")
}

package e2e_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkImportBig sends POST P/import of a document of 150,000 records
// (3 clusters of 50,000, about 13 MB) into a new project, through the full
// handler, and reports the peak growth of the heap over what it held
// before (heap-MB) and that growth over the body's size (x-body):
//
//	go test -run '^$' -bench BenchmarkImportBig -benchtime 1x .
func BenchmarkImportBig(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"format":"hds/1","collections":{"c":{"clusters":{`)
	for k := range 3 {
		if k > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"k%d":{"records":{`, k)
		for i := range 50_000 {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `"record-%06d":{"type":"STRING","value":"%s-%06d"}`, i, strings.Repeat("v", 40), i)
		}
		sb.WriteString(`}}`)
	}
	sb.WriteString(`}}}}`)
	body := sb.String()
	for _, kind := range storeKinds {
		b.Run(kind.name, func(b *testing.B) {
			f := newBenchFixture(b, kind, 0)
			i := 0
			var peak uint64
			for b.Loop() {
				b.StopTimer()
				i++
				project := fmt.Sprint("imp", i)
				f.mustDo(b, http.MethodPost, "/api/v1/projects/"+project, "", http.StatusCreated)
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				done, sampled := make(chan struct{}), make(chan struct{})
				var top atomic.Uint64
				go func() {
					defer close(sampled)
					var m runtime.MemStats
					for {
						runtime.ReadMemStats(&m)
						top.Store(max(top.Load(), m.HeapInuse))
						select {
						case <-done:
							return
						case <-time.After(5 * time.Millisecond):
						}
					}
				}()
				b.StartTimer()
				f.mustDo(b, http.MethodPost, "/api/v1/projects/"+project+"/import", body, http.StatusOK)
				b.StopTimer()
				close(done)
				<-sampled
				if t := top.Load(); t > before.HeapInuse {
					peak = max(peak, t-before.HeapInuse)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
			b.ReportMetric(float64(peak)/float64(len(body)), "x-body")
		})
	}
}

package memory_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// BenchmarkMillionRecords measures the heap the memory store needs for
// 1,000,000 small records (a 10-byte name and an INTEGER value), reported
// as MiB-heap. Run: go test -run XXX -bench MillionRecords -benchtime 1x ./store/memory/
func BenchmarkMillionRecords(b *testing.B) {
	const n = 1_000_000
	ctx := context.Background()
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := memory.New(memory.WithQuotas(store.NoQuotas)) // no record quota
		p := store.Path{Project: "p", Collection: "c", Cluster: "k"}
		for _, err := range []error{
			func() error { _, err := s.CreateProject(ctx, p); return err }(),
			func() error { _, err := s.CreateCollection(ctx, p); return err }(),
			func() error { _, err := s.CreateCluster(ctx, p); return err }(),
		} {
			if err != nil {
				b.Fatal(err)
			}
		}
		for i := range n {
			p.Record = fmt.Sprintf("rec-%06d", i) // 10 bytes
			if _, err := s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: strconv.AppendInt(nil, int64(i), 10)}, store.Write{}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-heap")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/record")
		runtime.KeepAlive(s)
	}
}

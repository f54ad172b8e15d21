package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/hds-go/hds/store"
)

// BenchmarkFootprint measures the heap the store holds for 1,000,000
// small records (a 10-byte name, a 20-byte STRING value) with
// runtime.MemStats after GC, and reports each part apart: B/record (the
// records and every index), B/audit-entry (the entry each create and
// update writes), B/history-entry (a kept version, after one update of
// every record with MaxVersions 1). Run:
//
//	go test -run XXX -bench Footprint -benchtime 1x ./store/memory/
func BenchmarkFootprint(b *testing.B) {
	const n = 1_000_000
	ctx := context.Background()
	for b.Loop() {
		base := liveHeap()
		s := New(WithQuotas(store.NoQuotas))
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
		apply := func(op func(i int) store.Op) {
			for from := 0; from < n; from += 1000 {
				batch := store.Batch{Write: store.Write{MaxVersions: 1}}
				for i := from; i < from+1000; i++ {
					batch.Ops = append(batch.Ops, op(i))
				}
				if _, err := s.Apply(ctx, store.Path{Project: "p"}, batch); err != nil {
					b.Fatal(err)
				}
			}
		}
		name := func(i int) string { return fmt.Sprintf("rec-%06d", i) } // 10 bytes
		apply(func(i int) store.Op {
			return store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: name(i),
				New: &store.Record{Type: store.String, Value: json.RawMessage(fmt.Sprintf(`"va-%015d"`, i))}} // 20 bytes
		})
		pr := s.projects["p"]
		withAudit := liveHeap()
		pr.log = nil // what the records alone hold
		records := liveHeap()
		b.ReportMetric(float64(records-base)/n, "B/record")
		b.ReportMetric(float64(withAudit-records)/n, "B/audit-entry")
		apply(func(i int) store.Op {
			return store.Op{Kind: store.OpUpdate, Collection: "c", Cluster: "k", Record: name(i),
				Update: func(r *store.Record) error {
					r.Value = json.RawMessage(fmt.Sprintf(`"vb-%015d"`, i))
					return nil
				}}
		})
		pr.log = nil
		b.ReportMetric(float64(liveHeap()-records)/n, "B/history-entry")
		runtime.KeepAlive(s)
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

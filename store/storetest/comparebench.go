package storetest

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/hds-go/hds/store"
)

// BenchmarkCompare measures Comparer.CompareRecords on s, an empty store:
// two collections of 10 clusters of 1,000 records each (10,000 records a
// side), of which every tenth record differs, every twentieth is on one
// side only; one op compares the two collections whole. Stores call it
// from a BenchmarkDiff of their own.
func BenchmarkCompare(b *testing.B, s store.Store) {
	ctx := context.Background()
	caller := store.Caller{UserID: owner}
	p := store.Path{Need: store.RightRead, Caller: caller, Project: projName}
	if _, err := s.CreateProject(ctx, p); err != nil {
		b.Fatal(err)
	}
	const clusters, records = 10, 1000
	for k := range clusters {
		cluster := "k" + strconv.Itoa(k)
		for _, side := range []string{"a", "b"} {
			batch := store.Batch{CreateParents: true}
			for i := range records {
				v := i
				switch {
				case side == "b" && i%20 == 0:
					continue // only in a
				case side == "a" && i%20 == 10:
					continue // only in b
				case side == "b" && i%10 == 5:
					v = -i // changed
				}
				batch.Ops = append(batch.Ops, store.Op{Kind: store.OpCreate, Collection: side, Cluster: cluster,
					Record: "record-" + strconv.Itoa(i), New: &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(v))}})
			}
			if _, err := s.Apply(ctx, p, batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	c, ok := s.(store.Comparer)
	if !ok {
		b.Fatal("the store does not implement store.Comparer")
	}
	b.ReportAllocs()
	for b.Loop() {
		pairs, differ := 0, 0
		err := c.CompareRecords(ctx, p, store.Side{Collection: "a"}, store.Side{Collection: "b"}, func(pr store.Pair) error {
			pairs++
			if pr.From == nil || pr.To == nil || string(pr.From.Value) != string(pr.To.Value) {
				differ++
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if want := 1 + clusters*records; pairs != want {
			b.Fatalf("%d pairs, want %d", pairs, want)
		}
		if want := clusters * records / 5; differ != want+1 { // the revision's pair counts too
			b.Fatalf("%d differ, want %d", differ, want+1)
		}
	}
	b.ReportMetric(float64(2*clusters*records), "records/op")
}

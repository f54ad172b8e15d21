package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// BenchmarkApply1000 writes a batch of 1,000 new records (half INTEGER,
// half STRING, the largest batch the API takes) into a new cluster: what
// the indexes that serve the lists cost a write.
//
//	go test -run '^$' -bench BenchmarkApply1000 -benchtime 20x ./store/sqlite/
func BenchmarkApply1000(b *testing.B) {
	s := open(b, sqlite.WithTimeout(time.Minute))
	s.SetQuotas(store.NoQuotas)
	ctx := context.Background()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "bench"}, Project: "p"}
	if _, err := s.CreateProject(ctx, p); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		n++
		cluster := "k" + strconv.Itoa(n)
		batch := store.Batch{CreateParents: true}
		for i := range 1000 {
			rec := &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(i))}
			if i%2 == 1 {
				rec = &store.Record{Type: store.String, Value: json.RawMessage(fmt.Sprintf("%q", "text "+strconv.Itoa(i)))}
			}
			batch.Ops = append(batch.Ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: cluster, Record: "r" + strconv.Itoa(i), New: rec})
		}
		if _, err := s.Apply(ctx, p, batch); err != nil {
			b.Fatal(err)
		}
	}
}

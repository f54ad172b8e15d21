package postgres_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// BenchmarkApplyUpserts applies a batch of 1000 upserts
// (docs/api.md#batch-export-and-import) in one transaction: 500 update
// existing records (keeping history), 500 create new ones, in a cluster of
// its own per iteration; set-based (Apply) and, for comparison, per op
// (ApplyPerOp).
func BenchmarkApplyUpserts(b *testing.B) {
	for _, path := range []struct {
		name  string
		apply func(*postgres.Store, context.Context, store.Path, store.Batch) ([]store.OpResult, error)
	}{{"set", (*postgres.Store).Apply}, {"perop", (*postgres.Store).ApplyPerOp}} {
		b.Run(path.name, func(b *testing.B) { benchmarkApplyUpserts(b, path.apply) })
	}
}

func benchmarkApplyUpserts(b *testing.B, apply func(*postgres.Store, context.Context, store.Path, store.Batch) ([]store.OpResult, error)) {
	ctx := context.Background()
	s := postgres.New(pgtest.New(b))
	caller := store.Caller{UserID: "bench"}
	if _, err := s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: caller, Project: "p"}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.CreateCollection(ctx, store.Path{Need: store.RightRead, Caller: caller, Project: "p", Collection: "c"}); err != nil {
		b.Fatal(err)
	}
	const n = 1000
	upsert := func(cluster string, i int) store.Op {
		v := json.RawMessage(strconv.Itoa(i))
		return store.Op{Kind: store.OpUpsert, Collection: "c", Cluster: cluster, Record: "r" + strconv.Itoa(i),
			New: &store.Record{Type: store.Integer, Value: v},
			Update: func(r *store.Record) error {
				r.Type, r.Value = store.Integer, v
				return nil
			}}
	}
	w := store.Write{MaxVersions: store.DefaultMaxVersions}
	p := store.Path{Need: store.RightRead, Caller: caller, Project: "p"}
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		cluster := "k" + strconv.Itoa(i)
		seed := store.Batch{Write: w, CreateParents: true}
		for j := 0; j < n; j += 2 {
			seed.Ops = append(seed.Ops, upsert(cluster, j))
		}
		if _, err := s.Apply(ctx, p, seed); err != nil {
			b.Fatal(err)
		}
		batch := store.Batch{Write: w}
		for j := range n {
			batch.Ops = append(batch.Ops, upsert(cluster, j+n))
			batch.Ops[j].Record = "r" + strconv.Itoa(j)
		}
		b.StartTimer()
		res, err := apply(s, ctx, p, batch)
		if err != nil {
			b.Fatal(err)
		}
		if !res[1].Created || res[0].Created {
			b.Fatal("expected updates of the even records and creates of the odd ones")
		}
	}
}

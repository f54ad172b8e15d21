package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// benchQueries are the lists of docs/api.md#list-queries the list
// benchmarks read: every sort both ways, each filter alone and all at once,
// and the lists of issue 29.
var benchQueries = []struct {
	name string
	q    store.RecordQuery
}{
	{"name", store.RecordQuery{}},
	{"name-desc", store.RecordQuery{ListQuery: store.ListQuery{Desc: true}}},
	{"id", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortID}}},
	{"id-desc", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortID, Desc: true}}},
	{"created", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortCreatedAt}}},
	{"created-desc", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortCreatedAt, Desc: true}}},
	{"updated", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortUpdatedAt}}},
	{"updated-desc", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortUpdatedAt, Desc: true}}},
	{"value", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortValue}}},
	{"value-desc", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortValue, Desc: true}}},
	{"type", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortType}}},
	{"type-desc", store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortType, Desc: true}}},
	{"filter-type", store.RecordQuery{Type: store.Integer}},
	{"filter-type-value", store.RecordQuery{Type: store.Integer, ListQuery: store.ListQuery{SortBy: store.SortValue}}},
	{"filter-search", store.RecordQuery{ListQuery: store.ListQuery{Search: "rec-05"}}},
	{"filter-search-value", store.RecordQuery{ListQuery: store.ListQuery{Search: "42", SortBy: store.SortValue}}},
	{"filter-contains", store.RecordQuery{ValueContains: "5"}},
	{"filter-value", store.RecordQuery{Value: "4242", HasValue: true}},
	{"filter-value-common", store.RecordQuery{Value: "true", HasValue: true, ListQuery: store.ListQuery{SortBy: store.SortCreatedAt}}},
	{"filter-range", store.RecordQuery{Type: store.Integer, Min: intKey(10000), Max: intKey(60000)}},
	{"filter-range-value-desc", store.RecordQuery{Type: store.Integer, Min: intKey(50000),
		ListQuery: store.ListQuery{SortBy: store.SortValue, Desc: true}}},
	{"filter-all", store.RecordQuery{Type: store.Integer, ValueContains: "5",
		ListQuery: store.ListQuery{Search: "rec-0", SortBy: store.SortValue}}},
}

func intKey(n int64) *store.ValueKey {
	k := store.KeyOf(store.Integer, json.RawMessage(fmt.Sprint(n)))
	return &k
}

// benchValue is the i-th value of a mix of types: integers, floats,
// strings, booleans (as the handler benchmarks fill their big cluster).
func benchValue(i int) (store.DataType, json.RawMessage) {
	switch i % 4 {
	case 0:
		return store.Integer, json.RawMessage(fmt.Sprint(i * 7919 % 100003))
	case 1:
		return store.Float, json.RawMessage(fmt.Sprintf("%d.5", i%1000))
	case 2:
		return store.String, json.RawMessage(fmt.Sprintf(`"value-%d-alpha"`, i))
	}
	return store.Boolean, json.RawMessage("true")
}

// benchCluster returns a store with n records rec-000000... in p/c/k,
// created 1,000 to a batch.
func benchCluster(b *testing.B, n int) (*memory.Store, store.Path) {
	b.Helper()
	ctx := context.Background()
	s := memory.New(memory.WithQuotas(store.NoQuotas))
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
	for from := 0; from < n; from += 1000 {
		batch := store.Batch{}
		for i := from; i < min(from+1000, n); i++ {
			t, v := benchValue(i)
			batch.Ops = append(batch.Ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k",
				Record: fmt.Sprintf("rec-%06d", i), New: &store.Record{Type: t, Value: v}})
		}
		if _, err := s.Apply(ctx, store.Path{Project: "p"}, batch); err != nil {
			b.Fatal(err)
		}
	}
	return s, p
}

// BenchmarkBigClusterLists lists 100 records out of a 100,000-record
// cluster (benchQueries) through the store: the first page counted
// (count), with count=false (nocount), and the 50th page by cursor with
// count=false (cursor). Compare runs with benchstat:
//
//	go test -run XXX -bench BigClusterLists -count 6 ./store/memory/ > new.txt
func BenchmarkBigClusterLists(b *testing.B) {
	benchLists(b, 100_000, 50)
}

// BenchmarkSmallClusterLists is BenchmarkBigClusterLists on a cluster of
// 100 records (the whole list on one page: no cursor).
func BenchmarkSmallClusterLists(b *testing.B) {
	benchLists(b, 100, 1)
}

func benchLists(b *testing.B, n, deepPage int) {
	s, p := benchCluster(b, n)
	ctx := context.Background()
	for _, bq := range benchQueries {
		q := bq.q
		q.Limit = store.DefaultLimit
		if q.SortBy == "" {
			q.SortBy = store.SortName
		}
		variants := []struct {
			name string
			q    store.RecordQuery
		}{{"count", q}}
		q.NoCount = true
		variants = append(variants, struct {
			name string
			q    store.RecordQuery
		}{"nocount", q})
		if deepPage > 1 {
			deep, ok := q, true
			for range deepPage - 1 {
				recs, _, err := s.FindRecords(ctx, p, deep)
				if err != nil {
					b.Fatal(err)
				}
				if ok = len(recs) == deep.Limit; !ok {
					break // fewer pages than that
				}
				pos := store.RecordAt(deep.SortBy, recs[len(recs)-1])
				deep.After = &pos
			}
			if ok {
				variants = append(variants, struct {
					name string
					q    store.RecordQuery
				}{"cursor", deep})
			}
		}
		for _, v := range variants {
			b.Run(bq.name+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := s.FindRecords(ctx, p, v.q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

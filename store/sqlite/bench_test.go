package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/sqlite"
)

// benchRecords is the size of the cluster the list benchmark reads.
const benchRecords = 100_000

// BenchmarkList100 reads a filtered, sorted page of 100 from a cluster of
// 100,000 records, on SQLite and on PostgreSQL (when
// HDS_TEST_DATABASE_URL names a server) holding the same data: half the
// records INTEGER, half STRING. Each query counts its matches, as a list
// does by default.
//
//	go test -run '^$' -bench BenchmarkList100 -benchtime 200x ./store/sqlite/
func BenchmarkList100(b *testing.B) {
	from := json.RawMessage("20000")
	min := store.KeyOf(store.Integer, from)
	queries := []struct {
		name string
		q    store.RecordQuery
	}{
		{"type+range/by-value", store.RecordQuery{ListQuery: store.ListQuery{Limit: 100, SortBy: store.SortValue}, Type: store.Integer, Min: &min}},
		{"type/by-updated-desc", store.RecordQuery{ListQuery: store.ListQuery{Limit: 100, SortBy: store.SortUpdatedAt, Desc: true}, Type: store.String}},
		{"search/by-name", store.RecordQuery{ListQuery: store.ListQuery{Limit: 100, SortBy: store.SortName, Search: "r9"}}},
		{"value-contains/by-created", store.RecordQuery{ListQuery: store.ListQuery{Limit: 100, SortBy: store.SortCreatedAt}, ValueContains: "text 4"}},
	}
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"sqlite", func(b *testing.B) store.Store { return open(b, sqlite.WithTimeout(time.Minute)) }},
		{"postgres", func(b *testing.B) store.Store {
			if os.Getenv(pgtest.EnvURL) == "" {
				b.Skip(pgtest.EnvURL + " is not set")
			}
			return postgres.New(pgtest.New(b), postgres.WithTimeout(time.Minute))
		}},
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			p := fillCluster(b, s)
			for _, q := range queries {
				b.Run(q.name, func(b *testing.B) {
					for b.Loop() {
						recs, total, err := s.FindRecords(context.Background(), p, q.q)
						if err != nil || len(recs) != 100 || total < 100 {
							b.Fatalf("%d records of %d: %v", len(recs), total, err)
						}
					}
				})
			}
		})
	}
}

// fillCluster writes the benchmark's cluster and returns its path.
func fillCluster(b *testing.B, s store.Store) store.Path {
	b.Helper()
	ctx := context.Background()
	if qs, ok := s.(store.QuotaSetter); ok {
		qs.SetQuotas(store.NoQuotas)
	}
	p := store.Path{Caller: store.Caller{UserID: "bench"}, Project: "p", Collection: "c", Cluster: "k"}
	if _, err := s.CreateProject(ctx, p); err != nil {
		b.Fatal(err)
	}
	const chunk = 5000
	for start := 0; start < benchRecords; start += chunk {
		batch := store.Batch{CreateParents: true}
		for i := start; i < start+chunk; i++ {
			rec := &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(i))}
			if i%2 == 1 {
				rec = &store.Record{Type: store.String, Value: json.RawMessage(fmt.Sprintf("%q", "text "+strconv.Itoa(i)))}
			}
			batch.Ops = append(batch.Ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: "r" + strconv.Itoa(i), New: rec})
		}
		if _, err := s.Apply(ctx, p, batch); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

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

// BenchmarkList100 reads a counted, filtered, sorted page of 100 from a
// cluster of 100,000 records, on SQLite and on PostgreSQL (when
// HDS_TEST_DATABASE_URL names a server) holding the same data: half the
// records INTEGER, half STRING, written in batches of 5,000 (so that the
// records of a batch tie on created_at and updated_at). Every list of
// docs/api.md#list-queries: each sort both ways, each filter, and
// cursors deep in the list.
//
//	go test -run '^$' -bench BenchmarkList100 -benchtime 30x ./store/sqlite/
func BenchmarkList100(b *testing.B) {
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
			for _, q := range listQueries() {
				b.Run(q.name, func(b *testing.B) {
					rq := q.q
					if q.cursor {
						rq = cursorAt(b, s, p, rq)
					}
					for b.Loop() {
						recs, total, err := s.FindRecords(context.Background(), p, rq)
						if err != nil || len(recs) != 100 || total < 100 {
							b.Fatalf("%d records of %d: %v", len(recs), total, err)
						}
					}
				})
			}
		})
	}
}

// benchQuery is a list BenchmarkList100 reads; with cursor, the page
// after the 5,000th match.
type benchQuery struct {
	name   string
	q      store.RecordQuery
	cursor bool
}

// listQueries are the lists BenchmarkList100 reads.
func listQueries() []benchQuery {
	from := json.RawMessage("20000")
	min := store.KeyOf(store.Integer, from)
	page := func(by store.SortField, desc bool) store.ListQuery {
		return store.ListQuery{Limit: 100, SortBy: by, Desc: desc}
	}
	sorts := []struct {
		name string
		by   store.SortField
	}{{"name", store.SortName}, {"id", store.SortID}, {"created", store.SortCreatedAt},
		{"updated", store.SortUpdatedAt}, {"value", store.SortValue}, {"type", store.SortType}}
	var qs []benchQuery
	for _, desc := range []bool{false, true} {
		dir := ""
		if desc {
			dir = "-desc"
		}
		for _, by := range sorts {
			qs = append(qs,
				benchQuery{name: "all/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc)}},
				benchQuery{name: "type/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc), Type: store.String}},
				benchQuery{name: "search/by-" + by.name + dir, q: store.RecordQuery{ListQuery: withSearch(page(by.by, desc), "r9")}},
				benchQuery{name: "search3/by-" + by.name + dir, q: store.RecordQuery{ListQuery: withSearch(page(by.by, desc), "r99")}},
				benchQuery{name: "value-contains/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc), ValueContains: "text 4"}},
				benchQuery{name: "value-contains2/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc), ValueContains: "77"}},
				benchQuery{name: "type+range/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc), Type: store.Integer, Min: &min}},
			)
		}
		qs = append(qs,
			benchQuery{name: "all/by-name" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortName, desc)}, cursor: true},
			benchQuery{name: "all/by-value" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortValue, desc)}, cursor: true},
			benchQuery{name: "type/by-updated" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortUpdatedAt, desc), Type: store.String}, cursor: true},
			benchQuery{name: "search/by-created" + dir + "/cursor", q: store.RecordQuery{ListQuery: withSearch(page(store.SortCreatedAt, desc), "r9")}, cursor: true},
			benchQuery{name: "value-contains/by-type" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortType, desc), ValueContains: "text"}, cursor: true},
			benchQuery{name: "type+range/by-value" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortValue, desc), Type: store.Integer, Min: &min}, cursor: true},
		)
	}
	return qs
}

// withSearch is q with the search s.
func withSearch(q store.ListQuery, s string) store.ListQuery {
	q.Search = s
	return q
}

// cursorAt is q resuming after its 5,000th match.
func cursorAt(b *testing.B, s store.Store, p store.Path, q store.RecordQuery) store.RecordQuery {
	b.Helper()
	at := q
	at.Limit, at.Offset, at.NoCount = 1, 4999, true
	recs, _, err := s.FindRecords(context.Background(), p, at)
	if err != nil || len(recs) != 1 {
		b.Fatalf("the 5,000th match: %d records: %v", len(recs), err)
	}
	pos := store.RecordAt(q.SortBy, recs[0])
	q.After = &pos
	return q
}

// fillCluster writes the benchmark's cluster and returns its path.
func fillCluster(b testing.TB, s store.Store) store.Path {
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

// BenchmarkApply1000 writes a batch of 1,000 new records (half INTEGER,
// half STRING, the largest batch the API takes) into a new cluster: what
// the indexes that serve the lists cost a write.
//
//	go test -run '^$' -bench BenchmarkApply1000 -benchtime 20x ./store/sqlite/
func BenchmarkApply1000(b *testing.B) {
	s := open(b, sqlite.WithTimeout(time.Minute))
	s.SetQuotas(store.NoQuotas)
	ctx := context.Background()
	p := store.Path{Caller: store.Caller{UserID: "bench"}, Project: "p"}
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

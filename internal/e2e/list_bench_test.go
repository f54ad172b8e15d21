package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/sqlite"
)

// listBenchRecords is the size of the cluster the list benchmark reads.
const listBenchRecords = 100_000

// BenchmarkList100 reads a counted, filtered, sorted page of 100 from a
// cluster of 100,000 records, on SQLite and on PostgreSQL (when
// HDS_TEST_DATABASE_URL names a server) holding the same data: half the
// records INTEGER, half STRING, written in batches of 5,000 (so that the
// records of a batch tie on created_at and updated_at). Every list of
// docs/api.md#list-queries: each sort both ways, each filter, and
// cursors deep in the list.
//
// It lives in the test module (internal/e2e) rather than in store/sqlite
// so that a host importing store/sqlite does not pay for PostgreSQL's
// modules in its go.sum.
//
//	go -C internal/e2e test -run '^$' -bench BenchmarkList100 -benchtime 30x .
func BenchmarkList100(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"sqlite", func(b *testing.B) store.Store {
			s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "hds.db"), sqlite.WithTimeout(time.Minute))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
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
			p := fillListCluster(b, s)
			for _, q := range listBenchQueries() {
				b.Run(q.name, func(b *testing.B) {
					rq := q.q
					if q.cursor {
						rq = cursorAfter(b, s, p, rq)
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

// listBenchQuery is a list BenchmarkList100 reads; with cursor, the page
// after the 5,000th match.
type listBenchQuery struct {
	name   string
	q      store.RecordQuery
	cursor bool
}

// listBenchQueries are the lists BenchmarkList100 reads.
func listBenchQueries() []listBenchQuery {
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
	var qs []listBenchQuery
	for _, desc := range []bool{false, true} {
		dir := ""
		if desc {
			dir = "-desc"
		}
		for _, by := range sorts {
			qs = append(qs,
				listBenchQuery{name: "all/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc)}},
				listBenchQuery{name: "type/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc), Type: store.String}},
				listBenchQuery{name: "search/by-" + by.name + dir, q: store.RecordQuery{ListQuery: withSearchText(page(by.by, desc), "r9")}},
				listBenchQuery{name: "search3/by-" + by.name + dir, q: store.RecordQuery{ListQuery: withSearchText(page(by.by, desc), "r99")}},
				listBenchQuery{name: "value-contains/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc), ValueContains: "text 4"}},
				listBenchQuery{name: "value-contains2/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc), ValueContains: "77"}},
				listBenchQuery{name: "type+range/by-" + by.name + dir, q: store.RecordQuery{ListQuery: page(by.by, desc), Type: store.Integer, Min: &min}},
			)
		}
		qs = append(qs,
			listBenchQuery{name: "all/by-name" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortName, desc)}, cursor: true},
			listBenchQuery{name: "all/by-value" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortValue, desc)}, cursor: true},
			listBenchQuery{name: "type/by-updated" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortUpdatedAt, desc), Type: store.String}, cursor: true},
			listBenchQuery{name: "search/by-created" + dir + "/cursor", q: store.RecordQuery{ListQuery: withSearchText(page(store.SortCreatedAt, desc), "r9")}, cursor: true},
			listBenchQuery{name: "value-contains/by-type" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortType, desc), ValueContains: "text"}, cursor: true},
			listBenchQuery{name: "type+range/by-value" + dir + "/cursor", q: store.RecordQuery{ListQuery: page(store.SortValue, desc), Type: store.Integer, Min: &min}, cursor: true},
		)
	}
	return qs
}

// withSearchText is q with the search s.
func withSearchText(q store.ListQuery, s string) store.ListQuery {
	q.Search = s
	return q
}

// cursorAfter is q resuming after its 5,000th match.
func cursorAfter(b *testing.B, s store.Store, p store.Path, q store.RecordQuery) store.RecordQuery {
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

// fillListCluster writes the benchmark's cluster and returns its path.
func fillListCluster(b testing.TB, s store.Store) store.Path {
	b.Helper()
	ctx := context.Background()
	if qs, ok := s.(store.QuotaSetter); ok {
		qs.SetQuotas(store.NoQuotas)
	}
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "bench"}, Project: "p", Collection: "c", Cluster: "k"}
	if _, err := s.CreateProject(ctx, p); err != nil {
		b.Fatal(err)
	}
	const chunk = 5000
	for start := 0; start < listBenchRecords; start += chunk {
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

package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// countingStore counts the store's reads that resolving may make.
type countingStore struct {
	store.Store
	// Access and AuditLog are the wrapped store's: without an audit log,
	// hds serves no reveal (docs/decisions.md).
	store.Access
	store.AuditLog
	calls atomic.Int64
}

// newCountingStore wraps s, with its members and its audit log.
func newCountingStore(s store.Store) *countingStore {
	return &countingStore{Store: s, Access: s.(store.Access), AuditLog: s.(store.AuditLog)}
}

func (s *countingStore) FindCluster(ctx context.Context, p store.Path, records bool) (*store.Cluster, error) {
	s.calls.Add(1)
	return s.Store.FindCluster(ctx, p, records)
}

func (s *countingStore) FindRecord(ctx context.Context, p store.Path) (*store.Record, error) {
	s.calls.Add(1)
	return s.Store.FindRecord(ctx, p)
}

func (s *countingStore) FindRecords(ctx context.Context, p store.Path, q store.RecordQuery) ([]*store.Record, int, error) {
	s.calls.Add(1)
	return s.Store.FindRecords(ctx, p, q)
}

// refsBenchFixture fills web/prod/app with 1,000 records, each holding
// two references into web/prod/db (2,000 records), written directly to
// the store.
func refsBenchFixture(b testing.TB, c *client) {
	tok := c.token("alice")
	c.tree(tok, "web", "prod", "app")
	c.mustDo("POST", pathK("web", "prod", "db"), "", tok, http.StatusCreated)
	ctx := context.Background()
	at := func(k string) store.Path { return store.Path{Project: "web", Collection: "prod", Cluster: k} }
	for i := range 2000 {
		p := at("db")
		p.Record = fmt.Sprintf("d%04d", i)
		if _, err := c.store.CreateRecord(ctx, p, &store.Record{Type: store.String, Value: []byte(fmt.Sprintf(`"value-%d"`, i))}, store.Write{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 1000 {
		p := at("app")
		p.Record = fmt.Sprintf("R%04d", i)
		v := fmt.Sprintf(`"x=${db/d%04d}&y=${db/d%04d}"`, 2*i, 2*i+1)
		if _, err := c.store.CreateRecord(ctx, p, &store.Record{Type: store.String, Value: []byte(v)}, store.Write{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolveCluster: GET K?resolve=true, GET K?format=env&resolve=true
// and GET K/records?limit=1000&resolve=true of a cluster of 1,000 records
// each referring twice into another cluster, beside GET K without resolve,
// on every store kind. It reports the store reads per request
// (store_calls/op) and, on PostgreSQL, the database round trips
// (round_trips/op, through a counting proxy, the session check included).
//
//	go -C internal/e2e test -run '^$' -bench BenchmarkResolveCluster ./
func BenchmarkResolveCluster(b *testing.B) {
	for _, kind := range storeKinds {
		b.Run(kind.name, func(b *testing.B) {
			var proxy *pgtest.Proxy
			if kind.name == "postgres" {
				var url string
				proxy, url = pgtest.NewProxy(b, pgtest.NewURL(b))
				kind = storeKind{name: "postgres", new: func(tb testing.TB) (store.Projects, store.Accounts) {
					db, err := sqlx.Open("postgres", url)
					if err != nil {
						tb.Fatal(err)
					}
					tb.Cleanup(func() { db.Close() })
					pg := postgres.New(db)
					return pg, pg
				}}
			}
			var counter *countingStore
			c := newServerWrapped(b, kind, func(s store.Store) store.Store {
				counter = newCountingStore(s)
				return counter
			})
			refsBenchFixture(b, c)
			tok := c.token("alice")
			k := pathK("web", "prod", "app")
			for _, tc := range []struct{ name, target string }{
				{"Data", k + "?resolve=true"},
				{"Env", k + "?format=env&resolve=true"},
				{"List1000", k + "/records?limit=1000&resolve=true"},
				{"DataUnresolved", k},
			} {
				b.Run(tc.name, func(b *testing.B) {
					r := request("GET", tc.target, "", tok)
					if res := c.raw(r); res.StatusCode != http.StatusOK {
						b.Fatalf("%s: %d", tc.target, res.StatusCode)
					}
					calls := counter.calls.Load()
					var trips int64
					if proxy != nil {
						trips = proxy.RoundTrips()
					}
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						res := serve(c, request("GET", tc.target, "", tok))
						if res != http.StatusOK {
							b.Fatalf("%s: %d", tc.target, res)
						}
					}
					b.ReportMetric(float64(counter.calls.Load()-calls)/float64(b.N), "store_calls/op")
					if proxy != nil {
						b.ReportMetric(float64(proxy.RoundTrips()-trips)/float64(b.N), "round_trips/op")
					}
				})
			}
		})
	}
}

// serve serves r without the contract checks of raw (a benchmark's loop)
// and returns the status.
func serve(c *client, r *http.Request) int {
	w := &discardWriter{h: http.Header{}}
	c.h.ServeHTTP(w, r)
	return w.status
}

type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}
func (w *discardWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}

package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/sqlite"
)

// The time and memory to snapshot, and to roll back, a collection of
// 10,000 records (docs/api.md#snapshots-and-rollback-v13), through the
// handler (no network), on each store:
//
//	go -C internal/e2e test -run '^$' -bench 'Snapshot10k|Rollback10k' -benchmem .
//
// (PostgreSQL with HDS_TEST_DATABASE_URL set.) A rollback is a promote
// from a snapshot with delete: true that changes every record, and takes
// the automatic snapshot of the collection first.

// snapBenchRecords is the size of the collection: 10 clusters of 1,000.
const snapBenchRecords, snapBenchClusters = 10_000, 10

// snapBenchSecret is the JWT secret of the benchmarks' handler, whose
// requests are anonymous.
const snapBenchSecret = "hds-bench-secret-0123456789abcdef!!"

// snapBenchStores opens each store for a benchmark.
var snapBenchStores = []struct {
	name string
	open func(b *testing.B) store.Projects
}{
	{"memory", func(*testing.B) store.Projects { return memory.New() }},
	{"sqlite", func(b *testing.B) store.Projects {
		s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "hds.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}},
	{"postgres", func(b *testing.B) store.Projects { return postgres.New(pgtest.New(b)) }},
}

// snapBenchCollection serves a project "bench" whose collection "prod" holds
// snapBenchRecords records of value tag, and returns the snapClient and token.
func snapBenchCollection(b *testing.B, st store.Projects, tag string) (*snapClient, string) {
	h := hds.New(hds.WithStore(st), hds.WithLogger(quietLogger), hds.WithSecurity(hds.Security{JWTSecret: snapBenchSecret, AllowAnonymous: true}),
		hds.WithRateLimit(0, 0), hds.WithQuotas(store.NoQuotas), hds.WithCredentialKey(testKey))
	c := &snapClient{t: b, h: h}
	tok := "" // anonymous
	if status, _ := snapServe(c.h, "POST", "/api/v1/projects", `{"name":"bench"}`, tok); status != http.StatusCreated {
		b.Fatalf("create the project: %d", status)
	}
	snapBenchFill(b, c, tok, "create", tag)
	return c, tok
}

// snapBenchFill writes every record of the collection with value tag: op
// create or upsert, one batch per cluster.
func snapBenchFill(b *testing.B, c *snapClient, tok, op, tag string) {
	per := snapBenchRecords / snapBenchClusters
	for k := range snapBenchClusters {
		ops := make([]string, per)
		for i := range per {
			ops[i] = fmt.Sprintf(`{"op":%q,"collection":"prod","cluster":"c%d","record":"r%04d","type":"STRING","value":"value %d of %s"}`,
				op, k, i, i, tag)
		}
		body := `{"create_parents":true,"operations":[` + strings.Join(ops, ",") + `]}`
		if status, _ := snapServe(c.h, "POST", "/api/v1/projects/bench/batch", body, tok); status != http.StatusOK {
			b.Fatalf("fill cluster c%d: %d", k, status)
		}
	}
}

// snapClient is the benchmarks' handler.
type snapClient struct {
	t testing.TB
	h http.Handler
}

// snapServe sends one request and returns the status and body.
func snapServe(h http.Handler, method, target, body, tok string) (int, string) {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec.Code, rec.Body.String()
}

func BenchmarkSnapshot10k(b *testing.B) {
	for _, kind := range snapBenchStores {
		b.Run(kind.name, func(b *testing.B) {
			c, tok := snapBenchCollection(b, kind.open(b), "A")
			i := 0
			for b.Loop() {
				i++
				status, body := snapServe(c.h, "POST", "/api/v1/projects/bench/snapshots", fmt.Sprintf(`{"name":"s%d","collection":"prod"}`, i), tok)
				if status != http.StatusCreated || !strings.Contains(body, `"records":10000`) {
					b.Fatalf("snapshot: %d %.200s", status, body)
				}
			}
		})
	}
}

func BenchmarkRollback10k(b *testing.B) {
	for _, kind := range snapBenchStores {
		b.Run(kind.name, func(b *testing.B) {
			c, tok := snapBenchCollection(b, kind.open(b), "A")
			for _, s := range []string{"a", "b"} {
				if s == "b" {
					snapBenchFill(b, c, tok, "upsert", "B")
				}
				if status, body := snapServe(c.h, "POST", "/api/v1/projects/bench/snapshots", `{"name":"`+s+`","collection":"prod"}`, tok); status != http.StatusCreated {
					b.Fatalf("snapshot %s: %d %.200s", s, status, body)
				}
			}
			i := 0
			for b.Loop() {
				i++
				from := []string{"b", "a"}[i%2] // the collection holds b first
				status, body := snapServe(c.h, "POST", "/api/v1/projects/bench/promote", `{"from_snapshot":"`+from+`","to":"prod","delete":true}`, tok)
				if status != http.StatusOK || !strings.Contains(body, `"updated":10000`) {
					b.Fatalf("rollback to %s: %d %.200s", from, status, body)
				}
			}
		})
	}
}

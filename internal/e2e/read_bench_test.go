package e2e_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// BenchmarkPostgresRead sets the reads of records through the full
// handler on PostgreSQL (authentication, rate limit and logging on; a
// pool of 4) beside the nearest plain query on the same pool, each with
// 32 parallel clients: GetRecord is GET R, List100 GET K/records of 100
// records, and RawSelect the record's primary-key SELECT, prepared once
// (the floor of a single-record GET: one round trip, no hds).
//
//	go test -run '^$' -bench BenchmarkPostgresRead -benchtime 3s .
func BenchmarkPostgresRead(b *testing.B) {
	f := newBenchFixture(b, kindNamed(b, "postgres"), 0)
	rec, err := f.st.FindRecord(context.Background(), store.Path{Project: "p", Collection: "c", Cluster: "k", Record: "rec-042"})
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := f.st.(*postgres.Store).DB().Preparex(`SELECT id, name, type, value, version, created_at, updated_at FROM hds_records WHERE id = $1`)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stmt.Close() })
	parallel := func(b *testing.B, op func(b *testing.B)) {
		b.ReportAllocs()
		b.SetParallelism(32)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				op(b)
			}
		})
	}
	b.Run("GetRecord", func(b *testing.B) {
		parallel(b, func(b *testing.B) {
			f.mustDo(b, http.MethodGet, "/api/v1/projects/p/collections/c/clusters/k/records/rec-042", "", http.StatusOK)
		})
	})
	b.Run("List100", func(b *testing.B) {
		parallel(b, func(b *testing.B) {
			f.mustDo(b, http.MethodGet, "/api/v1/projects/p/collections/c/clusters/k/records", "", http.StatusOK)
		})
	})
	b.Run("RawSelect", func(b *testing.B) {
		parallel(b, func(b *testing.B) {
			var r struct {
				ID, Name, Type, Value string
				Version               int64
				CreatedAt, UpdatedAt  time.Time
			}
			if err := stmt.QueryRow(rec.ID).Scan(&r.ID, &r.Name, &r.Type, &r.Value, &r.Version, &r.CreatedAt, &r.UpdatedAt); err != nil {
				b.Error(err)
			}
		})
	})
}

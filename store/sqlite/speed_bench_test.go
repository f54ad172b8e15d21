package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// The speed of the SQLite store as a server sees it (issue 38): creates
// and GETs at 8 and 32 connections (calls at once), with their latency's
// median and 99th percentile, a 150,000-record import, and the size of
// the file against what the quota counts. They use the store's exported
// API only, so that a build of an older commit runs them too (benchstat
// compares the two):
//
//	go test -run '^$' -bench 'BenchmarkCreate|BenchmarkGet|BenchmarkWritersReaders|BenchmarkFileSize' -count 6 ./store/sqlite/
//	go test -run '^$' -bench BenchmarkImport150k -benchtime 1x -count 3 ./store/sqlite/

// speedProject makes the project p with collection c and cluster k, no
// quotas, and returns the cluster's path.
func speedProject(b testing.TB, s *sqlite.Store) store.Path {
	b.Helper()
	s.SetQuotas(store.NoQuotas)
	ctx := context.Background()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "bench"}, Project: "p", Collection: "c", Cluster: "k"}
	if _, err := s.CreateProject(ctx, p); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, store.Batch{Ops: []store.Op{{Kind: store.OpEnsureCluster, Collection: "c", Cluster: "k"}}}); err != nil {
		b.Fatal(err)
	}
	return p
}

// parallel runs b.N calls of call on conns goroutines at once, call
// given the number of the call, and reports the calls a second and the
// median and 99th percentile of their latency.
func parallel(b *testing.B, conns int, call func(i int) error) {
	var next atomic.Int64
	lat := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := cpuTime()
	wb0, wc0 := writtenIO()
	start := time.Now()
	for g := range conns {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := call(i); err != nil {
					b.Error(err)
					return
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	wb, wc := writtenIO()
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "calls/s")
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(len(all)), "cpu-us/call")
	}
	if wc > wc0 {
		b.ReportMetric(float64(wb-wb0)/1024/float64(len(all)), "wKiB/call")
		b.ReportMetric(float64(wc-wc0)/float64(len(all)), "wcalls/call")
	}
}

// BenchmarkCreate creates INTEGER records, each one call (one request of
// a server), from 8 and 32 goroutines at once.
func BenchmarkCreate(b *testing.B) {
	for _, conns := range []int{8, 32} {
		b.Run("conns="+strconv.Itoa(conns), func(b *testing.B) {
			s := open(b)
			p := speedProject(b, s)
			ctx := context.Background()
			before := s.Commits()
			parallel(b, conns, func(i int) error {
				rp := p
				rp.Record = "r" + strconv.Itoa(i)
				_, err := s.CreateRecord(ctx, rp, &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(i))}, store.Write{})
				return err
			})
			reportGroups(b, s, before)
		})
	}
}

// reportGroups reports the writes a commit carried (group commit) since
// the writer had committed before.
func reportGroups(b *testing.B, s *sqlite.Store, before int64) {
	if n := s.Commits() - before; n > 0 {
		b.ReportMetric(float64(b.N)/float64(n), "writes/commit")
	}
}

// BenchmarkWritersReaders runs 32 goroutines creating records and 8
// reading them at once, with the store's default timeout (5 s), as the
// fault probe did against a server, and reports the calls that failed as
// unavailable (a 503): with a fair writer queue and group commit, none.
func BenchmarkWritersReaders(b *testing.B) {
	s := open(b, sqlite.WithTimeout(sqlite.DefaultTimeout))
	p := speedProject(b, s)
	ctx := context.Background()
	var unavailable atomic.Int64
	var created atomic.Int64
	before := s.Commits()
	parallel(b, 40, func(i int) error {
		rp := p
		var err error
		if i%5 == 0 {
			rp.Record = "r" + strconv.Itoa(int(created.Load()))
			_, err = s.FindRecord(ctx, rp)
			if errors.Is(err, store.ErrNotFound) {
				err = nil
			}
		} else {
			rp.Record = "r" + strconv.Itoa(i)
			_, err = s.CreateRecord(ctx, rp, &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(i))}, store.Write{})
			created.Store(int64(i))
		}
		if errors.Is(err, store.ErrUnavailable) {
			unavailable.Add(1)
			return nil
		}
		return err
	})
	b.ReportMetric(float64(unavailable.Load()), "unavailable")
	reportGroups(b, s, before)
}

// BenchmarkGet reads one record of a cluster of 1,000 (a GET), from 8
// and 32 goroutines at once.
func BenchmarkGet(b *testing.B) {
	for _, conns := range []int{8, 32} {
		b.Run("conns="+strconv.Itoa(conns), func(b *testing.B) {
			s := open(b)
			p := speedProject(b, s)
			ctx := context.Background()
			const n = 1000
			var ops []store.Op
			for i := range n {
				ops = append(ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: "r" + strconv.Itoa(i),
					New: &store.Record{Type: store.String, Value: json.RawMessage(strconv.Quote("text " + strconv.Itoa(i)))}})
			}
			if _, err := s.Apply(ctx, p, store.Batch{Ops: ops}); err != nil {
				b.Fatal(err)
			}
			parallel(b, conns, func(i int) error {
				rp := p
				rp.Record = "r" + strconv.Itoa(i%n)
				_, err := s.FindRecord(ctx, rp)
				return err
			})
		})
	}
}

// importSource is the OpSource of an import of n records into cluster k
// of collection c: a third INTEGER, a third STRING, a third BOOLEAN.
type importSource struct{ n int }

func (s importSource) Len() int { return s.n + 1 }

func (s importSource) Op(i int) store.Op {
	if i == 0 {
		return store.Op{Kind: store.OpEnsureCluster, Collection: "c", Cluster: "k"}
	}
	rec := &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(i))}
	switch i % 3 {
	case 1:
		rec = &store.Record{Type: store.String, Value: json.RawMessage(strconv.Quote("value number " + strconv.Itoa(i)))}
	case 2:
		rec = &store.Record{Type: store.Boolean, Value: json.RawMessage(strconv.FormatBool(i%2 == 0))}
	}
	return store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: fmt.Sprintf("r%06d", i), New: rec}
}

// BenchmarkImport150k applies an import of 150,000 new records (about
// 6 MB, within the default limits.max_import_bytes) as the import route
// does: one batch of ops from a Source, without the records in the
// results, in a new project.
func BenchmarkImport150k(b *testing.B) {
	for range b.N {
		b.StopTimer()
		s := open(b, sqlite.WithTimeout(10*time.Minute))
		s.SetQuotas(store.NoQuotas)
		ctx := context.Background()
		p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "bench"}, Project: "p"}
		if _, err := s.CreateProject(ctx, p); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		_, err := s.Apply(ctx, p, store.Batch{Source: importSource{importN}, OmitRecords: true, CreateParents: true})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFileSize writes records of 8 KB of text (69 of them, the
// fault probe's, and 1,000) and reports the size of the database file,
// once closed (checkpointed), over the bytes the quota counts (names and
// values).
func BenchmarkFileSize(b *testing.B) {
	for _, n := range []int{69, 1000} {
		b.Run("records="+strconv.Itoa(n), func(b *testing.B) {
			var ratio float64
			for range b.N {
				path := filepath.Join(b.TempDir(), "hds.db")
				s, err := sqlite.Open(context.Background(), path, sqlite.WithTimeout(time.Minute))
				if err != nil {
					b.Fatal(err)
				}
				p := speedProject(b, s)
				quota := 0
				for i := range n {
					rp := p
					rp.Record = "r" + strconv.Itoa(i)
					words := make([]string, 0, 1200)
					for j := 0; len(strings.Join(words, " ")) < 8000; j++ {
						words = append(words, strconv.Itoa(i*7919+j*104729))
					}
					v := json.RawMessage(strconv.Quote(strings.Join(words, " ")))
					quota += len(rp.Record) + len(v)
					if _, err := s.CreateRecord(context.Background(), rp, &store.Record{Type: store.String, Value: v}, store.Write{}); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				size := int64(0)
				for _, f := range []string{path, path + "-wal"} {
					if fi, err := os.Stat(f); err == nil {
						size += fi.Size()
					}
				}
				ratio = float64(size) / float64(quota)
			}
			b.ReportMetric(ratio, "file/quota")
		})
	}
}

// importN is the records of BenchmarkImport150k.
var importN = 150_000

// BenchmarkCreateLarge creates STRING records of 900 KB, one at a time:
// the time one holds the single writer (issue 38).
func BenchmarkCreateLarge(b *testing.B) {
	s := open(b)
	p := speedProject(b, s)
	ctx := context.Background()
	v := json.RawMessage(strconv.Quote(strings.Repeat("large value ", 900_000/12)))
	b.SetBytes(int64(len(v)))
	b.ResetTimer()
	for i := range b.N {
		rp := p
		rp.Record = "r" + strconv.Itoa(i)
		if _, err := s.CreateRecord(ctx, rp, &store.Record{Type: store.String, Value: v}, store.Write{}); err != nil {
			b.Fatal(err)
		}
	}
}

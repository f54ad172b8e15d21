package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/sqlite"
)

// prefixCases are records whose keys are longer than the prefix the
// indexes hold (migration 0007) and tie in it, in many ways: texts equal
// in their first 60 to 70 bytes, equal texts (ties broken by name),
// texts of exactly the prefix's length, long texts (beyond what the
// trigram index holds), upper case, and short values of other types.
func prefixCases() []store.Record {
	var out []store.Record
	add := func(t store.DataType, v string) {
		out = append(out, store.Record{Name: fmt.Sprintf("r%02d", (len(out)*17)%61), Type: t, Value: json.RawMessage(v)})
	}
	base := strings.Repeat("x", 60)
	tails := []string{"", "a", "A", "b", "aa", "ab", "a b", "ba", "aaaaaaaaaaa", "aaaaaaaaaab", "Aaaaaaaaaaaz", "b", "a"}
	for i, tail := range tails {
		add(store.String, strconv.Quote(base+"yyy"[:i%4]+tail))
		add(store.String, strconv.Quote(base+"yyy"+tail))
	}
	add(store.String, strconv.Quote(strings.Repeat("x", 63))) // a value key of exactly 64 bytes
	add(store.String, strconv.Quote(strings.Repeat("x", 64))) // and of 65
	add(store.String, strconv.Quote(base+strings.Repeat("Q", 5000)+" NeedLE"))
	add(store.String, strconv.Quote(base+strings.Repeat("Q", 5000)+" needle"))
	add(store.String, strconv.Quote(base+strings.Repeat("Q", 5000)))
	add(store.String, strconv.Quote("short"))
	add(store.Integer, "7")
	add(store.Integer, "-70")
	add(store.Boolean, "true")
	add(store.ArrayOf(store.String), `["`+base+`b","c"]`)
	add(store.ArrayOf(store.String), `["`+base+`a","c"]`)
	return out
}

// TestCutKeysListLikeTheMemoryStore lists, filters and pages by value
// records whose keys are cut in the indexes, and expects exactly what
// the memory store (the reference, which holds whole keys) lists.
func TestCutKeysListLikeTheMemoryStore(t *testing.T) {
	ctx := context.Background()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k"}
	stores := map[string]store.Store{"sqlite": open(t), "memory": memory.New()}
	for _, s := range stores {
		_, err := s.CreateProject(ctx, p)
		require.NoError(t, err)
		ops := []store.Op{{Kind: store.OpEnsureCluster, Collection: "c", Cluster: "k"}}
		for _, r := range prefixCases() {
			ops = append(ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: r.Name, New: &r})
		}
		_, err = s.Apply(ctx, p, store.Batch{Ops: ops})
		require.NoError(t, err)
	}
	list := func(t *testing.T, s store.Store, q store.RecordQuery) []string {
		t.Helper()
		rs, _, err := s.FindRecords(ctx, p, q)
		require.NoError(t, err)
		names := []string{}
		for _, r := range rs {
			names = append(names, r.Name)
		}
		return names
	}
	key := func(typ store.DataType, text string) *store.ValueKey {
		v, err := typ.ParseText(text, true)
		require.NoError(t, err)
		k := store.KeyOf(typ, v)
		return &k
	}
	base := strings.Repeat("x", 60)
	queries := map[string]store.RecordQuery{
		"all":         {},
		"strings":     {Type: store.String},
		"min":         {Type: store.String, Min: key(store.String, base+"yyya")},
		"max":         {Type: store.String, Max: key(store.String, base+"yyyaaaaaaaaaaa")},
		"min and max": {Type: store.String, Min: key(store.String, base+"ya"), Max: key(store.String, base+"yyy")},
		"value":       {HasValue: true, Value: base + "yyyb"},
		"long value":  {HasValue: true, Value: base + strings.Repeat("Q", 5000)},
		"contains":    {ValueContains: "needle"},
		"contains A":  {ValueContains: "a"},
		"contains yb": {ValueContains: "yb"},
		"contains QQ": {ValueContains: "qqq"},
	}
	for name, q := range queries {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s desc=%v", name, desc), func(t *testing.T) {
				q.SortBy, q.Desc, q.Limit = store.SortValue, desc, 1000
				want := list(t, stores["memory"], q)
				require.Equal(t, want, list(t, stores["sqlite"], q), "the whole list")
				if name == "all" || name == "strings" {
					require.Greater(t, len(want), 20)
				}
				for _, limit := range []int{1, 3, 7} {
					q.Limit = limit
					for offset := 0; offset < len(want); offset += 5 {
						q.Offset = offset
						assert.Equal(t, list(t, stores["memory"], q), list(t, stores["sqlite"], q), "limit %d offset %d", limit, offset)
					}
					q.Offset = 0
					var walked []string
					for range 100 {
						rs, _, err := stores["sqlite"].FindRecords(ctx, p, q)
						require.NoError(t, err)
						for _, r := range rs {
							walked = append(walked, r.Name)
						}
						if len(rs) < limit {
							break
						}
						pos := store.RecordAt(q.SortBy, rs[len(rs)-1])
						q.After = &pos
					}
					q.After = nil
					assert.Equal(t, want, walked, "by cursor, limit %d", limit)
				}
			})
		}
	}
}

// TestFileSizeWithinThreeTimesQuota writes records of 8 KB of text and
// expects the database file, once closed (checkpointed), at most 3 times
// the bytes the quota counts (names and values): the indexes hold a
// prefix of big values, not the values. The schema's own pages (about a
// hundred tables and indexes of at least one 4 KB page each, some 400 KB
// that no quota counts) dominate a small database: the fault probe's 69
// records (550 KB counted) are 3.04 times since the snapshot tables came
// (2.99 before), so the bound is checked where the data dominates.
func TestFileSizeWithinThreeTimesQuota(t *testing.T) {
	for _, n := range []int{250, 500} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hds.db")
			s, err := sqlite.Open(context.Background(), path, sqlite.WithTimeout(time.Minute))
			require.NoError(t, err)
			s.SetQuotas(store.NoQuotas)
			ctx := context.Background()
			p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k"}
			_, err = s.CreateProject(ctx, p)
			require.NoError(t, err)
			_, err = s.Apply(ctx, p, store.Batch{Ops: []store.Op{{Kind: store.OpEnsureCluster, Collection: "c", Cluster: "k"}}})
			require.NoError(t, err)
			quota := int64(0)
			for i := range n {
				rp := p
				rp.Record = "r" + strconv.Itoa(i)
				words := make([]string, 0, 1200)
				for j := 0; len(strings.Join(words, " ")) < 8000; j++ {
					words = append(words, strconv.Itoa(i*7919+j*104729))
				}
				v := json.RawMessage(strconv.Quote(strings.Join(words, " ")))
				quota += int64(len(rp.Record) + len(v))
				_, err := s.CreateRecord(ctx, rp, &store.Record{Type: store.String, Value: v}, store.Write{})
				require.NoError(t, err)
			}
			require.NoError(t, s.Close())
			size := int64(0)
			for _, f := range []string{path, path + "-wal"} {
				if fi, err := os.Stat(f); err == nil {
					size += fi.Size()
				}
			}
			t.Logf("%d records: file %d bytes, quota counts %d: %.2fx", n, size, quota, float64(size)/float64(quota))
			assert.LessOrEqual(t, float64(size), 3*float64(quota), "file %d bytes, quota %d", size, quota)
		})
	}
}

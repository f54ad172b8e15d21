package sqlite_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// TestDescendingRuns lists records by created_at, updated_at and type,
// descending (read from the ascending indexes backwards, a run of equal
// keys at a time: migration 0008), in a cluster whose records share
// their times in runs (each batch's records have one created_at, an
// update batch gives its records one updated_at) and their types: every
// list is in the key's descending order with ties in ascending name
// (then id) order, and its pages by offset and by cursor, at every
// limit, are the slices of the whole list, runs cut anywhere.
func TestDescendingRuns(t *testing.T) {
	s := open(t)
	p := groupCluster(t, s)
	fillRuns(t, s, p)
	checkDescendingRuns(t, s, p)
}

// fillRuns creates, in p's cluster, records whose times and types come
// in runs: batches of 1 to 13 creates, and one batch of updates.
func fillRuns(t *testing.T, s store.Store, p store.Path) {
	ctx := context.Background()
	types := []store.DataType{store.Integer, store.String, store.Boolean}
	value := map[store.DataType]string{store.Integer: "7", store.String: `"abc"`, store.Boolean: "true"}
	n := 0
	for _, size := range []int{1, 6, 13, 2, 9, 1, 4} {
		var ops []store.Op
		for range size {
			// Names out of creation order, so that a run read backwards
			// is not already in name order.
			name := fmt.Sprintf("r%02d", (n*7)%53)
			typ := types[n%len(types)]
			ops = append(ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: name,
				New: &store.Record{Type: typ, Value: json.RawMessage(value[typ])}})
			n++
		}
		_, err := s.Apply(ctx, p, store.Batch{Ops: ops})
		require.NoError(t, err)
	}
	// One batch updates every third record: a run of one updated_at.
	var ops []store.Op
	for i := 0; i < n; i += 3 {
		ops = append(ops, store.Op{Kind: store.OpUpdate, Collection: "c", Cluster: "k", Record: fmt.Sprintf("r%02d", (i*7)%53),
			Update: func(r *store.Record) error { r.Value = json.RawMessage(value[r.Type]); r.Name += "u"; return nil }})
	}
	_, err := s.Apply(ctx, p, store.Batch{Ops: ops})
	require.NoError(t, err)
}

// checkDescendingRuns checks the descending lists of TestDescendingRuns
// on the records of fillRuns.
func checkDescendingRuns(t *testing.T, s store.Store, p store.Path) {
	ctx := context.Background()
	find := func(q store.RecordQuery) []*store.Record {
		t.Helper()
		rs, _, err := s.FindRecords(ctx, p, q)
		require.NoError(t, err)
		return rs
	}
	names := func(rs []*store.Record) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	keyOf := map[store.SortField]func(*store.Record) string{
		store.SortCreatedAt: func(r *store.Record) string { return fmt.Sprintf("%020d", r.CreatedAt.UnixMicro()) },
		store.SortUpdatedAt: func(r *store.Record) string { return fmt.Sprintf("%020d", r.UpdatedAt.UnixMicro()) },
		store.SortType:      func(r *store.Record) string { return string(r.Type) },
	}
	for by, key := range keyOf {
		for _, filter := range []store.RecordQuery{{}, {Type: store.Integer}, {ValueContains: "b"}, {ListQuery: store.ListQuery{Search: "r"}}} {
			if by == store.SortType && filter.Type != "" {
				continue // one type: by name
			}
			q := filter
			q.SortBy, q.Desc, q.Limit = by, true, store.MaxLimit
			all := find(q)
			require.NotEmpty(t, all)
			want := slices.Clone(all)
			slices.SortFunc(want, func(a, b *store.Record) int {
				return cmp.Or(cmp.Compare(key(b), key(a)), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
			})
			require.Equal(t, names(want), names(all), "%s desc %+v: key descending, ties by name", by, filter)
			runs := 0
			for i := 1; i < len(all); i++ {
				if key(all[i]) == key(all[i-1]) {
					runs++
				}
			}
			require.Positive(t, runs, "%s %+v: the list has ties", by, filter)
			for _, limit := range []int{1, 2, 3, 7} {
				q.Limit = limit
				for offset := 0; offset <= len(all); offset++ {
					q.Offset = offset
					assert.Equal(t, names(all[offset:min(offset+limit, len(all))]), names(find(q)),
						"%s %+v limit %d offset %d", by, filter, limit, offset)
				}
				q.Offset = 0
				var walked []*store.Record
				for range len(all) + 1 {
					page := find(q)
					walked = append(walked, page...)
					if len(page) < limit {
						break
					}
					pos := store.RecordAt(by, page[len(page)-1])
					q.After = &pos
				}
				q.After = nil
				assert.Equal(t, names(all), names(walked), "%s %+v limit %d: pages by cursor", by, filter, limit)
			}
		}
	}
}

// TestMigrateDescRuns upgrades a database of schema 7, holding records
// in runs, to migration 0008: the eight descending twins are gone, the
// ascending indexes stay, and the descending lists are still right.
func TestMigrateDescRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hds.db")
	prev, err := sqlite.Open(ctx, path, sqlite.WithMigrationsTo("migrations/0007_index_prefix.sql"))
	require.NoError(t, err)
	p := groupCluster(t, prev)
	fillRuns(t, prev, p)
	indexes := func(s *sqlite.Store, like string) string {
		t.Helper()
		got, err := s.QueryString(ctx, `SELECT coalesce(group_concat(name, ' '), '') FROM (SELECT name FROM sqlite_schema
			WHERE type = 'index' AND tbl_name = 'hds_records' AND name LIKE ? ORDER BY name)`, like)
		require.NoError(t, err)
		return got
	}
	require.Equal(t, "hds_records_created_desc hds_records_range_desc hds_records_type_created_desc hds_records_type_desc "+
		"hds_records_type_updated_desc hds_records_type_value_desc hds_records_updated_desc hds_records_value_desc",
		indexes(prev, "%desc"))
	ascending := indexes(prev, "hds_records_%")
	require.NoError(t, prev.Close())

	s := openAt(t, path)
	assert.Empty(t, indexes(s, "%desc"), "no descending twin is left")
	assert.Equal(t, strings.Join(slices.DeleteFunc(strings.Fields(ascending), func(n string) bool { return strings.HasSuffix(n, "_desc") }), " "),
		indexes(s, "hds_records_%"), "the other indexes stay")
	checkDescendingRuns(t, s, p)
}

// TestDeepOffsetPageCost: a page far into a descending list by runs,
// by offset, costs the page, not the entries before it: 10 records at
// offset 2,900 of 3,000 whose values are 4 KB each (12 MB skipped) are
// read with well under a megabyte allocated (the entries skipped are
// skipped in SQLite, never built as records), as the same page of an
// ascending list is.
func TestDeepOffsetPageCost(t *testing.T) {
	s := open(t)
	p := groupCluster(t, s)
	ctx := context.Background()
	big := json.RawMessage(`"` + strings.Repeat("x", 4096) + `"`)
	for b := range 10 {
		var ops []store.Op
		for i := range 300 {
			ops = append(ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: fmt.Sprintf("r%d-%03d", b, i),
				New: &store.Record{Type: store.String, Value: big}})
		}
		_, err := s.Apply(ctx, p, store.Batch{Ops: ops})
		require.NoError(t, err)
	}
	for _, desc := range []bool{false, true} {
		for _, by := range []store.SortField{store.SortCreatedAt, store.SortType, store.SortName} {
			q := store.RecordQuery{ListQuery: store.ListQuery{SortBy: by, Desc: desc, Limit: 10, Offset: 2900}}
			_, _, err := s.FindRecords(ctx, p, q) // statements prepared
			require.NoError(t, err)
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			rs, _, err := s.FindRecords(ctx, p, q)
			runtime.ReadMemStats(&m1)
			require.NoError(t, err)
			assert.Len(t, rs, 10)
			assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(1<<20), "sortBy=%s desc=%v: bytes allocated for a page at offset 2,900", by, desc)
		}
	}
}

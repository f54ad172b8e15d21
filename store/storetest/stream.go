package storetest

import (
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// testStreaming holds store.Streamer (through store.StreamRecords and its
// siblings, which fall back to the Find methods for stores without it) to
// the Find methods: same items, same order, same totals, same errors, for
// small and large values, clusters larger than one page of a store that
// reads them in pages, a reader that stops early, and records deleted
// while a stream runs (left out).
func testStreaming(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("SameAsFind", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		ctx := f.ctx
		// 520 small records (more than one page of 500), a few large ones
		// (more than one batch of 4 MiB in all), one STRING of each size
		// around 4 KiB.
		big := strings.Repeat("x", 1<<20)
		for i := range 520 {
			mustRecord(t, f.s, setLevel(f.path(3), 3, fmt.Sprintf("small-%03d", i)), store.Integer, fmt.Sprint(i))
		}
		for i := range 6 {
			mustRecord(t, f.s, setLevel(f.path(3), 3, fmt.Sprintf("big-%d", i)), store.String, `"`+big[:len(big)-i]+`"`)
		}
		for _, n := range []int{4093, 4094, 4095, 4096, 4097} {
			mustRecord(t, f.s, setLevel(f.path(3), 3, fmt.Sprintf("edge-%d", n)), store.String, `"`+big[:n-2]+`"`)
		}
		for _, q := range []store.RecordQuery{
			{ListQuery: store.NewListQuery()},
			{ListQuery: store.ListQuery{Limit: 1000, SortBy: store.SortValue, Desc: true}},
			{ListQuery: store.ListQuery{Limit: 7, Offset: 515, SortBy: store.SortName}},
			{ListQuery: store.ListQuery{Limit: 1000, SortBy: store.SortName, Search: "big"}},
			{ListQuery: store.ListQuery{Limit: 10, Offset: 2000, SortBy: store.SortName}},
		} {
			want, wantTotal, err := f.s.FindRecords(ctx, f.path(2), q)
			require.NoError(t, err, "FindRecords %+v", q)
			total, seq, err := store.StreamRecords(ctx, f.s, f.path(2), q)
			require.NoError(t, err, "StreamRecords %+v", q)
			assert.Equal(t, wantTotal, total, "StreamRecords total %+v", q)
			assert.Equal(t, viewRecords(want), viewRecords(collect(t, seq)), "StreamRecords items %+v", q)
		}

		k, err := f.s.FindCluster(ctx, f.path(2), true)
		require.NoError(t, err, "FindCluster")
		sk, seq, err := store.StreamClusterRecords(ctx, f.s, f.path(2))
		require.NoError(t, err, "StreamClusterRecords")
		assert.Nil(t, sk.Records, "the streamed cluster's Records")
		assert.Equal(t, k.RecordCount, sk.RecordCount, "RecordCount")
		assert.Equal(t, k.ID, sk.ID, "ID")
		assert.Equal(t, viewRecords(k.Records), viewRecords(collect(t, seq)), "StreamClusterRecords items")

		// A reader that stops early.
		_, seq, err = store.StreamClusterRecords(ctx, f.s, f.path(2))
		require.NoError(t, err)
		n := 0
		for r, err := range seq {
			require.NoError(t, err)
			require.NotNil(t, r)
			if n++; n == 3 {
				break
			}
		}
		assert.Equal(t, 3, n, "a stream stopped after 3 items")
	})

	t.Run("Versions", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		big := strings.Repeat("v", 1<<20)
		for i := range 8 {
			_, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{MaxVersions: 20}, func(r *store.Record) error {
				r.Type, r.Value = store.String, json.RawMessage(`"`+big[:len(big)-i*1000]+`"`)
				if i%2 == 1 {
					r.Value = json.RawMessage(fmt.Sprintf(`"short %d"`, i))
				}
				return nil
			})
			require.NoError(t, err, "UpdateRecord %d", i)
		}
		for _, q := range []store.ListQuery{store.NewListQuery(), {Limit: 3, Offset: 0}, {Limit: 4, Offset: 2}, {Limit: 5, Offset: 50}} {
			want, wantTotal, err := f.s.FindRecordVersions(f.ctx, f.path(3), q)
			require.NoError(t, err, "FindRecordVersions %+v", q)
			total, seq, err := store.StreamRecordVersions(f.ctx, f.s, f.path(3), q)
			require.NoError(t, err, "StreamRecordVersions %+v", q)
			assert.Equal(t, wantTotal, total, "total %+v", q)
			var got []*store.RecordVersion
			for v, err := range seq {
				require.NoError(t, err)
				got = append(got, v)
			}
			require.Len(t, got, len(want), "StreamRecordVersions %+v", q)
			for i := range want {
				assert.Equal(t, *want[i], *got[i], "version %d of page %+v", i, q)
			}
		}
	})

	t.Run("Errors", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		for level := 0; level <= 2; level++ {
			p := setLevel(f.path(3), level, "missing")
			_, _, err := store.StreamRecords(f.ctx, f.s, p, store.RecordQuery{ListQuery: store.NewListQuery()})
			assertNotFound(t, err, kinds[level], "missing", "StreamRecords")
			_, _, err = store.StreamClusterRecords(f.ctx, f.s, p)
			assertNotFound(t, err, kinds[level], "missing", "StreamClusterRecords")
		}
		_, _, err := store.StreamRecordVersions(f.ctx, f.s, setLevel(f.path(3), 3, "missing"), store.NewListQuery())
		assertNotFound(t, err, "record", "missing", "StreamRecordVersions")
		stranger := f.path(2)
		stranger.Caller.UserID = "mallory"
		_, _, err = store.StreamClusterRecords(f.ctx, f.s, stranger)
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "StreamClusterRecords of someone else's project")
	})

	t.Run("DeletedWhileStreaming", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		big := `"` + strings.Repeat("d", 1<<20) + `"`
		for _, name := range []string{"a", "b", "c"} {
			mustRecord(t, f.s, setLevel(f.path(3), 3, name), store.String, big)
		}
		_, seq, err := store.StreamClusterRecords(f.ctx, f.s, f.path(2))
		require.NoError(t, err)
		var names []string
		for r, err := range seq {
			require.NoError(t, err)
			names = append(names, r.Name)
			if r.Name == "a" {
				require.NoError(t, f.s.DeleteRecord(f.ctx, setLevel(f.path(3), 3, "c"), store.Write{}))
			}
		}
		// A store may read c before it is deleted (a snapshot) or leave it
		// out; it never fails and never repeats a record.
		assert.Subset(t, []string{"a", "b", "c", recName}, names)
		assert.Contains(t, names, "a")
		assert.Contains(t, names, "b")
		assert.Contains(t, names, recName)
	})
}

// collect reads a sequence, failing on its error.
func collect(t *testing.T, seq iter.Seq2[*store.Record, error]) []*store.Record {
	t.Helper()
	var out []*store.Record
	for r, err := range seq {
		require.NoError(t, err, "stream")
		out = append(out, r)
	}
	return out
}

// viewRecords views each record.
func viewRecords(rs []*store.Record) []recordView {
	out := make([]recordView, len(rs))
	for i, r := range rs {
		out[i] = viewRecord(r)
	}
	return out
}

package storetest

// The list queries of docs/api.md#list-queries beyond paging: NoCount
// (count=false) and the range filters.

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/store"
)

func testListFilters(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("NoCount", func(t *testing.T) {
		for _, l := range listers {
			t.Run(l.kind, func(t *testing.T) {
				sc := l.setup(t, newStore(t))
				for _, name := range []string{"one", "two", "three"} {
					sc.create(t, name)
				}
				q := store.NewListQuery()
				q.Limit = 2
				want, n, err := sc.list(t, q)
				require.NoError(t, err)
				assert.Equal(t, 3, n, "counted")
				q.NoCount = true
				got, n, err := sc.list(t, q)
				require.NoError(t, err)
				assert.Equal(t, store.NotCounted, n, "NoCount: the total is NotCounted")
				assert.Equal(t, entryNames(want), entryNames(got), "NoCount: the same page")
				q.Offset = 10
				got, n, err = sc.list(t, q)
				require.NoError(t, err)
				assert.Equal(t, store.NotCounted, n, "NoCount past the end: the total is NotCounted")
				assert.Empty(t, got, "NoCount past the end: nothing")
			})
		}
		t.Run("StreamRecords", func(t *testing.T) {
			f := newRecordFixture(t, newStore(t), valueRecords)
			q := recordQuery()
			q.NoCount, q.Limit = true, 3
			n, seq, err := store.StreamRecords(t.Context(), f.s, f.in, q)
			require.NoError(t, err)
			assert.Equal(t, store.NotCounted, n, "StreamRecords with NoCount")
			var names []string
			for r, err := range seq {
				require.NoError(t, err)
				names = append(names, r.Name)
			}
			assert.Equal(t, []string{"a", "b", "c"}, names)
		})
	})

	t.Run("Ranges", func(t *testing.T) { testRanges(t, newStore) })
}

// rangeRecords hold values of every range type, and records of other
// types that a range filter never keeps.
var rangeRecords = []valueCase{
	{"i1", store.Integer, "-9223372036854775808"},
	{"i2", store.Integer, "-5"},
	{"i3", store.Integer, "0"},
	{"i4", store.Integer, "7"},
	{"i5", store.Integer, "9223372036854775807"},
	{"f1", store.Float, "-1.5"},
	{"f2", store.Float, "0.1"},
	{"f3", store.Float, "2.5"},
	{"f4", store.Float, "9007199254740993"}, // the float64 9007199254740992
	{"f5", store.Float, "1e300"},
	{"d1", store.Date, `"0000-01-01"`},
	{"d2", store.Date, `"2026-01-31"`},
	{"d3", store.Date, `"2026-02-01"`},
	{"d4", store.Date, `"9999-12-31"`},
	{"t1", store.Time, `"08:00:00"`},
	{"t2", store.Time, `"08:00:00.5"`},
	{"t3", store.Time, `"08:00:00.10"`}, // byte-wise before .5 and .2
	{"t4", store.Time, `"23:59:59.999999999"`},
	{"x1", store.DateTime, `"2026-11-22T08:18:19Z"`},
	{"x2", store.DateTime, `"2026-11-22T09:18:19.000000001+01:00"`}, // 1 ns after x1
	{"x3", store.DateTime, `"2026-11-22t08:18:18.999999999z"`},      // 1 ns before x1
	{"x4", store.DateTime, `"0000-01-01T00:30:00+01:00"`},           // in year -1 (UTC)
	{"x5", store.DateTime, `"2026-11-21T23:00:00-10:00"`},           // 2026-11-22T09:00:00Z
	{"x6", store.DateTime, `"2026-11-22T08:18:19.000000000-00:00"`}, // the instant of x1
	{"s1", store.String, `""`},
	{"s2", store.String, `"B"`},
	{"s3", store.String, `"a"`},
	{"s4", store.String, `"abc"`},
	{"s5", store.String, `"é"`},
	{"s6", store.String, `"10"`},
	{"u1", store.UUID, `"00000000-0000-0000-0000-000000000001"`},
	{"u2", store.UUID, `"0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"`},
	{"u3", store.UUID, `"FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"`},
	// Never kept by a range filter: other types, with texts that would
	// fall in the ranges above.
	{"n1", store.Null, "null"},
	{"n2", store.Boolean, "true"},
	{"n3", store.ArrayOf(store.Integer), "[1]"},
	{"n4", store.Credential, `"5"`},
	{"n5", store.ArrayOf(store.DateTime), `["2026-11-22T08:18:19Z"]`},
}

// bound is the key of a range bound given as query text.
func bound(t *testing.T, typ store.DataType, text string) *store.ValueKey {
	t.Helper()
	v, err := typ.ParseText(text, true)
	require.NoError(t, err, "bound %s %q", typ, text)
	k := store.KeyOf(typ, v)
	return &k
}

func testRanges(t *testing.T, newStore func(t *testing.T) store.Store) {
	f := newRecordFixture(t, newStore(t), rangeRecords)
	none := "\x00" // no bound
	for _, tc := range []struct {
		typ      store.DataType
		min, max string
		want     []string
	}{
		{store.Integer, "0", none, []string{"i3", "i4", "i5"}},
		{store.Integer, none, "0", []string{"i1", "i2", "i3"}},
		{store.Integer, "-5", "7", []string{"i2", "i3", "i4"}},
		{store.Integer, "9223372036854775807", "9223372036854775807", []string{"i5"}},
		{store.Integer, "-9223372036854775808", "-9223372036854775808", []string{"i1"}},
		{store.Integer, "8", "6", []string{}},
		{store.Float, "2.5", none, []string{"f3", "f4", "f5"}},
		{store.Float, none, "0.1", []string{"f1", "f2"}},
		{store.Float, "0.1", "0.1", []string{"f2"}},
		{store.Float, "9007199254740992", "9007199254740992", []string{"f4"}},
		{store.Float, "-2", "1e-300", []string{"f1"}},
		{store.Float, "1e300", "1e300", []string{"f5"}},
		{store.Date, "2026-01-31", "2026-02-01", []string{"d2", "d3"}},
		{store.Date, none, "2026-01-30", []string{"d1"}},
		{store.Date, "2026-02-01", none, []string{"d3", "d4"}},
		{store.Time, "08:00:00", "08:00:00.5", []string{"t1", "t2", "t3"}},
		{store.Time, "08:00:00.2", none, []string{"t2", "t4"}},
		{store.Time, none, "08:00:00.1", []string{"t1"}},
		{store.DateTime, "2026-11-22T08:18:19Z", none, []string{"x1", "x2", "x5", "x6"}},
		{store.DateTime, none, "2026-11-22T09:18:19+01:00", []string{"x1", "x3", "x4", "x6"}},
		{store.DateTime, "2026-11-22T08:18:19.000000001Z", "2026-11-22T08:18:19.000000001z", []string{"x2"}},
		{store.DateTime, "2026-11-22T08:18:18.999999999Z", "2026-11-22T08:18:18.999999999Z", []string{"x3"}},
		{store.DateTime, "2026-11-22T18:00:00+09:00", "2026-11-22T10:00:00+01:00", []string{"x5"}},
		{store.DateTime, "0000-01-01T00:00:00Z", "0000-01-01T00:00:00+00:00", []string{}},
		{store.DateTime, none, "0000-01-01T00:00:00Z", []string{"x4"}},
		{store.String, "B", none, []string{"s2", "s3", "s4", "s5"}},
		{store.String, none, "a", []string{"s1", "s2", "s3", "s6"}},
		{store.String, "", "", []string{"s1"}},
		{store.String, "1", "9", []string{"s6"}},
		{store.UUID, "00000000-0000-0000-0000-000000000001", "0196A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B", []string{"u1", "u2"}},
		{store.UUID, "0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c", none, []string{"u3"}},
	} {
		msg := fmt.Sprintf("type=%s minValue=%q maxValue=%q", tc.typ, tc.min, tc.max)
		q := recordQuery()
		q.Type = tc.typ
		if tc.min != none {
			q.Min = bound(t, tc.typ, tc.min)
		}
		if tc.max != none {
			q.Max = bound(t, tc.typ, tc.max)
		}
		rs, n, err := f.find(t, q)
		if assert.NoError(t, err, msg) {
			assert.Equal(t, tc.want, recordNames(rs), msg)
			assert.Equal(t, len(tc.want), n, "%s: total", msg)
		}
		// store.InRange, which the memory store uses, agrees.
		for _, c := range rangeRecords {
			r := f.recs[c.name]
			in := r.Type == tc.typ && sortkey.InRange(q, store.KeyOf(r.Type, r.Value))
			assert.Equal(t, in, contains(tc.want, c.name), "%s: InRange of %s", msg, c.name)
		}
	}

	t.Run("CombinedWithFiltersSortsAndPages", func(t *testing.T) {
		q := recordQuery()
		q.Type = store.DateTime
		q.Min = bound(t, store.DateTime, "2026-01-01T00:00:00Z")
		q.SortBy, q.Desc = store.SortValue, true // by canonical text, descending
		rs, n, err := f.find(t, q)
		require.NoError(t, err)
		assert.Equal(t, 5, n)
		assert.Equal(t, []string{"x3", "x2", "x1", "x6", "x5"}, recordNames(rs))
		var paged []string
		for offset := 0; offset < 6; offset += 2 {
			q.Limit, q.Offset = 2, offset
			rs, n, err := f.find(t, q)
			require.NoError(t, err)
			assert.Equal(t, 5, n, "total at offset %d", offset)
			paged = append(paged, recordNames(rs)...)
		}
		assert.Equal(t, []string{"x3", "x2", "x1", "x6", "x5"}, paged, "pages of 2")

		q = recordQuery()
		q.Type = store.Integer
		q.Min, q.Max = bound(t, store.Integer, "-5"), bound(t, store.Integer, "7")
		q.Search = "I"
		q.ValueContains = "-"
		rs, n, err = f.find(t, q)
		require.NoError(t, err)
		assert.Equal(t, []string{"i2"}, recordNames(rs))
		assert.Equal(t, 1, n)
		q.ValueContains, q.Value, q.HasValue = "", "7", true
		rs, _, err = f.find(t, q)
		require.NoError(t, err)
		assert.Equal(t, []string{"i4"}, recordNames(rs))
		q.HasValue, q.SortBy, q.NoCount = false, store.SortValue, true
		rs, n, err = f.find(t, q)
		require.NoError(t, err)
		assert.Equal(t, []string{"i2", "i3", "i4"}, recordNames(rs))
		assert.Equal(t, store.NotCounted, n)

		// Streaming gives the same records.
		n, seq, err := store.StreamRecords(t.Context(), f.s, f.in, q)
		require.NoError(t, err)
		assert.Equal(t, store.NotCounted, n)
		var names []string
		for r, err := range seq {
			require.NoError(t, err)
			names = append(names, r.Name)
		}
		assert.Equal(t, []string{"i2", "i3", "i4"}, names)
	})
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// testSubstrings checks search and valueContains with patterns of every
// length (a store may find those of 3 characters or more in an index and
// read the texts for shorter ones), in every sort and page, and after the
// records change: a record matches exactly when its lower-cased name (or
// canonical text) contains the lower-cased pattern (strings.ToLower both
// sides, docs/api.md#list-queries), whatever characters the pattern
// holds, however long the text.
func testSubstrings(t *testing.T, newStore func(t *testing.T) store.Store) {
	long := strings.Repeat("abcdefghij", 500) // 5,000 characters
	cases := []valueCase{
		{"Alpha", store.String, `"Hello World"`},
		{"alphabet", store.String, `"hello, world: AND \"quoted\" NEAR(x) * ^ - +"`},
		{"Beta\"Quote", store.String, `"aaa aaa"`},
		{"gamma*star", store.String, `"aaaa"`},
		{"KELVIN-\u212a", store.String, `"\u212aelvin \u0130stanbul STRASSE stra\u00dfe"`},
		{"delta", store.Integer, `123456`},
		{"epsilon", store.ArrayOf(store.String), `["one","two"]`},
		{"long-tail", store.String, `"` + long + `needle"`},
		{"long-head", store.String, `"needle` + long + `"`},
		{"long-edge", store.String, `"` + long[:4094] + `NEEDLE` + long[:10] + `"`},
		{"secret", store.Credential, `"sealed needle"`},
	}
	patterns := []string{
		"a", "al", "alp", "ALPHA", "pha", "hello", "o w", "World", "world:", `"`, `"q`, `\"quoted\"`, "and", "AND",
		"near(", "* ^", "aaa", "aaaa", "aaa aaa", "a a", "k", "kel", "\u212aEL", "\u0130st", "i\u0307st", "stra\u00df",
		"strasse", "123", "3456", `"one"`, `","`, "needle", "NEEDLE", "jneedle", "needleab", "ij" + "needle",
		strings.Repeat("abcdefghij", 3), "quote", "a*s", "-\u212a", "zzz", "é",
	}
	text := func(c valueCase) string {
		return store.KeyOf(c.typ, mustValue(t, c.typ, c.js)).Text // empty for credentials, never matched
	}
	// want lists the names of cases that match, by name.
	want := func(cs []valueCase, search, contains string) []string {
		names := []string{}
		for _, c := range cs {
			if search != "" && !strings.Contains(strings.ToLower(c.name), strings.ToLower(search)) {
				continue
			}
			if contains != "" && (c.typ.IsCredential() || !strings.Contains(strings.ToLower(text(c)), strings.ToLower(contains))) {
				continue
			}
			names = append(names, c.name)
		}
		slices.Sort(names)
		return names
	}
	check := func(t *testing.T, f *recordFixture, cs []valueCase) {
		t.Helper()
		for _, pat := range patterns {
			for _, q := range []store.RecordQuery{
				{ListQuery: store.ListQuery{Limit: 100, SortBy: store.SortName, Search: pat}},
				{ListQuery: store.ListQuery{Limit: 100, SortBy: store.SortName}, ValueContains: pat},
			} {
				exp := want(cs, q.Search, q.ValueContains)
				rs, n, err := f.find(t, q)
				require.NoError(t, err, "search %q valueContains %q", q.Search, q.ValueContains)
				assert.Equal(t, exp, recordNames(rs), "search %q valueContains %q", q.Search, q.ValueContains)
				assert.Equal(t, len(exp), n, "search %q valueContains %q: total", q.Search, q.ValueContains)
			}
		}
	}

	t.Run("EveryLength", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), cases)
		check(t, f, cases)
	})

	t.Run("SortsPagesAndCursors", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), cases)
		for _, by := range []store.SortField{store.SortName, store.SortID, store.SortCreatedAt, store.SortUpdatedAt, store.SortValue, store.SortType} {
			for _, desc := range []bool{false, true} {
				for _, filter := range []store.RecordQuery{
					{ListQuery: store.ListQuery{Search: "a"}},
					{ListQuery: store.ListQuery{Search: "alp"}},
					{ValueContains: "needle"},
					{ValueContains: "l"},
					{ListQuery: store.ListQuery{Search: "l"}, ValueContains: "ello", Type: store.String},
				} {
					all := filter
					all.Limit, all.SortBy, all.Desc = 100, by, desc
					full, n, err := f.find(t, all)
					require.NoError(t, err)
					require.Equal(t, len(full), n)
					// Pages of 2 by offset, and by cursor without counting.
					var byOffset, byCursor []string
					for off := 0; off < len(full); off += 2 {
						q := all
						q.Limit, q.Offset = 2, off
						rs, _, err := f.find(t, q)
						require.NoError(t, err)
						byOffset = append(byOffset, recordNames(rs)...)
					}
					q := all
					q.Limit, q.NoCount = 2, true
					for range len(full) + 1 {
						rs, total, err := f.find(t, q)
						require.NoError(t, err)
						assert.Equal(t, store.NotCounted, total)
						if len(rs) == 0 {
							break
						}
						byCursor = append(byCursor, recordNames(rs)...)
						pos := store.RecordAt(by, rs[len(rs)-1])
						q.After = &pos
					}
					msg := []any{"sortBy %v desc %v search %q valueContains %q", by, desc, filter.Search, filter.ValueContains}
					assert.Equal(t, recordNames(full), byOffset, msg...)
					assert.Equal(t, recordNames(full), byCursor, msg...)
					names := slices.Clone(recordNames(full))
					slices.Sort(names)
					cs := cases
					if filter.Type != "" {
						cs = slices.DeleteFunc(slices.Clone(cases), func(c valueCase) bool { return c.typ != filter.Type })
					}
					assert.Equal(t, want(cs, filter.Search, filter.ValueContains), names, msg...)
				}
			}
		}
	})

	t.Run("AfterChanges", func(t *testing.T) {
		s := newStore(t)
		f := newRecordFixture(t, s, cases)
		ctx := t.Context()
		cs := slices.Clone(cases)
		set := func(name, newName string, typ store.DataType, js string) {
			t.Helper()
			_, err := s.UpdateRecord(ctx, setLevel(f.in, 3, name), store.Write{}, func(r *store.Record) error {
				r.Name, r.Type, r.Value = newName, typ, mustValue(t, typ, js)
				return nil
			})
			require.NoError(t, err, "UpdateRecord %q", name)
			for i, c := range cs {
				if c.name == name {
					cs[i] = valueCase{newName, typ, js}
				}
			}
		}
		set("Alpha", "omega", store.String, `"Goodbye needle"`)
		set("delta", "delta", store.String, `"World 123"`)
		set("long-tail", "long-tail", store.Integer, `7`)
		require.NoError(t, s.DeleteRecord(ctx, setLevel(f.in, 3, "gamma*star"), store.Write{}))
		cs = slices.DeleteFunc(cs, func(c valueCase) bool { return c.name == "gamma*star" })
		mustRecord(t, s, setLevel(f.in, 3, "zeta"), store.String, `"aaaa new"`)
		cs = append(cs, valueCase{"zeta", store.String, `"aaaa new"`})
		require.NoError(t, s.DeleteCluster(ctx, setLevel(f.in, 2, "other")), "the other cluster's records go")
		check(t, f, cs)
	})
}

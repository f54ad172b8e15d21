package storetest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// entry is what the list tests look at in any listed resource.
type entry struct {
	ID, Name             string
	CreatedAt, UpdatedAt time.Time
}

// lister adapts one of the four lists to the generic list tests.
type lister struct {
	kind string
	// setup prepares a fresh store and returns the functions below, all
	// working in one scope (one owner's projects, one project's
	// collections, ...).
	setup func(t *testing.T, s store.Store) listScope
}

type listScope struct {
	// create creates an item in the scope.
	create func(t *testing.T, name string) entry
	// rename renames an item of the scope, moving its UpdatedAt.
	rename func(t *testing.T, old, name string) entry
	// list lists the scope.
	list func(t *testing.T, q store.ListQuery) ([]entry, int, error)
	// outside creates an item, named after name, that the scope's list
	// must never show (another owner's project, another parent's child).
	outside func(t *testing.T, name string)
}

var listers = []lister{
	{"Projects", func(t *testing.T, s store.Store) listScope {
		return listScope{
			create: func(t *testing.T, name string) entry {
				return projectEntry(mustProject(t, s, owner, name))
			},
			rename: func(t *testing.T, old, name string) entry {
				p, err := s.RenameProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: old}, name)
				require.NoError(t, err, "RenameProject %q to %q", old, name)
				return projectEntry(p)
			},
			list: func(t *testing.T, q store.ListQuery) ([]entry, int, error) {
				ps, n, err := s.FindProjects(t.Context(), owner, q)
				var es []entry
				for _, p := range ps {
					es = append(es, projectEntry(p))
				}
				return es, n, err
			},
			outside: func(t *testing.T, name string) {
				// Project names are global: another owner's project
				// cannot share the name, so it contains it.
				mustProject(t, s, bob, "bob's "+name)
			},
		}
	}},
	{"Collections", func(t *testing.T, s store.Store) listScope {
		mustProject(t, s, owner, "p")
		mustProject(t, s, owner, "other")
		in := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "p"}
		return listScope{
			create: func(t *testing.T, name string) entry {
				return collectionEntry(mustCollection(t, s, setLevel(in, 1, name)))
			},
			rename: func(t *testing.T, old, name string) entry {
				c, err := s.RenameCollection(t.Context(), setLevel(in, 1, old), name)
				require.NoError(t, err, "RenameCollection %q to %q", old, name)
				return collectionEntry(c)
			},
			list: func(t *testing.T, q store.ListQuery) ([]entry, int, error) {
				cs, n, err := s.FindCollections(t.Context(), in, q)
				var es []entry
				for _, c := range cs {
					es = append(es, collectionEntry(c))
				}
				return es, n, err
			},
			outside: func(t *testing.T, name string) {
				mustCollection(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "other", Collection: name})
			},
		}
	}},
	{"Clusters", func(t *testing.T, s store.Store) listScope {
		mustProject(t, s, owner, "p")
		in := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "p", Collection: "c"}
		mustCollection(t, s, in)
		mustCollection(t, s, setLevel(in, 1, "other"))
		return listScope{
			create: func(t *testing.T, name string) entry {
				return clusterEntry(mustCluster(t, s, setLevel(in, 2, name)))
			},
			rename: func(t *testing.T, old, name string) entry {
				c, err := s.RenameCluster(t.Context(), setLevel(in, 2, old), name)
				require.NoError(t, err, "RenameCluster %q to %q", old, name)
				return clusterEntry(c)
			},
			list: func(t *testing.T, q store.ListQuery) ([]entry, int, error) {
				cs, n, err := s.FindClusters(t.Context(), in, q)
				var es []entry
				for _, c := range cs {
					es = append(es, clusterEntry(c))
				}
				return es, n, err
			},
			outside: func(t *testing.T, name string) {
				mustCluster(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "p", Collection: "other", Cluster: name})
			},
		}
	}},
	{"Records", func(t *testing.T, s store.Store) listScope {
		mustProject(t, s, owner, "p")
		mustCollection(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "p", Collection: "c"})
		in := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "p", Collection: "c", Cluster: "k"}
		mustCluster(t, s, in)
		mustCluster(t, s, setLevel(in, 2, "other"))
		return listScope{
			create: func(t *testing.T, name string) entry {
				return recordEntry(mustRecord(t, s, setLevel(in, 3, name), store.String, `"v"`))
			},
			rename: func(t *testing.T, old, name string) entry {
				r, err := s.UpdateRecord(t.Context(), setLevel(in, 3, old), store.Write{}, func(r *store.Record) error {
					r.Name = name
					return nil
				})

				require.NoError(t, err, "UpdateRecord renaming %q to %q", old, name)
				return recordEntry(r)
			},
			list: func(t *testing.T, q store.ListQuery) ([]entry, int, error) {
				rs, n, err := s.FindRecords(t.Context(), in, store.RecordQuery{ListQuery: q})
				var es []entry
				for _, r := range rs {
					es = append(es, recordEntry(r))
				}
				return es, n, err
			},
			outside: func(t *testing.T, name string) {
				mustRecord(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "p", Collection: "c", Cluster: "other", Record: name}, store.String, `"v"`)
			},
		}
	}},
}

func projectEntry(p *store.Project) entry {
	return entry{p.ID, p.Name, p.CreatedAt, p.UpdatedAt}
}

func collectionEntry(c *store.Collection) entry {
	return entry{c.ID, c.Name, c.CreatedAt, c.UpdatedAt}
}

func clusterEntry(c *store.Cluster) entry {
	return entry{c.ID, c.Name, c.CreatedAt, c.UpdatedAt}
}

func recordEntry(r *store.Record) entry {
	return entry{r.ID, r.Name, r.CreatedAt, r.UpdatedAt}
}

func entryNames(es []entry) []string {
	names := []string{}
	for _, e := range es {
		names = append(names, e.Name)
	}
	return names
}

func entryIDs(es []entry) []string {
	ids := []string{}
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}

// compareEntries orders entries as a list sorted by field does: by the
// field (reversed when desc), then by name, then by id, both ascending.
func compareEntries(field store.SortField, desc bool) func(a, b entry) int {
	return func(a, b entry) int {
		var c int
		switch field {
		case store.SortName:
			c = strings.Compare(a.Name, b.Name)
		case store.SortID:
			c = strings.Compare(a.ID, b.ID)
		case store.SortCreatedAt:
			c = a.CreatedAt.Compare(b.CreatedAt)
		case store.SortUpdatedAt:
			c = a.UpdatedAt.Compare(b.UpdatedAt)
		default:
			panic("storetest: no generic order for " + string(field))
		}
		if desc {
			c = -c
		}
		return cmp.Or(c, strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID))
	}
}

// listAll lists every item matching q, checking that total counts them.
func listAll(t *testing.T, sc listScope, q store.ListQuery, msg string) []entry {
	t.Helper()
	q.Limit, q.Offset = store.MaxLimit, 0
	es, n, err := sc.list(t, q)
	require.NoError(t, err, "%s: list", msg)
	assert.Equal(t, len(es), n, "%s: total counts every match", msg)
	return es
}

// assertPages walks the list page by page and checks that the pages, put
// together, are the whole list, and that each reports the same total.
func assertPages(t *testing.T, sc listScope, q store.ListQuery, size int, want []entry, msg string) {
	t.Helper()
	var got []entry
	for offset := 0; offset < len(want)+size; offset += size {
		q.Limit, q.Offset = size, offset
		es, n, err := sc.list(t, q)
		if !assert.NoError(t, err, "%s: page at offset %d", msg, offset) {
			return
		}
		assert.Equal(t, len(want), n, "%s: total at offset %d counts every match before paging", msg, offset)
		assert.LessOrEqual(t, len(es), size, "%s: page at offset %d holds at most limit items", msg, offset)
		got = append(got, es...)
	}
	assert.Equal(t, entryNames(want), entryNames(got), "%s: pages of %d neither overlap nor skip", msg, size)
}

func testLists(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, l := range listers {
		t.Run(l.kind, func(t *testing.T) {
			t.Run("Empty", func(t *testing.T) {
				sc := l.setup(t, newStore(t))
				es, n, err := sc.list(t, store.NewListQuery())
				require.NoError(t, err, "listing an empty scope")
				assert.Empty(t, es, "an empty scope lists nothing")
				assert.Equal(t, 0, n, "an empty scope has total 0")
			})

			t.Run("Scope", func(t *testing.T) {
				sc := l.setup(t, newStore(t))
				var want []entry
				for _, name := range []string{"one", "two", "three"} {
					want = append(want, sc.create(t, name))
					sc.outside(t, name)
				}
				sc.outside(t, "four")
				got := listAll(t, sc, store.NewListQuery(), "scope")
				slices.SortFunc(want, compareEntries(store.SortName, false))
				assert.Equal(t, entryIDs(want), entryIDs(got), "only the scope's own items are listed")
				for i := range min(len(want), len(got)) {
					assert.True(t, want[i].CreatedAt.Equal(got[i].CreatedAt), "listed %q has its CreatedAt", got[i].Name)
					assert.True(t, want[i].UpdatedAt.Equal(got[i].UpdatedAt), "listed %q has its UpdatedAt", got[i].Name)
				}
			})

			t.Run("DefaultOrderIsByteWise", func(t *testing.T) {
				sc := l.setup(t, newStore(t))
				for _, name := range []string{"b", "a", "B", "\u00e9", "Z", "a b", "ab", "_", "\u00c9", "10", "9"} {
					sc.create(t, name)
				}
				es, n, err := sc.list(t, store.NewListQuery())
				require.NoError(t, err, "list")
				assert.Equal(t, 11, n, "total")
				assert.Equal(t, []string{"10", "9", "B", "Z", "_", "a", "a b", "ab", "b", "\u00c9", "\u00e9"}, entryNames(es),
					"the default order is by name, byte-wise (C collation)")
				q := store.NewListQuery()
				q.Desc = true
				es, _, err = sc.list(t, q)
				require.NoError(t, err, "list desc")
				assert.Equal(t, []string{"\u00e9", "\u00c9", "b", "ab", "a b", "a", "_", "Z", "B", "9", "10"}, entryNames(es),
					"desc reverses the byte-wise name order")
			})

			t.Run("Paging", func(t *testing.T) {
				sc := l.setup(t, newStore(t))
				for i := range 7 {
					sc.create(t, fmt.Sprintf("item%d", i))
				}
				for _, tc := range []struct {
					limit, offset int
					want          []string
				}{
					{3, 0, []string{"item0", "item1", "item2"}},
					{3, 3, []string{"item3", "item4", "item5"}},
					{3, 6, []string{"item6"}},
					{3, 7, []string{}},
					{3, 100, []string{}},
					{1, 4, []string{"item4"}},
					{store.MaxLimit, 2, []string{"item2", "item3", "item4", "item5", "item6"}},
				} {
					q := store.NewListQuery()
					q.Limit, q.Offset = tc.limit, tc.offset
					es, n, err := sc.list(t, q)
					if assert.NoError(t, err, "limit %d offset %d", tc.limit, tc.offset) {
						assert.Equal(t, 7, n, "limit %d offset %d: total counts every match before paging", tc.limit, tc.offset)
						assert.Equal(t, tc.want, entryNames(es), "limit %d offset %d", tc.limit, tc.offset)
					}
				}
			})

			t.Run("Search", func(t *testing.T) {
				sc := l.setup(t, newStore(t))
				for _, name := range []string{"caf\u00e9", "CAF\u00c9", "Cafeteria", "100%", "100", "a_c", "abc",
					`a\c`, `x\%y`, "\u03a3\u039f\u03a6\u0399\u0391", "plain", "it's"} {
					sc.create(t, name)
					sc.outside(t, name)
				}
				for _, tc := range []struct {
					search string
					want   []string
				}{
					{"", []string{"100", "100%", "CAF\u00c9", "Cafeteria", `a\c`, "a_c", "abc", "caf\u00e9", "it's", "plain", `x\%y`, "\u03a3\u039f\u03a6\u0399\u0391"}},
					{"caf", []string{"CAF\u00c9", "Cafeteria", "caf\u00e9"}},
					{"CAF", []string{"CAF\u00c9", "Cafeteria", "caf\u00e9"}},
					{"\u00c9", []string{"CAF\u00c9", "caf\u00e9"}},
					{"\u00e9", []string{"CAF\u00c9", "caf\u00e9"}},
					{"\u03c3\u03bf\u03c6", []string{"\u03a3\u039f\u03a6\u0399\u0391"}},
					{"%", []string{"100%", `x\%y`}},
					{"0%", []string{"100%"}},
					{"_", []string{"a_c"}},
					{"a_c", []string{"a_c"}},
					{"a%", []string{}},
					{`\`, []string{`a\c`, `x\%y`}},
					{`\%`, []string{`x\%y`}},
					{`a\c`, []string{`a\c`}},
					{"PLAIN", []string{"plain"}},
					{"'", []string{"it's"}},
					{"T'S", []string{"it's"}},
					{`'s\`, []string{}},
					{"lai", []string{"plain"}},
					{"zzz", []string{}},
				} {
					q := store.NewListQuery()
					q.Search = tc.search
					es, n, err := sc.list(t, q)
					if assert.NoError(t, err, "search %q", tc.search) {
						assert.Equal(t, tc.want, entryNames(es), "search %q: case-insensitive (strings.ToLower) literal substring", tc.search)
						assert.Equal(t, len(tc.want), n, "search %q: total counts the matches", tc.search)
					}
				}
				q := store.NewListQuery()
				q.Search, q.Limit, q.Offset = "caf", 1, 1
				es, n, err := sc.list(t, q)
				if assert.NoError(t, err, "search with paging") {
					assert.Equal(t, []string{"Cafeteria"}, entryNames(es), "search pages the matches")
					assert.Equal(t, 3, n, "search with paging: total counts every match")
				}
			})

			t.Run("SortBy", func(t *testing.T) {
				sc := l.setup(t, newStore(t))
				byID := map[string]entry{}
				add := func(e entry) { byID[e.ID] = e }
				for i, name := range []string{"delta", "Alpha", "charlie", "bravo", "echo", "foxtrot", "golf", "hotel"} {
					if i%3 == 0 {
						tick() // some items share a timestamp, some do not
					}
					add(sc.create(t, name))
				}
				tick()
				add(sc.rename(t, "bravo", "bravo2"))
				add(sc.rename(t, "Alpha", "alpha"))
				tick()
				add(sc.rename(t, "echo", "Echo"))
				all := slices.Collect(func(yield func(entry) bool) {
					for _, e := range byID {
						if !yield(e) {
							return
						}
					}
				})
				for _, field := range []store.SortField{store.SortName, store.SortID, store.SortCreatedAt, store.SortUpdatedAt} {
					for _, desc := range []bool{false, true} {
						msg := fmt.Sprintf("sortBy=%s desc=%v", field, desc)
						want := slices.SortedFunc(slices.Values(all), compareEntries(field, desc))
						q := store.NewListQuery()
						q.SortBy, q.Desc = field, desc
						got := listAll(t, sc, q, msg)
						assert.Equal(t, entryNames(want), entryNames(got), "%s: ordered by the field, ties by name then id ascending", msg)
						assertPages(t, sc, q, 3, want, msg)
					}
				}
			})
		})
	}
}

// valueCase is one record of the record list tests.
type valueCase struct {
	name string
	typ  store.DataType
	js   string
}

// valueRecords hold every group of sortBy=value: numbers, texts, and
// records without a comparable value. Names are chosen so that no order
// is the name order by accident.
var valueRecords = []valueCase{
	// Numbers.
	{"p", store.Float, "-1e300"},
	{"k", store.Integer, "-3"},
	{"f", store.Integer, "2"},
	{"c", store.Float, "2.0"},
	{"q", store.Float, "2.5"},
	{"b", store.Integer, "3"},
	{"x", store.Float, "9007199254740993"}, // the float64 9007199254740992
	{"a", store.Integer, "9007199254740993"},
	// Texts.
	{"o", store.String, `""`},
	{"g", store.String, `"10"`},
	{"s", store.Date, `"2026-01-01"`},
	{"e", store.String, `"B"`},
	{"u", store.ArrayOf(store.Integer), `[]`},
	{"h", store.ArrayOf(store.String), `["a"]`},
	{"r", store.ArrayOf(store.Null), `[null, null]`},
	{"n", store.String, `"abc"`},
	{"d", store.String, `"abc"`},
	{"l", store.String, `"null"`},
	{"j", store.Boolean, `true`},
	// No value.
	{"w", store.Null, "null"},
	{"i", store.Credential, `"sealed secret"`},
	{"m", store.ArrayOf(store.Credential), `["x"]`},
	{"t", store.Null, ""},
}

// recordFixture is a store with valueRecords in cluster p/c/k.
type recordFixture struct {
	s    store.Store
	in   store.Path
	recs map[string]*store.Record
}

func newRecordFixture(t *testing.T, s store.Store, cases []valueCase) *recordFixture {
	t.Helper()
	f := &recordFixture{s: s, in: store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "p", Collection: "c", Cluster: "k"}, recs: map[string]*store.Record{}}
	mustProject(t, s, owner, "p")
	mustCollection(t, s, f.in)
	mustCluster(t, s, f.in)
	other := setLevel(f.in, 2, "other")
	mustCluster(t, s, other)
	for _, c := range cases {
		f.recs[c.name] = mustRecord(t, s, setLevel(f.in, 3, c.name), c.typ, c.js)
		// The same records in another cluster, never to be listed.
		mustRecord(t, s, setLevel(other, 3, c.name), c.typ, c.js)
	}
	return f
}

func (f *recordFixture) find(t *testing.T, q store.RecordQuery) ([]*store.Record, int, error) {
	return f.s.FindRecords(t.Context(), f.in, q)
}

func recordQuery() store.RecordQuery { return store.RecordQuery{ListQuery: store.NewListQuery()} }

func testRecordLists(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("ListedRecordsAreComplete", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), valueRecords)
		rs, n, err := f.find(t, recordQuery())
		require.NoError(t, err, "FindRecords")
		assert.Equal(t, len(valueRecords), n, "total")
		for _, r := range rs {
			if want, ok := f.recs[r.Name]; assert.True(t, ok, "unexpected record %q", r.Name) {
				assert.Equal(t, viewRecord(want), viewRecord(r), "FindRecords returns record %q as created", r.Name)
			}
		}
	})

	t.Run("SortByValue", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), valueRecords)
		asc := []string{
			"p", "k", "c", "f", "q", "b", "x", "a", // numbers by numeric value; 2 == 2.0 tie by name
			"o", "g", "s", "e", "h", "u", "r", "d", "n", "l", "j", // texts byte-wise; "abc" tie by name
			"i", "m", "t", "w", // NULL and credentials, by name
		}
		desc := []string{
			"i", "m", "t", "w",
			"j", "l", "d", "n", "r", "u", "h", "e", "s", "g", "o",
			"a", "x", "b", "q", "c", "f", "k", "p",
		}
		for _, tc := range []struct {
			desc bool
			want []string
		}{{false, asc}, {true, desc}} {
			q := recordQuery()
			q.SortBy, q.Desc = store.SortValue, tc.desc
			rs, n, err := f.find(t, q)
			if assert.NoError(t, err, "sortBy=value desc=%v", tc.desc) {
				assert.Equal(t, len(valueRecords), n, "sortBy=value desc=%v: total", tc.desc)
				assert.Equal(t, tc.want, recordNames(rs),
					"sortBy=value desc=%v: numbers exactly by value, then texts byte-wise, then NULL and credentials; desc reverses the groups; ties by name ascending", tc.desc)
			}
			var paged []string
			for offset := 0; offset < len(valueRecords); offset += 4 {
				q.Limit, q.Offset = 4, offset
				rs, _, err := f.find(t, q)
				if !assert.NoError(t, err, "sortBy=value desc=%v offset %d", tc.desc, offset) {
					break
				}
				paged = append(paged, recordNames(rs)...)
			}
			assert.Equal(t, tc.want, paged, "sortBy=value desc=%v: pages of 4 neither overlap nor skip", tc.desc)
		}
	})

	t.Run("SortByValueExactNumbers", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), []valueCase{
			{"big int", store.Integer, "9223372036854775807"},
			{"big float", store.Float, "9223372036854775807"}, // 2^63, above every int64
			{"int below", store.Integer, "9223372036854775806"},
			{"min int", store.Integer, "-9223372036854775808"},
			{"min float", store.Float, "-9223372036854775808"}, // -2^63 exactly
			{"tiny", store.Float, "5e-324"},
			{"zero", store.Integer, "0"},
			{"neg zero", store.Float, "-0"},
			{"huge", store.Float, "1.7976931348623157e308"},
		})
		q := recordQuery()
		q.SortBy = store.SortValue
		rs, _, err := f.find(t, q)
		require.NoError(t, err, "FindRecords sortBy=value")
		assert.Equal(t, []string{"min float", "min int", "neg zero", "zero", "tiny", "int below", "big int", "big float", "huge"},
			recordNames(rs), "INTEGER and FLOAT compare exactly by numeric value; equal values tie by name")
	})

	t.Run("SortByType", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), valueRecords)
		for _, desc := range []bool{false, true} {
			want := slices.Clone(valueRecords)
			slices.SortFunc(want, func(a, b valueCase) int {
				c := strings.Compare(string(a.typ), string(b.typ))
				if desc {
					c = -c
				}
				return cmp.Or(c, strings.Compare(a.name, b.name))
			})
			var wantNames []string
			for _, c := range want {
				wantNames = append(wantNames, c.name)
			}
			q := recordQuery()
			q.SortBy, q.Desc = store.SortType, desc
			rs, _, err := f.find(t, q)
			if assert.NoError(t, err, "sortBy=type desc=%v", desc) {
				assert.Equal(t, wantNames, recordNames(rs), "sortBy=type desc=%v: type name byte-wise, ties by name ascending", desc)
			}
		}
		q := recordQuery()
		q.SortBy = store.SortType
		rs, _, err := f.find(t, q)
		require.NoError(t, err, "sortBy=type")
		var types []string
		for _, r := range rs {
			if len(types) == 0 || types[len(types)-1] != string(r.Type) {
				types = append(types, string(r.Type))
			}
		}
		assert.Equal(t, []string{"BOOLEAN", "CREDENTIAL", "DATE", "FLOAT", "INTEGER", "NULL", "STRING",
			"[]CREDENTIAL", "[]INTEGER", "[]NULL", "[]STRING"}, types, "sortBy=type orders type names byte-wise")
	})

	t.Run("SortByOtherFields", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), valueRecords[:6])
		tick()
		_, err := f.s.UpdateRecord(t.Context(), setLevel(f.in, 3, "k"), store.Write{}, func(r *store.Record) error {
			r.Value = json.RawMessage("4")
			return nil
		})

		require.NoError(t, err, "UpdateRecord")
		all, _, err := f.find(t, recordQuery())
		require.NoError(t, err, "FindRecords")
		var es []entry
		for _, r := range all {
			es = append(es, recordEntry(r))
		}
		for _, field := range []store.SortField{store.SortName, store.SortID, store.SortCreatedAt, store.SortUpdatedAt} {
			for _, desc := range []bool{false, true} {
				want := slices.SortedFunc(slices.Values(es), compareEntries(field, desc))
				q := recordQuery()
				q.SortBy, q.Desc = field, desc
				rs, _, err := f.find(t, q)
				if assert.NoError(t, err, "sortBy=%s desc=%v", field, desc) {
					assert.Equal(t, entryNames(want), recordNames(rs), "sortBy=%s desc=%v", field, desc)
				}
			}
		}
	})

	t.Run("Filters", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), valueRecords)
		value := func(v string) store.RecordQuery {
			q := recordQuery()
			q.Value, q.HasValue = v, true
			return q
		}
		contains := func(v string) store.RecordQuery {
			q := recordQuery()
			q.ValueContains = v
			return q
		}
		ofType := func(typ store.DataType) store.RecordQuery {
			q := recordQuery()
			q.Type = typ
			return q
		}
		and := func(q store.RecordQuery, change func(*store.RecordQuery)) store.RecordQuery {
			change(&q)
			return q
		}
		for _, tc := range []struct {
			name string
			q    store.RecordQuery
			want []string
		}{
			{"no filter", recordQuery(), []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "w", "x"}},
			{"type INTEGER", ofType(store.Integer), []string{"a", "b", "f", "k"}},
			{"type FLOAT", ofType(store.Float), []string{"c", "p", "q", "x"}},
			{"type NULL", ofType(store.Null), []string{"t", "w"}},
			{"type []NULL", ofType(store.ArrayOf(store.Null)), []string{"r"}},
			{"type CREDENTIAL", ofType(store.Credential), []string{"i"}},
			{"type []CREDENTIAL", ofType(store.ArrayOf(store.Credential)), []string{"m"}},
			{"type UUID", ofType(store.UUID), []string{}},
			{"value across types", value("2"), []string{"c", "f"}},
			{"value INTEGER", value("-3"), []string{"k"}},
			{"value FLOAT canonical", value("-1e+300"), []string{"p"}},
			{"value FLOAT 2^53", value("9.007199254740992e+15"), []string{"x"}},
			{"value FLOAT 2^53 not canonical", value("9007199254740992"), []string{}},
			{"value FLOAT written otherwise", value("2.0"), []string{}},
			{"value STRING", value("abc"), []string{"d", "n"}},
			{"value is case-sensitive", value("b"), []string{}},
			{"value empty STRING", value(""), []string{"o"}},
			{"value BOOLEAN", value("true"), []string{"j"}},
			{"value DATE", value("2026-01-01"), []string{"s"}},
			{"value null", value("null"), []string{"l", "t", "w"}},
			{"value []STRING", value(`["a"]`), []string{"h"}},
			{"value []NULL", value(`[null,null]`), []string{"r"}},
			{"value []INTEGER empty", value(`[]`), []string{"u"}},
			{"value never matches CREDENTIAL", value("sealed secret"), []string{}},
			{"value never matches CREDENTIAL JSON", value(`"sealed secret"`), []string{}},
			{"value never matches []CREDENTIAL", value(`["x"]`), []string{}},
			{"value STRING quoted is not the string", value(`"abc"`), []string{}},
			{"valueContains is case-insensitive", contains("A"), []string{"d", "h", "n"}},
			{"valueContains FLOAT text", contains("E+3"), []string{"p"}},
			{"valueContains null", contains("NULL"), []string{"l", "r", "t", "w"}},
			{"valueContains JSON of arrays", contains(`"`), []string{"h"}},
			{"valueContains digits", contains("00"), []string{"a", "p", "x"}},
			{"valueContains never matches CREDENTIAL", contains("secret"), []string{}},
			{"valueContains never matches []CREDENTIAL", contains("x"), []string{}},
			{"type and value", and(ofType(store.String), func(q *store.RecordQuery) { q.Value, q.HasValue = "abc", true }), []string{"d", "n"}},
			{"type and value disjoint", and(ofType(store.Date), func(q *store.RecordQuery) { q.Value, q.HasValue = "abc", true }), []string{}},
			{"type and valueContains", and(ofType(store.String), func(q *store.RecordQuery) { q.ValueContains = "b" }), []string{"d", "e", "n"}},
			{"type, valueContains and search", and(ofType(store.String), func(q *store.RecordQuery) { q.ValueContains, q.Search = "b", "N" }), []string{"n"}},
			{"value and search", and(value("null"), func(q *store.RecordQuery) { q.Search = "w" }), []string{"w"}},
			{"value and valueContains", and(value("abc"), func(q *store.RecordQuery) { q.ValueContains = "x" }), []string{}},
		} {
			rs, n, err := f.find(t, tc.q)
			if assert.NoError(t, err, tc.name) {
				assert.Equal(t, tc.want, recordNames(rs), "%s: %+v", tc.name, tc.q)
				assert.Equal(t, len(tc.want), n, "%s: total", tc.name)
			}
		}

		q := value("null")
		q.Limit, q.Offset = 1, 1
		rs, n, err := f.find(t, q)
		if assert.NoError(t, err, "value filter with paging") {
			assert.Equal(t, []string{"t"}, recordNames(rs), "a filtered list is paged")
			assert.Equal(t, 3, n, "total counts every match of the filter before paging")
		}
	})

	t.Run("ValueFiltersAreLiteral", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), []valueCase{
			{"pct", store.String, `"100%"`},
			{"hundred", store.String, `"100"`},
			{"under", store.String, `"a_c"`},
			{"abc", store.String, `"abc"`},
			{"slash", store.String, `"back\\slash"`},
			{"slashpct", store.String, `"x\\%y"`},
			{"accent", store.String, `"CAF\u00c9"`},
			{"sigma", store.ArrayOf(store.String), `["\u03a3\u039f\u03a6"]`},
			{"strings", store.ArrayOf(store.String), `["a", "b"]`},
			{"ints", store.ArrayOf(store.Integer), `[1, 2]`},
			{"uuid", store.UUID, `"0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"`},
		})
		contains := func(v string) store.RecordQuery {
			q := recordQuery()
			q.ValueContains = v
			return q
		}
		value := func(v string) store.RecordQuery {
			q := recordQuery()
			q.Value, q.HasValue = v, true
			return q
		}
		for _, tc := range []struct {
			name string
			q    store.RecordQuery
			want []string
		}{
			{"valueContains %", contains("%"), []string{"pct", "slashpct"}},
			{"valueContains 0%", contains("0%"), []string{"pct"}},
			{"valueContains _", contains("_"), []string{"under"}},
			{"valueContains a_c", contains("a_c"), []string{"under"}},
			{"valueContains a%", contains("a%"), []string{}},
			{`valueContains \`, contains(`\`), []string{"slash", "slashpct"}},
			{`valueContains \%`, contains(`\%`), []string{"slashpct"}},
			{`valueContains k\s`, contains(`k\s`), []string{"slash"}},
			{"valueContains café", contains("caf\u00e9"), []string{"accent"}},
			{"valueContains σο", contains("\u03c3\u03bf"), []string{"sigma"}},
			{"valueContains UUID upper", contains("0190A1B2"), []string{"uuid"}},
			{`valueContains ","`, contains(`","`), []string{"strings"}},
			{"value %", value("%"), []string{}},
			{"value 100%", value("100%"), []string{"pct"}},
			{"value a_c", value("a_c"), []string{"under"}},
			{`value back\slash`, value(`back\slash`), []string{"slash"}},
			{"value []STRING", value(`["a","b"]`), []string{"strings"}},
			{"value []STRING spaced", value(`["a", "b"]`), []string{}},
			{"value []INTEGER", value(`[1,2]`), []string{"ints"}},
			{"value UUID", value("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"), []string{"uuid"}},
			{"value UUID upper", value("0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"), []string{}},
			{"value CAFÉ", value("CAF\u00c9"), []string{"accent"}},
			{"value is exact", value("caf\u00e9"), []string{}},
		} {
			rs, n, err := f.find(t, tc.q)
			if assert.NoError(t, err, tc.name) {
				assert.Equal(t, tc.want, recordNames(rs), "%s: value is the exact canonical text; valueContains a case-insensitive literal substring", tc.name)
				assert.Equal(t, len(tc.want), n, "%s: total", tc.name)
			}
		}
	})
}

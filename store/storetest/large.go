package storetest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/store"
)

// largeSizes are the value sizes the large value tests write, in bytes of
// canonical JSON: around the 256 code points a store may index, around the
// 2.7 kB a PostgreSQL btree entry holds, and up to the default body limit.
var largeSizes = []int{1, 255, 256, 257, 2645, 2800, 64 << 10, 1 << 20}

// largeGen makes random, incompressible values of one type.
type largeGen struct {
	typ store.DataType
	// elem returns one random value, as JSON.
	elem func(r *rand.Rand) string
	// grows is true when values of the type can be of any size (strings and
	// arrays); the others have the size of one element.
	grows bool
}

// randomText returns a random string of about n bytes of UTF-8: printable
// ASCII (quotes and backslashes included), Latin-1, CJK and emoji.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n + 4)
	for b.Len() < n {
		var c rune
		switch k := r.IntN(10); {
		case k < 5:
			c = rune(0x20 + r.IntN(0x7f-0x20))
		case k < 7:
			c = rune(0xa1 + r.IntN(0x17f-0xa1))
		case k < 9:
			c = rune(0x4e00 + r.IntN(0x9fff-0x4e00))
		default:
			c = rune(0x1f300 + r.IntN(0x1f64f-0x1f300))
		}
		if b.Len()+utf8.RuneLen(c) > n {
			c = rune('a' + r.IntN(26))
		}
		b.WriteRune(c)
	}
	return b.String()
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func randomUUID(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
}

func randomFloat(r *rand.Rand) string {
	for {
		f := math.Float64frombits(r.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
}

func randomTime(r *rand.Rand) time.Time {
	return time.Unix(r.Int64N(253402300799-(-62135596800))+(-62135596800), r.Int64N(1e9)).UTC()
}

var largeGens = []largeGen{
	{store.String, func(r *rand.Rand) string { return jsonString(randomText(r, r.IntN(40))) }, true},
	{store.Credential, func(r *rand.Rand) string { return jsonString(randomText(r, 1+r.IntN(40))) }, true},
	{store.Integer, func(r *rand.Rand) string { return strconv.FormatInt(int64(r.Uint64()), 10) }, false},
	{store.Float, randomFloat, false},
	{store.Boolean, func(r *rand.Rand) string { return strconv.FormatBool(r.IntN(2) == 0) }, false},
	{store.Date, func(r *rand.Rand) string { return jsonString(randomTime(r).Format(time.DateOnly)) }, false},
	{store.Time, func(r *rand.Rand) string { return jsonString(randomTime(r).Format("15:04:05.000000000")) }, false},
	{store.DateTime, func(r *rand.Rand) string {
		loc := time.FixedZone("", (r.IntN(48)-24)*30*60)
		return jsonString(randomTime(r).In(loc).Format(time.RFC3339Nano))
	}, false},
	{store.UUID, func(r *rand.Rand) string { return jsonString(randomUUID(r)) }, false},
	{store.Null, func(*rand.Rand) string { return "null" }, false},
}

// allLargeGens are largeGens and an array type of each.
var allLargeGens = func() []largeGen {
	gens := slices.Clone(largeGens)
	for _, g := range largeGens {
		gens = append(gens, largeGen{store.ArrayOf(g.typ), g.elem, true})
	}
	return gens
}()

// value returns a canonical value of g's type of about n bytes (exactly n
// bytes of text for a STRING or CREDENTIAL).
func (g largeGen) value(t *testing.T, r *rand.Rand, n int) json.RawMessage {
	t.Helper()
	var js string
	switch {
	case g.typ == store.String || g.typ == store.Credential:
		js = jsonString(randomText(r, n))
	case g.typ.IsArray():
		var b strings.Builder
		b.WriteByte('[')
		for {
			e := g.elem(r)
			if b.Len() > 1 && b.Len()+len(e)+2 > n {
				break
			}
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteString(e)
			if b.Len()+1 >= n {
				break
			}
		}
		b.WriteByte(']')
		js = b.String()
	default:
		js = g.elem(r)
	}
	v, err := g.typ.ParseJSON([]byte(js))
	require.NoError(t, err, "a random %s value parses", g.typ)
	return v
}

func testLargeValues(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("EveryTypeAndSize", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		r := rand.New(rand.NewChaCha8([32]byte{'h', 'd', 's'}))
		for i, g := range allLargeGens {
			next := allLargeGens[(i+1)%len(allLargeGens)]
			for _, n := range largeSizes {
				if !g.grows && n > 1 {
					continue
				}
				name := fmt.Sprintf("%s of %d bytes", g.typ, n)
				p := setLevel(f.path(3), 3, name)
				v1 := g.value(t, r, n)
				created, err := f.s.CreateRecord(f.ctx, p, &store.Record{Type: g.typ, Value: v1}, store.Write{})
				if !assert.NoError(t, err, "CreateRecord of a %s", name) {
					continue
				}
				assertValue(t, f, p, g.typ, v1, 1, "after CreateRecord of a "+name)

				v2 := g.value(t, r, n)
				_, err = f.s.UpdateRecord(f.ctx, setLevel(p, 3, created.ID), store.Write{}, func(rec *store.Record) error {
					rec.Value = v2
					return nil
				})
				if assert.NoError(t, err, "UpdateRecord of a %s to another value", name) {
					assertValue(t, f, p, g.typ, v2, 2, "after UpdateRecord of a "+name)
				}

				v3 := next.value(t, r, n)
				_, err = f.s.UpdateRecord(f.ctx, p, store.Write{}, func(rec *store.Record) error {
					rec.Type, rec.Value = next.typ, v3
					return nil
				})
				if assert.NoError(t, err, "UpdateRecord of a %s to type %s", name, next.typ) {
					assertValue(t, f, p, next.typ, v3, 3, "after changing the type of a "+name+" to "+string(next.typ))
				}

				if n > 64<<10 {
					continue // a rename with a type change is no different at 1 MiB
				}
				v4 := g.value(t, r, n)
				_, err = f.s.UpdateRecord(f.ctx, p, store.Write{}, func(rec *store.Record) error {
					rec.Name, rec.Type, rec.Value = name+" renamed", g.typ, v4
					return nil
				})
				if assert.NoError(t, err, "UpdateRecord renaming a %s and changing its type back", name) {
					assertValue(t, f, setLevel(p, 3, name+" renamed"), g.typ, v4, 4, "after renaming and changing back the type of a "+name)
				}
			}
		}
		k, err := f.s.FindCluster(f.ctx, f.path(2), true)
		if assert.NoError(t, err, "FindCluster with records holding large values") {
			assert.Len(t, k.Records, k.RecordCount, "FindCluster with records returns every record")
		}
	})

	t.Run("SortAndFilterExactly", func(t *testing.T) {
		s := newStore(t)
		r := rand.New(rand.NewChaCha8([32]byte{'s', 'o', 'r', 't'}))
		// Texts that share long prefixes and differ only far beyond any
		// index prefix, and one of a mebibyte.
		common := randomText(r, 3000)
		cut := string([]rune(common)[:256])
		mebi := randomText(r, 1<<20-2)
		strArr := func(elems ...string) string {
			b, err := json.Marshal(elems)
			require.NoError(t, err)
			return string(b)
		}
		cases := []valueCase{
			{"short", store.String, jsonString("a")},
			{"common", store.String, jsonString(common)},
			{"common+a", store.String, jsonString(common + "a")},
			{"common+a+more", store.String, jsonString(common + "a" + randomText(r, 64<<10))},
			{"common+b", store.String, jsonString(common + "b")},
			{"common+é", store.String, jsonString(common + "é")},
			{"common+A", store.String, jsonString(common + "A")},
			{"common again", store.String, jsonString(common)},
			{"cut", store.String, jsonString(cut)},
			{"cut+0", store.String, jsonString(cut + "0")},
			{"cut+~", store.String, jsonString(cut + "~")},
			{"cut minus one", store.String, jsonString(string([]rune(cut)[:255]))},
			{"mebibyte", store.String, jsonString(mebi)},
			{"array x", store.ArrayOf(store.String), strArr(common, "x")},
			{"array y", store.ArrayOf(store.String), strArr(common, "y")},
			{"array of one", store.ArrayOf(store.String), strArr(common)},
			{"number", store.Integer, "5"},
			{"same number", store.Float, "5"},
			{"nothing", store.Null, "null"},
			{"secret", store.Credential, jsonString(common)},
		}
		f := newRecordFixture(t, s, cases)
		keys := map[string]store.ValueKey{}
		for name, rec := range f.recs {
			keys[name] = store.KeyOf(rec.Type, rec.Value)
		}
		names := make([]string, 0, len(cases))
		for _, c := range cases {
			names = append(names, c.name)
		}

		for _, desc := range []bool{false, true} {
			want := slices.Clone(names)
			slices.SortFunc(want, func(a, b string) int {
				c := sortkey.Compare(keys[a], keys[b])
				if desc {
					c = -c
				}
				if c != 0 {
					return c
				}
				return strings.Compare(a, b)
			})
			q := recordQuery()
			q.SortBy, q.Desc = store.SortValue, desc
			rs, n, err := f.find(t, q)
			if assert.NoError(t, err, "sortBy=value desc=%v", desc) {
				assert.Equal(t, len(cases), n, "sortBy=value desc=%v: total", desc)
				assert.Equal(t, want, recordNames(rs), "sortBy=value desc=%v orders large texts byte-wise by their whole text", desc)
			}
			var paged []string
			for offset := 0; offset < len(cases); offset += 3 {
				q.Limit, q.Offset = 3, offset
				rs, _, err := f.find(t, q)
				if !assert.NoError(t, err, "sortBy=value desc=%v offset %d", desc, offset) {
					break
				}
				paged = append(paged, recordNames(rs)...)
			}
			assert.Equal(t, want, paged, "sortBy=value desc=%v: pages of 3 neither overlap nor skip", desc)
		}

		matches := func(keep func(k store.ValueKey) bool) []string {
			out := []string{}
			for _, name := range names {
				if keep(keys[name]) {
					out = append(out, name)
				}
			}
			slices.Sort(out)
			return out
		}
		for _, v := range []string{common, common + "a", cut, cut + "0", mebi, "a", "5", strArr(common, "x"), common + "c", mebi[:len(mebi)-1]} {
			q := recordQuery()
			q.Value, q.HasValue = v, true
			rs, n, err := f.find(t, q)
			want := matches(func(k store.ValueKey) bool { return k.HasText && k.Text == v })
			if assert.NoError(t, err, "value= a text of %d bytes", len(v)) {
				assert.Equal(t, len(want), n, "value= a text of %d bytes: total", len(v))
				assert.Equal(t, want, recordNames(rs), "value= a text of %d bytes matches exactly the records of that whole text", len(v))
			}
		}
		deep := []rune(mebi)
		for _, sub := range []string{
			string(deep[len(deep)/2 : len(deep)/2+12]),
			strings.ToUpper(string(deep[len(deep)-20:])),
			string([]rune(common)[1000:1010]) + "a",
			"é",
		} {
			q := recordQuery()
			q.ValueContains = sub
			rs, n, err := f.find(t, q)
			want := matches(func(k store.ValueKey) bool { return k.HasText && store.MatchesSearch(k.Text, sub) })
			if assert.NoError(t, err, "valueContains=%q", sub) {
				assert.Equal(t, len(want), n, "valueContains=%q: total", sub)
				assert.Equal(t, want, recordNames(rs), "valueContains=%q finds it anywhere in large texts", sub)
			}
		}
	})
}

// assertValue checks that the record at p, found by name, listed and in
// its cluster's data, has type typ, value v and version.
func assertValue(t *testing.T, f *fixture, p store.Path, typ store.DataType, v json.RawMessage, version int64, msg string) {
	t.Helper()
	got, err := f.s.FindRecord(f.ctx, p)
	if assert.NoError(t, err, "%s: FindRecord", msg) {
		assert.Equal(t, typ, got.Type, "%s: type", msg)
		assert.Equal(t, version, got.Version, "%s: version", msg)
		assert.True(t, string(v) == string(got.Value), "%s: FindRecord returns the value byte for byte (%d bytes, got %d)", msg, len(v), len(got.Value))
	}
	q := recordQuery()
	q.Search = p.Record
	rs, _, err := f.s.FindRecords(f.ctx, p, q)
	if assert.NoError(t, err, "%s: FindRecords", msg) {
		i := slices.IndexFunc(rs, func(r *store.Record) bool { return r.Name == p.Record })
		if assert.GreaterOrEqual(t, i, 0, "%s: FindRecords lists the record", msg) {
			assert.True(t, string(v) == string(rs[i].Value), "%s: FindRecords returns the value byte for byte", msg)
		}
	}
}

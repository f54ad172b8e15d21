package e2e_test

// List queries (docs/api.md#list-queries), and fuzzing the list query
// parser through the handler.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// names lists the names of a page of items.
func names[T any](items []T, name func(T) string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func reversed[T any](s []T) []T {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

func recordNames(l listJSON[recordJSON]) []string {
	return names(l.Items, func(r recordJSON) string { return r.Name })
}

func TestListParameters(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		for i := range 3 {
			c.addRecord(alice, K, fmt.Sprintf("r%d", i), "INTEGER", fmt.Sprint(i))
		}
		lists := []struct {
			name, path string
			records    bool
		}{
			{"projects", "/api/v1/projects", false},
			{"collections", pathP("web") + "/collections", false},
			{"clusters", pathC("web", "prod") + "/clusters", false},
			{"records", K + "/records", true},
		}
		bad := []struct {
			query   string
			code    string
			records bool // only on record lists
		}{
			{"limit=0", "INVALID_REQUEST", false},
			{"limit=1001", "INVALID_REQUEST", false},
			{"limit=abc", "INVALID_REQUEST", false},
			{"limit=1e3", "INVALID_REQUEST", false},
			{"limit=1.5", "INVALID_REQUEST", false},
			{"limit=%2B5", "INVALID_REQUEST", false},
			{"limit=+5", "INVALID_REQUEST", false},
			{"limit=-1", "INVALID_REQUEST", false},
			{"limit=", "INVALID_REQUEST", false},
			{"limit=%205", "INVALID_REQUEST", false},
			{"limit=0x10", "INVALID_REQUEST", false},
			{"limit=99999999999999999999", "INVALID_REQUEST", false},
			{"offset=-1", "INVALID_REQUEST", false},
			{"offset=abc", "INVALID_REQUEST", false},
			{"offset=1.5", "INVALID_REQUEST", false},
			{"offset=%2B1", "INVALID_REQUEST", false},
			{"offset=1e3", "INVALID_REQUEST", false},
			{"sortBy=password", "INVALID_REQUEST", false},
			{"sortBy=", "INVALID_REQUEST", false},
			{"sortOrder=up", "INVALID_REQUEST", false},
			{"sortOrder=", "INVALID_REQUEST", false},
			{"search=a%00b", "INVALID_REQUEST", false},
			{"limit=5&sortOrder=sideways", "INVALID_REQUEST", false},
			{"value=a%00b", "INVALID_REQUEST", true},
			{"valueContains=%00", "INVALID_REQUEST", true},
			{"type=FOO", "VALIDATION_ERROR", true},
			{"type=", "VALIDATION_ERROR", true},
			{"reveal=yes", "INVALID_REQUEST", true},
		}
		for _, l := range lists {
			for _, b := range bad {
				if b.records && !l.records {
					continue
				}
				status, _, env := c.do("GET", l.path+"?"+b.query, "", alice)
				wantError(t, l.name+"?"+b.query, status, env, http.StatusBadRequest, b.code, "")
				if b.query == "type=FOO" {
					wantDetails(t, l.name+"?"+b.query, env, allTypes...)
				}
			}
			if !l.records {
				for _, q := range []string{"sortBy=value", "sortBy=type"} {
					status, _, env := c.do("GET", l.path+"?"+q, "", alice)
					wantError(t, l.name+"?"+q, status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
				}
			}

			good := []struct {
				query         string
				limit, offset int
			}{
				{"", 100, 0},
				{"limit=1", 1, 0},
				{"limit=1000", 1000, 0},
				{"offset=0", 100, 0},
				{"offset=2", 100, 2},
				{"offset=500", 100, 500},
				{"limit=2&offset=1", 2, 1},
				{"sortOrder=asc", 100, 0},
				{"sortOrder=desc", 100, 0},
				{"sortBy=name", 100, 0},
				{"sortBy=id&sortOrder=desc", 100, 0},
				{"sortBy=created_at", 100, 0},
				{"sortBy=updated_at", 100, 0},
				{"search=", 100, 0},
				{"foo=bar&unknown=%00", 100, 0},
				{"page=2&per_page=abc", 100, 0},
			}
			if l.records {
				good = append(good, []struct {
					query         string
					limit, offset int
				}{
					{"sortBy=value", 100, 0}, {"sortBy=type&sortOrder=desc", 100, 0},
					{"type=int", 100, 0}, {"type=%5B%5Dstring", 100, 0}, {"type=[]STR", 100, 0},
					{"reveal=true", 100, 0}, {"reveal=false", 100, 0}, {"value=", 100, 0}, {"valueContains=", 100, 0},
				}...)
			}
			for _, g := range good {
				status, _, env := c.do("GET", l.path+"?"+g.query, "", alice)
				what := l.name + "?" + g.query
				if !assert.Equal(t, http.StatusOK, status, "%s: %s", what, env.raw) {
					continue
				}
				wantFields(t, what, env.Data, "items", "total", "limit", "offset", "next_cursor")
				var page struct {
					Items  []json.RawMessage `json:"items"`
					Total  int               `json:"total"`
					Limit  int               `json:"limit"`
					Offset int               `json:"offset"`
				}
				env.decode(t, &page)
				assert.NotNil(t, page.Items, "%s: items is not an array: %s", what, env.Data)
				assert.Equal(t, g.limit, page.Limit, "%s: limit", what)
				assert.Equal(t, g.offset, page.Offset, "%s: offset", what)
				assert.GreaterOrEqual(t, page.Total, len(page.Items), "%s: total at least the items", what)
				assert.LessOrEqual(t, len(page.Items), page.Limit, "%s: items within the limit", what)
			}
		}
		// Paging: total counts every match, the window is cut after.
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records?limit=2&offset=1", "", alice, http.StatusOK).decode(t, &l)
		assert.Equal(t, 3, l.Total, "limit=2&offset=1: total")
		assert.Equal(t, []string{"r1", "r2"}, recordNames(l), "limit=2&offset=1: records")
		c.mustDo("GET", K+"/records?offset=3", "", alice, http.StatusOK).decode(t, &l)
		assert.Equal(t, 3, l.Total, "offset=3: total")
		assert.Empty(t, l.Items, "offset=3: items")
	})
}

func TestListOrderAndSearch(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		all := []string{
			"b", "B", "a", "Z", "_x", "10", "9", "é", "ÄRGER", "ärgerlich",
			"Alpha", "alphabet", "ALPHA-2", "100%", "1000", "a_b", "axb", `a\b`, "ab", "Straße",
		}
		for _, n := range all {
			c.mustDo("POST", pathP(n), "", alice, http.StatusCreated)
		}
		c.mustDo("POST", pathP("bob-alpha"), "", c.token("bob"), http.StatusCreated)
		byteWise := slices.Sorted(slices.Values(all)) // Go compares strings byte-wise
		list := func(query string) (listJSON[projectJSON], []string) {
			t.Helper()
			var l listJSON[projectJSON]
			c.mustDo("GET", "/api/v1/projects?"+query, "", alice, http.StatusOK).decode(t, &l)
			return l, names(l.Items, func(p projectJSON) string { return p.Name })
		}
		_, sorted := list("")
		assert.Equal(t, byteWise, sorted, "default order (byte-wise)")
		_, sorted = list("sortBy=name&sortOrder=desc")
		assert.Equal(t, reversed(byteWise), sorted, "name desc")
		l, _ := list("sortBy=created_at")
		assert.IsNonDecreasing(t, names(l.Items, func(p projectJSON) string { return p.CreatedAt }), "sortBy=created_at is in created_at order")
		_, sorted = list("sortBy=id")
		assert.Equal(t, all, sorted, "sortBy=id (UUIDv7, creation order)")
		_, sorted = list("sortBy=id&sortOrder=desc")
		assert.Equal(t, reversed(all), sorted, "sortBy=id desc")

		searches := []struct {
			search string
			want   []string
		}{
			{"alpha", []string{"ALPHA-2", "Alpha", "alphabet"}},
			{"ALPHA", []string{"ALPHA-2", "Alpha", "alphabet"}},
			{"ärger", []string{"ÄRGER", "ärgerlich"}},
			{"ÄRGER", []string{"ÄRGER", "ärgerlich"}},
			{"É", []string{"é"}},
			{"straße", []string{"Straße"}},
			{"%", []string{"100%"}},
			{"_", []string{"_x", "a_b"}},
			{"a_b", []string{"a_b"}},
			{`\`, []string{`a\b`}},
			{`a\b`, []string{`a\b`}},
			{"100", []string{"100%", "1000"}},
			{"nothing-like-this", []string{}},
		}
		for _, s := range searches {
			l, got := list("search=" + url.QueryEscape(s.search))
			assert.Equal(t, s.want, got, "search=%s: names", s.search)
			assert.Equal(t, len(s.want), l.Total, "search=%s: total", s.search)
		}
		l, got := list("search=a&limit=2&offset=1&sortOrder=desc")
		var want []string
		for _, n := range reversed(byteWise) {
			if strings.Contains(strings.ToLower(n), "a") {
				want = append(want, n)
			}
		}
		assert.Equal(t, len(want), l.Total, "search=a&limit=2&offset=1&sortOrder=desc: total")
		assert.Equal(t, want[1:3], got, "search=a&limit=2&offset=1&sortOrder=desc: names")

		// The other lists search and sort the same way.
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		for _, n := range []string{"Key1", "key2", "other"} {
			c.mustDo("POST", pathC("web", n), "", alice, http.StatusCreated)
		}
		var cols listJSON[collectionJSON]
		c.mustDo("GET", pathP("web")+"/collections?search=KEY", "", alice, http.StatusOK).decode(t, &cols)
		assert.Equal(t, []string{"Key1", "key2"}, names(cols.Items, func(c collectionJSON) string { return c.Name }), "collections search=KEY")
		for _, n := range []string{"k_1", "k%1", "kx1"} {
			c.mustDo("POST", pathK("web", "other", n), "", alice, http.StatusCreated)
		}
		var ks listJSON[clusterJSON]
		c.mustDo("GET", pathC("web", "other")+"/clusters?search=_&sortOrder=desc", "", alice, http.StatusOK).decode(t, &ks)
		assert.Equal(t, []string{"k_1"}, names(ks.Items, func(k clusterJSON) string { return k.Name }), "clusters search=_")
		c.mustDo("GET", pathC("web", "other")+"/clusters?sortOrder=desc", "", alice, http.StatusOK).decode(t, &ks)
		assert.Equal(t, []string{"kx1", "k_1", "k%1"}, names(ks.Items, func(k clusterJSON) string { return k.Name }), "clusters desc")
	})
}

func TestListSortByValue(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		records := []struct{ name, typ, value string }{
			{"i1", "INTEGER", `10`},
			{"i2", "INTEGER", `-5`},
			{"i3", "INTEGER", `9007199254740993`},
			{"f1", "FLOAT", `2.5`},
			{"f2", "FLOAT", `10`},
			{"f3", "FLOAT", `9007199254740992`},
			{"s1", "STRING", `"apple"`},
			{"s2", "STRING", `""`},
			{"s3", "STRING", `"Banana"`},
			{"an", "[]NULL", `[null]`},
			{"b", "BOOLEAN", `true`},
			{"n", "NULL", `null`},
			{"c", "CREDENTIAL", `"aaa"`},
			{"ca", "[]CREDENTIAL", `["a"]`},
		}
		for _, r := range records {
			c.addRecord(alice, K, r.name, r.typ, r.value)
		}
		order := func(query string) []string {
			t.Helper()
			var l listJSON[recordJSON]
			c.mustDo("GET", K+"/records?"+query, "", alice, http.StatusOK).decode(t, &l)
			return recordNames(l)
		}
		// Numbers by value (ties by name), then canonical texts byte-wise
		// ("" < "Banana" < "[null]" < "apple" < "true"), then NULL and
		// credentials (ties by name).
		asc := []string{"i2", "f1", "f2", "i1", "f3", "i3", "s2", "s3", "an", "s1", "b", "c", "ca", "n"}
		desc := []string{"c", "ca", "n", "b", "s1", "an", "s3", "s2", "i3", "f3", "f2", "i1", "f1", "i2"}
		assert.Equal(t, asc, order("sortBy=value"), "sortBy=value")
		assert.Equal(t, asc, order("sortBy=value&sortOrder=asc"), "sortBy=value&sortOrder=asc")
		assert.Equal(t, desc, order("sortBy=value&sortOrder=desc"), "sortBy=value&sortOrder=desc")
		byType := slices.Clone(records)
		slices.SortFunc(byType, func(a, b struct{ name, typ, value string }) int {
			if c := strings.Compare(a.typ, b.typ); c != 0 {
				return c
			}
			return strings.Compare(a.name, b.name)
		})
		wantType := names(byType, func(r struct{ name, typ, value string }) string { return r.name })
		assert.Equal(t, wantType, order("sortBy=type"), "sortBy=type")
		slices.SortStableFunc(byType, func(a, b struct{ name, typ, value string }) int { return strings.Compare(b.typ, a.typ) })
		wantType = names(byType, func(r struct{ name, typ, value string }) string { return r.name })
		assert.Equal(t, wantType, order("sortBy=type&sortOrder=desc"), "sortBy=type&sortOrder=desc (ties by name ascending)")
		assert.Equal(t, []string{"s1", "s3", "s2"}, order("sortBy=value&type=STRING&sortOrder=desc"), "sortBy=value&type=STRING desc")
	})
}

func TestListPaging(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		const n = 25
		for i := range n {
			j := i * 7 % n // creation order differs from name order
			typ, value := "INTEGER", fmt.Sprint(j%3)
			if j%5 == 0 {
				typ, value = "STRING", `"same"`
			}
			c.addRecord(alice, K, fmt.Sprintf("r%02d", j), typ, value)
		}
		for _, sortBy := range []string{"name", "value", "type", "id", "created_at", "updated_at"} {
			for _, order := range []string{"asc", "desc"} {
				base := "sortBy=" + sortBy + "&sortOrder=" + order
				var full listJSON[recordJSON]
				c.mustDo("GET", K+"/records?limit=1000&"+base, "", alice, http.StatusOK).decode(t, &full)
				want := recordNames(full)
				var got []string
				for offset := 0; offset < n+7; offset += 7 {
					var page listJSON[recordJSON]
					c.mustDo("GET", fmt.Sprintf("%s/records?limit=7&offset=%d&%s", K, offset, base), "", alice, http.StatusOK).decode(t, &page)
					assert.Equal(t, n, page.Total, "%s offset %d: total", base, offset)
					assert.Equal(t, 7, page.Limit, "%s offset %d: limit", base, offset)
					assert.Equal(t, offset, page.Offset, "%s offset %d: offset", base, offset)
					got = append(got, recordNames(page)...)
				}
				assert.Len(t, want, n, "%s: the full list", base)
				assert.Equal(t, want, got, "%s: pages of 7", base)
				assert.Len(t, slices.Compact(slices.Sorted(slices.Values(got))), n, "%s: pages overlap or skip: %q", base, got)
			}
		}
	})
}

func TestRecordFilters(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		for _, r := range []struct{ name, typ, value string }{
			{"i10", "INTEGER", `10`},
			{"f10", "FLOAT", `10.0`},
			{"s10", "STRING", `"10"`},
			{"f21", "FLOAT", `1e21`},
			{"bool", "BOOLEAN", `true`},
			{"strue", "STRING", `"true"`},
			{"nul", "NULL", `null`},
			{"snull", "STRING", `"null"`},
			{"uuid", "UUID", `"0190A5B4-C0DE-7ABC-8DEF-0123456789AB"`},
			{"arr", "[]STRING", `["a", "b"]`},
			{"pct", "STRING", `"100%"`},
			{"pct2", "STRING", `"1000"`},
			{"und", "STRING", `"a_b"`},
			{"und2", "STRING", `"axb"`},
			{"bs", "STRING", `"a\\b"`},
			{"hello", "STRING", `"Hello World"`},
			{"dt", "DATETIME", `"2026-11-22T09:18:19.500+01:00"`},
			{"empty", "STRING", `""`},
			{"umlaut", "STRING", `"ÄRGER"`},
		} {
			c.addRecord(alice, K, r.name, r.typ, r.value)
		}
		tests := []struct {
			query string
			want  []string // in name order
		}{
			{"value=10", []string{"f10", "i10", "s10"}},
			{"value=10.0", []string{}},
			{"value=1e%2B21", []string{"f21"}},
			{"value=1e21", []string{}},
			{"value=true", []string{"bool", "strue"}},
			{"value=null", []string{"nul", "snull"}},
			{"value=0190A5B4-C0DE-7ABC-8DEF-0123456789AB", []string{}},
			{"value=0190a5b4-c0de-7abc-8def-0123456789ab", []string{"uuid"}},
			{"value=" + url.QueryEscape(`["a","b"]`), []string{"arr"}},
			{"value=hello%20world", []string{}},
			{"value=Hello%20World", []string{"hello"}},
			{"value=", []string{"empty"}},
			{"value=2026-11-22T09:18:19.500%2B01:00", []string{"dt"}},
			{"valueContains=HELLO", []string{"hello"}},
			{"valueContains=ärger", []string{"umlaut"}},
			{"valueContains=%25", []string{"pct"}},
			{"valueContains=_", []string{"und"}},
			{"valueContains=%5C", []string{"bs"}},
			{"valueContains=%2B01:00", []string{"dt"}},
			{"valueContains=%22a%22", []string{"arr"}},
			{"valueContains=e%2B2", []string{"f21"}},
			{"type=STRING&valueContains=10", []string{"pct", "pct2", "s10"}},
			{"type=INTEGER&value=10", []string{"i10"}},
			{"type=flt&value=10", []string{"f10"}},
			{"type=%5B%5DSTRING", []string{"arr"}},
			{"type=[]str", []string{"arr"}},
			{"type=null", []string{"nul"}},
			{"search=10&value=10", []string{"f10", "i10", "s10"}},
			{"search=F&value=10", []string{"f10"}},
			{"search=s&valueContains=u&type=string", []string{"strue", "snull"}},
			{"type=BOOLEAN&value=false", []string{}},
		}
		for _, tt := range tests {
			var l listJSON[recordJSON]
			c.mustDo("GET", K+"/records?"+tt.query, "", alice, http.StatusOK).decode(t, &l)
			want := slices.Clone(tt.want) // [] stays [], not nil
			slices.Sort(want)
			assert.Equal(t, want, recordNames(l), "?%s: names", tt.query)
			assert.Equal(t, len(want), l.Total, "?%s: total", tt.query)
		}
	})
}
func FuzzListQuery(f *testing.F) {
	for _, seed := range []string{
		"", "limit=0", "limit=1", "limit=1000", "limit=1001", "limit=abc", "limit=1e3", "limit=1.5", "limit=+5",
		"limit=%2B5", "limit=-1", "limit=", "limit=99999999999999999999", "offset=-1", "offset=9223372036854775807",
		"offset=99999999999999999999", "limit=1000&offset=1", "sortBy=password", "sortBy=value&sortOrder=desc",
		"sortBy=type", "sortOrder=up", "type=FOO", "type=%5B%5DSTRING", "type=[]int", "type=credential", "type=",
		"search=%00", "value=%00", "valueContains=%00", "search=%25", "search=_", "search=%5C", "search=%FF",
		"value=%FF", "valueContains=%C0%80", "value=10&type=INTEGER", "value=", "reveal=true", "reveal=yes",
		"a=%zz", "limit=1&limit=2", ";", "&&&", "=", "%", "search=%E2%80%AE", "sortBy=name;sortOrder=desc",
		"valueContains=" + strings.Repeat("x", 5000),
	} {
		f.Add(seed)
	}
	type target struct {
		c     *client
		path  string
		token string
	}
	var targets []target
	for _, kind := range storeKinds {
		c := newServer(f, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		for i, r := range []struct{ typ, value string }{
			{"INTEGER", "10"}, {"FLOAT", "2.5"}, {"STRING", `"abc"`}, {"NULL", "null"}, {"CREDENTIAL", `"pw"`},
			{"[]STRING", `["a"]`}, {"UUID", `"0190a5b4-c0de-7abc-8def-0123456789ab"`}, {"BOOLEAN", "true"},
		} {
			c.addRecord(alice, K, fmt.Sprintf("r%d", i), r.typ, r.value)
		}
		targets = append(targets, target{c, K + "/records", alice})
	}
	f.Fuzz(func(t *testing.T, query string) {
		for _, tg := range targets {
			c := *tg.c
			c.t = t
			r := request("GET", tg.path, "", tg.token)
			r.URL.RawQuery = query
			status, _, env := c.send(r) // reports a broken envelope
			switch status {
			case http.StatusOK:
				var page struct {
					Items  []json.RawMessage `json:"items"`
					Total  *int              `json:"total"`
					Limit  int               `json:"limit"`
					Offset *int              `json:"offset"`
				}
				what := fmt.Sprintf("?%q: page %s", query, env.Data)
				if assert.NoError(t, json.Unmarshal(env.Data, &page), what) {
					assert.NotNil(t, page.Items, "%s: items", what)
					assert.NotNil(t, page.Total, "%s: total", what)
					assert.NotNil(t, page.Offset, "%s: offset", what)
					assert.GreaterOrEqual(t, page.Limit, 1, "%s: limit", what)
					assert.LessOrEqual(t, page.Limit, 1000, "%s: limit", what)
					assert.LessOrEqual(t, len(page.Items), page.Limit, "%s: items within the limit", what)
				}
			case http.StatusBadRequest:
				assert.Contains(t, []string{"INVALID_REQUEST", "VALIDATION_ERROR"}, env.code(), "?%q: 400 code", query)
			default:
				assert.Fail(t, "status, want 200 or 400", "?%q: status %d: %s", query, status, env.raw)
			}
		}
	})
}

// TestLimitMessage: a limit that is not a decimal integer is refused with
// details that give its range, 1 to 1000 (docs/api.md#list-queries), not
// "0 or more", which holds for offset only.
func TestLimitMessage(t *testing.T) {
	c := newServer(t, memoryKind)
	alice := c.token("alice")
	for _, v := range []string{"abc", "1e3", "1.5", "+5", "-1", ""} {
		status, _, env := c.do("GET", "/api/v1/projects?limit="+v, "", alice)
		wantError(t, "limit="+v, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		assert.Equal(t, "limit must be a decimal integer from 1 to 1000", env.details(), "limit=%s: details", v)
	}
	for _, v := range []string{"0", "1001", "99999999999999999999"} {
		status, _, env := c.do("GET", "/api/v1/projects?limit="+v, "", alice)
		wantError(t, "limit="+v, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		assert.Equal(t, "limit must be between 1 and 1000", env.details(), "limit=%s: details", v)
	}
}

// v11Lists builds a project web/prod/k with three records and returns the
// four kinds of list.
func v11Lists(c *client, token string) []struct{ name, path string } {
	c.tree(token, "web", "prod", "k")
	K := pathK("web", "prod", "k")
	for i := range 3 {
		c.addRecord(token, K, fmt.Sprintf("r%d", i), "INTEGER", fmt.Sprint(i))
	}
	return []struct{ name, path string }{
		{"projects", "/api/v1/projects"},
		{"collections", pathP("web") + "/collections"},
		{"clusters", pathC("web", "prod") + "/clusters"},
		{"records", K + "/records"},
	}
}
func TestListCountFalse(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		for _, l := range v11Lists(c, alice) {
			// count=true (and the default) count every match.
			for _, q := range []string{"", "?count=true"} {
				env := c.mustDo("GET", l.path+q, "", alice, http.StatusOK)
				var page map[string]json.RawMessage
				env.decode(t, &page)
				assert.NotEqual(t, "null", string(page["total"]), "%s%s: total", l.name, q)
			}

			// count=false: total null, the page itself unchanged.
			env := c.mustDo("GET", l.path+"?count=false&limit=1&offset=0", "", alice, http.StatusOK)
			var page map[string]json.RawMessage
			env.decode(t, &page)
			assert.Equal(t, "null", string(page["total"]), "%s: total", l.name)
			assert.Equal(t, "1", string(page["limit"]), "%s: limit", l.name)
			assert.Equal(t, "0", string(page["offset"]), "%s: offset", l.name)
			var items []json.RawMessage
			require.NoError(t, json.Unmarshal(page["items"], &items))
			assert.Len(t, items, 1, "%s: items", l.name)

			// An empty page (past the end) is not counted either.
			env = c.mustDo("GET", l.path+"?count=false&offset=50", "", alice, http.StatusOK)
			env.decode(t, &page)
			assert.Equal(t, "null", string(page["total"]), "%s past the end: total", l.name)
			assert.Equal(t, "[]", string(page["items"]), "%s past the end: items", l.name)

			// Anything but true or false is refused, and so is count twice.
			for _, bad := range []string{"count=", "count=0", "count=FALSE", "count=no", "count=false&count=false"} {
				status, _, env := c.do("GET", l.path+"?"+bad, "", alice)
				msg := "count must be true or false"
				if bad == "count=false&count=false" {
					msg = "the query parameter count is given more than once"
				}
				wantError(t, l.name+" ?"+bad, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
				assert.Equal(t, msg, env.details(), "%s ?%s: details", l.name, bad)
			}
		}

		// The record filters still apply with count=false.
		K := pathK("web", "prod", "k")
		var recs listJSON[recordJSON]
		c.mustDo("GET", K+"/records?count=false&value=1", "", alice, http.StatusOK).decode(t, &recs)
		assert.Equal(t, []string{"r1"}, recordNames(recs))
	})
}
func TestListRanges(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k") + "/records"
		c.addRecord(alice, pathK("web", "prod", "k"), "a", "INTEGER", "-3")
		c.addRecord(alice, pathK("web", "prod", "k"), "b", "INTEGER", "10")
		c.addRecord(alice, pathK("web", "prod", "k"), "c", "FLOAT", "2.5")
		c.addRecord(alice, pathK("web", "prod", "k"), "d", "STRING", `"5"`)
		c.addRecord(alice, pathK("web", "prod", "k"), "e", "DATETIME", `"2026-11-22T09:00:00+01:00"`)
		c.addRecord(alice, pathK("web", "prod", "k"), "f", "DATETIME", `"2026-11-22T08:30:00Z"`)
		c.addRecord(alice, pathK("web", "prod", "k"), "g", "INTEGER", "2")

		for _, tc := range []struct{ query, want string }{
			{"type=INT&minValue=2", "b g"},
			{"type=integer&minValue=-3&maxValue=2", "a g"},
			{"type=INTEGER&maxValue=9&sortBy=value&sortOrder=desc", "g a"},
			{"type=FLOAT&minValue=2.5&maxValue=2.5", "c"},
			{"type=STRING&minValue=4&maxValue=6", "d"},
			// 08:00Z and 08:30Z: by instant, the offset taken into account.
			{"type=DATETIME&minValue=2026-11-22T09:00:00%2B01:00", "e f"},
			{"type=DATETIME&maxValue=2026-11-22T08:00:00Z", "e"},
			{"type=DATETIME&minValue=2026-11-22T08:00:00.000000001Z&count=false", "f"},
			{"type=INTEGER&minValue=0&search=G", "g"},
		} {
			var page listJSON[recordJSON]
			c.mustDo("GET", K+"?"+tc.query, "", alice, http.StatusOK).decode(t, &page)
			assert.Equal(t, tc.want, strings.Join(recordNames(page), " "), tc.query)
		}

		needType := "minValue and maxValue need type to be one of INTEGER, FLOAT, DATE, TIME, DATETIME, STRING, UUID"
		for _, tc := range []struct{ query, code, message, details string }{
			{"minValue=1", "INVALID_REQUEST", "Invalid request", needType},
			{"maxValue=1", "INVALID_REQUEST", "Invalid request", needType},
			{"type=BOOLEAN&maxValue=true", "INVALID_REQUEST", "Invalid request", needType},
			{"type=NULL&minValue=", "INVALID_REQUEST", "Invalid request", needType},
			{"type=[]INTEGER&minValue=1", "INVALID_REQUEST", "Invalid request", needType},
			{"type=CREDENTIAL&minValue=x", "INVALID_REQUEST", "Invalid request", needType},
			{"type=INTEGER&minValue=1&minValue=2", "INVALID_REQUEST", "Invalid request", "the query parameter minValue is given more than once"},
			{"type=INTEGER&minValue=1.5", "VALIDATION_ERROR", "Validation failed",
				"minValue: INTEGER value must be a number written as a whole number in int64 range (no fraction, no exponent)"},
			{"type=INTEGER&maxValue=9223372036854775808", "VALIDATION_ERROR", "Validation failed",
				"maxValue: INTEGER value must be a number written as a whole number in int64 range (no fraction, no exponent)"},
			{"type=INTEGER&minValue=", "VALIDATION_ERROR", "Validation failed",
				"minValue: INTEGER value must be a number written as a whole number in int64 range (no fraction, no exponent)"},
			{"type=FLOAT&maxValue=1e400", "VALIDATION_ERROR", "Validation failed", "maxValue: FLOAT value must be a finite number"},
			{"type=FLOAT&minValue=abc", "VALIDATION_ERROR", "Validation failed", "minValue: FLOAT value must be a finite number"},
			{"type=DATE&maxValue=2026-02-30", "VALIDATION_ERROR", "Validation failed",
				"maxValue: DATE value must be a string YYYY-MM-DD holding a real calendar date"},
			{"type=TIME&minValue=24:00:00", "VALIDATION_ERROR", "Validation failed",
				"minValue: TIME value must be a string HH:MM:SS with an optional fraction of 1 to 9 digits, from 00:00:00 to 23:59:59"},
			{"type=DATETIME&minValue=2026-11-22T08:00:00", "VALIDATION_ERROR", "Validation failed",
				"minValue: DATETIME value must be an RFC 3339 string with an offset, e.g. 2026-11-22T08:18:19Z"},
			{"type=UUID&maxValue=not-a-uuid", "VALIDATION_ERROR", "Validation failed",
				"maxValue: UUID value must be a string in 8-4-4-4-12 hex form"},
			{"type=STRING&minValue=a%00b", "VALIDATION_ERROR", "Validation failed", "minValue: STRING value must not contain U+0000"},
		} {
			status, _, env := c.do("GET", K+"?"+tc.query, "", alice)
			wantError(t, tc.query, status, env, http.StatusBadRequest, tc.code, tc.message)
			assert.Equal(t, tc.details, env.details(), "%s: details", tc.query)
		}
	})
}

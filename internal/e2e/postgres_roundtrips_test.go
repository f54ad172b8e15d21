package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPostgresListRoundTrips: on PostgreSQL a record list costs at most
// two database round trips (issue 16) whatever the page: empty, past the
// end, resumed by a cursor (by name, and by value across the types'
// groups), counted or not, filtered by a pattern or a range (statements
// sent as written) or matching nothing; and the page and its total are
// what docs/api.md#list-queries says.
func TestPostgresListRoundTrips(t *testing.T) {
	proxy, c := proxiedPostgres(t)
	c.addUser("carol", "carol-password")
	readFixture(c, "carol") // p/c/k holds r, INTEGER 7
	alice := c.token("alice")
	k := pathK("p", "c", "k") + "/records"
	c.addRecord(alice, pathK("p", "c", "k"), "s", "INTEGER", "9")
	c.addRecord(alice, pathK("p", "c", "k"), "t", "STRING", `"tea"`)
	c.mustDo("POST", pathK("p", "c", "e"), "", alice, http.StatusCreated)
	empty := pathK("p", "c", "e") + "/records"
	carol := c.login("carol", "carol-password")

	cursor := func(target string) string { return c.cursorOf(t, target, carol) }
	byName := cursor(k + "?limit=1")
	byValue := cursor(k + "?limit=1&sortBy=value") // after r (7): s (9) in its group, then t in the next
	byValueDesc := cursor(k + "?limit=2&sortBy=value&sortOrder=desc")
	last := cursor(k + "?limit=2")
	byRange := cursor(k + "?limit=1&type=INTEGER&minValue=1")

	for _, tc := range []struct {
		what, target string
		total        int // -1: not counted
		names        []string
	}{
		{"whole list", k, 3, []string{"r", "s", "t"}},
		{"empty cluster", empty, 0, nil},
		{"empty cluster, count=false", empty + "?count=false", -1, nil},
		{"offset past the end", k + "?offset=10", 3, nil},
		{"offset past the end, count=false", k + "?offset=10&count=false", -1, nil},
		{"filter matching nothing", k + "?type=BOOLEAN", 0, nil},
		{"pattern matching nothing", k + "?search=zzz", 0, nil},
		{"range matching nothing", k + "?type=INTEGER&minValue=100", 0, nil},
		{"range", k + "?type=INTEGER&minValue=8", 1, []string{"s"}},
		{"cursor by name, count=true", k + "?limit=1&count=true&cursor=" + byName, 3, []string{"s"}},
		{"cursor by name, count=false", k + "?limit=1&count=false&cursor=" + byName, -1, []string{"s"}},
		{"cursor by value, across groups", k + "?limit=2&sortBy=value&cursor=" + byValue, 3, []string{"s", "t"}},
		{"cursor by value, within a group", k + "?limit=1&sortBy=value&cursor=" + byValue, 3, []string{"s"}},
		{"cursor by value, descending", k + "?limit=2&sortBy=value&sortOrder=desc&cursor=" + byValueDesc, 3, []string{"r"}},
		{"cursor at the end", k + "?limit=2&cursor=" + last, 3, []string{"t"}},
		{"cursor with a range", k + "?limit=1&type=INTEGER&minValue=1&cursor=" + byRange, 2, []string{"s"}},
	} {
		c.getPage(t, tc.target, carol) // prepares what the route runs
		before := proxy.RoundTrips()
		p := c.getPage(t, tc.target, carol)
		trips := proxy.RoundTrips() - before
		t.Logf("TRIPS %-40s %d", tc.what, trips)
		assert.LessOrEqual(t, trips, int64(2), "%s: database round trips", tc.what)
		var names []string
		for _, it := range p.Items {
			names = append(names, it.Name)
		}
		assert.Equal(t, tc.names, names, "%s: items", tc.what)
		if tc.total < 0 {
			assert.Nil(t, p.Total, "%s: total", tc.what)
		} else if assert.NotNil(t, p.Total, "%s: total", tc.what) {
			assert.Equal(t, tc.total, *p.Total, "%s: total", tc.what)
		}
	}
}

// TestPostgresReadRoundTrips counts, on the wire, the round trips the
// PostgreSQL store makes for the deferred reads through hds.New: one for
// GET R (the session check, the path, the access and the record in one
// statement), two for GET K/records (the path with the session check,
// then the page with its total). Errors cost no more: a missing record,
// no access, an unknown project and an ended session are one statement.
func TestPostgresReadRoundTrips(t *testing.T) {
	proxy, c := proxiedPostgres(t)
	c.addUser("carol", "carol-password")
	readFixture(c, "carol")
	carol := c.login("carol", "carol-password")
	ended := c.login("carol", "carol-password")
	c.mustDo("POST", "/api/v1/auth/logout", "", ended, http.StatusNoContent)

	for _, tc := range []struct {
		what, target, token string
		status              int
		trips               int64
	}{
		{"GET R", pathR("p", "c", "k", "r"), carol, http.StatusOK, 1},
		{"GET R by id", pathR("p", "c", "k", c.recordID(carol, "p", "r")), carol, http.StatusOK, 1},
		{"GET K/records", pathK("p", "c", "k") + "/records", carol, http.StatusOK, 2},
		{"GET K/records, filtered", pathK("p", "c", "k") + "/records?type=INTEGER&sortBy=value", carol, http.StatusOK, 2},
		{"GET R, missing", pathR("p", "c", "k", "nope"), carol, http.StatusNotFound, 1},
		{"GET R, no access", pathR("q", "c", "k", "r"), carol, http.StatusForbidden, 1},
		{"GET R, unknown project", pathR("nope", "c", "k", "r"), carol, http.StatusNotFound, 1},
		{"GET K/records, no access", pathK("q", "c", "k") + "/records", carol, http.StatusForbidden, 1},
		{"GET R, ended session", pathR("p", "c", "k", "r"), ended, http.StatusUnauthorized, 1},
		{"GET K/records, ended session", pathK("p", "c", "k") + "/records", ended, http.StatusUnauthorized, 1},
	} {
		c.mustDo("GET", tc.target, "", tc.token, tc.status) // prepares what the route runs
		before := proxy.RoundTrips()
		c.mustDo("GET", tc.target, "", tc.token, tc.status)
		assert.Equal(t, tc.trips, proxy.RoundTrips()-before, "%s: database round trips", tc.what)
	}
}

// TestPostgresDiffRoundTrips: on PostgreSQL a comparison
// (docs/api.md#compare-and-promote) runs as many statements for two
// collections of 600 records in 6 clusters each as for two of one record:
// a fixed number, never one per cluster or per record.
func TestPostgresDiffRoundTrips(t *testing.T) {
	proxy, c := proxiedPostgres(t)
	alice := c.token("alice")
	c.tree(alice, "p", "small-a", "k")
	c.mustDo("POST", pathC("p", "small-b"), "", alice, http.StatusCreated)
	c.addRecord(alice, pathK("p", "small-a", "k"), "r", "INTEGER", "1")
	for _, side := range []string{"big-a", "big-b"} {
		ops := make([]string, 0, 600)
		for i := range 600 {
			v := i
			if side == "big-b" && i%7 == 0 {
				v = -i
			}
			ops = append(ops, fmt.Sprintf(`{"op":"create","collection":%q,"cluster":"k%d","record":"r%03d","type":"INTEGER","value":%d}`, side, i%6, i, v))
		}
		c.mustDo("POST", pathP("p")+"/batch", `{"create_parents":true,"operations":[`+strings.Join(ops, ",")+`]}`, alice, http.StatusOK)
	}
	trips := func(query string) (int64, diffJSON) {
		c.diff(t, "p", query, alice) // prepares what the route runs
		before := proxy.RoundTrips()
		d := c.diff(t, "p", query, alice)
		return proxy.RoundTrips() - before, d
	}
	small, d := trips("from=small-a&to=small-b")
	assert.Equal(t, 1, d.Summary.Added, "small: one record added")
	big, d := trips("from=big-a&to=big-b")
	assert.Equal(t, 85, d.Summary.Changed, "big: every seventh record but r000 changed")
	assert.Equal(t, 515, d.Summary.Unchanged, "big: the rest unchanged")
	t.Logf("TRIPS diff of 1 record: %d, of 600 records in 6 clusters: %d", small, big)
	assert.Equal(t, small, big, "the same statements whatever the sides hold")
}

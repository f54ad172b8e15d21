package e2e_test

// Cursors (docs/api.md#list-queries, v1.1): every list's data has
// next_cursor, and ?cursor= returns the next page.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// cursorPage is a page of any list, with its cursor.
type cursorPage struct {
	Items []struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Username string `json:"username"`
		Revision int64  `json:"revision"`
	} `json:"items"`
	Total      *int    `json:"total"`
	Limit      int     `json:"limit"`
	Offset     int     `json:"offset"`
	NextCursor *string `json:"next_cursor"`
}

// getPage GETs a list page.
func (c *client) getPage(t *testing.T, target, token string) cursorPage {
	t.Helper()
	env := c.mustDo("GET", target, "", token, http.StatusOK)
	wantFields(t, target, env.Data, "items", "total", "limit", "offset", "next_cursor")
	var p cursorPage
	env.decode(t, &p)
	return p
}

// cursorOf GETs a list page that has a next one and returns its
// next_cursor, escaped for a query string.
func (c *client) cursorOf(t *testing.T, target, token string) string {
	t.Helper()
	p := c.getPage(t, target, token)
	require.NotNil(t, p.NextCursor, target)
	return url.QueryEscape(*p.NextCursor)
}

// label names a list item: its name, its username (members) or its
// revision (audit entries).
func label(name, username string, revision int64) string {
	switch {
	case name != "":
		return name
	case username != "":
		return username
	}
	return fmt.Sprint(revision)
}

// walk pages through path?query by cursor, limit items a page, and
// returns the items listed (see label).
func (c *client) walk(t *testing.T, path, query string, limit int, token string) []string {
	t.Helper()
	var names []string
	target := fmt.Sprintf("%s?limit=%d&%s", path, limit, query)
	for range 100 {
		p := c.getPage(t, target, token)
		assert.Equal(t, 0, p.Offset, "%s: offset", target)
		for _, it := range p.Items {
			names = append(names, label(it.Name, it.Username, it.Revision))
		}
		if p.NextCursor == nil {
			return names
		}
		assert.Len(t, p.Items, limit, "%s: a page with a next one is full", target)
		target = fmt.Sprintf("%s?limit=%d&%s&cursor=%s", path, limit, query, url.QueryEscape(*p.NextCursor))
	}
	t.Fatalf("%s: the walk does not end", path)
	return nil
}

func TestListCursors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		lists := v11Lists(c, alice)
		c.mustDo("POST", pathC("web", "dev"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("web", "prod", "k2"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathP("web2"), "", alice, http.StatusCreated)
		K := pathK("web", "prod", "k")
		for i, v := range []string{"10", "-3", `"x"`, "2.5", "null"} {
			typ := map[bool]string{true: "INTEGER", false: "STRING"}[!strings.Contains(v, `"`)]
			switch v {
			case "2.5":
				typ = "FLOAT"
			case "null":
				typ = "NULL"
			}
			c.addRecord(alice, K, fmt.Sprintf("v%d", i), typ, v)
		}

		for _, l := range lists {
			// A search that matches two items or more of each list.
			search := map[string]string{"projects": "WEB", "collections": "d", "clusters": "K", "records": "r"}[l.name]
			queries := []string{"", "sortOrder=desc", "sortBy=id", "sortBy=created_at&sortOrder=desc", "sortBy=updated_at", "count=false", "search=" + search}
			if l.name == "records" {
				queries = append(queries, "sortBy=value", "sortBy=value&sortOrder=desc", "sortBy=type",
					"type=INTEGER&minValue=0&sortBy=value", "valueContains=1")
			}
			for _, q := range queries {
				all := c.getPage(t, l.path+"?"+q, alice)
				assert.Nil(t, all.NextCursor, "%s?%s: the page that holds the last item has no cursor", l.name, q)
				var want []string
				for _, it := range all.Items {
					want = append(want, it.Name)
				}
				require.GreaterOrEqual(t, len(want), 2, "%s?%s: enough items to page", l.name, q)
				for _, limit := range []int{1, 2} {
					assert.Equal(t, want, c.walk(t, l.path, q, limit, alice), "%s?%s by %d", l.name, q, limit)
				}
			}
		}

		t.Run("TotalOnEveryPage", func(t *testing.T) {
			p := c.getPage(t, K+"/records?limit=2", alice)
			require.NotNil(t, p.NextCursor)
			p = c.getPage(t, K+"/records?limit=2&offset=0&cursor="+url.QueryEscape(*p.NextCursor), alice)
			require.NotNil(t, p.Total)
			assert.Equal(t, 8, *p.Total, "total counts every match, not those after the cursor")
			assert.Equal(t, []string{"r2", "v0"}, []string{p.Items[0].Name, p.Items[1].Name})
		})

		t.Run("ResumesAfterDeletedItem", func(t *testing.T) {
			c.tree(alice, "del", "c", "k")
			D := pathK("del", "c", "k")
			for i := range 5 {
				c.addRecord(alice, D, fmt.Sprintf("d%d", i), "INTEGER", fmt.Sprint(i))
			}
			p := c.getPage(t, D+"/records?limit=2", alice)
			c.mustDo("DELETE", D+"/records/d1", "", alice, http.StatusNoContent)
			c.addRecord(alice, D, "d0a", "INTEGER", "9")
			p = c.getPage(t, D+"/records?limit=2&cursor="+url.QueryEscape(*p.NextCursor), alice)
			assert.Equal(t, "d2", p.Items[0].Name, "the page resumes after the deleted item")
		})
	})
}

func TestListCursorErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		lists := v11Lists(c, alice)
		c.mustDo("POST", pathK("web", "prod", "other"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathP("web2"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathC("web2", "c"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathC("web", "dev"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("web", "dev", "k"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathC("web", "prod2"), "", alice, http.StatusCreated)
		K := pathK("web", "prod", "k")
		cursorOf := func(target string) string { return c.cursorOf(t, target, alice) }
		const (
			malformed = "cursor is malformed"
			other     = "cursor belongs to another list, sort or set of filters"
		)
		for _, l := range lists {
			cur := cursorOf(l.path + "?limit=1")
			raw, _ := url.QueryUnescape(cur)
			// Another base64url character in the middle: the cursor still
			// decodes, so only its tag can give it away.
			flipped := []byte(raw)
			if flipped[len(flipped)/2] == 'A' {
				flipped[len(flipped)/2] = 'B'
			} else {
				flipped[len(flipped)/2] = 'A'
			}
			_, err := base64.RawURLEncoding.DecodeString(string(flipped))
			require.NoError(t, err, "%s: the altered cursor is base64url", l.name)
			for _, e := range []struct {
				what, query, message string
			}{
				{"with an offset", "offset=1&cursor=" + cur, "offset must be absent or 0 with a cursor"},
				{"empty", "cursor=", malformed},
				{"not base64", "cursor=%21%21%21", malformed},
				{"short", "cursor=AAAA", malformed},
				{"altered", "cursor=" + url.QueryEscape(string(flipped)), malformed},
				{"truncated", "cursor=" + url.QueryEscape(raw[:len(raw)-2]), malformed},
				{"another sort", "sortBy=id&cursor=" + cur, other},
				{"another order", "sortOrder=desc&cursor=" + cur, other},
				{"another search", "search=r&cursor=" + cur, other},
				{"given twice", "cursor=" + cur + "&cursor=" + cur, "the query parameter cursor is given more than once"},
			} {
				status, _, env := c.do("GET", l.path+"?"+e.query, "", alice)
				wantError(t, l.name+": a cursor "+e.what, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
				wantDetails(t, l.name+": a cursor "+e.what, env, e.message)
			}
			// offset=0 with a cursor is fine; so are another limit and count.
			c.mustDo("GET", l.path+"?offset=0&limit=5&count=false&cursor="+cur, "", alice, http.StatusOK)
		}

		// Another list: another kind of list, another parent, other filters.
		recs := cursorOf(K + "/records?limit=1")
		for _, e := range []struct{ what, target string }{
			{"another cluster", pathK("web", "prod", "other") + "/records?cursor=" + recs},
			{"a cluster list", pathC("web", "prod") + "/clusters?cursor=" + recs},
			{"another type", K + "/records?type=INTEGER&cursor=" + recs},
			{"another value", K + "/records?value=1&cursor=" + recs},
			{"another valueContains", K + "/records?valueContains=1&cursor=" + recs},
			{"another range", K + "/records?type=INTEGER&minValue=1&cursor=" + cursorOf(K+"/records?limit=1&type=INTEGER")},
			{"another collection", pathC("web", "dev") + "/clusters?cursor=" + cursorOf(pathC("web", "prod")+"/clusters?limit=1")},
			{"another project", pathP("web2") + "/collections?cursor=" + cursorOf(pathP("web")+"/collections?limit=1")},
		} {
			status, _, env := c.do("GET", e.target, "", alice)
			wantError(t, "a cursor of "+e.what, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			wantDetails(t, "a cursor of "+e.what, env, other)
		}
		// Another user's project list.
		bob := c.token("bob")
		c.mustDo("POST", pathP("bobs"), "", bob, http.StatusCreated)
		status, _, env := c.do("GET", "/api/v1/projects?cursor="+cursorOf("/api/v1/projects?limit=1"), "", bob)
		wantError(t, "a cursor of another user's projects", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		wantDetails(t, "a cursor of another user's projects", env, other)

		// A server with another JWT secret does not believe the cursor.
		c2 := newServer(t, kind, hds.WithSecurity(hds.Security{JWTSecret: strings.Repeat("z", 40)}))
		alice2 := c2.token("alice")
		v11Lists(c2, alice2)
		status, _, env = c2.do("GET", K+"/records?cursor="+recs, "", alice2)
		wantError(t, "a cursor of another server", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		wantDetails(t, "a cursor of another server", env, malformed)
	})
}

// TestListCursorLongText walks sortBy=value through texts longer than a
// cursor holds, equal in what it holds.
func TestListCursorLongText(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		K := pathK("p", "c", "k")
		long := strings.Repeat("é", 400)
		for i, tail := range []string{"b", "a", "d", "c"} {
			body, _ := json.Marshal(long + tail)
			c.addRecord(alice, K, fmt.Sprintf("t%d", i), "STRING", string(body))
		}
		assert.Equal(t, []string{"t1", "t0", "t3", "t2"}, c.walk(t, K+"/records", "sortBy=value", 1, alice))
		assert.Equal(t, []string{"t2", "t3", "t0", "t1"}, c.walk(t, K+"/records", "sortBy=value&sortOrder=desc", 1, alice))
	})
}

// TestAccessListCursors pages the members, API token and audit lists by
// cursor (docs/api.md#list-queries: every list), and checks their cursor
// errors.
func TestAccessListCursors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.mustDo("POST", pathP("web2"), "", alice, http.StatusCreated)
		for _, u := range []string{"carol", "dave", "erin"} {
			c.addUser(u, u+"-password")
			c.share(alice, "web", u, "viewer")
		}
		for i := range 3 {
			c.apiToken(alice, "web", fmt.Sprintf(`{"name":"t%d","role":"viewer"}`, i))
		}
		P := pathP("web")
		lists := []struct{ name, path, query string }{
			{"members", P + "/members", ""},
			{"tokens", P + "/tokens", ""},
			{"audit", P + "/audit", ""},
			{"audit by action", P + "/audit", "action=member.put"},
		}
		for _, l := range lists {
			all := c.getPage(t, l.path+"?limit=1000&"+l.query, alice)
			assert.Nil(t, all.NextCursor, "%s: the page that holds the last item has no cursor", l.name)
			require.GreaterOrEqual(t, len(all.Items), 3, "%s: enough items to page", l.name)
			var want []string
			for _, it := range all.Items {
				want = append(want, label(it.Name, it.Username, it.Revision))
			}
			for _, limit := range []int{1, 2} {
				assert.Equal(t, want, c.walk(t, l.path, l.query, limit, alice), "%s by %d", l.name, limit)
			}
		}

		cursorOf := func(target string) string { return c.cursorOf(t, target, alice) }
		const (
			malformed = "cursor is malformed"
			other     = "cursor belongs to another list, sort or set of filters"
		)
		members := cursorOf(P + "/members?limit=1")
		tokens := cursorOf(P + "/tokens?limit=1")
		audit := cursorOf(P + "/audit?limit=1")
		for _, e := range []struct{ what, target, details string }{
			{"members with an offset", P + "/members?offset=1&cursor=" + members, "offset must be absent or 0 with a cursor"},
			{"tokens with an offset", P + "/tokens?offset=1&cursor=" + tokens, "offset must be absent or 0 with a cursor"},
			{"audit with an offset", P + "/audit?offset=1&cursor=" + audit, "offset must be absent or 0 with a cursor"},
			{"members, malformed", P + "/members?cursor=AAAA", malformed},
			{"tokens, malformed", P + "/tokens?cursor=AAAA", malformed},
			{"audit, malformed", P + "/audit?cursor=AAAA", malformed},
			{"members on tokens", P + "/tokens?cursor=" + members, other},
			{"tokens on members", P + "/members?cursor=" + tokens, other},
			{"audit on members", P + "/members?cursor=" + audit, other},
			{"audit, another action", P + "/audit?action=member.put&cursor=" + audit, other},
			{"audit, another after", P + "/audit?after=1&cursor=" + audit, other},
			{"audit of another project", pathP("web2") + "/audit?cursor=" + audit, other},
			{"members of another project", pathP("web2") + "/members?cursor=" + members, other},
		} {
			status, _, env := c.do("GET", e.target, "", alice)
			wantError(t, "a cursor of "+e.what, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			wantDetails(t, "a cursor of "+e.what, env, e.details)
		}
	})
}

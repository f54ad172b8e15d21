package e2e_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUsersListSorted: GET /api/v1/users is a list of
// docs/api.md#list-queries: sortBy (name: the username, id, created_at,
// updated_at) and sortOrder apply, with search, paging and cursors; a bad
// value is 400 INVALID_REQUEST.
func TestUsersListSorted(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		root := c.addAdmin("root")
		for _, n := range []string{"carol", "erin", "dave"} {
			c.mustDo("POST", "/api/v1/users", `{"username":"`+n+`","password":"p"}`, root, http.StatusCreated)
		}
		type page struct {
			Items      []userJSON `json:"items"`
			Total      *int       `json:"total"`
			NextCursor *string    `json:"next_cursor"`
		}
		list := func(q string) page {
			t.Helper()
			var p page
			c.mustDo("GET", "/api/v1/users?"+q, "", root, http.StatusOK).decode(t, &p)
			return p
		}
		names := func(us []userJSON) []string {
			out := []string{}
			for _, u := range us {
				out = append(out, u.Username)
			}
			return out
		}
		all := list("").Items
		require.Len(t, all, 6, "alice, bob, root and the three made here")
		sorted := func(key func(u userJSON) string, desc bool) []string {
			us := slices.Clone(all)
			slices.SortFunc(us, func(a, b userJSON) int {
				c := strings.Compare(key(a), key(b))
				if desc {
					c = -c
				}
				if c != 0 {
					return c
				}
				return strings.Compare(a.Username, b.Username)
			})
			return names(us)
		}
		byName := func(u userJSON) string { return u.Username }
		byID := func(u userJSON) string { return u.ID }
		byCreated := func(u userJSON) string { return u.CreatedAt }
		assert.Equal(t, []string{"alice", "bob", "carol", "dave", "erin", "root"}, names(all), "by username by default")
		for _, tt := range []struct {
			q    string
			want []string
		}{
			{"sortBy=name", sorted(byName, false)},
			{"sortBy=name&sortOrder=desc", []string{"root", "erin", "dave", "carol", "bob", "alice"}},
			{"sortOrder=desc", sorted(byName, true)},
			{"sortBy=id", sorted(byID, false)},
			{"sortBy=id&sortOrder=desc", sorted(byID, true)},
			{"sortBy=created_at", sorted(byCreated, false)},
			{"sortBy=created_at&sortOrder=desc", sorted(byCreated, true)},
		} {
			assert.Equal(t, tt.want, names(list(tt.q).Items), tt.q)
		}
		// erin is the user changed last.
		c.mustDo("PUT", pathUser("erin"), `{"admin":true}`, root, http.StatusOK)
		assert.Equal(t, "erin", names(list("sortBy=updated_at&sortOrder=desc").Items)[0], "sortBy=updated_at&sortOrder=desc: the user changed last first")
		assert.Equal(t, "erin", names(list("sortBy=updated_at").Items)[5], "sortBy=updated_at: the user changed last last")

		// Paging by cursor in a sort other than the username, with a
		// search: every match once, in order, and nothing else.
		want := slices.DeleteFunc(sorted(byID, true), func(n string) bool { return !strings.Contains(n, "o") })
		var got []string
		p := list("sortBy=id&sortOrder=desc&search=O&limit=1")
		for {
			got = append(got, names(p.Items)...)
			require.NotNil(t, p.Total)
			assert.Equal(t, len(want), *p.Total, "total of the search, on every page")
			if p.NextCursor == nil || len(got) > len(want) {
				break
			}
			p = list("sortBy=id&sortOrder=desc&search=O&limit=1&cursor=" + url.QueryEscape(*p.NextCursor))
		}
		assert.Equal(t, want, got, "sortBy=id&sortOrder=desc&search=O by cursor")
		assert.Nil(t, list("count=false").Total, "count=false: total null")

		for _, q := range []string{"sortBy=password", "sortBy=", "sortBy=username", "sortBy=value", "sortOrder=up", "sortOrder="} {
			status, _, env := c.do("GET", "/api/v1/users?"+q, "", root)
			wantError(t, "GET /users?"+q, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			wantDetails(t, "GET /users?"+q, env, strings.Split(strings.SplitN(q, "=", 2)[0], "&")[0])
		}
		first := list("sortBy=id&limit=1")
		require.NotNil(t, first.NextCursor)
		status, _, env := c.do("GET", "/api/v1/users?sortBy=created_at&limit=1&cursor="+url.QueryEscape(*first.NextCursor), "", root)
		wantError(t, "a cursor of another sort", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
	})
}

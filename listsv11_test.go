package hds_test

// The v1.1 additions of API.md section 5: count=false and the range
// filters minValue/maxValue.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

package e2e_test

// The v1.1 additions of API.md section 5: count=false and the range
// filters minValue/maxValue.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
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

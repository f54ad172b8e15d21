package e2e_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// auditJSON is an audit entry of docs/api.md#audit-log-and-change-feed.
type auditJSON struct {
	Revision   int64   `json:"revision"`
	Time       string  `json:"time"`
	Action     string  `json:"action"`
	Actor      *string `json:"actor"`
	ActorName  *string `json:"actor_name"`
	Collection *string `json:"collection"`
	Cluster    *string `json:"cluster"`
	Record     *string `json:"record"`
	RecordID   *string `json:"record_id"`
	Version    *int64  `json:"version"`
	Target     *string `json:"target"`
	RequestID  *string `json:"request_id"`
}

// auditFields are the fields of every entry.
var auditFields = []string{"revision", "time", "action", "actor", "actor_name", "collection", "cluster",
	"record", "record_id", "version", "target", "request_id"}

// str is the value of a nullable string field, "<null>" for null.
func str(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// auditLog reads GET P/audit with the query q as alice and returns the
// page.
func (c *client) auditLog(project, q string) listJSON[auditJSON] {
	c.t.Helper()
	env := c.mustDo("GET", pathP(project)+"/audit"+q, "", c.token("alice"), http.StatusOK)
	var page listJSON[auditJSON]
	env.decode(c.t, &page)
	return page
}

// actions lists the entries' revision and action, oldest first.
func actions(page listJSON[auditJSON]) []string {
	out := []string{}
	for i := len(page.Items) - 1; i >= 0; i-- {
		e := page.Items[i]
		out = append(out, e.Action+" "+str(e.Record))
	}
	return out
}

func TestAuditLog(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		k := pathK("p", "c", "k")
		res := c.call(req{method: "POST", target: k + "/records", token: alice,
			body: `{"name":"db_password","type":"CREDENTIAL","value":"s3cr3t-value"}`})
		require.Equal(t, http.StatusCreated, res.status, "create a credential: %s", res.env.raw)
		requestID := res.header.Get("X-Request-ID")
		var rec recordJSON
		res.env.decode(t, &rec)
		c.mustDo("PUT", pathR("p", "c", "k", "db_password")+"?rename=DB_PASSWORD", "", alice, http.StatusOK)
		c.mustDo("PUT", pathR("p", "c", "k", "DB_PASSWORD"), `{"value":"n3w-s3cr3t"}`, alice, http.StatusOK)
		// Reads with reveal=true: one entry each. Without it: none.
		for _, target := range []string{
			pathR("p", "c", "k", "DB_PASSWORD") + "?reveal=true",
			pathR("p", "c", "k", rec.ID) + "?reveal=false",
			k + "/records?reveal=true",
			k + "?reveal=true",
			pathR("p", "c", "k", "DB_PASSWORD") + "/versions?reveal=true",
			pathR("p", "c", "k", "DB_PASSWORD") + "?version=1&reveal=true",
		} {
			res := c.call(req{method: "GET", target: target, token: alice})
			require.Equal(t, http.StatusOK, res.status, "GET %s", target)
		}
		envFile := c.raw(request("GET", k+"?format=env&reveal=true", "", alice))
		require.Equal(t, http.StatusOK, envFile.StatusCode, "env file")
		exp := c.raw(request("GET", pathP("p")+"/export?reveal=true", "", alice))
		require.Equal(t, http.StatusOK, exp.StatusCode, "export")
		c.mustDo("DELETE", pathR("p", "c", "k", "DB_PASSWORD"), "", alice, http.StatusNoContent)
		c.mustDo("PUT", pathK("p", "c", "k")+"?rename=k2", "", alice, http.StatusOK)
		c.mustDo("PUT", pathC("p", "c")+"?rename=c2", "", alice, http.StatusOK)
		c.mustDo("PUT", pathP("p")+"?rename=p2", "", alice, http.StatusOK)
		c.mustDo("DELETE", pathK("p2", "c2", "k2"), "", alice, http.StatusNoContent)
		c.mustDo("DELETE", pathC("p2", "c2"), "", alice, http.StatusNoContent)

		env := c.mustDo("GET", pathP("p2")+"/audit", "", alice, http.StatusOK)
		assert.NotContains(t, string(env.raw), "s3cr3t", "no value in the log")
		var page listJSON[auditJSON]
		env.decode(t, &page)
		assert.Equal(t, []string{
			"project.create <null>", "collection.create <null>", "cluster.create <null>",
			"record.create db_password", "record.rename DB_PASSWORD", "record.update DB_PASSWORD",
			"credential.reveal DB_PASSWORD", "credential.reveal <null>", "credential.reveal <null>",
			"credential.reveal DB_PASSWORD", "credential.reveal db_password", "credential.reveal <null>",
			"credential.reveal <null>", "record.delete DB_PASSWORD",
			"cluster.rename <null>", "collection.rename <null>", "project.rename <null>",
			"cluster.delete <null>", "collection.delete <null>",
		}, actions(page), "one entry per change and per request that revealed credentials, newest first")
		assert.Equal(t, 19, page.Total)
		assert.Equal(t, 100, page.Limit)

		var raw struct {
			Items []json.RawMessage `json:"items"`
		}
		env.decode(t, &raw)
		for i, item := range raw.Items {
			wantFields(t, "entry "+string(rune('a'+i)), item, auditFields...)
		}
		byRev := map[int64]auditJSON{}
		for i, e := range page.Items {
			assert.Equal(t, int64(19-i), e.Revision, "revisions 19 down to 1, without gaps")
			assert.Regexp(t, timeRE, e.Time, "revision %d: time", e.Revision)
			assert.Equal(t, c.ids["alice"], str(e.Actor), "revision %d: actor", e.Revision)
			assert.Equal(t, "alice", str(e.ActorName), "revision %d: actor_name", e.Revision)
			assert.Nil(t, e.Target, "revision %d: target", e.Revision)
			assert.NotNil(t, e.RequestID, "revision %d: request_id", e.Revision)
			byRev[e.Revision] = e
		}
		create := byRev[4]
		assert.Equal(t, requestID, str(create.RequestID), "request_id is the request's X-Request-ID")
		assert.Equal(t, "c", str(create.Collection))
		assert.Equal(t, "k", str(create.Cluster))
		assert.Equal(t, rec.ID, str(create.RecordID))
		if assert.NotNil(t, create.Version) {
			assert.Equal(t, int64(1), *create.Version, "the version after the change")
		}
		if v := byRev[14].Version; assert.NotNil(t, v, "record.delete") {
			assert.Equal(t, int64(3), *v, "record.delete: the version deleted")
		}
		reveal := byRev[7]
		assert.Equal(t, rec.ID, str(reveal.RecordID), "a reveal of one record names it")
		if assert.NotNil(t, reveal.Version) {
			assert.Equal(t, int64(3), *reveal.Version, "and its version")
		}
		list := byRev[8]
		assert.Equal(t, "c", str(list.Collection), "a reveal of a list names the collection")
		assert.Equal(t, "k", str(list.Cluster), "and the cluster")
		assert.Nil(t, list.Record, "not a record")
		history := byRev[10]
		assert.Equal(t, rec.ID, str(history.RecordID), "a reveal of a history names the record")
		assert.Nil(t, history.Version, "not one version")
		if v := byRev[11].Version; assert.NotNil(t, v, "a reveal of one version") {
			assert.Equal(t, int64(1), *v, "names that version (and the name it had)")
		}
		assert.Equal(t, "k", str(byRev[12].Cluster), "a reveal of an environment file names the cluster")
		export := byRev[13]
		assert.Nil(t, export.Collection, "a reveal of an export names nothing below the project")
		assert.Nil(t, byRev[1].Collection, "project.create: no collection")
		assert.Equal(t, "k2", str(byRev[15].Cluster), "names after the change")
		assert.Equal(t, "c2", str(byRev[18].Collection), "names before a delete")
	})
}

func TestAuditQueries(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k") // revisions 1 to 3
		for _, name := range []string{"a", "b", "c", "d"} {
			c.addRecord(alice, pathK("p", "c", "k"), name, "INTEGER", "1") // 4 to 7
		}
		all := c.auditLog("p", "")
		require.Len(t, all.Items, 7)
		revs := func(page listJSON[auditJSON]) []int64 {
			out := []int64{}
			for _, e := range page.Items {
				out = append(out, e.Revision)
			}
			return out
		}
		page := c.auditLog("p", "?limit=2&offset=1")
		assert.Equal(t, []int64{6, 5}, revs(page), "limit and offset")
		assert.Equal(t, 7, page.Total, "total before paging")
		assert.Equal(t, 2, page.Limit)
		assert.Equal(t, 1, page.Offset)
		assert.Equal(t, []int64{7, 6, 5, 4}, revs(c.auditLog("p", "?action=record.create")), "action")
		assert.Equal(t, []int64{7, 6}, revs(c.auditLog("p", "?after=5")), "after (exclusive)")
		assert.Equal(t, 7, len(c.auditLog("p", "?actor="+c.ids["alice"]).Items), "actor: a user id")
		assert.Empty(t, c.auditLog("p", "?actor=token:"+store.NewID()).Items, "actor: an API token without entries")
		mid := all.Items[3].Time // revision 4
		assert.Subset(t, revs(c.auditLog("p", "?since="+url.QueryEscape(mid))), []int64{7, 6, 5, 4}, "since (inclusive)")
		for _, e := range c.auditLog("p", "?until="+url.QueryEscape(mid)).Items {
			assert.LessOrEqual(t, e.Time, mid, "until (inclusive): revision %d", e.Revision)
		}
		assert.Contains(t, revs(c.auditLog("p", "?until="+url.QueryEscape(mid))), int64(4), "until is inclusive")
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		assert.Empty(t, c.auditLog("p", "?since="+future).Items, "since in the future")
		assert.Equal(t, []int64{5}, revs(c.auditLog("p", "?action=record.create&after=4&limit=1&offset=2")), "filters combine")
	})
}

func TestAuditErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		for _, tc := range []struct{ query, details string }{
			{"?action=record.explode", "action must be one of project.create, project.rename"},
			{"?action=", "action must be one of"},
			{"?actor=", "actor must be a user id or token:<id>"},
			{"?actor=%00", "actor must not contain U+0000"},
			{"?since=yesterday", "since must be an RFC 3339 time"},
			{"?since=2026-11-22", "since must be an RFC 3339 time"},
			{"?until=2026-11-22T08:18:19", "until must be an RFC 3339 time"},
			{"?after=-1", "after must be a revision"},
			{"?after=1.5", "after must be a revision"},
			{"?after=%2B3", "after must be a revision"},
			{"?after=99999999999999999999", "after must be a revision"},
			{"?limit=0", "limit must be between 1 and 1000"},
			{"?offset=x", "offset must be a decimal integer"},
			{"?after=1&after=2", "the query parameter after is given more than once"},
		} {
			status, _, env := c.do("GET", pathP("p")+"/audit"+tc.query, "", alice)
			wantError(t, "GET P/audit"+tc.query, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			wantDetails(t, "GET P/audit"+tc.query, env, tc.details)
		}
		status, _, env := c.do("GET", pathP("p")+"/audit", "", c.token("bob"))
		wantError(t, "someone else's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		status, _, env = c.do("GET", pathP("p")+"/audit?after=x", "", c.token("bob"))
		wantError(t, "someone else's project, bad input", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		status, _, env = c.do("GET", pathP("nope")+"/audit", "", alice)
		wantError(t, "a missing project", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		wantDetails(t, "a missing project", env, `project "nope" not found`)
		status, _, env = c.do("GET", pathP("p")+"/audit", "", "")
		wantError(t, "no token", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
		status, h, env := c.do("POST", pathP("p")+"/audit", "", alice)
		wantError(t, "POST", status, env, http.StatusMethodNotAllowed, "INVALID_REQUEST", "Method not allowed")
		assert.Equal(t, "GET, HEAD", h.Get("Allow"))
	})
}

// TestAuditServerLog checks that every entry is also written to the
// server log (message "audit", the entry's fields), never with a value.
func TestAuditServerLog(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var buf syncBuffer
		c := newServer(t, kind, hds.WithCredentialKey(testKey),
			hds.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		c.addRecord(alice, pathK("p", "c", "k"), "pw", "CREDENTIAL", `"top-s3cret"`)
		c.mustDo("GET", pathR("p", "c", "k", "pw")+"?reveal=true", "", alice, http.StatusOK)
		var found []map[string]any
		for line := range strings.SplitSeq(buf.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "audit" {
				found = append(found, m)
			}
		}
		require.Len(t, found, 5, "one log line per entry: %s", buf.String())
		last := found[4]
		assert.Equal(t, "credential.reveal", last["action"])
		assert.Equal(t, float64(5), last["revision"])
		assert.Equal(t, c.ids["alice"], last["actor"])
		assert.Equal(t, "alice", last["actor_name"])
		assert.Equal(t, "pw", last["record"])
		assert.NotEmpty(t, last["request_id"])
		assert.Equal(t, "INFO", last["level"])
		assert.NotContains(t, buf.String(), "top-s3cret", "no value in the log")
	})
}

// TestAuditRevealingWrites: a write answered with reveal=true returns the
// plain text, so it writes a credential.reveal entry after its change's.
func TestAuditRevealingWrites(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		k := pathK("p", "c", "k")
		env := c.mustDo("POST", k+"/records?reveal=true", `{"name":"pw","type":"CREDENTIAL","value":"one-s3cret"}`, alice, http.StatusCreated)
		assert.Contains(t, string(env.raw), "one-s3cret", "the create answers in plain text")
		c.mustDo("PUT", pathR("p", "c", "k", "pw")+"?reveal=true", `{"value":"two-s3cret"}`, alice, http.StatusOK)
		c.mustDo("POST", pathR("p", "c", "k", "pw")+"/restore?version=1&reveal=true", "", alice, http.StatusOK)
		c.mustDo("PUT", pathR("p", "c", "k", "pw"), `{"value":"three-s3cret"}`, alice, http.StatusOK)
		page := c.auditLog("p", "?action=credential.reveal")
		assert.Equal(t, []string{"credential.reveal pw", "credential.reveal pw", "credential.reveal pw"}, actions(page),
			"one reveal entry per write answered in plain text, none for the masked answer")
		all := actions(c.auditLog("p", "?limit=4"))
		assert.Equal(t, []string{"credential.reveal pw", "record.restore pw", "credential.reveal pw", "record.update pw"}, all,
			"each reveal right after its change (oldest first)")
	})
}

// TestAuditLogSameFields checks that the server log's audit line
// of each entry has the same fields as the entry of GET P/audit
// (docs/api.md#audit-log-and-change-feed: "message audit, the same
// fields"): every field, null ones included, with the same values, the time
// written as docs/api.md#conventions says (six fraction digits, however
// many of them are zeros).
func TestAuditLogSameFields(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var buf syncBuffer
		c := newServer(t, kind, hds.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		c.addRecord(alice, pathK("p", "c", "k"), "n", "INTEGER", "0")
		// Enough entries that some time has trailing zero digits.
		for i := 1; i <= 80; i++ {
			c.mustDo("PUT", pathR("p", "c", "k", "n")+"?value="+strconv.Itoa(i), "", alice, http.StatusOK)
		}
		logged := map[float64]map[string]any{}
		for line := range strings.SplitSeq(buf.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "audit" {
				rev, _ := m["revision"].(float64)
				logged[rev] = m
			}
		}
		env := c.mustDo("GET", pathP("p")+"/audit?limit=1000", "", alice, http.StatusOK)
		var page struct {
			Items []map[string]any `json:"items"`
		}
		env.decode(t, &page)
		require.Equal(t, 84, len(page.Items), "3 containers, a create and 80 updates")
		for _, e := range page.Items {
			l, ok := logged[e["revision"].(float64)]
			require.True(t, ok, "a log line for revision %v", e["revision"])
			for k, v := range e {
				got, present := l[k]
				if assert.True(t, present, "revision %v: field %s in the log line %v", e["revision"], k, l) {
					assert.Equal(t, v, got, "revision %v: field %s", e["revision"], k)
				}
			}
		}
	})
}

// TestAuditActorToken checks the actor filter's token form: API
// token ids are UUIDs (docs/api.md#sharing-and-api-tokens), so
// token:<id> with anything else is an invalid value
// (docs/api.md#audit-log-and-change-feed: 400 INVALID_REQUEST), and a
// UUID in any case names the same token, as ids in paths do.
func TestAuditActorToken(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		tok := c.apiToken(alice, "p", `{"name":"w","role":"editor"}`)
		c.addRecord(tok.Token, pathK("p", "c", "k"), "n", "INTEGER", "1")
		page := c.auditLog("p", "?actor=token:"+tok.ID)
		require.Len(t, page.Items, 1, "the token's entry")
		assert.Equal(t, "token:"+tok.ID, str(page.Items[0].Actor))
		assert.Len(t, c.auditLog("p", "?actor=token:"+strings.ToUpper(tok.ID)).Items, 1, "a token id in upper case")
		for _, bad := range []string{"token:", "token:abc", "token:" + tok.ID + "x"} {
			status, _, env := c.do("GET", pathP("p")+"/audit?actor="+bad, "", alice)
			wantError(t, bad, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			assert.Equal(t, "actor must be a user id or token:<id>", env.details(), bad)
		}
	})
}

// TestAuditCount checks that the audit log, a list of
// docs/api.md#list-queries (docs/api.md#audit-log-and-change-feed),
// honours count=false as every list does: total is null; a bad count is
// 400.
func TestAuditCount(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		for _, q := range []string{"?count=false&limit=2", "?count=false&action=record.create"} {
			env := c.mustDo("GET", pathP("p")+"/audit"+q, "", alice, http.StatusOK)
			var page struct {
				Items []json.RawMessage `json:"items"`
				Total *int              `json:"total"`
			}
			env.decode(t, &page)
			assert.Nil(t, page.Total, "%s: total is null", q)
			wantFields(t, q, env.Data, "items", "total", "limit", "offset", "next_cursor")
		}
		page := c.auditLog("p", "?count=true")
		assert.Equal(t, 3, page.Total, "count=true counts")
		status, _, env := c.do("GET", pathP("p")+"/audit?count=maybe", "", alice)
		wantError(t, "count=maybe", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		assert.Equal(t, "count must be true or false", env.details())
	})
}

package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// POST P/import, docs/api.md#batch-export-and-import.

// importSummary is the answer of an import.
type importSummary struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Deleted   int `json:"deleted"`
	Unchanged int `json:"unchanged"`
	Changes   []struct {
		Action     string `json:"action"`
		Collection string `json:"collection"`
		Cluster    string `json:"cluster"`
		Record     string `json:"record"`
	} `json:"changes"`
	Revision int64 `json:"revision"`
}

// changeList renders the changes as "action c/k/r".
func (s importSummary) changeList() []string {
	out := []string{}
	for _, c := range s.Changes {
		out = append(out, c.Action+" "+c.Collection+"/"+c.Cluster+"/"+c.Record)
	}
	return out
}

func (c *client) importDoc(t *testing.T, p, query, doc, token string) importSummary {
	t.Helper()
	env := c.mustDo("POST", pathP(p)+"/import"+query, doc, token, http.StatusOK)
	var s importSummary
	env.decode(t, &s)
	return s
}

// collectionsOf returns the collections of an export document, as JSON.
func collectionsOf(t *testing.T, body []byte) string {
	t.Helper()
	var doc exportDoc
	require.NoError(t, json.Unmarshal(body, &doc), "decode export")
	return string(mustJSON(t, doc.Collections))
}

func TestImportRoundTrip(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		values := map[string][2]string{
			"s": {"STRING", `"quote ' \" back \\ dollar $ new\nline ü"`}, "i": {"INTEGER", "-3"}, "f": {"FLOAT", "3.14"},
			"b": {"BOOLEAN", "false"}, "d": {"DATE", `"2026-11-22"`}, "t": {"TIME", `"08:18:19.5"`},
			"dt": {"DATETIME", `"2026-11-22T09:18:19.500+01:00"`}, "u": {"UUID", `"0190d3c4-7b5e-7c3a-8f00-000000000001"`},
			"n": {"NULL", "null"}, "pw": {"CREDENTIAL", `"s3cret \" ü"`}, "as": {"[]STRING", `["a","b"]`},
			"ai": {"[]INTEGER", "[1,2]"}, "ac": {"[]CREDENTIAL", `["x","y"]`}, "an": {"[]NULL", "[]"},
		}
		for name, v := range values {
			c.addRecord(alice, K, name, v[0], v[1])
		}
		c.mustDo("POST", pathK("web", "prod", "empty"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathC("web", "bare"), "", alice, http.StatusCreated)
		exported := c.export(t, "web", "?reveal=true", alice)

		c.mustDo("POST", pathP("copy"), "", alice, http.StatusCreated)
		s := c.importDoc(t, "copy", "", string(exported), alice)
		assert.Equal(t, len(values), s.Created, "every record created")
		assert.Zero(t, s.Updated+s.Deleted+s.Unchanged, "nothing else")
		assert.Equal(t, collectionsOf(t, exported), collectionsOf(t, c.export(t, "copy", "?reveal=true", alice)),
			"the copy holds the same records: types, values, credential plain text, empty levels")

		s = c.importDoc(t, "copy", "", string(exported), alice)
		assert.Equal(t, len(values), s.Unchanged, "imported again: every record unchanged")
		assert.Empty(t, s.Changes, "no changes")
		masked := c.export(t, "web", "", alice)
		s = c.importDoc(t, "copy", "?mode=replace", string(masked), alice)
		assert.Equal(t, len(values), s.Unchanged, "masked credentials leave the values as they are")
		assert.Equal(t, collectionsOf(t, exported), collectionsOf(t, c.export(t, "copy", "?reveal=true", alice)), "credentials kept")
	})
}

func TestImportModes(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		c.addRecord(alice, K, "keep", "INTEGER", "1")
		c.addRecord(alice, K, "change", "INTEGER", "1")
		c.addRecord(alice, K, "extra", "STRING", `"x"`)
		c.mustDo("POST", pathK("web", "prod", "gone"), "", alice, http.StatusCreated)
		c.addRecord(alice, pathK("web", "prod", "gone"), "r", "NULL", "null")
		c.mustDo("POST", pathC("web", "old"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("web", "old", "k2"), "", alice, http.StatusCreated)
		c.addRecord(alice, pathK("web", "old", "k2"), "r", "NULL", "null")
		doc := `{"format":"hds/1","project":"elsewhere","revision":7,"exported_at":"x","collections":{
			"prod":{"clusters":{"k":{"records":{"keep":{"type":"INTEGER","value":1},"change":{"type":"STRING","value":"now"},
				"new":{"type":"BOOL","value":true}}},"fresh":{"records":{}}}},
			"added":{"clusters":{}}}}`
		before := c.export(t, "web", "", alice)

		s := c.importDoc(t, "web", "?dry_run=true", doc, alice)
		assert.Equal(t, []int{1, 1, 0, 1}, []int{s.Created, s.Updated, s.Deleted, s.Unchanged}, "merge: created, updated, deleted, unchanged")
		assert.Equal(t, []string{"update prod/k/change", "create prod/k/new"}, s.changeList(), "merge: the changes")
		var snap exportDoc
		require.NoError(t, json.Unmarshal(before, &snap), "decode export")
		assert.Equal(t, snap.Revision, s.Revision, "a dry run: the revision it was planned at")
		replace := []string{"delete old/k2/r", "delete prod/gone/r", "update prod/k/change", "delete prod/k/extra", "create prod/k/new"}
		s = c.importDoc(t, "web", "?mode=replace&dry_run=true", doc, alice)
		assert.Equal(t, []int{1, 1, 3, 1}, []int{s.Created, s.Updated, s.Deleted, s.Unchanged}, "replace: counts")
		assert.Equal(t, replace, s.changeList(), "replace: the changes, by path")
		assert.Equal(t, collectionsOf(t, before), collectionsOf(t, c.export(t, "web", "", alice)), "a dry run changes nothing")

		env := c.mustDo("POST", pathP("web")+"/import?mode=replace&dry_run=false", doc, alice, http.StatusOK)
		assert.Equal(t, "Import applied", env.Message, "message")
		env.decode(t, &s)
		assert.Equal(t, replace, s.changeList(), "the import did what the dry run said")
		assert.JSONEq(t, `{"added":{"clusters":{}},"prod":{"clusters":{"fresh":{"records":{}},"k":{"records":{
			"change":{"type":"STRING","value":"now"},"keep":{"type":"INTEGER","value":1},"new":{"type":"BOOLEAN","value":true}}}}}}`,
			collectionsOf(t, c.export(t, "web", "", alice)), "the project is the document")
		vs := c.versionsOf(t, pathR("web", "prod", "k", "change"), "", alice)
		assert.Equal(t, []int64{2, 1}, versionNumbers(vs.Items), "an imported update keeps history")
		var keep recordJSON
		c.mustDo("GET", pathR("web", "prod", "k", "keep"), "", alice, http.StatusOK).decode(t, &keep)
		assert.Equal(t, int64(1), keep.Version, "an unchanged record is not written")
	})
}

func TestImportErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		c.addRecord(alice, K, "pw", "CREDENTIAL", `"s3cret"`)
		c.addRecord(alice, K, "port", "INTEGER", "1")
		before := c.export(t, "web", "?reveal=true", alice)
		doc := func(records string) string {
			return `{"format":"hds/1","collections":{"prod":{"clusters":{"k":{"records":{` + records + `}}}}}}`
		}
		const at = `collection "prod", cluster "k", record `
		cases := []struct {
			name, query, body     string
			status                int
			code, message, detail string
			prefix                bool
		}{
			{"empty body", "", "", 400, "INVALID_REQUEST", "Invalid request", `the body must be an export document: {"format": "hds/1", "collections": {...}}`, false},
			{"not an object", "", `[1]`, 400, "INVALID_REQUEST", "Invalid request", "the request body must be a JSON object", false},
			{"no format", "", `{"collections":{}}`, 400, "INVALID_REQUEST", "Invalid request", `the document's "format" must be "hds/1"`, false},
			{"wrong format", "", `{"format":"hds/2","collections":{}}`, 400, "INVALID_REQUEST", "Invalid request", `the document's "format" must be "hds/1"`, false},
			{"no collections", "", `{"format":"hds/1"}`, 400, "INVALID_REQUEST", "Invalid request", `the document has no "collections"`, false},
			{"no clusters", "", `{"format":"hds/1","collections":{"prod":{}}}`, 400, "INVALID_REQUEST", "Invalid request", `collection "prod" has no "clusters"`, false},
			{"no records", "", `{"format":"hds/1","collections":{"prod":{"clusters":{"k":{"records":null}}}}}`, 400, "INVALID_REQUEST", "Invalid request",
				`collection "prod", cluster "k" has no "records"`, false},
			{"unknown field", "", `{"format":"hds/1","collections":{},"extra":1}`, 400, "INVALID_REQUEST", "Invalid request", `unknown field "extra"`, false},
			{"no type", "", doc(`"x":{"value":1}`), 400, "INVALID_REQUEST", "Invalid request", at + `"x": the field "type" is required`, false},
			{"unknown type", "", doc(`"x":{"type":"DECIMAL","value":1}`), 400, "VALIDATION_ERROR", "Validation failed", at + `"x": unknown type`, true},
			{"value not fitting", "", doc(`"x":{"type":"INTEGER","value":"one"}`), 400, "VALIDATION_ERROR", "Validation failed", at + `"x": INTEGER`, true},
			{"bad record name", "", doc(`" x":{"type":"NULL"}`), 400, "VALIDATION_ERROR", "Validation failed", at + `" x": `, true},
			{"bad collection name", "", `{"format":"hds/1","collections":{"a/b":{"clusters":{}}}}`, 400, "VALIDATION_ERROR", "Validation failed", `collection "a/b": `, true},
			{"masked new credential", "", doc(`"new":{"type":"CREDENTIAL","value":"********"}`), 400, "VALIDATION_ERROR", "Validation failed",
				at + `"new": a masked credential ("********") can only leave an existing value as it is, and this record does not exist`, false},
			{"masked onto another type", "", doc(`"port":{"type":"CREDENTIAL","value":"********"}`), 400, "VALIDATION_ERROR", "Validation failed",
				at + `"port": a masked credential ("********") can only leave an existing value as it is, and the record is of type INTEGER`, false},
			{"partly masked array", "", doc(`"keys":{"type":"[]CREDENTIAL","value":["********","b"]}`), 400, "VALIDATION_ERROR", "Validation failed",
				at + `"keys": []CREDENTIAL value is partly masked: give every element, or mask every element ("********") to leave the value as it is`, false},
			{"bad mode", "?mode=overwrite", doc(``), 400, "INVALID_REQUEST", "Invalid request", "mode must be merge or replace", false},
			{"bad dry_run", "?dry_run=yes", doc(``), 400, "INVALID_REQUEST", "Invalid request", "dry_run must be true or false", false},
			{"mode twice", "?mode=merge&mode=replace", doc(``), 400, "INVALID_REQUEST", "Invalid request", "the query parameter mode is given more than once", false},
		}
		for _, tc := range cases {
			status, _, env := c.do("POST", pathP("web")+"/import"+tc.query, tc.body, alice)
			wantError(t, tc.name, status, env, tc.status, tc.code, tc.message)
			if tc.prefix {
				assert.True(t, strings.HasPrefix(env.details(), tc.detail), "%s: details %q start %q", tc.name, env.details(), tc.detail)
			} else {
				assert.Equal(t, tc.detail, env.details(), "%s: details", tc.name)
			}
		}
		// An error in one record leaves every other record of the
		// document unwritten.
		status, _, env := c.do("POST", pathP("web")+"/import?mode=replace", doc(`"a":{"type":"NULL"},"z":{"type":"INTEGER","value":1.5}`), alice)
		wantError(t, "one bad record", status, env, 400, "VALIDATION_ERROR", "Validation failed")
		assert.Equal(t, collectionsOf(t, before), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)), "nothing changed")

		status, _, env = c.do("POST", pathP("nope")+"/import", doc(``), alice)
		wantError(t, "missing project", status, env, 404, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `project "nope" not found`, env.details(), "missing project")
		status, _, env = c.do("POST", pathP("web")+"/import", doc(``), c.token("bob"))
		wantError(t, "someone else's project", status, env, 403, "AUTHORIZATION_FAILED", "Insufficient permissions")
		status, _, env = c.do("POST", pathP("web")+"/import", `{"format":"bad"}`, c.token("bob"))
		wantError(t, "someone else's project, bad document", status, env, 403, "AUTHORIZATION_FAILED", "Insufficient permissions")

		nokey := c.attach()
		status, _, env = nokey.do("POST", pathP("web")+"/import", doc(`"pw":{"type":"CREDENTIAL","value":"other"}`), alice)
		wantError(t, "a credential without a key", status, env, 400, "VALIDATION_ERROR", "Validation failed")
		wantDetails(t, "a credential without a key", env, "no credential key is configured")
		s := nokey.importDoc(t, "web", "", doc(`"pw":{"type":"CREDENTIAL","value":"********"}`), alice)
		assert.Equal(t, 1, s.Unchanged, "a masked credential needs no key")
		assert.Equal(t, collectionsOf(t, before), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)), "nothing changed")
	})
}

// exportRevision returns the revision of project p's export document.
func (c *client) exportRevision(t *testing.T, p, token string) int64 {
	t.Helper()
	var doc exportDoc
	require.NoError(t, json.Unmarshal(c.export(t, p, "", token), &doc), "decode export")
	return doc.Revision
}

// TestImportRevision: the answer of POST P/import names the project's
// audit revision after the import (the one a later export and the newest
// audit entry carry); a dry run, or an import that changes nothing, the
// revision the project is at. It was always 0.
func TestImportRevision(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, pathK("web", "prod", "k"), "old", "INTEGER", "1")
		before := c.exportRevision(t, "web", alice)
		require.Positive(t, before, "the project has audit entries")
		doc := `{"format":"hds/1","collections":{"prod":{"clusters":{"k":{"records":{
			"old":{"type":"INTEGER","value":2},"new":{"type":"STRING","value":"x"}}}}},
			"more":{"clusters":{"k2":{"records":{"r":{"type":"NULL","value":null}}}}}}}`

		s := c.importDoc(t, "web", "?dry_run=true", doc, alice)
		assert.Equal(t, before, s.Revision, "a dry run: the revision the plan was made at")

		s = c.importDoc(t, "web", "", doc, alice)
		after := c.exportRevision(t, "web", alice)
		// one entry per record changed, plus the created collection and cluster
		assert.Equal(t, before+5, after, "the import's audit entries")
		assert.Equal(t, after, s.Revision, "the revision after the import")
		var newest struct {
			Items []struct {
				Revision int64 `json:"revision"`
			} `json:"items"`
		}
		c.mustDo("GET", pathP("web")+"/audit?limit=1", "", alice, http.StatusOK).decode(t, &newest)
		require.Len(t, newest.Items, 1, "the newest audit entry")
		assert.Equal(t, newest.Items[0].Revision, s.Revision, "the newest audit entry is the import's")

		s = c.importDoc(t, "web", "", doc, alice)
		assert.Equal(t, 3, s.Unchanged, "imported again: nothing changes")
		assert.Equal(t, after, s.Revision, "nothing written: the revision the project is at")
	})
}

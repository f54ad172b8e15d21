package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// GET P/export, docs/api.md#batch-export-and-import.

// exportDoc is the export document.
type exportDoc struct {
	Format      string `json:"format"`
	Project     string `json:"project"`
	Revision    int64  `json:"revision"`
	ExportedAt  string `json:"exported_at"`
	Collections map[string]struct {
		Clusters map[string]struct {
			Records map[string]struct {
				Type  string          `json:"type"`
				Value json.RawMessage `json:"value"`
			} `json:"records"`
		} `json:"clusters"`
	} `json:"collections"`
}

// export returns the raw export document of project p (query included).
func (c *client) export(t *testing.T, p, query, token string) []byte {
	t.Helper()
	res := c.raw(request("GET", pathP(p)+"/export"+query, "", token))
	body, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusOK, res.StatusCode, "export %s: %s", p, body)
	assert.Equal(t, jsonType, res.Header.Get("Content-Type"), "Content-Type")
	assert.Equal(t, `attachment; filename=`+p+`.json`, res.Header.Get("Content-Disposition"), "an attachment")
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"), "never cached")
	return body
}

func TestExport(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		c.addRecord(alice, K, "port", "INTEGER", "5432")
		c.addRecord(alice, K, "pw", "CREDENTIAL", `"s3cret"`)
		c.addRecord(alice, K, "keys", "[]CREDENTIAL", `["a","b"]`)
		c.addRecord(alice, K, "note", "NULL", "null")
		c.mustDo("POST", pathK("web", "prod", "empty"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathC("web", "staging"), "", alice, http.StatusCreated)

		body := c.export(t, "web", "", alice)
		var doc exportDoc
		require.NoError(t, json.Unmarshal(body, &doc), "the document is bare JSON: %s", body)
		wantFields(t, "export", body, "format", "project", "revision", "exported_at", "collections")
		assert.Equal(t, "hds/1", doc.Format, "format")
		assert.Equal(t, "web", doc.Project, "project")
		status, _, env := c.do("GET", pathP("web")+"/audit?limit=1", "", alice)
		require.Equal(t, http.StatusOK, status, "GET P/audit")
		var newest struct {
			Items []struct {
				Revision int64 `json:"revision"`
			} `json:"items"`
		}
		require.NoError(t, json.Unmarshal(env.Data, &newest), "the audit page")
		require.Len(t, newest.Items, 1, "the newest entry")
		assert.Equal(t, newest.Items[0].Revision, doc.Revision, "revision: the newest audit entry the snapshot includes")
		assert.Regexp(t, timeRE, doc.ExportedAt, "exported_at")
		assert.JSONEq(t, `{
			"prod": {"clusters": {
				"empty": {"records": {}},
				"k": {"records": {
					"keys": {"type": "[]CREDENTIAL", "value": ["********", "********"]},
					"note": {"type": "NULL", "value": null},
					"port": {"type": "INTEGER", "value": 5432},
					"pw": {"type": "CREDENTIAL", "value": "********"}}}}},
			"staging": {"clusters": {}}}`, string(mustJSON(t, doc.Collections)), "every level, empty ones included, credentials masked")

		require.NoError(t, json.Unmarshal(c.export(t, "web", "?reveal=true", alice), &doc), "decode")
		assert.Equal(t, `"s3cret"`, string(doc.Collections["prod"].Clusters["k"].Records["pw"].Value), "revealed")
		assert.Equal(t, `["a","b"]`, string(doc.Collections["prod"].Clusters["k"].Records["keys"].Value), "revealed array")

		c.mustDo("POST", pathP("empty"), "", alice, http.StatusCreated)
		var empty exportDoc
		require.NoError(t, json.Unmarshal(c.export(t, "empty", "", alice), &empty), "decode")
		assert.Empty(t, empty.Collections, "an empty project")
		assert.NotNil(t, empty.Collections, "collections is an object even when empty")
	})
}

func TestExportErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		cases := []struct {
			name, target, token   string
			status                int
			code, message, detail string
		}{
			{"bad reveal", pathP("web") + "/export?reveal=yes", alice, 400, "INVALID_REQUEST", "Invalid request", "reveal must be true or false"},
			{"reveal twice", pathP("web") + "/export?reveal=true&reveal=false", alice, 400, "INVALID_REQUEST", "Invalid request", "the query parameter reveal is given more than once"},
			{"missing project", pathP("nope") + "/export", alice, 404, "RESOURCE_NOT_FOUND", "Resource not found", `project "nope" not found`},
			{"someone else's project", pathP("web") + "/export", c.token("bob"), 403, "AUTHORIZATION_FAILED", "Insufficient permissions", ""},
			{"no token", pathP("web") + "/export", "", 401, "AUTHENTICATION_FAILED", "No authorization token provided", ""},
		}
		for _, tc := range cases {
			status, _, env := c.do("GET", tc.target, "", tc.token)
			wantError(t, tc.name, status, env, tc.status, tc.code, tc.message)
			assert.Equal(t, tc.detail, env.details(), "%s: details", tc.name)
		}
		status, h, env := c.do("POST", pathP("web")+"/export", "", alice)
		wantError(t, "POST export", status, env, 405, "INVALID_REQUEST", "Method not allowed")
		assert.Equal(t, "GET, HEAD", h.Get("Allow"), "Allow")
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err, "marshal")
	return b
}

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exportDoc is the export document of
// docs/api.md#batch-export-and-import, as far as the tests read it.
type exportDoc struct {
	Format      string `json:"format"`
	Project     string `json:"project"`
	Collections map[string]struct {
		Clusters map[string]struct {
			Records map[string]struct {
				Type  string          `json:"type"`
				Value json.RawMessage `json:"value"`
			} `json:"records"`
		} `json:"clusters"`
	} `json:"collections"`
}

// TestExportImportClient checks the requests export and import send and
// what they print, against a stand-in server answering
// docs/api.md#batch-export-and-import's shapes.
func TestExportImportClient(t *testing.T) {
	t.Parallel()
	const doc = `{"format":"hds/1","project":"p","revision":3,"exported_at":"2026-11-22T08:18:19.123000Z","collections":{}}`
	var got struct {
		method, path, query, contentType, auth, body string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.path, got.query = r.Method, r.URL.EscapedPath(), r.URL.RawQuery
		got.contentType, got.auth, got.body = r.Header.Get("Content-Type"), r.Header.Get("Authorization"), string(b)
		switch {
		case strings.Contains(r.URL.Path, "missing"):
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"success":false,"error":{"code":"RESOURCE_NOT_FOUND","message":"Resource not found","details":"project \"missing\" not found"}}`)
		case r.Method == "GET":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = io.WriteString(w, doc)
		default:
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = io.WriteString(w, `{"success":true,"message":"OK","data":{"created":2,"updated":1,"deleted":0,"unchanged":5,"revision":9,
				"changes":[{"action":"create","collection":"c","cluster":"k","record":"a"},{"action":"update","collection":"c","cluster":"k","record":"b b"}]}}`)
		}
	}))
	defer srv.Close()
	tok := map[string]string{"HDS_TOKEN": "tok", "HDS_URL": srv.URL + "/hds"}

	stdout, stderr, err := runOnce(t, []string{"export", "my project"}, tok, "")
	require.NoError(t, err)
	assert.Equal(t, doc, stdout, "the document as the server sent it")
	assert.Empty(t, stderr)
	assert.Equal(t, "GET /hds/api/v1/projects/my%20project/export", got.method+" "+got.path)
	assert.Equal(t, "", got.query)
	assert.Equal(t, "Bearer tok", got.auth)

	_, _, err = runOnce(t, []string{"export", "-reveal", "-url", srv.URL, "p"}, map[string]string{"HDS_TOKEN": "tok"}, "")
	require.NoError(t, err)
	assert.Equal(t, "GET /api/v1/projects/p/export reveal=true", got.method+" "+got.path+" "+got.query)

	stdout, _, err = runOnce(t, []string{"import", "p"}, tok, doc)
	require.NoError(t, err)
	assert.Equal(t, "POST /hds/api/v1/projects/p/import dry_run=false&mode=merge", got.method+" "+got.path+" "+got.query)
	assert.Equal(t, "application/json", got.contentType)
	assert.Equal(t, doc, got.body, "stdin as the body")
	assert.Equal(t, "created: 2\nupdated: 1\ndeleted: 0\nunchanged: 5\nrevision: 9\n", stdout)

	stdout, _, err = runOnce(t, []string{"import", "-replace", "-dry-run", "p"}, tok, doc)
	require.NoError(t, err)
	assert.Equal(t, "dry_run=true&mode=replace", got.query)
	assert.Equal(t, "created: 2\nupdated: 1\ndeleted: 0\nunchanged: 5\nwould create c/k/a\nwould update c/k/b b\ndry run: nothing was changed\n", stdout)

	for _, tc := range []struct {
		what  string
		args  []string
		stdin string
		want  string
	}{
		{"export of a missing project", []string{"export", "missing"}, "",
			`export: GET /api/v1/projects/missing/export: 404 RESOURCE_NOT_FOUND: Resource not found: project "missing" not found`},
		{"import into a missing project", []string{"import", "missing"}, doc,
			`import: POST /api/v1/projects/missing/import: 404 RESOURCE_NOT_FOUND: Resource not found: project "missing" not found`},
		{"import of nothing", []string{"import", "p"}, " \n",
			"import: stdin is empty: give the export document on stdin (import P < file.json)"},
		{"export without project", []string{"export"}, "", "export takes exactly one argument, the project (usage: example export -h)"},
		{"export of two projects", []string{"export", "a", "b"}, "", "export takes exactly one argument, the project (usage: example export -h)"},
		{"import without project", []string{"import", "-replace"}, doc, "import takes exactly one argument, the project (usage: example import -h)"},
		{"import with an unknown flag", []string{"import", "-merge", "p"}, doc, "import: flag provided but not defined: -merge (usage: example import -h)"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			stdout, stderr, err := runOnce(t, tc.args, map[string]string{"HDS_TOKEN": "tok", "HDS_URL": srv.URL}, tc.stdin)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assert.Empty(t, stdout)
			assert.NotContains(t, stderr, "Usage:", "one line, not the usage")
		})
	}
}

// TestExportImportEndToEnd runs export and import against the example's
// own server: a project exported with -reveal and imported into an empty
// one gives identical records (a dry run first changes nothing), and
// -replace deletes what the document lacks.
func TestExportImportEndToEnd(t *testing.T) {
	t.Parallel()
	base, token := clientServer(t)
	runFixture(t, base, token)
	env := map[string]string{"HDS_URL": base, "HDS_TOKEN": token}

	// An empty collection and an empty cluster travel too.
	mustCall(t, "POST", base+"/api/v1/projects/p/collections/empty", token, nil, http.StatusCreated)
	mustCall(t, "POST", base+"/api/v1/projects/p/collections/c/clusters/none", token, nil, http.StatusCreated)

	revealed, stderr, err := runOnce(t, []string{"export", "-reveal", "p"}, env, "")
	require.NoError(t, err, stderr)
	var src exportDoc
	require.NoError(t, json.Unmarshal([]byte(revealed), &src), "export prints the bare document")
	assert.Equal(t, "hds/1", src.Format)
	assert.Equal(t, "p", src.Project)
	require.Contains(t, src.Collections, "c")
	require.Contains(t, src.Collections["c"].Clusters, "k")
	assert.Len(t, src.Collections["c"].Clusters["k"].Records, len(runSecrets)+1)
	assert.JSONEq(t, `"pa'ss \"wo$rd`+"`"+` \\n\n"`, string(src.Collections["c"].Clusters["k"].Records["DB_PASSWORD"].Value), "revealed")

	masked, _, err := runOnce(t, []string{"export", "p"}, env, "")
	require.NoError(t, err)
	assert.NotContains(t, masked, "pa'ss", "masked without -reveal")
	assert.Contains(t, masked, `"********"`)

	// A dry run into an empty project changes nothing.
	mustCall(t, "POST", base+"/api/v1/projects/q", token, nil, http.StatusCreated)
	n := len(runSecrets) + 1
	stdout, _, err := runOnce(t, []string{"import", "-dry-run", "q"}, env, revealed)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(stdout, "created: "+strconv.Itoa(n)+"\nupdated: 0\ndeleted: 0\nunchanged: 0\n"), "%s", stdout)
	assert.Contains(t, stdout, "would create c/k/DB_PASSWORD\n")
	assert.True(t, strings.HasSuffix(stdout, "dry run: nothing was changed\n"), "%s", stdout)
	status, _ := call(t, "GET", base+"/api/v1/projects/q/collections/c", token, nil)
	assert.Equal(t, http.StatusNotFound, status, "the dry run created a collection")

	// The import itself gives identical records.
	stdout, _, err = runOnce(t, []string{"import", "q"}, env, revealed)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(stdout, "created: "+strconv.Itoa(n)+"\nupdated: 0\ndeleted: 0\nunchanged: 0\n"), "%s", stdout)
	again, _, err := runOnce(t, []string{"export", "-reveal", "q"}, env, "")
	require.NoError(t, err)
	var dst exportDoc
	require.NoError(t, json.Unmarshal([]byte(again), &dst))
	assert.Equal(t, src.Collections, dst.Collections, "the round trip")

	// Importing the masked export leaves the credentials as they are.
	stdout, _, err = runOnce(t, []string{"import", "q"}, env, masked)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(stdout, "created: 0\nupdated: 0\ndeleted: 0\nunchanged: "+strconv.Itoa(n)+"\n"), "%s", stdout)

	// -replace deletes what the document lacks.
	var trimmed map[string]any
	require.NoError(t, json.Unmarshal([]byte(revealed), &trimmed))
	records := trimmed["collections"].(map[string]any)["c"].(map[string]any)["clusters"].(map[string]any)["k"].(map[string]any)["records"].(map[string]any)
	delete(records, "GREETING")
	body, err := json.Marshal(trimmed)
	require.NoError(t, err)
	stdout, _, err = runOnce(t, []string{"import", "-replace", "q"}, env, string(body))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(stdout, "created: 0\nupdated: 0\ndeleted: 1\nunchanged: "+strconv.Itoa(n-1)+"\n"), "%s", stdout)
	status, _ = call(t, "GET", base+"/api/v1/projects/q/collections/c/clusters/k/records/GREETING", token, nil)
	assert.Equal(t, http.StatusNotFound, status, "-replace deleted the record the document lacks")
}

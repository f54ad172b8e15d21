package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiffPromoteClient checks the requests diff and promote send and what
// they print, against a stand-in server answering
// docs/api.md#compare-and-promote's shapes.
func TestDiffPromoteClient(t *testing.T) {
	t.Parallel()
	var got struct{ method, path, query, body string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.path, got.query, got.body = r.Method, r.URL.EscapedPath(), r.URL.RawQuery, string(b)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch {
		case strings.Contains(r.URL.Path, "missing"):
			w.WriteHeader(http.StatusPreconditionFailed)
			_, _ = io.WriteString(w, `{"success":false,"error":{"code":"PRECONDITION_FAILED","message":"Precondition failed","details":"current revision is 9"}}`)
		case r.Method == "GET":
			_, _ = io.WriteString(w, `{"success":true,"message":"OK","data":{"from":"s","to":"p","revision":7,"items":[
				{"cluster":"app","record":"host","change":"changed","from":{"type":"STRING","value":"a","version":2},"to":{"type":"STRING","value":"b","version":1}},
				{"cluster":"app","record":"new","change":"added","from":{"type":"[]INTEGER","value":[1, 2],"version":1},"to":null},
				{"cluster":"app","record":"old","change":"removed","from":null,"to":{"type":"CREDENTIAL","value":"********","version":1}}],
				"summary":{"added":1,"removed":1,"changed":1,"unchanged":4}}}`)
		default:
			_, _ = io.WriteString(w, `{"success":true,"message":"OK","data":{"created":1,"updated":1,"deleted":0,"unchanged":4,"revision":9,
				"changes":[{"action":"update","collection":"p","cluster":"app","record":"host"},{"action":"create","collection":"p","cluster":"app","record":"new"}]}}`)
		}
	}))
	defer srv.Close()
	env := map[string]string{"HDS_TOKEN": "tok", "HDS_URL": srv.URL}

	stdout, _, err := runOnce(t, []string{"diff", "my project", "s/app", "p/app"}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "GET /api/v1/projects/my%20project/diff from=s%2Fapp&to=p%2Fapp", got.method+" "+got.path+" "+got.query)
	assert.Equal(t, `changed app/host: STRING "a" -> STRING "b"
added app/new: []INTEGER [1,2]
removed app/old: CREDENTIAL "********"
added: 1
removed: 1
changed: 1
unchanged: 4
revision: 7
`, stdout)
	_, _, err = runOnce(t, []string{"diff", "-reveal", "-unchanged", "p", "s", "p"}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "from=s&reveal=true&to=p&unchanged=true", got.query)

	stdout, _, err = runOnce(t, []string{"promote", "p", "s", "p"}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "POST /api/v1/projects/p/promote", got.method+" "+got.path)
	assert.JSONEq(t, `{"from":"s","to":"p","delete":false,"dry_run":false}`, got.body)
	assert.Equal(t, "created: 1\nupdated: 1\ndeleted: 0\nunchanged: 4\nrevision: 9\n", stdout)

	stdout, _, err = runOnce(t, []string{"promote", "-delete", "-dry-run", "-if-revision", "7", "-record", "host", "-record", "a,b", "p", "s/app", "p/app"}, env, "")
	require.NoError(t, err)
	assert.JSONEq(t, `{"from":"s/app","to":"p/app","delete":true,"dry_run":true,"if_revision":7,"records":["host","a,b"]}`, got.body)
	assert.Equal(t, "created: 1\nupdated: 1\ndeleted: 0\nunchanged: 4\nwould update p/app/host\nwould create p/app/new\ndry run: nothing was changed\n", stdout)

	stdout, stderr, err := runOnce(t, []string{"promote", "-if-revision", "3", "missing", "s", "p"}, env, "")
	require.Error(t, err)
	assert.Equal(t, "promote: POST /api/v1/projects/missing/promote: 412 PRECONDITION_FAILED: Precondition failed: current revision is 9", err.Error(), "one line")
	assert.Empty(t, stdout)
	assert.Empty(t, stderr)
}

// TestDiffPromoteEndToEnd runs diff and promote against the example's own
// server: the comparison printed, a dry run that changes nothing, a
// promote at the revision diff printed, and a stale revision refused.
func TestDiffPromoteEndToEnd(t *testing.T) {
	t.Parallel()
	base, token := clientServer(t)
	env := map[string]string{"HDS_URL": base, "HDS_TOKEN": token}
	p := base + "/api/v1/projects/p"
	mustCall(t, "POST", p, token, nil, http.StatusCreated)
	for _, c := range []string{"staging", "prod"} {
		mustCall(t, "POST", p+"/collections/"+c, token, nil, http.StatusCreated)
		mustCall(t, "POST", p+"/collections/"+c+"/clusters/app", token, nil, http.StatusCreated)
	}
	add := func(c, name, typ string, value any) {
		mustCall(t, "POST", p+"/collections/"+c+"/clusters/app/records", token, map[string]any{"name": name, "type": typ, "value": value}, http.StatusCreated)
	}
	add("staging", "host", "STRING", "staging.example")
	add("prod", "host", "STRING", "prod.example")
	add("staging", "pw", "CREDENTIAL", "new-secret")
	add("prod", "pw", "CREDENTIAL", "old-secret")
	add("prod", "old", "INTEGER", 1)

	stdout, stderr, err := runOnce(t, []string{"diff", "p", "staging", "prod"}, env, "")
	require.NoError(t, err, stderr)
	lines := strings.Split(stdout, "\n")
	require.Len(t, lines, 9, stdout)
	assert.Equal(t, []string{
		`changed app/host: STRING "staging.example" -> STRING "prod.example"`,
		`removed app/old: INTEGER 1`,
		`changed app/pw: CREDENTIAL "********" -> CREDENTIAL "********"`,
		"added: 0", "removed: 1", "changed: 2", "unchanged: 0",
	}, lines[:7], "masked credentials, compared on their plain values")
	assert.NotContains(t, stdout, "secret", "no credential value without -reveal")
	revision := strings.TrimPrefix(lines[7], "revision: ")

	stdout, _, err = runOnce(t, []string{"promote", "-dry-run", "-delete", "p", "staging", "prod"}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "created: 0\nupdated: 2\ndeleted: 1\nunchanged: 0\nwould update prod/app/host\nwould delete prod/app/old\nwould update prod/app/pw\ndry run: nothing was changed\n", stdout)

	_, _, err = runOnce(t, []string{"promote", "-if-revision", "1", "p", "staging", "prod"}, env, "")
	require.Error(t, err)
	assert.Equal(t, "promote: POST /api/v1/projects/p/promote: 412 PRECONDITION_FAILED: Precondition failed: current revision is "+revision, err.Error())

	stdout, _, err = runOnce(t, []string{"promote", "-if-revision", revision, "-delete", "p", "staging/app", "prod/app"}, env, "")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(stdout, "created: 0\nupdated: 2\ndeleted: 1\nunchanged: 0\nrevision: "), stdout)

	env2 := mustCall(t, "GET", p+"/collections/prod/clusters/app/records/pw?reveal=true", token, nil, http.StatusOK)
	data, _ := json.Marshal(env2["data"])
	assert.Contains(t, string(data), `"value":"new-secret"`, "the credential copied")
	stdout, _, err = runOnce(t, []string{"diff", "-unchanged", "p", "staging", "prod"}, env, "")
	require.NoError(t, err)
	assert.Contains(t, stdout, "unchanged: 2\n", "compared again: the same")
	assert.Contains(t, stdout, "unchanged app/host: STRING \"staging.example\" -> STRING \"staging.example\"\n")
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSnapshotClient checks the requests snapshot create, list and delete,
// diff -from-snapshot and promote -from-snapshot send, and what they
// print, against a stand-in server answering
// docs/api.md#snapshots-and-rollback-v13's shapes.
func TestSnapshotClient(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string // "METHOD PATH QUERY BODY" of every request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, strings.TrimSpace(r.Method+" "+r.URL.EscapedPath()+" "+r.URL.RawQuery+" "+string(b)))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch {
		case strings.Contains(r.URL.Path, "/missing/"):
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"success":false,"error":{"code":"RESOURCE_EXISTS","message":"Resource already exists","details":"snapshot \"v1\" exists"}}`)
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/snapshots"):
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"success":true,"message":"Created","data":{"name":"v1","collection":"prod","cluster":"app","description":"before 2.0",
				"revision":41,"records":12,"automatic":false,"created_at":"2026-11-28T10:00:00Z","created_by":"alice"}}`)
		case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/snapshots"):
			// 101 snapshots: two pages of 100.
			offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
			var items []string
			for i := offset; i < 101 && i < offset+100; i++ {
				cluster, desc, auto := `null`, "", "false"
				switch i {
				case 0:
					cluster, desc = `"app"`, "before 2.0\nsecond line"
				case 1:
					auto = "true"
				}
				items = append(items, fmt.Sprintf(`{"name":"s%03d","collection":"prod","cluster":%s,"description":%q,"revision":%d,"records":%d,
					"automatic":%s,"created_at":"2026-11-28T10:00:00Z","created_by":"alice"}`, i, cluster, desc, 200-i, i, auto))
			}
			_, _ = fmt.Fprintf(w, `{"success":true,"message":"OK","data":{"items":[%s],"total":101,"limit":100,"offset":%d}}`, strings.Join(items, ","), offset)
		case r.Method == "DELETE":
			w.WriteHeader(http.StatusNoContent)
		case r.Method == "GET":
			_, _ = io.WriteString(w, `{"success":true,"message":"OK","data":{"from":"snapshot:v1","to":"prod/app","revision":7,"items":[
				{"cluster":"app","record":"host","change":"changed","from":{"type":"STRING","value":"a","version":2},"to":{"type":"STRING","value":"b","version":3}}],
				"summary":{"added":0,"removed":0,"changed":1,"unchanged":4}}}`)
		default:
			_, _ = io.WriteString(w, `{"success":true,"message":"OK","data":{"created":0,"updated":1,"deleted":1,"unchanged":4,"revision":9,"snapshot":"auto-8",
				"changes":[{"action":"update","collection":"prod","cluster":"app","record":"host"},{"action":"delete","collection":"prod","cluster":"app","record":"new"}]}}`)
		}
	}))
	defer srv.Close()
	env := map[string]string{"HDS_TOKEN": "tok", "HDS_URL": srv.URL}
	last := func() string {
		mu.Lock()
		defer mu.Unlock()
		return got[len(got)-1]
	}

	stdout, _, err := runOnce(t, []string{"snapshot", "create", "-description", "before 2.0", "my project", "prod/app", "v1"}, env, "")
	require.NoError(t, err)
	method, rest, _ := strings.Cut(last(), " ")
	path, body, _ := strings.Cut(rest, " ")
	assert.Equal(t, "POST /api/v1/projects/my%20project/snapshots", method+" "+path)
	assert.JSONEq(t, `{"name":"v1","collection":"prod","cluster":"app","description":"before 2.0"}`, body)
	assert.Equal(t, "snapshot v1: 12 records of prod/app at revision 41\n", stdout)

	_, _, err = runOnce(t, []string{"snapshot", "create", "p", "prod", "v1"}, env, "")
	require.NoError(t, err)
	_, rest, _ = strings.Cut(last(), " ")
	_, body, _ = strings.Cut(rest, " ")
	assert.JSONEq(t, `{"name":"v1","collection":"prod"}`, body, "a whole collection, no description")

	stdout, stderr, err := runOnce(t, []string{"snapshot", "create", "missing", "prod", "v1"}, env, "")
	require.Error(t, err)
	assert.Equal(t, `snapshot create: POST /api/v1/projects/missing/snapshots: 409 RESOURCE_EXISTS: Resource already exists: snapshot "v1" exists`, err.Error(), "one line")
	assert.Empty(t, stdout)
	assert.Empty(t, stderr)

	mu.Lock()
	got = nil
	mu.Unlock()
	stdout, _, err = runOnce(t, []string{"snapshot", "list", "-collection", "prod", "p"}, env, "")
	require.NoError(t, err)
	mu.Lock()
	assert.Equal(t, []string{
		"GET /api/v1/projects/p/snapshots collection=prod&limit=100&offset=0",
		"GET /api/v1/projects/p/snapshots collection=prod&limit=100&offset=100",
	}, got, "every page")
	mu.Unlock()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 102, "a header and every snapshot")
	assert.Regexp(t, `^NAME +OF +REVISION +RECORDS +CREATED +BY +DESCRIPTION$`, lines[0])
	assert.Regexp(t, `^s000 +prod/app +200 +0 +2026-11-28T10:00:00Z +alice +before 2\.0 second line$`, lines[1], "on one line")
	assert.Regexp(t, `^s001 +prod +199 +1 +2026-11-28T10:00:00Z +alice +\(automatic\)$`, lines[2])
	assert.Regexp(t, `^s100 +prod +100 +100 `, lines[101], "in the server's order, newest first")

	stdout, _, err = runOnce(t, []string{"snapshot", "delete", "p", "v 1"}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "DELETE /api/v1/projects/p/snapshots/v%201", last())
	assert.Equal(t, "snapshot v 1 deleted\n", stdout)

	stdout, _, err = runOnce(t, []string{"diff", "-from-snapshot", "v1", "p", "prod/app"}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "GET /api/v1/projects/p/diff from_snapshot=v1&to=prod%2Fapp", last())
	assert.Equal(t, "changed app/host: STRING \"a\" -> STRING \"b\"\nadded: 0\nremoved: 0\nchanged: 1\nunchanged: 4\nrevision: 7\n", stdout)

	stdout, _, err = runOnce(t, []string{"promote", "-from-snapshot", "v1", "-delete", "-dry-run", "-if-revision", "7", "p", "prod/app"}, env, "")
	require.NoError(t, err)
	method, rest, _ = strings.Cut(last(), " ")
	path, body, _ = strings.Cut(rest, " ")
	assert.Equal(t, "POST /api/v1/projects/p/promote", method+" "+path)
	assert.JSONEq(t, `{"from_snapshot":"v1","to":"prod/app","delete":true,"dry_run":true,"if_revision":7}`, body)
	assert.Equal(t, "created: 0\nupdated: 1\ndeleted: 1\nunchanged: 4\nwould update prod/app/host\nwould delete prod/app/new\ndry run: nothing was changed\n", stdout,
		"a dry run names no snapshot")

	stdout, _, err = runOnce(t, []string{"promote", "-from-snapshot", "v1", "-delete", "p", "prod"}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "created: 0\nupdated: 1\ndeleted: 1\nunchanged: 4\nrevision: 9\nsnapshot: auto-8 (promote -from-snapshot auto-8 -delete undoes it)\n", stdout,
		"the automatic snapshot that undoes it")
	var sent map[string]any
	_, rest, _ = strings.Cut(last(), " ")
	_, body, _ = strings.Cut(rest, " ")
	require.NoError(t, json.Unmarshal([]byte(body), &sent))
	assert.NotContains(t, sent, "from", "from_snapshot in from's place")
}

// TestSnapshotEndToEnd runs the snapshot commands and the rollback against
// the example's own server: a snapshot taken, the collection changed
// (a credential deleted among others), the rollback reviewed with diff
// and a dry run, applied at the revision diff printed, and the promote's
// automatic snapshot listed.
func TestSnapshotEndToEnd(t *testing.T) {
	t.Parallel()
	base, token := clientServer(t)
	env := map[string]string{"HDS_URL": base, "HDS_TOKEN": token}
	p := base + "/api/v1/projects/p"
	mustCall(t, "POST", p, token, nil, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/prod", token, nil, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/prod/clusters/app", token, nil, http.StatusCreated)
	add := func(name, typ string, value any) {
		mustCall(t, "POST", p+"/collections/prod/clusters/app/records", token, map[string]any{"name": name, "type": typ, "value": value}, http.StatusCreated)
	}
	add("host", "STRING", "good.example")
	add("pw", "CREDENTIAL", "the-secret")

	stdout, stderr, err := runOnce(t, []string{"snapshot", "create", "-description", "before 2.0", "p", "prod", "before"}, env, "")
	require.NoError(t, err, stderr)
	assert.Regexp(t, `^snapshot before: 2 records of prod at revision \d+\n$`, stdout)

	// The release.
	mustCall(t, "PUT", p+"/collections/prod/clusters/app/records/host", token, map[string]any{"value": "bad.example"}, http.StatusOK)
	mustCall(t, "DELETE", p+"/collections/prod/clusters/app/records/pw", token, nil, http.StatusNoContent)
	add("extra", "INTEGER", 1)

	stdout, _, err = runOnce(t, []string{"diff", "-from-snapshot", "before", "p", "prod"}, env, "")
	require.NoError(t, err)
	lines := strings.Split(stdout, "\n")
	require.Len(t, lines, 9, stdout)
	assert.Equal(t, []string{
		`removed app/extra: INTEGER 1`,
		`changed app/host: STRING "good.example" -> STRING "bad.example"`,
		`added app/pw: CREDENTIAL "********"`,
		"added: 1", "removed: 1", "changed: 1", "unchanged: 0",
	}, lines[:7])
	assert.NotContains(t, stdout, "the-secret", "no credential value without -reveal")
	revision := strings.TrimPrefix(lines[7], "revision: ")

	stdout, _, err = runOnce(t, []string{"promote", "-from-snapshot", "before", "-delete", "-dry-run", "p", "prod"}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "created: 1\nupdated: 1\ndeleted: 1\nunchanged: 0\nwould delete prod/app/extra\nwould update prod/app/host\nwould create prod/app/pw\ndry run: nothing was changed\n", stdout)

	stdout, _, err = runOnce(t, []string{"promote", "-from-snapshot", "before", "-delete", "-if-revision", revision, "p", "prod"}, env, "")
	require.NoError(t, err)
	assert.Regexp(t, `^created: 1\nupdated: 1\ndeleted: 1\nunchanged: 0\nrevision: \d+\nsnapshot: auto-`+revision+` \(promote -from-snapshot auto-`+revision+` -delete undoes it\)\n$`, stdout)
	got := mustCall(t, "GET", p+"/collections/prod/clusters/app?reveal=true", token, nil, http.StatusOK)
	data, _ := json.Marshal(got["data"].(map[string]any)["data"])
	assert.JSONEq(t, `{"host":"good.example","pw":"the-secret"}`, string(data), "prod as the snapshot holds it, the credential too")

	stdout, _, err = runOnce(t, []string{"snapshot", "list", "p"}, env, "")
	require.NoError(t, err)
	lines = strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 3, stdout)
	assert.Regexp(t, `^auto-`+revision+` +prod +`+revision+` +2 +\S+ +alice +\(automatic\)$`, lines[1], "the automatic snapshot first")
	assert.Regexp(t, `^before +prod +\d+ +2 +\S+ +alice +before 2\.0$`, lines[2])

	_, _, err = runOnce(t, []string{"snapshot", "create", "p", "prod", "auto-1"}, env, "")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "snapshot create: POST /api/v1/projects/p/snapshots: 400 VALIDATION_ERROR: "), err.Error())

	stdout, _, err = runOnce(t, []string{"snapshot", "delete", "p", "before"}, env, "")
	require.NoError(t, err)
	assert.Equal(t, "snapshot before deleted\n", stdout)
	stdout, _, err = runOnce(t, []string{"snapshot", "list", "-collection", "prod", "p"}, env, "")
	require.NoError(t, err)
	assert.NotContains(t, stdout, "before ")
	_, _, err = runOnce(t, []string{"snapshot", "delete", "p", "before"}, env, "")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "snapshot delete: DELETE /api/v1/projects/p/snapshots/before: 404 "), err.Error())
}

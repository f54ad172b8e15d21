package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wantEnvelopeError checks the status and the error's code and message.
func wantEnvelopeError(t *testing.T, what string, status int, env map[string]any, wantStatus int, code, message string) {
	t.Helper()
	e, _ := env["error"].(map[string]any)
	assert.Equal(t, wantStatus, status, "%s: status (%v)", what, env)
	assert.Equal(t, code, e["code"], "%s: code", what)
	assert.Equal(t, message, e["message"], "%s: message", what)
}

// TestBackupRoutes: the backup routes for server administrators on the
// SQLite store: list, make one now (201, 0600, in backups/ beside the
// database), delete (204); a user who is not an administrator and every
// API token are 403; a name that is not a backup of the directory is
// 404, and so is a download unless allowed; each change is an audit line;
// the routes are in the OpenAPI document.
func TestBackupRoutes(t *testing.T) {
	cfg, db := sqliteConfig(t, "")
	s := start(t, []string{"-config", cfg}, nil)
	alice := login(t, s.url, "alice", testPassword)
	bob := login(t, s.url, "bob", testPassword)
	createProject(t, s.url, alice, "p")
	apiToken := mustCall(t, "POST", s.url+"/api/v1/projects/p/tokens", alice,
		map[string]any{"name": "ci", "role": "editor"}, http.StatusCreated)["data"].(map[string]any)["token"].(string)
	base := s.url + "/api/v1/backups"

	env := mustCall(t, "GET", base, alice, nil, http.StatusOK)
	assert.Equal(t, map[string]any{"items": []any{}, "total": 0.0, "limit": 100.0, "offset": 0.0}, env["data"])

	env = mustCall(t, "POST", base, alice, nil, http.StatusCreated)
	item := env["data"].(map[string]any)
	name := item["name"].(string)
	assert.Regexp(t, `^hds-[0-9]{8}T[0-9]{6}Z\.db$`, name)
	assert.Regexp(t, `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.000000Z$`, item["created_at"])
	file := filepath.Join(filepath.Dir(db), "backups", name)
	info, err := os.Stat(file)
	require.NoError(t, err, "the backup is in backups/ beside the database")
	assert.Equal(t, float64(info.Size()), item["size"])
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	dirInfo, err := os.Stat(filepath.Dir(file))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dirInfo.Mode().Perm())
	env = mustCall(t, "GET", base+"?limit=1", alice, nil, http.StatusOK)
	assert.Equal(t, map[string]any{"items": []any{item}, "total": 1.0, "limit": 1.0, "offset": 0.0}, env["data"])
	status, env := call(t, "GET", base+"?offset=-1", alice, nil)
	wantEnvelopeError(t, "offset=-1", status, env, 400, "INVALID_REQUEST", "Invalid request")

	// Others: 403, whatever the route.
	for _, caller := range []struct{ who, token string }{{"a user who is not an administrator", bob}, {"an API token", apiToken}} {
		for _, r := range []struct{ method, path string }{{"GET", base}, {"POST", base}, {"GET", base + "/" + name}, {"DELETE", base + "/" + name}} {
			status, env := call(t, r.method, r.path, caller.token, nil)
			wantEnvelopeError(t, caller.who+" "+r.method+" "+r.path, status, env, 403, "AUTHORIZATION_FAILED", "Insufficient permissions")
		}
	}
	status, env = call(t, "GET", base, "", nil)
	wantEnvelopeError(t, "no token", status, env, 401, "AUTHENTICATION_FAILED", "No authorization token provided")

	// Downloads are off by default: 404, the existing backup included.
	status, env = call(t, "GET", base+"/"+name, alice, nil)
	wantEnvelopeError(t, "a download not allowed", status, env, 404, "RESOURCE_NOT_FOUND", "Resource not found")
	// No other file can be named.
	for _, other := range []string{"hds.db", "keys.json", "..%2Fhds.db", "%2e%2e%2Fhds.db.lock", "hds-20990101T000000Z.db", strings.ToUpper(name)} {
		status, env := call(t, "DELETE", base+"/"+other, alice, nil)
		wantEnvelopeError(t, "DELETE "+other, status, env, 404, "RESOURCE_NOT_FOUND", "Resource not found")
	}
	_, err = os.Stat(db)
	assert.NoError(t, err, "the database is still there")

	status, _ = call(t, "DELETE", base+"/"+name, alice, nil)
	assert.Equal(t, http.StatusNoContent, status)
	_, err = os.Stat(file)
	assert.True(t, os.IsNotExist(err), "deleted")
	status, env = call(t, "DELETE", base+"/"+name, alice, nil)
	wantEnvelopeError(t, "a deleted backup", status, env, 404, "RESOURCE_NOT_FOUND", "Resource not found")

	waitFor(t, s.stderr, "action=backup.delete")
	logs := s.stderr.String()
	assert.Regexp(t, `msg=audit action=backup.create actor=\S+ actor_name=alice target=`+regexp.QuoteMeta(name), logs)
	assert.Regexp(t, `msg=audit action=backup.delete actor=\S+ actor_name=alice target=`+regexp.QuoteMeta(name), logs)

	doc := mustGet(t, s.url+"/api/v1/openapi.json")
	for _, op := range []string{`"listBackups"`, `"createBackup"`, `"downloadBackup"`, `"deleteBackup"`, `"/api/v1/backups/{name}"`} {
		assert.Contains(t, doc, op)
	}
}

// mustGet returns the body of a GET answered 200.
func mustGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestBackupDownload: with backups.allow_download, a backup is served as
// an attachment of type application/vnd.sqlite3, its bytes as on disk,
// and the download is an audit line.
func TestBackupDownload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	cfg, _ := sqliteConfig(t, `"backups": {"allow_download": true, "dir": "`+dir+`"}`)
	s := start(t, []string{"-config", cfg}, nil)
	alice := login(t, s.url, "alice", testPassword)
	name := mustCall(t, "POST", s.url+"/api/v1/backups", alice, nil, http.StatusCreated)["data"].(map[string]any)["name"].(string)
	req, err := http.NewRequest("GET", s.url+"/api/v1/backups/"+name, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/vnd.sqlite3", resp.Header.Get("Content-Type"))
	assert.Equal(t, `attachment; filename="`+name+`"`, resp.Header.Get("Content-Disposition"))
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the file as on disk")
	assert.True(t, strings.HasPrefix(string(got), "SQLite format 3\x00"), "the file")
	waitFor(t, s.stderr, "action=backup.download")
}

// TestBackupRoutesOnlyOnSQLite: with the in-memory store the backup
// routes do not exist (404 as any unknown route) and the OpenAPI document
// does not list them.
func TestBackupRoutesOnlyOnSQLite(t *testing.T) {
	cfg := writeConfig(t, `{"addr": "127.0.0.1:0", "database_url": "memory:",
		"users": [{"username": "alice", "password": "`+testPassword+`", "admin": true}]}`)
	s := start(t, []string{"-config", cfg}, nil)
	alice := login(t, s.url, "alice", testPassword)
	for _, method := range []string{"GET", "POST"} {
		status, env := call(t, method, s.url+"/api/v1/backups", alice, nil)
		wantEnvelopeError(t, method, status, env, 404, "RESOURCE_NOT_FOUND", "Resource not found")
	}
	assert.NotContains(t, mustGet(t, s.url+"/api/v1/openapi.json"), "/api/v1/backups")
}

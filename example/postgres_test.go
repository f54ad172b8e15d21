package main

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
)

// The tests below need a PostgreSQL server: they run when
// HDS_TEST_DATABASE_URL is set and skip otherwise (see internal/pgtest).

func TestMain(m *testing.M) {
	helperMain() // the test binary as CMD or as the example (runhelper_test.go)
	// A test that names no store gets the in-memory store, as every test
	// did before the standalone default
	// (docs/api.md#the-standalone-server), which store_test.go tests on
	// a directory of its own.
	defaultDatabaseURL = "memory:"
	// The servers of the tests look at their certificate files often
	// (docs/api.md#serving-over-tls-v13): no test waits seconds for a
	// reload.
	tlsPollInterval = 20 * time.Millisecond
	os.Exit(pgtest.Main(m))
}

func TestPostgresServeAndUserCommands(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"HDS_DATABASE_URL": pgtest.NewURL(t),
		"HDS_ADDR":         "127.0.0.1:0",
		"HDS_JWT_SECRET":   testJWTSecret,
	}
	user := func(stdin string, args ...string) string {
		t.Helper()
		stdout, _, err := runOnce(t, append([]string{"user"}, args...), env, stdin)
		if err != nil {
			t.Fatalf("user %s: %v", strings.Join(args, " "), err)
		}
		return stdout
	}

	user("bob-password\n", "add", "bob")
	if out := user("", "list"); !regexp.MustCompile(`(?m)^bob\s+active\s`).MatchString(out) {
		t.Fatalf("user list after add:\n%s", out)
	}

	// A user exists, so no admin is made up; without a credential key,
	// credentials are disabled rather than sealed with an invented key.
	s := start(t, nil, env)
	if strings.Contains(s.stdout.String(), `"admin"`) {
		t.Errorf("an admin was created although the database has a user:\n%s", s.stdout.String())
	}
	if !strings.Contains(s.stderr.String(), "CREDENTIAL and []CREDENTIAL records are disabled") {
		t.Errorf("stderr does not say that credentials are disabled:\n%s", s.stderr.String())
	}
	token := login(t, s.url, "bob", "bob-password")
	for _, path := range []string{"/api/v1/projects/pg", "/api/v1/projects/pg/collections/c", "/api/v1/projects/pg/collections/c/clusters/k"} {
		if status, body := call(t, "POST", s.url+path, token, nil); status != http.StatusCreated {
			t.Fatalf("POST %s: status %d, body %v", path, status, body)
		}
	}
	status, body := call(t, "POST", s.url+"/api/v1/projects/pg/collections/c/clusters/k/records", token,
		map[string]any{"name": "pw", "type": "CREDENTIAL", "value": "x"})
	if status != http.StatusBadRequest || !strings.Contains(body["error"].(map[string]any)["details"].(string), "no credential key") {
		t.Errorf("credential without a key: status %d, body %v; want 400 saying no key is configured", status, body)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("run returned %v, want nil", err)
	}

	// The data and the token outlive the process.
	s = start(t, nil, env)
	if status, body := call(t, "GET", s.url+"/api/v1/projects/pg", token, nil); status != http.StatusOK {
		t.Errorf("after a restart: GET project: status %d, body %v", status, body)
	}
	user("", "disable", "bob")
	if status, _ := call(t, "GET", s.url+"/api/v1/projects/pg", token, nil); status != http.StatusUnauthorized {
		t.Errorf("after user disable: status %d, want 401 at once", status)
	}
	user("", "enable", "bob")
	if status, _ := call(t, "GET", s.url+"/api/v1/projects/pg", token, nil); status != http.StatusUnauthorized {
		t.Errorf("after user enable: status %d, want 401: enabling does not revive the sessions the disable ended", status)
	}
	token = login(t, s.url, "bob", "bob-password")
	if status, _ := call(t, "GET", s.url+"/api/v1/projects/pg", token, nil); status != http.StatusOK {
		t.Errorf("after user enable, a new login: status %d, want 200", status)
	}
	// Administrators by the CLI, beside the running server.
	if status, _ := call(t, "GET", s.url+"/api/v1/users", token, nil); status != http.StatusForbidden {
		t.Errorf("bob is no administrator: GET /users status %d, want 403", status)
	}
	user("root-password\n", "add", "-admin", "root")
	if out := user("", "list"); !regexp.MustCompile(`(?m)^root\s+active\s+yes\s`).MatchString(out) {
		t.Errorf("user list shows root as an administrator:\n%s", out)
	}
	user("", "admin", "bob", "true")
	if status, body := call(t, "GET", s.url+"/api/v1/users", token, nil); status != http.StatusOK {
		t.Errorf("bob, made an administrator by the CLI: GET /users status %d, body %v; want 200 at once", status, body)
	}
	user("", "admin", "bob", "false")
	if status, _ := call(t, "GET", s.url+"/api/v1/users", token, nil); status != http.StatusForbidden {
		t.Errorf("bob, no longer an administrator: GET /users status %d, want 403 at once", status)
	}
	if _, _, err := runOnce(t, []string{"user", "admin", "root", "false"}, env, ""); err == nil ||
		!strings.Contains(err.Error(), "at least one active administrator must remain") {
		t.Errorf("demoting the last administrator: error %v, want the rule", err)
	}
	if _, _, err := runOnce(t, []string{"user", "delete", "bob"}, env, ""); err == nil ||
		!strings.Contains(err.Error(), "the user owns 1 project") {
		t.Errorf("deleting an owner: error %v, want a refusal saying how many projects", err)
	}
	user("bob-new-password\n", "password", "bob")
	if status, _ := call(t, "GET", s.url+"/api/v1/projects/pg", token, nil); status != http.StatusUnauthorized {
		t.Errorf("after user password: status %d, want 401 at once (every earlier session ends)", status)
	}
	token = login(t, s.url, "bob", "bob-new-password")
	if status, _ := call(t, "GET", s.url+"/api/v1/projects/pg", token, nil); status != http.StatusOK {
		t.Errorf("with the new password: status %d, want 200", status)
	}
	if status, _ := call(t, "DELETE", s.url+"/api/v1/projects/pg", token, nil); status != http.StatusNoContent {
		t.Errorf("DELETE project: status %d", status)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("run returned %v, want nil", err)
	}

	user("", "delete", "bob")
	if out := user("", "list"); strings.Contains(out, "bob") {
		t.Errorf("user list after delete:\n%s", out)
	}
	if _, _, err := runOnce(t, []string{"user", "delete", "bob"}, env, ""); err == nil || !strings.Contains(err.Error(), `user "bob" not found`) {
		t.Errorf("deleting bob twice: error %v, want not found", err)
	}
}

func TestPostgresFirstStartCreatesAdminOnce(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HDS_DATABASE_URL": pgtest.NewURL(t), "HDS_ADDR": "127.0.0.1:0", "HDS_CREDENTIAL_KEY": testKey}
	adminLine := regexp.MustCompile(`user "admin" was created with the password:\n\s+(\S+)\n`)

	s := start(t, nil, env)
	m := adminLine.FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("an empty database got no admin:\n%s", s.stdout.String())
	}
	token := login(t, s.url, "admin", m[1])
	if status, body := call(t, "GET", s.url+"/api/v1/projects", token, nil); status != http.StatusOK {
		t.Errorf("list projects: status %d, body %v", status, body)
	}
	if status, body := call(t, "GET", s.url+"/api/v1/users", token, nil); status != http.StatusOK {
		t.Errorf("the generated admin is a server administrator: GET /users status %d, body %v", status, body)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("run returned %v, want nil", err)
	}

	s = start(t, nil, env)
	if adminLine.MatchString(s.stdout.String()) {
		t.Errorf("a second admin password was made although the database has users:\n%s", s.stdout.String())
	}
	login(t, s.url, "admin", m[1])
	if err := s.stop(t); err != nil {
		t.Fatalf("run returned %v, want nil", err)
	}
}

func TestPostgresCredentialsRotate(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewURL(t)
	oldEnv := map[string]string{"HDS_DATABASE_URL": dbURL, "HDS_ADDR": "127.0.0.1:0",
		"HDS_JWT_SECRET": testJWTSecret, "HDS_CREDENTIAL_KEY": testOldKey}
	if _, _, err := runOnce(t, []string{"user", "add", "bob"}, oldEnv, "bob-password\n"); err != nil {
		t.Fatal(err)
	}

	// Three credentials sealed under the old key.
	s := start(t, nil, oldEnv)
	token := login(t, s.url, "bob", "bob-password")
	const cluster = "/api/v1/projects/rot/collections/c/clusters/k"
	for _, path := range []string{"/api/v1/projects/rot", "/api/v1/projects/rot/collections/c", "/api/v1/projects/rot/collections/c/clusters/k"} {
		if status, body := call(t, "POST", s.url+path, token, nil); status != http.StatusCreated {
			t.Fatalf("POST %s: %d %v", path, status, body)
		}
	}
	secrets := map[string]any{"a": "secret-a", "b": "secret-b", "c": []string{"x", "y"}}
	for name, v := range secrets {
		typ := "CREDENTIAL"
		if _, ok := v.([]string); ok {
			typ = "[]CREDENTIAL"
		}
		if status, body := call(t, "POST", s.url+cluster+"/records/"+name, token, map[string]any{"type": typ, "value": v}); status != http.StatusCreated {
			t.Fatalf("create %s: %d %v", name, status, body)
		}
	}
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}

	// Without a database the command explains why it cannot work.
	if _, _, err := runOnce(t, []string{"credentials", "rotate"}, map[string]string{"HDS_CREDENTIAL_KEY": testKey}, ""); err == nil ||
		!strings.Contains(err.Error(), "selects the in-memory store") {
		t.Errorf("rotate without a database: %v", err)
	}

	// Rotate to the new key, the old one listed as previous.
	cfg := writeConfig(t, `{"security": {"previous_credential_keys": ["`+testOldKey+`"]}}`)
	newEnv := map[string]string{"HDS_DATABASE_URL": dbURL, "HDS_ADDR": "127.0.0.1:0",
		"HDS_JWT_SECRET": testJWTSecret, "HDS_CREDENTIAL_KEY": testKey}
	out, _, err := runOnce(t, []string{"-config", cfg, "credentials", "rotate"}, newEnv, "")
	if err != nil || !strings.Contains(out, "done: 3 credential records seen, 3 re-sealed") {
		t.Fatalf("rotate: %v\n%s", err, out)
	}
	if strings.Contains(out, "secret-") {
		t.Errorf("rotate printed a secret:\n%s", out)
	}
	out, _, err = runOnce(t, []string{"-config", cfg, "credentials", "rotate"}, newEnv, "")
	if err != nil || !strings.Contains(out, "0 re-sealed") {
		t.Errorf("a second rotation: %v\n%s", err, out)
	}

	// A server still sealing with the old key writes a credential after
	// the rotation. A rotation that walks nothing (resumed after the last
	// possible id) finds it in its final check: it does not say done, it
	// says how many remain and fails (the program exits non-zero). A full
	// rotation then re-seals it.
	s = start(t, nil, oldEnv)
	if status, body := call(t, "POST", s.url+cluster+"/records/late", token, map[string]any{"type": "CREDENTIAL", "value": "secret-late"}); status != http.StatusCreated {
		t.Fatalf("create late: %d %v", status, body)
	}
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
	secrets["late"] = "secret-late"
	out, _, err = runOnce(t, []string{"-config", cfg, "credentials", "rotate", "ffffffff-ffff-ffff-ffff-ffffffffffff"}, newEnv, "")
	require.Error(t, err, "rotate with a value left under the old key")
	assert.Contains(t, err.Error(), "1 credential records are still sealed with another key", "rotate's error")
	assert.Contains(t, err.Error(), "make sure every server runs with the new key", "rotate's error")
	assert.NotContains(t, out, "done", "rotate's output with a value left under the old key")
	out, _, err = runOnce(t, []string{"-config", cfg, "credentials", "rotate"}, newEnv, "")
	require.NoError(t, err, "rotate after the late value")
	assert.Contains(t, out, "done: 4 credential records seen, 1 re-sealed", "rotate's output after the late value")

	// The old key can go: the new key alone reads everything.
	s = start(t, nil, newEnv)
	for name, want := range secrets {
		status, body := call(t, "GET", s.url+cluster+"/records/"+name+"?reveal=true", token, nil)
		got, _ := body["data"].(map[string]any)
		if status != http.StatusOK || fmt.Sprint(got["value"]) != fmt.Sprint(want) {
			t.Errorf("after rotation, %s: %d %v, want %v", name, status, body, want)
		}
	}
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
}

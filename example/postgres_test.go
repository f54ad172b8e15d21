package main

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hds-go/hds/internal/pgtest"
)

// The tests below need a PostgreSQL server: they run when
// HDS_TEST_DATABASE_URL is set and skip otherwise (see internal/pgtest).

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestPostgresServeAndUserCommands(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"HDS_DATABASE_URL": pgtest.NewURL(t),
		"HDS_ADDR":         "127.0.0.1:0",
		"HDS_JWT_SECRET":   testJWTSecret,
	}
	user := func(stdin string, args ...string) string {
		t.Helper()
		err, stdout, _ := runOnce(t, append([]string{"user"}, args...), env, stdin)
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
	if status, _ := call(t, "GET", s.url+"/api/v1/projects/pg", token, nil); status != http.StatusOK {
		t.Errorf("after user enable: status %d, want 200", status)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("run returned %v, want nil", err)
	}

	user("", "delete", "bob")
	if out := user("", "list"); strings.Contains(out, "bob") {
		t.Errorf("user list after delete:\n%s", out)
	}
	if err, _, _ := runOnce(t, []string{"user", "delete", "bob"}, env, ""); err == nil || !strings.Contains(err.Error(), `user "bob" not found`) {
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

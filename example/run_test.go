package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clientServer starts the example serving in memory with a credential key
// and the user alice, and returns its URL and a token of alice.
func clientServer(t *testing.T) (string, string) {
	t.Helper()
	path := writeConfig(t, `{
  "security": {"jwt_secret": "`+testJWTSecret+`", "credential_key": "`+testKey+`"},
  "users": [{"username": "alice", "password": "`+testPassword+`"}]
}`)
	s := start(t, []string{"-config", path}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	return s.url, login(t, s.url, "alice", testPassword)
}

// mustCall sends a request that must answer want.
func mustCall(t *testing.T, method, url, token string, body any, want int) map[string]any {
	t.Helper()
	status, env := call(t, method, url, token, body)
	require.Equal(t, want, status, "%s %s: %v", method, url, env)
	return env
}

// runSecrets are the records of the cluster run loads: values that break
// naive quoting, and secrets that must never be printed.
var runSecrets = map[string]struct {
	typ   string
	value any
	want  string
}{
	"DB_PASSWORD": {"CREDENTIAL", "pa'ss \"wo$rd` \\n\n", "pa'ss \"wo$rd` \\n\n"},
	"API_KEYS":    {"[]CREDENTIAL", []string{"k1-secret", "k'2-secret"}, `["k1-secret","k'2-secret"]`},
	"GREETING":    {"STRING", "héllo 'world' $(echo no)\n", "héllo 'world' $(echo no)\n"},
	"PORT":        {"INTEGER", 5432, "5432"},
	"EMPTY":       {"NULL", nil, ""},
	"HDS_TOKEN":   {"STRING", "the cluster wins", "the cluster wins"},
}

// runFixture creates p/c/k holding runSecrets and a record whose name is
// not an environment variable name, and returns the cluster's URL.
func runFixture(t *testing.T, base, token string) {
	t.Helper()
	p := base + "/api/v1/projects/p"
	mustCall(t, "POST", p, token, nil, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/c", token, nil, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/c/clusters/k", token, nil, http.StatusCreated)
	for name, r := range runSecrets {
		mustCall(t, "POST", p+"/collections/c/clusters/k/records", token,
			map[string]any{"name": name, "type": r.typ, "value": r.value}, http.StatusCreated)
	}
	mustCall(t, "POST", p+"/collections/c/clusters/k/records", token,
		map[string]any{"name": "not-a-name", "type": "STRING", "value": "skipped-secret"}, http.StatusCreated)
}

// readEnv0 reads a file written by env -0.
func readEnv0(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	vars := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00") {
		name, value, _ := strings.Cut(kv, "=")
		vars[name] = value
	}
	return vars
}

// assertNoSecret fails when any output holds a value of the cluster.
func assertNoSecret(t *testing.T, outputs ...string) {
	t.Helper()
	for _, out := range outputs {
		for _, s := range []string{"pa'ss", "k1-secret", "k'2-secret", "skipped-secret", testPassword} {
			assert.NotContains(t, out, s, "a value was printed")
		}
	}
}

func TestRunEndToEnd(t *testing.T) {
	t.Parallel()
	base, token := clientServer(t)
	runFixture(t, base, token)
	out := filepath.Join(t.TempDir(), "env")

	// CMD gets every value byte for byte; its exit status is passed on.
	stdout, stderr, err := runOnce(t, []string{"run", "-url", base, "-cluster", "p/c/k", "--",
		"sh", "-c", `env -0 > "$0"; echo child-out; echo child-err >&2; exit 7`, out},
		map[string]string{"HDS_TOKEN": token}, "")
	var exit *exitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 7, exit.code, "CMD's exit status")
	assert.NoError(t, exit.err, "nothing to print: CMD said what it had to")
	assert.Equal(t, "child-out\n", stdout)
	assert.Equal(t, "run: 1 records of p/c/k left out: their names are not environment variable names\nchild-err\n", stderr)
	assertNoSecret(t, stdout, stderr)
	vars := readEnv0(t, out)
	for name, r := range runSecrets {
		assert.Equal(t, r.want, vars[name], "%s in CMD's environment", name)
	}
	assert.NotContains(t, vars, "not-a-name")
	assert.Equal(t, os.Getenv("PATH"), vars["PATH"], "the process's environment is kept")

	// HDS_URL instead of -url; status 0 is success.
	stdout, stderr, err = runOnce(t, []string{"run", "-cluster", "p/c/k", "--", "sh", "-c", `test "$PORT" = 5432`},
		map[string]string{"HDS_URL": base + "/", "HDS_TOKEN": token}, "")
	assert.NoError(t, err)
	assert.Empty(t, stdout)
	assertNoSecret(t, stdout, stderr)

	// A command ended by a signal: 128+N, as shells report it.
	_, _, err = runOnce(t, []string{"run", "-url", base, "-cluster", "p/c/k", "--", "sh", "-c", `kill -TERM $$`},
		map[string]string{"HDS_TOKEN": token}, "")
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 128+15, exit.code)

	// Stdin reaches the command.
	stdout, _, err = runOnce(t, []string{"run", "-url", base, "-cluster", "p/c/k", "--", "cat"},
		map[string]string{"HDS_TOKEN": token}, "from stdin\n")
	assert.NoError(t, err)
	assert.Equal(t, "from stdin\n", stdout)
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	base, token := clientServer(t)
	runFixture(t, base, token)
	withToken := map[string]string{"HDS_TOKEN": token}
	for _, tc := range []struct {
		what string
		args []string
		env  map[string]string
		want string
		code int // 0: not an exitError (exit status 1)
	}{
		{"missing cluster", []string{"run", "-url", base, "-cluster", "p/c/nope", "--", "true"}, withToken,
			`run: GET /api/v1/projects/p/collections/c/clusters/nope: 404 RESOURCE_NOT_FOUND: Resource not found: cluster "nope" not found`, 0},
		{"no token", []string{"run", "-url", base, "-cluster", "p/c/k", "--", "true"}, nil,
			"run: GET /api/v1/projects/p/collections/c/clusters/k: 401 AUTHENTICATION_FAILED: No authorization token provided (set HDS_TOKEN to a user token or an API token)", 0},
		{"bad token", []string{"run", "-url", base, "-cluster", "p/c/k", "--", "true"}, map[string]string{"HDS_TOKEN": "nope"},
			"run: GET /api/v1/projects/p/collections/c/clusters/k: 401 AUTHENTICATION_FAILED: Invalid or expired token", 0},
		{"command not found", []string{"run", "-url", base, "-cluster", "p/c/k", "--", "./no-such-command"}, withToken,
			"run: fork/exec ./no-such-command: no such file or directory", 127},
		{"no server", []string{"run", "-url", "http://127.0.0.1:1", "-cluster", "p/c/k", "--", "true"}, withToken,
			"run: GET /api/v1/projects/p/collections/c/clusters/k: dial tcp 127.0.0.1:1: connect: connection refused", 0},
		{"bad url", []string{"run", "-url", "ftp://user:pw@host", "-cluster", "p/c/k", "--", "true"}, withToken,
			"run: the server URL (-url or HDS_URL) must be an http:// or https:// URL such as http://127.0.0.1:8080", 0},
		{"no cluster", []string{"run", "-url", base, "--", "true"}, withToken,
			"run: -cluster must name a cluster as PROJECT/COLLECTION/CLUSTER (usage: example run -h)", 0},
		{"short cluster", []string{"run", "-url", base, "-cluster", "p/c", "--", "true"}, withToken,
			"run: -cluster must name a cluster as PROJECT/COLLECTION/CLUSTER (usage: example run -h)", 0},
		{"empty level", []string{"run", "-url", base, "-cluster", "p//k", "--", "true"}, withToken,
			"run: -cluster must name a cluster as PROJECT/COLLECTION/CLUSTER (usage: example run -h)", 0},
		{"no command", []string{"run", "-url", base, "-cluster", "p/c/k", "--"}, withToken,
			"run: give the command to run after -- (usage: example run -h)", 0},
		{"unknown flag", []string{"run", "-nope", "-cluster", "p/c/k", "--", "true"}, withToken,
			"run: flag provided but not defined: -nope (usage: example run -h)", 0},
	} {
		t.Run(tc.what, func(t *testing.T) {
			stdout, stderr, err := runOnce(t, tc.args, tc.env, "")
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assert.NotContains(t, err.Error(), "\n", "one line")
			var exit *exitError
			if tc.code != 0 {
				require.ErrorAs(t, err, &exit)
				assert.Equal(t, tc.code, exit.code)
			} else {
				assert.False(t, errors.As(err, &exit), "exit status 1")
			}
			assert.NotContains(t, stderr, "Usage:", "one line, not the usage")
			assert.NotContains(t, err.Error(), "user:pw")
			assertNoSecret(t, stdout, stderr, err.Error())
		})
	}
}

// TestRunMalformedEnvFile: a server that answers something other than
// an environment file gets an error that never repeats what it sent.
func TestRunMalformedEnvFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ what, contentType, body, want string }{
		{"bad quoting", "text/plain; charset=utf-8", "A='pa'ss-secret\n",
			"run: GET /api/v1/projects/p/collections/c/clusters/k: the environment file is malformed"},
		{"no newline", "text/plain; charset=utf-8", "A='k1-secret'",
			"run: GET /api/v1/projects/p/collections/c/clusters/k: the environment file is malformed"},
		{"cluster data", "application/json; charset=utf-8", `{"success":true,"data":{"data":{"A":"k1-secret"}}}`,
			`run: GET /api/v1/projects/p/collections/c/clusters/k: the server did not answer with an environment file (Content-Type "application/json; charset=utf-8"): it may be older than API v1.1`},
	} {
		t.Run(tc.what, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				assert.Equal(t, "env", r.URL.Query().Get("format"))
				assert.Equal(t, "true", r.URL.Query().Get("reveal"))
				assert.Equal(t, "Bearer tok", r.Header.Get("Authorization"))
				w.Header().Set("Content-Type", tc.contentType)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			stdout, stderr, err := runOnce(t, []string{"run", "-url", srv.URL, "-cluster", "p/c/k", "--", "true"},
				map[string]string{"HDS_TOKEN": "tok"}, "")
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assertNoSecret(t, stdout, stderr, err.Error())
		})
	}
}

// TestRunResolves: run resolves the references between records by
// default (docs/api.md#references-between-records); -resolve=false gives
// the stored values.
func TestRunResolves(t *testing.T) {
	t.Parallel()
	base, token := clientServer(t)
	p := base + "/api/v1/projects/p"
	mustCall(t, "POST", p, token, nil, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/c", token, nil, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/c/clusters/k", token, nil, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/c/clusters/db", token, nil, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/c/clusters/db/records", token,
		map[string]any{"name": "password", "type": "CREDENTIAL", "value": "pw'1"}, http.StatusCreated)
	mustCall(t, "POST", p+"/collections/c/clusters/k/records", token,
		map[string]any{"name": "DSN", "type": "STRING", "value": "postgres://app:${db/password}@db/app"}, http.StatusCreated)
	withToken := map[string]string{"HDS_TOKEN": token}
	out := filepath.Join(t.TempDir(), "env")
	script := `env -0 > "$0"`

	_, _, err := runOnce(t, []string{"run", "-url", base, "-cluster", "p/c/k", "--", "sh", "-c", script, out}, withToken, "")
	require.NoError(t, err)
	assert.Equal(t, "postgres://app:pw'1@db/app", readEnv0(t, out)["DSN"], "resolved and revealed")

	_, _, err = runOnce(t, []string{"run", "-url", base, "-resolve=false", "-cluster", "p/c/k", "--", "sh", "-c", script, out}, withToken, "")
	require.NoError(t, err)
	assert.Equal(t, "postgres://app:${db/password}@db/app", readEnv0(t, out)["DSN"], "as stored")

	// A reference that does not resolve: one line, CMD not started.
	mustCall(t, "POST", p+"/collections/c/clusters/k/records", token,
		map[string]any{"name": "BROKEN", "type": "STRING", "value": "${nope}"}, http.StatusCreated)
	stdout, stderr, err := runOnce(t, []string{"run", "-url", base, "-cluster", "p/c/k", "--", "sh", "-c", "echo started"}, withToken, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "422 UNRESOLVED_REFERENCE")
	assert.Contains(t, err.Error(), "record BROKEN: ${nope}: not found")
	assert.NotContains(t, stdout, "started")
	assertNoSecret(t, stdout, stderr, err.Error())
}

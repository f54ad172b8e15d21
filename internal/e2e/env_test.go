package e2e_test

// GET K?format=env, the environment file of a cluster
// (docs/api.md#environment-files).

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// envValue is a record of the environment file tests and the text the
// file must give it.
type envValue struct {
	name, typ string
	value     any    // the JSON value sent
	want      string // the text a shell reads back (revealed)
}

// envValues are records whose values stress shell quoting: quotes,
// newlines, $, backslashes, backticks, unicode, empty values.
var envValues = []envValue{
	{"SINGLE_QUOTE", "STRING", `it's 'quoted'`, `it's 'quoted'`},
	{"ONLY_QUOTES", "STRING", `'''`, `'''`},
	{"DOUBLE_QUOTE", "STRING", `say "hi"`, `say "hi"`},
	{"NEWLINES", "STRING", "line1\nline2\n\nline4\n", "line1\nline2\n\nline4\n"},
	{"CR_TAB", "STRING", "a\r\nb\tc", "a\r\nb\tc"},
	{"DOLLAR", "STRING", "$HOME ${PATH} $(echo pwned) $1 $$", "$HOME ${PATH} $(echo pwned) $1 $$"},
	{"BACKSLASH", "STRING", `C:\dir\n \\ \' \`, `C:\dir\n \\ \' \`},
	{"BACKTICK", "STRING", "`echo pwned` ``", "`echo pwned` ``"},
	{"UNICODE", "STRING", "héllo wörld ✓ 🎉 שלום \u00a0nbsp", "héllo wörld ✓ 🎉 שלום \u00a0nbsp"},
	{"EMPTY", "STRING", "", ""},
	{"SPACES", "STRING", "  leading and trailing  ", "  leading and trailing  "},
	{"SEMICOLON", "STRING", "a; rm -rf / & b | c > d", "a; rm -rf / & b | c > d"},
	{"HASH_EQ", "STRING", "#not a comment = x", "#not a comment = x"},
	{"INT", "INTEGER", -42, "-42"},
	{"FLT", "FLOAT", 1e21, "1e+21"},
	{"BOOL", "BOOLEAN", true, "true"},
	{"DAY", "DATE", "2026-11-22", "2026-11-22"},
	{"ID", "UUID", "019A7B2E-4C1D-7F3A-9B2E-5D6C7E8F9A0B", "019a7b2e-4c1d-7f3a-9b2e-5d6c7e8f9a0b"},
	{"NOTHING", "NULL", nil, ""},
	{"LIST", "[]STRING", []string{"a'b", "c\nd"}, `["a'b","c\nd"]`},
	{"NUMS", "[]INTEGER", []int{1, 2, 3}, "[1,2,3]"},
	{"NULLS", "[]NULL", []any{nil, nil}, "[null,null]"},
	{"SECRET", "CREDENTIAL", "s3cr'et $x `y`", "s3cr'et $x `y`"},
	{"SECRETS", "[]CREDENTIAL", []string{"p1", "p'2"}, `["p1","p'2"]`},
	{"_private9", "STRING", "lower case and underscore", "lower case and underscore"},
}

// envSkipped are record names that are not environment variable names.
var envSkipped = []string{"my-var", "1ABC", "héllo", "a b", "dot.name"}

// envFixture makes alice's project p/c/k holding envValues and envSkipped.
func envFixture(t *testing.T, kind storeKind) (*client, string) {
	t.Helper()
	c := newServer(t, kind, hds.WithCredentialKey(testKey))
	tok := c.token("alice")
	c.tree(tok, "p", "c", "k")
	k := pathK("p", "c", "k")
	for _, v := range envValues {
		raw, err := json.Marshal(v.value)
		require.NoError(t, err)
		c.addRecord(tok, k, v.name, v.typ, string(raw))
	}
	for _, name := range envSkipped {
		c.addRecord(tok, k, name, "STRING", `"skipped"`)
	}
	return c, k
}

// getEnv fetches target and returns the response and its body, checked
// against the OpenAPI document.
func getEnv(t *testing.T, c *client, target, token string) (*http.Response, []byte) {
	t.Helper()
	res := c.raw(request(http.MethodGet, target, "", token))
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, body
}

// shellEnv loads file with `set -a; . ./file` in sh and returns the
// environment sh then has, read with env -0 so that values with newlines
// come back whole.
func shellEnv(t *testing.T, file []byte) map[string]string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), file, 0o600))
	cmd := exec.Command("sh", "-c", "set -a; . ./file; env -0")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "sh: %s", stderr.String())
	require.Empty(t, stderr.String(), "sh wrote to stderr")
	vars := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		name, value, _ := strings.Cut(kv, "=")
		vars[name] = value
	}
	return vars
}

func TestEnvFileLoadsInShell(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, k := envFixture(t, kind)
		res, body := getEnv(t, c, k+"?format=env&reveal=true", c.token("alice"))
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
		assert.Equal(t, "text/plain; charset=utf-8", res.Header.Get("Content-Type"))
		assert.Equal(t, "5", res.Header.Get("X-Hds-Skipped-Records"))
		assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))

		vars := shellEnv(t, body)
		for _, v := range envValues {
			got, ok := vars[v.name]
			if assert.True(t, ok, "%s is not in the environment", v.name) {
				assert.Equal(t, v.want, got, "%s (%s) read back by sh", v.name, v.typ)
			}
		}
		for _, name := range envSkipped {
			assert.NotContains(t, string(body), name+"=", "a record that is not an environment variable name")
		}
		// Nothing else reaches the environment: no command ran ($(...),
		// backticks) and no line was split into two variables.
		want := map[string]bool{"PATH": true, "PWD": true, "OLDPWD": true, "SHLVL": true, "_": true} // sh's own
		for _, v := range envValues {
			want[v.name] = true
		}
		for name := range vars {
			assert.True(t, want[name], "an unexpected variable %q in the environment", name)
		}
	})
}

func TestEnvFileExactText(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		tok := c.token("alice")
		c.tree(tok, "p", "c", "k")
		k := pathK("p", "c", "k")
		// Created out of order: the file sorts names byte-wise (upper case
		// before _ before lower case).
		c.addRecord(tok, k, "b", "STRING", `"it's"`)
		c.addRecord(tok, k, "_a", "NULL", `null`)
		c.addRecord(tok, k, "Z", "CREDENTIAL", `"secret"`)
		c.addRecord(tok, k, "A", "[]CREDENTIAL", `["x", "y"]`)
		c.addRecord(tok, k, "B", "[]FLOAT", `[1.5, 2, 1e21]`)

		res, body := getEnv(t, c, k+"?format=env", tok)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
		assert.Equal(t, "A='[\"********\",\"********\"]'\nB='[1.5,2,1e+21]'\nZ='********'\n_a=''\nb='it'\\''s'\n",
			string(body), "credentials masked without reveal")
		assert.Equal(t, "0", res.Header.Get("X-Hds-Skipped-Records"))

		res, body = getEnv(t, c, k+"?format=env&reveal=true", tok)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
		assert.Equal(t, "A='[\"x\",\"y\"]'\nB='[1.5,2,1e+21]'\nZ='secret'\n_a=''\nb='it'\\''s'\n", string(body))

		res, body = getEnv(t, c, k+"?format=env&reveal=false", tok)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
		assert.Contains(t, string(body), "Z='********'\n")
	})
}

func TestEnvFileEmptyCluster(t *testing.T) {
	c := newServer(t, storeKinds[0])
	tok := c.token("alice")
	c.tree(tok, "p", "c", "k")
	res, body := getEnv(t, c, pathK("p", "c", "k")+"?format=env", tok)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, body)
	assert.Equal(t, "text/plain; charset=utf-8", res.Header.Get("Content-Type"))
	assert.Equal(t, "0", res.Header.Get("X-Hds-Skipped-Records"))
}

func TestEnvFileErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "p", "c", "k")
		k := pathK("p", "c", "k")
		for _, tc := range []struct {
			what, target, token string
			status              int
			code, message       string
			details             string
		}{
			{"format json", k + "?format=json", alice, 400, "INVALID_REQUEST", "Invalid request", "format must be env"},
			{"format empty", k + "?format=", alice, 400, "INVALID_REQUEST", "Invalid request", "format must be env"},
			{"format ENV", k + "?format=ENV", alice, 400, "INVALID_REQUEST", "Invalid request", "format must be env"},
			{"format twice", k + "?format=env&format=env", alice, 400, "INVALID_REQUEST", "Invalid request",
				"the query parameter format is given more than once"},
			{"resolve twice", k + "?format=env&resolve=true&resolve=false", alice, 400, "INVALID_REQUEST", "Invalid request",
				"the query parameter resolve is given more than once"},
			{"bad reveal", k + "?format=env&reveal=yes", alice, 400, "INVALID_REQUEST", "Invalid request", "reveal must be true or false"},
			{"no token", k + "?format=env", "", 401, "AUTHENTICATION_FAILED", "No authorization token provided", ""},
			{"another's project", k + "?format=env", bob, 403, "AUTHORIZATION_FAILED", "Insufficient permissions", ""},
			{"another's project, bad format", k + "?format=xml", bob, 403, "AUTHORIZATION_FAILED", "Insufficient permissions", ""},
			{"missing cluster", pathK("p", "c", "nope") + "?format=env", alice, 404, "RESOURCE_NOT_FOUND", "Resource not found", `cluster "nope" not found`},
		} {
			status, _, env := c.do(http.MethodGet, tc.target, "", tc.token)
			wantError(t, tc.what, status, env, tc.status, tc.code, tc.message)
			assert.Equal(t, tc.details, env.details(), tc.what)
		}
	})
}

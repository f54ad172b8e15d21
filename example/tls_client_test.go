package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tlsClientServer starts the example serving HTTPS with a certificate of
// a new CA, creates p/c/k holding APP_A, and returns the server's URL, a
// token of alice, the CA and the path of the CA's PEM file.
func tlsClientServer(t *testing.T) (base, token string, ca *testCA, caFile string) {
	t.Helper()
	ca = newTestCA(t)
	f := newTLSFiles(t, ca, 1)
	s := start(t, []string{"-config", tlsConfigFile(t, f, "")}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	require.True(t, strings.HasPrefix(s.url, "https://"), s.url)
	c := ca.client()
	token = loginWith(t, c, s.url, "alice", testPassword)
	p := s.url + "/api/v1/projects/p"
	for _, path := range []string{p, p + "/collections/c", p + "/collections/c/clusters/k", p + "/collections/c/clusters/k2"} {
		status, env := callWith(t, c, "POST", path, token, nil)
		require.Equal(t, http.StatusCreated, status, "%s: %v", path, env)
	}
	status, env := callWith(t, c, "POST", p+"/collections/c/clusters/k/records", token,
		map[string]any{"name": "APP_A", "type": "STRING", "value": "tls-value"})
	require.Equal(t, http.StatusCreated, status, "%v", env)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, caFile, ca.pem)
	return s.url, token, ca, caFile
}

// TestClientCAFile: the client commands trust HDS_CA_FILE besides the
// system's roots; without it (or with another CA) a certificate that does
// not verify is one line and an error; a bad HDS_CA_FILE is one line.
func TestClientCAFile(t *testing.T) {
	t.Parallel()
	base, token, _, caFile := tlsClientServer(t)
	otherCA := filepath.Join(t.TempDir(), "other.pem")
	writeFile(t, otherCA, newTestCA(t).pem)
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	writeFile(t, notPEM, []byte("no certificate here\n"))
	missing := filepath.Join(t.TempDir(), "missing.pem")

	// Every client command, trusting the CA of HDS_CA_FILE.
	env := map[string]string{"HDS_TOKEN": token, "HDS_CA_FILE": caFile}
	stdout, stderr, err := runOnce(t, []string{"export", "-url", base, "p"}, env, "")
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, `"APP_A"`)
	_, stderr, err = runOnce(t, []string{"import", "-url", base, "-dry-run", "p"}, env, stdout)
	require.NoError(t, err, stderr)
	_, stderr, err = runOnce(t, []string{"diff", "-url", base, "p", "c/k", "c/k2"}, env, "")
	require.NoError(t, err, stderr)
	_, stderr, err = runOnce(t, []string{"promote", "-url", base, "-dry-run", "p", "c/k", "c/k2"}, env, "")
	require.NoError(t, err, stderr)
	out := filepath.Join(t.TempDir(), "env")
	_, stderr, err = runOnce(t, []string{"run", "-url", base, "-cluster", "p/c/k", "--", "sh", "-c", `env -0 > "$0"`, out}, env, "")
	require.NoError(t, err, stderr)
	assert.Equal(t, "tls-value", readEnv0(t, out)["APP_A"])

	const route = "GET /api/v1/projects/p/export: "
	for _, tc := range []struct {
		what, caFile, want string
	}{
		{"no HDS_CA_FILE", "", route + "no TLS connection to the server: tls: failed to verify certificate: " +
			"x509: certificate signed by unknown authority (HDS_CA_FILE names a PEM file of the certificates to trust besides the system's)"},
		{"another CA", otherCA, route + "no TLS connection to the server: tls: failed to verify certificate: " +
			"x509: certificate signed by unknown authority"},
		{"not PEM", notPEM, "HDS_CA_FILE " + notPEM + " holds no PEM certificate"},
		{"missing", missing, "HDS_CA_FILE: open " + missing + ": no such file or directory"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			stdout, stderr, err := runOnce(t, []string{"export", "-url", base, "p"}, map[string]string{"HDS_TOKEN": token, "HDS_CA_FILE": tc.caFile}, "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.Empty(t, stdout)
			assert.Empty(t, stderr)
		})
	}
}

// TestRunCacheNotOnTLSFailure: a certificate that does not verify, or a
// server that does not speak TLS on an https:// URL, is an error of run
// -cache (with and without -watch), never a start from the cache: a TLS
// failure is not an outage.
func TestRunCacheNotOnTLSFailure(t *testing.T) {
	t.Parallel()
	base, token, _, caFile := tlsClientServer(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "env.cache")
	out := filepath.Join(dir, "env")
	script := []string{"sh", "-c", `env -0 > "$0"`, out}
	runArgs := func(url string, extra ...string) []string {
		return append(append(append([]string{"run", "-url", url, "-cache", cache}, extra...), "-cluster", "p/c/k", "--"), script...)
	}
	// The cache is written by a run that trusts the CA.
	_, stderr, err := runOnce(t, runArgs(base), map[string]string{"HDS_TOKEN": token, "HDS_CACHE_KEY": testCacheKey, "HDS_CA_FILE": caFile}, "")
	require.NoError(t, err, stderr)
	_, err = os.Stat(cache)
	require.NoError(t, err, "the cache was written")

	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	httpsToPlain := "https://" + strings.TrimPrefix(plain.URL, "http://")
	for _, tc := range []struct {
		what, url, want string
		watch           bool
	}{
		{"certificate not verified", base, "x509: certificate signed by unknown authority", false},
		{"certificate not verified, -watch", base, "x509: certificate signed by unknown authority", true},
		{"plain HTTP on an https:// URL", httpsToPlain, "http: server gave HTTP response to HTTPS client", false},
	} {
		t.Run(tc.what, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(out))
			var extra []string
			if tc.watch {
				extra = []string{"-watch"}
			}
			_, stderr, err := runOnce(t, runArgs(tc.url, extra...), map[string]string{"HDS_TOKEN": token, "HDS_CACHE_KEY": testCacheKey}, "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "run: GET /api/v1/projects/p/")
			assert.Contains(t, err.Error(), "no TLS connection to the server: ")
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, stderr, "starting from the cache")
			_, statErr := os.Stat(out)
			assert.True(t, os.IsNotExist(statErr), "CMD was started")
		})
	}
}

// TestRunWatchOverTLS: run -watch follows the change feed over HTTPS
// (HTTP/2) with HDS_CA_FILE and restarts CMD on a change.
func TestRunWatchOverTLS(t *testing.T) {
	t.Parallel()
	base, token, ca, caFile := tlsClientServer(t)
	log := childLog{t: t, path: filepath.Join(t.TempDir(), "log")}
	r := startRun(t, log, append([]string{"run", "-watch", "-url", base, "-cluster", "p/c/k", "-debounce", "100ms", "--"},
		childCommand(t, log.path, "die")...), map[string]string{"HDS_TOKEN": token, "HDS_CA_FILE": caFile})
	first := log.waitStarts(1)
	assert.Equal(t, map[string]string{"APP_A": "tls-value"}, first.vars)
	status, env := callWith(t, ca.client(), "PUT", base+"/api/v1/projects/p/collections/c/clusters/k/records/APP_A", token,
		map[string]any{"value": "renewed"})
	require.Equal(t, http.StatusOK, status, "%v", env)
	second := log.waitStarts(2)
	assert.Equal(t, map[string]string{"APP_A": "renewed"}, second.vars)
	require.NoError(t, syscall.Kill(second.pid, syscall.SIGUSR2)) // CMD ends on its own
	assert.Equal(t, 3, r.wait(t))
}

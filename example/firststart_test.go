package main

import (
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFailedStartCreatesNoUser: a start whose address is taken exits
// non-zero and leaves no user in the SQLite file (neither the generated
// admin nor a configured one), so the next start that listens is the one
// that creates admin and prints its password
// (docs/api.md#the-standalone-server). A later start, which does not
// show that password again, says how to set a new one, and that way
// works.
func TestFailedStartCreatesNoUser(t *testing.T) {
	useStandaloneDefault(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	busy := map[string]string{"HDS_ADDR": taken.Addr().String()}

	noUsers := func(when string) {
		t.Helper()
		out, _, err := runOnce(t, []string{"user", "list"}, nil, "")
		require.NoError(t, err, when)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		assert.Len(t, lines, 1, "%s: the users are\n%s", when, out)
	}
	stdout, _, err := runOnce(t, nil, busy, "")
	require.Error(t, err, "a start on a taken address")
	assert.Contains(t, err.Error(), "listen")
	assert.NotContains(t, stdout, "password", "a failed start prints no password")
	noUsers("after a failed plain start")

	cfg := writeConfig(t, `{"users": [{"username": "alice", "password": "alice-password", "admin": true}]}`)
	_, _, err = runOnce(t, []string{"-config", cfg}, busy, "")
	require.Error(t, err, "a start on a taken address")
	noUsers("after a failed start with configured users")

	// The next start that listens creates admin and prints its password.
	env := map[string]string{"HDS_ADDR": "127.0.0.1:0"}
	s := start(t, nil, env)
	m := regexp.MustCompile(`user "admin" was created with the password:\n\s+(\S+)\n`).FindStringSubmatch(s.stdout.String())
	require.NotNil(t, m, "no admin password on stdout:\n%s", s.stdout.String())
	login(t, s.url, "admin", m[1])
	require.NoError(t, s.stop(t))

	// A later start names the command that sets a password; it works
	// beside the running server.
	s = start(t, nil, env)
	out := s.stdout.String()
	assert.NotContains(t, out, m[1])
	assert.Contains(t, out, `User "admin" was created by an earlier start, which printed its password. Lost it, or never saw it?`)
	assert.Contains(t, out, "    printf '%s\\n' 'NEW PASSWORD' | go run ./example user password admin\n")
	assert.Contains(t, out, `-d '{"username":"admin","password":"PASSWORD"}'`)
	_, _, err = runOnce(t, []string{"user", "password", "admin"}, nil, "NEW PASSWORD\n")
	require.NoError(t, err)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status, _ := call(t, "POST", s.url+"/api/v1/auth/login", "", map[string]string{"username": "admin", "password": "NEW PASSWORD"})
		if status == http.StatusOK {
			break
		}
		require.True(t, time.Now().Before(deadline), "the new password does not log in: %d", status)
	}
	require.NoError(t, s.stop(t))

	// With a configuration file, the command names it.
	cfg = writeConfig(t, `{"addr": "127.0.0.1:0"}`)
	s = start(t, []string{"-config", cfg}, nil)
	assert.Contains(t, s.stdout.String(), "| go run ./example -config "+shellQuote(cfg)+" user password admin\n")
	require.NoError(t, s.stop(t))
}

// TestConfiguredUserWithAnotherPassword: a configured user that exists
// already with another password (the generated admin of a plain first
// start, then a configuration naming admin) is left as it is, and the
// log says that the configured password does not log in and how to set
// it; one whose password is the configuration's is logged as unchanged.
func TestConfiguredUserWithAnotherPassword(t *testing.T) {
	useStandaloneDefault(t)
	env := map[string]string{"HDS_ADDR": "127.0.0.1:0"}
	s := start(t, nil, env)
	require.NoError(t, s.stop(t))

	cfg := writeConfig(t, `{"users": [{"username": "admin", "password": "admin-password", "admin": true},
  {"username": "bob", "password": "bob-password"}]}`)
	s = start(t, []string{"-config", cfg}, env)
	status, _ := call(t, "POST", s.url+"/api/v1/auth/login", "", map[string]string{"username": "admin", "password": "admin-password"})
	assert.Equal(t, http.StatusUnauthorized, status, "the configured password of an existing user is not applied")
	login(t, s.url, "bob", "bob-password")
	require.NoError(t, s.stop(t))
	assert.Contains(t, s.stderr.String(), `msg="user exists with another password than the configuration's, left unchanged: `+
		`the configured password does not log in; to make it the password, give it as the first line of stdin to: `+
		`go run ./example -config `+shellQuote(cfg)+` user password NAME" username=admin`)
	assert.Contains(t, s.stderr.String(), `msg="user created" username=bob`)

	s = start(t, []string{"-config", cfg}, env)
	require.NoError(t, s.stop(t))
	assert.Contains(t, s.stderr.String(), `msg="user exists, left unchanged" username=bob`)
	assert.NotContains(t, s.stderr.String(), "bob-password")
}

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// Test secrets. None of them may ever show up in the program's output.
var (
	testJWTSecret = "test-jwt-secret-that-is-long-enough-0123456789"
	testKey       = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	testOldKey    = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	testPassword  = "alice-password-do-not-print"
)

// syncBuffer is an io.Writer safe for the concurrent writes of a running
// server and the reads of the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// environ returns a getenv reading only m, never the real environment.
func environ(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// writeConfig writes a configuration file and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hds.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runOnce runs the program to completion (it must not start serving) and
// returns its output and error.
func runOnce(t *testing.T, args []string, env map[string]string, stdin string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = run(ctx, append([]string{"example"}, args...), environ(env), strings.NewReader(stdin), &out, &errOut)
	if ctx.Err() != nil {
		t.Fatalf("run %q did not return on its own: it must not serve", args)
	}
	return out.String(), errOut.String(), err
}

func TestLoadConfigFile(t *testing.T) {
	path := writeConfig(t, `{
  "addr": "127.0.0.1:9999",
  "database_url": "",
  "security": {"jwt_secret": "`+testJWTSecret+`", "jwt_expiration": "90m", "jwt_issuer": "me",
               "require_auth": false, "refresh_window": "2d", "max_session_age": "720h",
               "credential_key": "`+testKey+`", "previous_credential_keys": ["`+testOldKey+`"]},
  "cors": {"allowed_origins": ["https://app.example.com", "*"]},
  "rate_limit": {"per_hour": 500, "per_minute": 50, "redis_url": "",
                 "trusted_proxies": ["10.0.0.0/8", "192.168.1.1"], "login_failures_per_user": 5,
                 "login_failures_per_ip": 50, "login_window": "1h"},
  "users": [{"username": "alice", "password": "`+testPassword+`"}]
}`)
	cfg, err := loadConfig(path, environ(nil))
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	wantSec := hds.Security{JWTSecret: testJWTSecret, JWTExpiration: "90m", JWTIssuer: "me",
		AllowAnonymous: true, RefreshWindow: "2d", MaxSessionAge: "720h"}
	if cfg.security != wantSec {
		t.Errorf("security = %+v, want %+v", cfg.security, wantSec)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"addr", cfg.addr, "127.0.0.1:9999"},
		{"database URL", cfg.databaseURL, ""},
		{"number of credential keys", len(cfg.credentialKeys), 2},
		{"primary key", fmt.Sprint(cfg.credentialKeys[0]), fmt.Sprint(bytes.Repeat([]byte{7}, 32))},
		{"previous key", fmt.Sprint(cfg.credentialKeys[1]), fmt.Sprint(bytes.Repeat([]byte{9}, 32))},
		{"cors", strings.Join(cfg.corsOrigins, " "), "https://app.example.com *"},
		{"per hour", cfg.perHour, 500},
		{"per minute", cfg.perMinute, 50},
		{"trusted proxies", strings.Join(cfg.trustedProxies, " "), "10.0.0.0/8 192.168.1.1"},
		{"login failures per user", cfg.loginFailuresPerUser, 5},
		{"login failures per IP", cfg.loginFailuresPerIP, 50},
		{"login window", cfg.loginWindow, time.Hour},
		{"users", fmt.Sprint(cfg.users), fmt.Sprint([]userConfig{{"alice", testPassword, false}})},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	for name, content := range map[string]string{
		"no file":    "",
		"empty file": `{}`,
		// A file that leaves require_auth out keeps the default, true.
		"partial security": `{"security": {"jwt_issuer": "hds"}, "rate_limit": {}, "cors": {}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := ""
			if content != "" {
				path = writeConfig(t, content)
			}
			cfg, err := loadConfig(path, environ(nil))
			if err != nil {
				t.Fatalf("loadConfig: %v", err)
			}
			wantSec := hds.Security{JWTExpiration: "1h", JWTIssuer: "hds",
				RefreshWindow: "7d", MaxSessionAge: "30d"}
			if cfg.security != wantSec {
				t.Errorf("security = %+v, want %+v", cfg.security, wantSec)
			}
			if cfg.addr != "127.0.0.1:8080" {
				t.Errorf("addr = %q, want 127.0.0.1:8080", cfg.addr)
			}
			if cfg.perHour != 1000 || cfg.perMinute != 100 {
				t.Errorf("rate limits = %d/h %d/min, want 1000/h 100/min", cfg.perHour, cfg.perMinute)
			}
			if cfg.loginFailuresPerUser != 10 || cfg.loginFailuresPerIP != 100 || cfg.loginWindow != 15*time.Minute {
				t.Errorf("login throttle = %d, %d, %v; want 10, 100, 15m",
					cfg.loginFailuresPerUser, cfg.loginFailuresPerIP, cfg.loginWindow)
			}
			if len(cfg.credentialKeys) != 0 || cfg.databaseURL != defaultDatabaseURL || len(cfg.users) != 0 || len(cfg.corsOrigins) != 0 {
				t.Errorf("unexpected settings: %+v", cfg)
			}
		})
	}
}

func TestEnvironmentWinsOverFile(t *testing.T) {
	path := writeConfig(t, `{
  "addr": "127.0.0.1:1111",
  "security": {"jwt_secret": "file-secret-file-secret-file-secret-0000", "credential_key": "`+testOldKey+`"},
  "rate_limit": {"redis_url": "redis://file-host:6379/0"}
}`)
	env := map[string]string{
		"HDS_ADDR":           "127.0.0.1:2222",
		"HDS_DATABASE_URL":   "postgres://u:p@db.example/hds",
		"HDS_JWT_SECRET":     testJWTSecret,
		"HDS_CREDENTIAL_KEY": testKey,
		"HDS_REDIS_URL":      "redis://env-host:6379/1",
	}
	cfg, err := loadConfig(path, environ(env))
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	checks := []struct {
		name      string
		got, want string
	}{
		{"addr", cfg.addr, env["HDS_ADDR"]},
		{"database URL", cfg.databaseURL, env["HDS_DATABASE_URL"]},
		{"JWT secret", cfg.security.JWTSecret, testJWTSecret},
		{"credential key", fmt.Sprint(cfg.credentialKeys), fmt.Sprint([][]byte{bytes.Repeat([]byte{7}, 32)})},
		{"Redis URL", cfg.redisURL, env["HDS_REDIS_URL"]},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q (from the environment)", c.name, c.got, c.want)
		}
	}

	// An empty variable counts as unset: the file's value stays.
	cfg, err = loadConfig(path, environ(map[string]string{"HDS_ADDR": ""}))
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	if cfg.addr != "127.0.0.1:1111" {
		t.Errorf("addr = %q, want the file's 127.0.0.1:1111", cfg.addr)
	}
}

func TestConfigErrors(t *testing.T) {
	shortKey := base64.StdEncoding.EncodeToString([]byte("only-sixteen-byt"))
	longPassword := strings.Repeat("p", 73)
	tests := []struct {
		name    string
		config  string // file content; empty for none
		env     map[string]string
		want    string   // the error must contain this
		secrets []string // and none of these
	}{
		{name: "unknown key", config: `{"adr": "x"}`, want: `unknown field "adr"`},
		{name: "unknown nested key", config: `{"security": {"jwt_secrte": "x"}}`, want: `unknown field "security.jwt_secrte"`},
		{name: "key in the wrong case", config: `{"Addr": "x"}`, want: `unknown field "Addr"`},
		{name: "unknown key in a user", config: `{"users": [{"username": "a", "pasword": "x"}]}`, want: `unknown field "users[0].pasword"`},
		{name: "malformed JSON", config: `{"addr": }`, want: "malformed JSON: syntax error at byte 10"},
		{name: "not an object", config: `[1]`, want: "must be a JSON object"},
		{name: "trailing data", config: `{} {}`, want: "malformed JSON: syntax error at byte 4"},
		{name: "wrong type", config: `{"security": {"require_auth": "yes"}}`, want: `field "security.require_auth" must be true or false`},
		{name: "fractional number", config: `{"rate_limit": {"per_hour": 1.5}}`, want: `field "rate_limit.per_hour" must be a whole number`},
		{name: "bad duration", config: `{"security": {"jwt_expiration": "soon"}}`, want: `hds: Security.JWTExpiration: invalid duration "soon"`},
		{name: "bad day duration", config: `{"security": {"refresh_window": "7days"}}`, want: `hds: Security.RefreshWindow: invalid duration "7days"`},
		{name: "negative duration", config: `{"security": {"max_session_age": "-1h"}}`, want: "hds: Security.MaxSessionAge: duration must not be negative"},
		{name: "overflowing day count", config: `{"security": {"refresh_window": "200000d"}}`, want: `hds: Security.RefreshWindow: invalid duration "200000d"`},
		{name: "zero expiration", config: `{"security": {"jwt_expiration": "0s"}}`, want: "hds: Security: JWT expiration must be positive"},
		{name: "bad login window", config: `{"rate_limit": {"login_window": "15"}}`, want: "rate_limit.login_window"},
		{name: "zero rate limit", config: `{"rate_limit": {"per_minute": 0}}`, want: "rate_limit.per_minute must be a positive number"},
		{name: "negative login limit", config: `{"rate_limit": {"login_failures_per_ip": -1}}`, want: "hds: WithLoginThrottle: limits and window must be positive"},
		{name: "bad trusted proxy", config: `{"rate_limit": {"trusted_proxies": ["not-an-ip"]}}`, want: `hds: WithTrustedProxies: trusted proxy "not-an-ip" is neither a CIDR nor an address`},
		{name: "bad origin", config: `{"cors": {"allowed_origins": ["app.example.com"]}}`, want: "cors.allowed_origins[0]"},
		{
			name: "bad Redis URL", config: `{"rate_limit": {"redis_url": "http://:hunter2@cache:6379"}}`,
			want: "rate_limit.redis_url must be a redis:// or rediss:// URL", secrets: []string{"hunter2"},
		},
		{
			name: "short JWT secret", config: `{"security": {"jwt_secret": "too-short-secret"}}`,
			want: "hds: Security: JWT secret must be at least 32 bytes, got 16", secrets: []string{"too-short-secret"},
		},
		{
			name: "short JWT secret from the environment", env: map[string]string{"HDS_JWT_SECRET": "env-short-secret"},
			want: "hds: Security: JWT secret must be at least 32 bytes, got 16", secrets: []string{"env-short-secret"},
		},
		{
			name: "credential key not base64", config: `{"security": {"credential_key": "not*base64*key!"}}`,
			want: "security.credential_key is not valid standard base64", secrets: []string{"not*base64*key!"},
		},
		{
			name: "credential key in URL-safe base64", config: `{"security": {"credential_key": "-_-_-_-_"}}`,
			want: "security.credential_key is not valid standard base64", secrets: []string{"-_-_-_-_"},
		},
		{
			name: "credential key of 16 bytes", config: `{"security": {"credential_key": "` + shortKey + `"}}`,
			want:    "security.credential_key must be the base64 of exactly 32 bytes, it decodes to 16 bytes",
			secrets: []string{shortKey, "only-sixteen-byt"},
		},
		{
			name:   "bad previous key",
			config: `{"security": {"credential_key": "` + testKey + `", "previous_credential_keys": ["` + testOldKey + `", "` + shortKey + `"]}}`,
			want:   "security.previous_credential_keys[1] must be the base64 of exactly 32 bytes", secrets: []string{shortKey, testKey, testOldKey},
		},
		{
			name: "previous keys without a primary", config: `{"security": {"previous_credential_keys": ["` + testOldKey + `"]}}`,
			want: "needs a primary key", secrets: []string{testOldKey},
		},
		{
			name: "bad credential key from the environment", env: map[string]string{"HDS_CREDENTIAL_KEY": shortKey},
			want: "HDS_CREDENTIAL_KEY must be the base64 of exactly 32 bytes", secrets: []string{shortKey},
		},
		{
			name: "password over 72 bytes", config: `{"users": [{"username": "alice", "password": "` + longPassword + `"}]}`,
			want: `users[0] ("alice"): the password is 73 bytes long; at most 72 bytes are allowed`, secrets: []string{longPassword},
		},
		{name: "empty password", config: `{"users": [{"username": "alice"}]}`, want: "the password must not be empty"},
		{name: "empty username", config: `{"users": [{"password": "x"}]}`, want: "users[0]: the username must not be empty"},
		{
			name:   "user listed twice",
			config: `{"users": [{"username": "alice", "password": "a"}, {"username": "alice", "password": "b"}]}`,
			want:   `users[1]: user "alice" is listed twice`,
		},
		{
			// Nothing listens on port 1: the database cannot be reached.
			name: "unreachable PostgreSQL", config: `{"database_url": "postgres://hds:pg-pass@127.0.0.1:1/hds?connect_timeout=5"}`,
			want: "database_url: ", secrets: []string{"pg-pass"},
		},
		{
			name: "unreachable PostgreSQL from the environment", env: map[string]string{"HDS_DATABASE_URL": "postgresql://hds:pg-pass@127.0.0.1:1/hds"},
			want: "HDS_DATABASE_URL: ", secrets: []string{"pg-pass"},
		},
		{
			name: "unsupported database", config: `{"database_url": "mysql://root:my-pass@db/hds"}`,
			want: "database_url must be a postgres:// or postgresql:// URL, sqlite:PATH, memory: or empty", secrets: []string{"my-pass"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			if tt.config != "" {
				args = []string{"-config", writeConfig(t, tt.config)}
			}
			env := map[string]string{"HDS_ADDR": "127.0.0.1:0"}
			for k, v := range tt.env {
				env[k] = v
			}
			stdout, stderr, err := runOnce(t, args, env, "")
			if err == nil {
				t.Fatalf("run succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
			for _, s := range tt.secrets {
				if strings.Contains(err.Error()+stdout+stderr, s) {
					t.Errorf("the output shows the secret %q: error %q, stdout %q, stderr %q", s, err, stdout, stderr)
				}
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		_, _, err := runOnce(t, []string{"-config", filepath.Join(t.TempDir(), "nope.json")}, nil, "")
		if err == nil || !strings.Contains(err.Error(), "nope.json") {
			t.Errorf("error = %v, want one naming the missing file", err)
		}
	})
}

func TestUserCommandsWithMemoryStore(t *testing.T) {
	for _, args := range [][]string{
		{"user", "add", "bob"},
		{"user", "disable", "bob"},
		{"user", "enable", "bob"},
		{"user", "delete", "bob"},
		{"user", "password", "bob"},
		{"user", "list"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, _, err := runOnce(t, args, nil, "a-password\n")
			if err == nil {
				t.Fatal("run succeeded, want an error: the in-memory store cannot be managed from outside the server")
			}
			for _, want := range []string{"in-memory store", "running server process", "database_url"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error = %q, want it to contain %q", err, want)
				}
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}

	t.Run("with an unreachable database", func(t *testing.T) {
		_, _, err := runOnce(t, []string{"user", "list"}, map[string]string{"HDS_DATABASE_URL": "postgres://u:secret-pw@127.0.0.1:1/hds"}, "")
		if err == nil || !strings.Contains(err.Error(), "user list: HDS_DATABASE_URL: ") {
			t.Errorf("error = %v, want one about the database", err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-pw") {
			t.Errorf("error %q shows the database password", err)
		}
	})
}

// TestUsageErrors checks that a bad command line is one line naming the
// problem and where the usage is, with a non-zero exit
// (docs/api.md#14-the-standalone-server), for every command family, and
// that -h prints the usage and exits 0.
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args       []string
		want, help string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate": use serve, user, credentials, run, export, import`, "example -h"},
		{[]string{"serve", "now"}, `serve takes no arguments, got ["now"]`, "example serve -h"},
		{[]string{"user"}, "user needs an action: add, admin, disable, enable, delete, password or list", "example user -h"},
		{[]string{"user", "rename", "a"}, `unknown user action "rename": use add, admin, disable, enable, delete, password or list`, "example user -h"},
		{[]string{"user", "add"}, "user add takes an optional -admin and exactly one username: user add [-admin] NAME", "example user -h"},
		{[]string{"user", "add", "a", "b"}, "user add takes an optional -admin and exactly one username: user add [-admin] NAME", "example user -h"},
		{[]string{"user", "add", "-admin"}, "user add takes an optional -admin and exactly one username: user add [-admin] NAME", "example user -h"},
		{[]string{"user", "add", "-root", "a"}, "user add takes an optional -admin and exactly one username: user add [-admin] NAME", "example user -h"},
		{[]string{"user", "admin", "a"}, "user admin takes a username and true or false: user admin NAME true|false", "example user -h"},
		{[]string{"user", "admin", "a", "yes"}, "user admin takes a username and true or false: user admin NAME true|false", "example user -h"},
		{[]string{"user", "disable"}, "user disable takes exactly one argument, the username", "example user -h"},
		{[]string{"user", "enable", "a", "b"}, "user enable takes exactly one argument, the username", "example user -h"},
		{[]string{"user", "delete"}, "user delete takes exactly one argument, the username", "example user -h"},
		{[]string{"user", "list", "extra"}, "user list takes no arguments", "example user -h"},
		{[]string{"user", "password"}, "user password takes exactly one argument, the username", "example user -h"},
		{[]string{"user", "password", "a", "b"}, "user password takes exactly one argument, the username", "example user -h"},
		{[]string{"credentials"}, "credentials needs an action: rotate", "example credentials -h"},
		{[]string{"credentials", "turn"}, `unknown credentials action "turn": use rotate`, "example credentials -h"},
		{[]string{"credentials", "rotate", "a", "b"}, "credentials rotate takes at most one argument, the record id to resume after", "example credentials -h"},
		{[]string{"run", "-cluster", "onlyP", "--", "true"}, "run: -cluster must name a cluster as PROJECT/COLLECTION/CLUSTER", "example run -h"},
		{[]string{"run", "-cluster", "p/c/k"}, "run: give the command to run after --", "example run -h"},
		{[]string{"run", "-nope"}, "run: flag provided but not defined: -nope", "example run -h"},
		{[]string{"export"}, "export takes exactly one argument, the project", "example export -h"},
		{[]string{"export", "-reveal=maybe", "p"}, `export: invalid boolean value "maybe" for -reveal: parse error`, "example export -h"},
		{[]string{"import", "-merge", "p"}, "import: flag provided but not defined: -merge", "example import -h"},
		{[]string{"import", "a", "b"}, "import takes exactly one argument, the project", "example import -h"},
		{[]string{"-nope"}, "flag provided but not defined: -nope", "example -h"},
		{[]string{"-config"}, "flag needs an argument: -config", "example -h"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, err := runOnce(t, tt.args, nil, "")
			want := tt.want + " (usage: " + tt.help + ")"
			if err == nil || err.Error() != want {
				t.Errorf("error = %v, want %q", err, want)
			}
			var exit *exitError
			if errors.As(err, &exit) && exit.code == 0 {
				t.Errorf("exit status 0, want non-zero")
			}
			if stdout != "" || stderr != "" {
				t.Errorf("stdout %q, stderr %q: want nothing but the error's one line", stdout, stderr)
			}
		})
	}

	for _, tt := range []struct {
		args []string
		want []string // lines of the usage printed
	}{
		{[]string{"-h"}, []string{"example [-config FILE] user add [-admin] NAME", "example [-config FILE] user admin NAME true|false", "example [-config FILE] run [-url URL]", "-config FILE"}},
		{[]string{"user", "-h"}, []string{"example [-config FILE] user add [-admin] NAME", "example [-config FILE] user admin NAME true|false"}},
		{[]string{"credentials", "-h"}, []string{"example [-config FILE] credentials rotate [AFTER_ID]"}},
		{[]string{"serve", "-h"}, []string{"example [-config FILE] [serve]"}},
		{[]string{"run", "-h"}, []string{"example [-config FILE] run [-url URL] -cluster P/C/K -- CMD ARGS...", "-cluster PROJECT/COLLECTION/CLUSTER"}},
		{[]string{"export", "-url", "http://x", "-h"}, []string{"example [-config FILE] export [-url URL] [-reveal] P", "-reveal"}},
		{[]string{"import", "--help"}, []string{"example [-config FILE] import [-url URL] [-replace] [-dry-run] P", "-dry-run"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, err := runOnce(t, tt.args, nil, "")
			if err != nil {
				t.Errorf("error %v, want none", err)
			}
			for _, line := range tt.want {
				if !strings.Contains(stderr, line) {
					t.Errorf("stderr = %q, want the usage with %q", stderr, line)
				}
			}
		})
	}
}

// TestUserActions runs the user actions against a directory, as they will
// run against a database once PostgreSQL support exists.
func TestUserActions(t *testing.T) {
	ctx := context.Background()
	dir := memory.New()
	do := func(action, username, stdin string) (string, error) {
		var out bytes.Buffer
		cmd := userCommand{action: action, username: username}
		if a, ok := strings.CutSuffix(action, " true"); ok { // "add true": add -admin; "admin true"
			cmd.action, cmd.admin = a, true
		} else if a, ok := strings.CutSuffix(action, " false"); ok {
			cmd.action = a
		}
		err := runUserCommand(ctx, dir, cmd, strings.NewReader(stdin), &out)
		return out.String(), err
	}
	mustOK := func(action, username, stdin string) string {
		t.Helper()
		out, err := do(action, username, stdin)
		if err != nil {
			t.Fatalf("user %s %s: %v", action, username, err)
		}
		return out
	}
	mustFail := func(action, username, stdin, want string) {
		t.Helper()
		if _, err := do(action, username, stdin); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("user %s %s: error %v, want one containing %q", action, username, err, want)
		}
	}

	mustOK("add", "bob", "bob-password\r\nignored second line\n")
	u, err := dir.FindUserByName(ctx, "bob")
	if err != nil || !u.Active || len(u.PasswordHash) == 0 || bytes.Contains(u.PasswordHash, []byte("bob-password")) {
		t.Fatalf("bob after add: %+v, %v; want an active user with a password hash", u, err)
	}
	mustOK("add", "carol", "carol-password") // no final newline
	mustFail("add", "bob", "another\n", `user "bob" already exists`)
	mustFail("add", "dave", "", "no password")
	mustFail("add", "dave", "\n", "no password")
	mustFail("add", "dave", strings.Repeat("x", 73)+"\n", "at most 72 bytes")
	mustFail("add", " dave", "pw\n", "white space")

	mustOK("disable", "bob", "")
	if out := mustOK("list", "", ""); !regexp.MustCompile(`(?m)^bob\s+disabled\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^carol\s+active\s`).MatchString(out) {
		t.Errorf("list after disable:\n%s\nwant bob disabled and carol active", out)
	}
	mustOK("enable", "bob", "")
	if u, _ := dir.FindUserByName(ctx, "bob"); !u.Active {
		t.Error("bob is not active after enable")
	}
	before, _ := dir.FindUserByName(ctx, "carol")
	if out := mustOK("password", "carol", "new-carol-pw\nignored\n"); !strings.Contains(out, "password changed") {
		t.Errorf("user password: output %q", out)
	}
	after, _ := dir.FindUserByName(ctx, "carol")
	if !auth.CheckPassword(after.PasswordHash, "new-carol-pw") || auth.CheckPassword(after.PasswordHash, "carol-password") {
		t.Error("user password: the hash is not that of the new password")
	}
	if after.SessionGeneration != before.SessionGeneration+1 {
		t.Errorf("user password: session generation %d, want %d (every earlier session ends)", after.SessionGeneration, before.SessionGeneration+1)
	}
	mustFail("password", "carol", "", "no password")
	mustFail("password", "carol", strings.Repeat("x", 73)+"\n", "at most 72 bytes")
	if u, _ := dir.FindUserByName(ctx, "carol"); u.SessionGeneration != after.SessionGeneration {
		t.Error("a refused user password changed the user")
	}

	// Administrators
	// (docs/api.md#server-administrators-and-user-accounts-v12) and the
	// last-administrator rule.
	if out := mustOK("add true", "root", "root-password\n"); !strings.Contains(out, "server administrator") {
		t.Errorf("user add -admin: output %q", out)
	}
	if u, _ := dir.FindUserByName(ctx, "root"); !u.Admin {
		t.Error("user add -admin made no administrator")
	}
	if out := mustOK("list", "", ""); !regexp.MustCompile(`(?m)^root\s+active\s+yes\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^carol\s+active\s+no\s`).MatchString(out) {
		t.Errorf("list shows who is an administrator:\n%s", out)
	}
	mustFail("admin false", "root", "", "at least one active administrator must remain")
	mustFail("disable", "root", "", "at least one active administrator must remain")
	mustFail("delete", "root", "", "at least one active administrator must remain")
	mustOK("admin true", "carol", "")
	mustOK("admin false", "root", "")
	if u, _ := dir.FindUserByName(ctx, "root"); u.Admin {
		t.Error("user admin root false: still an administrator")
	}
	mustFail("admin true", "nobody", "", `user "nobody" not found`)

	// Disable ends the sessions; enable brings none back (issue 24 item 9).
	gen := func() int64 { u, _ := dir.FindUserByName(ctx, "bob"); return u.SessionGeneration }
	g := gen()
	mustOK("disable", "bob", "")
	mustOK("enable", "bob", "")
	if gen() != g+1 {
		t.Errorf("disable then enable: session generation %d, want %d (the disable ended every session, the enable revived none)", gen(), g+1)
	}

	// An owner cannot be deleted (issue 24 item 8).
	bob, _ := dir.FindUserByName(ctx, "bob")
	if _, err := dir.CreateProject(ctx, store.Path{Caller: store.Caller{UserID: bob.ID}, Project: "bobs"}); err != nil {
		t.Fatal(err)
	}
	mustFail("delete", "bob", "", `user delete "bob": the user owns 1 project: transfer or delete them first, or disable the user`)
	if err := dir.DeleteProject(ctx, store.Path{Caller: store.Caller{UserID: bob.ID}, Need: store.RightOwn, Project: "bobs"}); err != nil {
		t.Fatal(err)
	}

	mustOK("delete", "bob", "")
	if out := mustOK("list", "", ""); strings.Contains(out, "bob") {
		t.Errorf("list after delete still shows bob:\n%s", out)
	}
	for _, action := range []string{"disable", "enable", "delete"} {
		mustFail(action, "nobody", "", `user "nobody" not found`)
	}
	for _, action := range []string{"password"} {
		mustFail(action, "nobody", "pw\n", `user "nobody" not found`)
	}
}

// server is a run of the program serving in the background.
type server struct {
	url            string
	stdout, stderr *syncBuffer
	cancel         context.CancelFunc
	done           chan struct{} // closed when run has returned
	err            error         // what run returned, once done is closed
}

var listeningLine = regexp.MustCompile(`hds listening on (http://\S+)`)

// start runs the program with args and env and waits until it listens.
func start(t *testing.T, args []string, env map[string]string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: &syncBuffer{}, stderr: &syncBuffer{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = run(ctx, append([]string{"example"}, args...), environ(env), strings.NewReader(""), s.stdout, s.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
		}
	})
	deadline := time.After(30 * time.Second)
	for {
		if m := listeningLine.FindStringSubmatch(s.stdout.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("run returned before listening: %v\nstderr:\n%s", s.err, s.stderr.String())
		case <-deadline:
			t.Fatalf("no listening line after 30s\nstdout:\n%s\nstderr:\n%s", s.stdout.String(), s.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stop cancels the context, as SIGINT would, and returns run's result.
func (s *server) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case <-s.done:
		return s.err
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return within 15s of the cancellation")
		return nil
	}
}

// call sends a JSON request and decodes the envelope.
func call(t *testing.T, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var env map[string]any
	if resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
			t.Fatalf("%s %s: decode: %v", method, url, err)
		}
	}
	return resp.StatusCode, env
}

// login logs in and returns the token.
func login(t *testing.T, base, username, password string) string {
	t.Helper()
	status, env := call(t, "POST", base+"/api/v1/auth/login", "", map[string]string{"username": username, "password": password})
	if status != http.StatusOK {
		t.Fatalf("login %s: status %d, body %v", username, status, env)
	}
	data, _ := env["data"].(map[string]any)
	token, _ := data["token"].(string)
	if token == "" {
		t.Fatalf("login %s: no token in %v", username, env)
	}
	return token
}

func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `{
  "addr": "this is not an address: HDS_ADDR wins",
  "security": {"jwt_secret": "`+testJWTSecret+`", "credential_key": "`+testKey+`"},
  "cors": {"allowed_origins": ["https://app.example.com"]},
  "users": [{"username": "alice", "password": "`+testPassword+`"}]
}`)
	s := start(t, []string{"-config", path}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})

	token := login(t, s.url, "alice", testPassword)
	if status, env := call(t, "POST", s.url+"/api/v1/projects", token, map[string]string{"name": "demo"}); status != http.StatusCreated {
		t.Fatalf("create project: status %d, body %v", status, env)
	}
	// The configured credential key is in use: a secret can be stored and
	// read back.
	for _, step := range []struct{ method, path string }{
		{"POST", "/api/v1/projects/demo/collections/prod"},
		{"POST", "/api/v1/projects/demo/collections/prod/clusters/db"},
	} {
		if status, env := call(t, step.method, s.url+step.path, token, nil); status != http.StatusCreated {
			t.Fatalf("%s %s: status %d, body %v", step.method, step.path, status, env)
		}
	}
	records := s.url + "/api/v1/projects/demo/collections/prod/clusters/db/records"
	if status, env := call(t, "POST", records, token, map[string]any{"name": "pw", "type": "CREDENTIAL", "value": "s3cret"}); status != http.StatusCreated {
		t.Fatalf("create credential: status %d, body %v", status, env)
	}
	if status, env := call(t, "GET", records+"/pw?reveal=true", token, nil); status != http.StatusOK ||
		env["data"].(map[string]any)["value"] != "s3cret" {
		t.Fatalf("reveal credential: status %d, body %v", status, env)
	}
	// CORS is configured.
	req, _ := http.NewRequest("GET", s.url+"/health", nil)
	req.Header.Set("Origin", "https://app.example.com")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.com" {
		t.Errorf("Access-Control-Allow-Origin = %q, want the configured origin", got)
	}

	// A request still in flight when the shutdown starts is finished: its
	// body is only half sent when the context is cancelled.
	pr, pw := io.Pipe()
	req, _ = http.NewRequest("POST", s.url+"/api/v1/projects", pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	inFlight := make(chan int, 1)
	go func() {
		// A connection of its own, so that it is not one left idle by the
		// requests above.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("in-flight request: %v", err)
			inFlight <- 0
			return
		}
		resp.Body.Close()
		inFlight <- resp.StatusCode
	}()
	if _, err := io.WriteString(pw, `{"name":`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the server start on the request
	s.cancel()
	waitFor(t, s.stderr, "shutting down")
	if _, err := io.WriteString(pw, `"late"}`); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if status := <-inFlight; status != http.StatusCreated {
		t.Errorf("in-flight request: status %d, want 201", status)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("run returned %v after cancellation, want nil", err)
	}

	stdout, stderr := s.stdout.String(), s.stderr.String()
	if strings.Contains(stdout, `"admin"`) {
		t.Errorf("stdout mentions an admin account although users are configured:\n%s", stdout)
	}
	for _, secret := range []string{testPassword, testJWTSecret, testKey, "s3cret"} {
		if strings.Contains(stdout+stderr, secret) {
			t.Errorf("the output shows the secret %q:\nstdout:\n%s\nstderr:\n%s", secret, stdout, stderr)
		}
	}
	for _, unwanted := range []string{"no jwt_secret configured", "no credential_key configured"} {
		if strings.Contains(stderr, unwanted) {
			t.Errorf("stderr says %q although it is configured", unwanted)
		}
	}
}

// waitFor waits until buf contains s.
func waitFor(t *testing.T, buf *syncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(buf.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output after 15s:\n%s", s, buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestServeCreatesAdmin(t *testing.T) {
	t.Parallel()
	s := start(t, []string{"serve"}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	m := regexp.MustCompile(`user "admin" was created with the password:\n\s+(\S+)\n`).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no admin password on stdout:\n%s", s.stdout.String())
	}
	password := m[1]
	if !strings.Contains(s.stdout.String(), "curl -s -X POST "+s.url+"/api/v1/auth/login") {
		t.Errorf("stdout has no curl example for logging in:\n%s", s.stdout.String())
	}
	token := login(t, s.url, "admin", password)
	if status, env := call(t, "GET", s.url+"/api/v1/projects", token, nil); status != http.StatusOK {
		t.Errorf("list projects: status %d, body %v", status, env)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("run returned %v after cancellation, want nil", err)
	}
	stderr := s.stderr.String()
	for _, want := range []string{"no jwt_secret configured", "will not survive a restart", "no credential_key configured"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, password) {
		t.Errorf("the admin password is in the log:\n%s", stderr)
	}
}

func TestServeListenError(t *testing.T) {
	s := start(t, nil, map[string]string{"HDS_ADDR": "127.0.0.1:0", "HDS_JWT_SECRET": testJWTSecret})
	addr := strings.TrimPrefix(s.url, "http://")
	_, _, err := runOnce(t, []string{"-config", writeConfig(t, `{"users": [{"username": "a", "password": "b"}]}`)},
		map[string]string{"HDS_ADDR": addr}, "")
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("second server on %s: error %v, want a listen error", addr, err)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("run returned %v, want nil", err)
	}
}

func TestRedisUnreachable(t *testing.T) {
	// A port of the loopback interface with no server behind it, until
	// the test forwards it to the Redis server of the machine.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := start(t, nil, map[string]string{
		"HDS_ADDR":      "127.0.0.1:0",
		"HDS_REDIS_URL": "redis://:redis-secret@" + addr + "/0",
	})
	health := func() (int, map[string]any) {
		t.Helper()
		resp, err := http.Get(s.url + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	status, out := health()
	if status != http.StatusOK || out["status"] != "degraded" || out["checks"].(map[string]any)["rate_limit"] != "unavailable" {
		t.Errorf("/health while Redis is unreachable: %d %v, want 200, degraded, rate_limit unavailable", status, out)
	}
	if status, env := call(t, "GET", s.url+"/api/v1/projects", "", nil); status != http.StatusUnauthorized {
		t.Errorf("a request while Redis is unreachable: %d %v, want the API's answer (401 without a token)", status, env)
	}
	if !strings.Contains(s.stderr.String(), "cannot reach Redis") {
		t.Errorf("the log does not say that Redis cannot be reached:\n%s", s.stderr.String())
	}

	// Redis answers: the server switches to it.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", "127.0.0.1:6379")
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c) }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, out = health(); out["status"] == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health once Redis answers: %v, want ok", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(s.stdout.String()+s.stderr.String(), "redis-secret") {
		t.Errorf("the output shows the Redis password:\n%s\n%s", s.stdout.String(), s.stderr.String())
	}
}

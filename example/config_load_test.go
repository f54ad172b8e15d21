package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hds-go/hds"
)

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
		{name: "dot username", config: `{"users": [{"username": "..", "password": "x"}]}`, want: `users[0]: the username must not be "." or ".." (no path can name them)`},
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

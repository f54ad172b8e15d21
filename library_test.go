package hds_test

// The Go library API (docs/api.md#the-go-library): New and its options,
// durations, and the package example. The black-box HTTP suite, mounting
// under a prefix included, is the test module internal/e2e.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds"
)

func TestNewWithoutOptions(t *testing.T) {
	h := hds.New()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
	assert.EqualValues(t, http.StatusOK, rec.Code, "hds.New(): GET /health: status %d, want 200", rec.Code)
	c := &client{t: t, h: h}
	status, _, env := c.do("GET", "/api/v1/projects", "", "")
	wantError(t, "hds.New(): GET /api/v1/projects without a token", status, env,
		http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
	status, _, env = c.do("POST", "/api/v1/auth/login", `{"username":"admin","password":"admin"}`, "")
	wantError(t, "hds.New(): login with an empty user directory", status, env,
		http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")
	// Tokens are signed with a random secret: one forged with any other
	// secret does not verify.
	status, _, env = c.do("GET", "/api/v1/projects", "", hs256(t, claims("someone")))
	wantError(t, "hds.New(): token signed with a foreign secret", status, env,
		http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid token signature")
}

func TestNewPanicsOnInvalidOptions(t *testing.T) {
	secure := func(secret string) hds.Option {
		return hds.WithSecurity(hds.Security{JWTSecret: secret})
	}
	tests := []struct {
		name   string
		opts   []hds.Option
		panics bool
	}{
		{"jwt secret of 5 bytes", []hds.Option{secure("short")}, true},
		{"jwt secret of 31 bytes", []hds.Option{secure(strings.Repeat("s", 31))}, true},
		{"jwt secret of 32 bytes", []hds.Option{secure(strings.Repeat("s", 32))}, false},
		{"credential key of 16 bytes", []hds.Option{hds.WithCredentialKey(make([]byte, 16))}, true},
		{"credential key of 33 bytes", []hds.Option{hds.WithCredentialKey(make([]byte, 33))}, true},
		{"empty credential key", []hds.Option{hds.WithCredentialKey(nil)}, true},
		{"previous credential key of 10 bytes", []hds.Option{hds.WithCredentialKey(testKey, make([]byte, 10))}, true},
		{"credential key of 32 bytes", []hds.Option{hds.WithCredentialKey(testKey)}, false},
		// The protection options of
		// docs/api.md#limits-rate-limits-and-quotas and
		// docs/api.md#cors.
		{"trusted proxy garbage", []hds.Option{hds.WithTrustedProxies("not-a-cidr")}, true},
		{"negative rate limit", []hds.Option{hds.WithRateLimit(-1, 100)}, true},
		{"nil rate limit store", []hds.Option{hds.WithRateLimitStore(nil)}, true},
		{"zero login failures", []hds.Option{hds.WithLoginThrottle(0, 100, time.Minute)}, true},
		{"zero login window", []hds.Option{hds.WithLoginThrottle(10, 100, 0)}, true},
		{"empty CORS origin", []hds.Option{hds.WithCORS("")}, true},
		{"CORS origin with space", []hds.Option{hds.WithCORS(" https://app.example.com")}, true},
	}
	for _, tt := range tests {
		msg, panicked := panicMessage(func() { hds.New(append(tt.opts, hds.WithLogger(quietLogger))...) })
		if assert.Equal(t, tt.panics, panicked, "%s: New panics (message %q)", tt.name, msg) && panicked {
			assert.True(t, strings.HasPrefix(msg, "hds: "), "%s: panic message %q starts with \"hds: \"", tt.name, msg)
		}
	}
}

func panicMessage(f func()) (msg string, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			msg, panicked = fmt.Sprint(p), true
		}
	}()
	f()
	return "", false
}
func ExampleNew() {
	mux := http.NewServeMux()
	mux.Handle("/hds/", http.StripPrefix("/hds", hds.New()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/hds/health")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	fmt.Println(res.StatusCode)
	// Output: 200
}

// TestParseDurationDays: durations take Go's forms plus days
// (docs/api.md#the-standalone-server), so a day is a unit among the
// others: "1d12h" and "1.5d" as well as "7d". Only whole days alone were
// read.
func TestParseDurationDays(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "0d": 0, "1d12h": 36 * time.Hour, "1.5d": 36 * time.Hour,
		"2d30m": 48*time.Hour + 30*time.Minute, "0.1d": 144 * time.Minute, "90m": 90 * time.Minute,
		"1h30m": 90 * time.Minute, "12h1d": 36 * time.Hour,
	} {
		got, err := hds.ParseDuration(in)
		if assert.NoError(t, err, "ParseDuration(%q)", in) {
			assert.Equal(t, want, got, "ParseDuration(%q)", in)
		}
	}
	for _, in := range []string{"", "d", "1dd", "-1d", "1.d5", ".d", "1e3d", "1d-1h", "7 d", "7D", "106752d"} {
		_, err := hds.ParseDuration(in)
		assert.Error(t, err, "ParseDuration(%q)", in)
	}
}

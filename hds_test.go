package hds_test

// The black-box HTTP suite of API.md sections 1-7, 10 and 11, run once per
// store kind (see storeKinds in helpers_test.go). Rate limiting (section 8)
// and CORS (section 9) are tested elsewhere.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// ---------------------------------------------------------------------
// Section 10: health; section 11: New.

func TestHealth(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		res := c.raw(httptest.NewRequest("GET", "/health", nil))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /health: status %d, want 200: %s", res.StatusCode, body)
		}
		if ct := res.Header.Get("Content-Type"); ct != jsonType {
			t.Errorf("GET /health: Content-Type %q, want %q", ct, jsonType)
		}
		wantFields(t, "GET /health (not enveloped)", body, "checks", "status", "timestamp", "version") // checks: v1.1, API.md section 10
		var h struct{ Status, Timestamp, Version string }
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatalf("GET /health: %v: %s", err, body)
		}
		if h.Status != "ok" {
			t.Errorf("GET /health: status %q, want ok", h.Status)
		}
		wantTimestamps(t, "GET /health", h.Timestamp)
		if h.Version == "" {
			t.Errorf("GET /health: empty version")
		}
	})
}

func TestNewWithoutOptions(t *testing.T) {
	h := hds.New()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("hds.New(): GET /health: status %d, want 200", rec.Code)
	}
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
		return hds.WithSecurity(hds.Security{JWTSecret: secret, RequireAuth: true})
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
	}
	for _, tt := range tests {
		msg, panicked := panicMessage(func() { hds.New(append(tt.opts, hds.WithLogger(quietLogger))...) })
		switch {
		case panicked != tt.panics:
			t.Errorf("%s: panicked = %v (%q), want %v", tt.name, panicked, msg, tt.panics)
		case panicked && !strings.HasPrefix(msg, "hds: "):
			t.Errorf("%s: panic message %q does not start with \"hds: \"", tt.name, msg)
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

// ---------------------------------------------------------------------
// Section 6: authentication.

func TestLogin(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
			r := request("POST", "/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, "")
			r.Header.Set("Content-Type", ct)
			status, h, env := c.send(r)
			if status != http.StatusOK {
				t.Fatalf("login (Content-Type %s): status %d, want 200: %s", ct, status, env.raw)
			}
			if cc := h.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("login: Cache-Control %q, want no-store", cc)
			}
			wantFields(t, "login data", env.Data, "token", "expires_in", "user_id")
			var out struct {
				Token     string `json:"token"`
				ExpiresIn int    `json:"expires_in"`
				UserID    string `json:"user_id"`
			}
			env.decode(t, &out)
			if out.ExpiresIn != 3600 {
				t.Errorf("login: expires_in %d, want 3600", out.ExpiresIn)
			}
			if out.UserID != c.ids["alice"] {
				t.Errorf("login: user_id %q, want %q", out.UserID, c.ids["alice"])
			}
			m := parseToken(t, out.Token)
			if m["sub"] != c.ids["alice"] || m["iss"] != testIssuer {
				t.Errorf("login token: sub %v iss %v, want %s %s", m["sub"], m["iss"], c.ids["alice"], testIssuer)
			}
			if jti, _ := m["jti"].(string); jti == "" {
				t.Errorf("login token: no jti: %v", m)
			}
			iat, _ := m["iat"].(float64)
			exp, _ := m["exp"].(float64)
			orig, _ := m["orig_iat"].(float64)
			if exp-iat != 3600 || orig != iat || time.Since(time.Unix(int64(iat), 0)) > time.Minute {
				t.Errorf("login token: iat %v exp %v orig_iat %v, want exp = iat+3600 and orig_iat = iat = now", iat, exp, orig)
			}
			c.mustDo("GET", "/api/v1/projects", "", out.Token, http.StatusOK)
		}
	})
}

func TestLoginFailures(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		c.addUser("carol", "carol-password")
		if err := c.users.SetUserActive(t.Context(), "carol", false); err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("p", 72) // the most bcrypt hashes
		c.addUser("dave", long)
		c.login("dave", long) // the 72-byte password itself works

		tests := []struct{ name, username, password string }{
			{"unknown user", "nobody", "alice-password"},
			{"wrong password", "alice", "wrong-password"},
			{"empty password", "alice", ""},
			{"disabled user, right password", "carol", "carol-password"},
			{"password over 72 bytes whose first 72 match", "dave", long + "extra"},
		}
		for _, tt := range tests {
			body, _ := json.Marshal(map[string]string{"username": tt.username, "password": tt.password})
			status, _, env := c.do("POST", "/api/v1/auth/login", string(body), "")
			wantError(t, tt.name, status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")
		}
	})
}

func TestLoginBadRequests(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		const ok = `{"username":"alice","password":"alice-password"}`
		tests := []struct {
			name, contentType, body string
			status                  int
		}{
			{"missing password", "application/json", `{"username":"alice"}`, 400},
			{"missing username", "application/json", `{"password":"alice-password"}`, 400},
			{"empty object", "application/json", `{}`, 400},
			{"no body", "", ``, 400},
			{"unknown field", "application/json", `{"username":"alice","password":"alice-password","remember":true}`, 400},
			{"field name in another case", "application/json", `{"Username":"alice","password":"alice-password"}`, 400},
			{"malformed JSON", "application/json", `{"username":"alice","password":`, 400},
			{"array", "application/json", `[]`, 400},
			{"string", "application/json", `"x"`, 400},
			{"null", "application/json", `null`, 400},
			{"trailing data", "application/json", ok + ` {}`, 400},
			{"number as username", "application/json", `{"username":1,"password":"x"}`, 400},
			{"text/plain", "text/plain", ok, 415},
			{"no Content-Type", "", ok, 415},
			{"form", "application/x-www-form-urlencoded", "username=alice&password=alice-password", 415},
		}
		for _, tt := range tests {
			r := request("POST", "/api/v1/auth/login", tt.body, "")
			r.Header.Del("Content-Type")
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			status, _, env := c.send(r)
			wantError(t, "login: "+tt.name, status, env, tt.status, "INVALID_REQUEST", "")
		}
	})
}

// protectedRoutes are one request of every route that needs a token.
var protectedRoutes = []struct{ method, target, body string }{
	{"GET", "/api/v1/projects", ""},
	{"POST", "/api/v1/projects", `{"name":"x"}`},
	{"POST", "/api/v1/projects/p", ""},
	{"GET", "/api/v1/projects/p", ""},
	{"PUT", "/api/v1/projects/p?rename=q", ""},
	{"DELETE", "/api/v1/projects/p", ""},
	{"GET", "/api/v1/projects/p/collections", ""},
	{"POST", "/api/v1/projects/p/collections", `{"name":"c"}`},
	{"POST", "/api/v1/projects/p/collections/c", ""},
	{"GET", "/api/v1/projects/p/collections/c", ""},
	{"PUT", "/api/v1/projects/p/collections/c?rename=d", ""},
	{"DELETE", "/api/v1/projects/p/collections/c", ""},
	{"GET", "/api/v1/projects/p/collections/c/clusters", ""},
	{"POST", "/api/v1/projects/p/collections/c/clusters", `{"name":"k"}`},
	{"POST", "/api/v1/projects/p/collections/c/clusters/k", ""},
	{"GET", "/api/v1/projects/p/collections/c/clusters/k", ""},
	{"PUT", "/api/v1/projects/p/collections/c/clusters/k?rename=l", ""},
	{"DELETE", "/api/v1/projects/p/collections/c/clusters/k", ""},
	{"GET", "/api/v1/projects/p/collections/c/clusters/k/records", ""},
	{"POST", "/api/v1/projects/p/collections/c/clusters/k/records", `{"name":"r","type":"NULL"}`},
	{"POST", "/api/v1/projects/p/collections/c/clusters/k/records/r?type=NULL", ""},
	{"GET", "/api/v1/projects/p/collections/c/clusters/k/records/r", ""},
	{"PUT", "/api/v1/projects/p/collections/c/clusters/k/records/r?value=", ""},
	{"DELETE", "/api/v1/projects/p/collections/c/clusters/k/records/r", ""},
}

func TestAuthenticationFailures(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.ids["alice"]
		erin := c.addUser("erin", "erin-password")
		erinToken := c.login("erin", "erin-password")
		if err := c.users.DeleteUser(t.Context(), "erin"); err != nil {
			t.Fatal(err)
		}
		c.addUser("frank", "frank-password")
		frankToken := c.login("frank", "frank-password")
		if err := c.users.SetUserActive(t.Context(), "frank", false); err != nil {
			t.Fatal(err)
		}
		valid := claims(alice)
		past := time.Now().Add(-time.Hour)
		expired := with(valid, map[string]any{"iat": past.Add(-time.Hour).Unix(), "exp": past.Unix(), "orig_iat": past.Add(-time.Hour).Unix()})
		good := hs256(t, valid)
		parts := strings.Split(good, ".")
		otherPayload := strings.Split(hs256(t, claims(c.ids["bob"])), ".")[1]

		const (
			noToken   = "No authorization token provided"
			invalid   = "Invalid or expired token"
			signature = "Invalid token signature"
			expiredM  = "Token has expired"
		)
		tests := []struct {
			name    string
			header  *string // nil: no Authorization header
			message string
		}{
			{"no Authorization header", nil, noToken},
			{"Basic scheme", ptr("Basic x"), invalid},
			{"Basic scheme with a valid token", ptr("Basic " + good), invalid},
			{"token without scheme", ptr(good), invalid},
			{"Bearer and nothing", ptr("Bearer"), invalid},
			{"Bearer and a space", ptr("Bearer "), invalid},
			{"not a JWT", ptr("Bearer notajwt"), invalid},
			{"three garbage parts", ptr("Bearer a.b.c"), invalid},
			{"signed with another secret", ptr("Bearer " + sign(t, valid, jwt.SigningMethodHS256, []byte("another-secret-another-secret-012"))), signature},
			{"HS512 with the right secret", ptr("Bearer " + sign(t, valid, jwt.SigningMethodHS512, []byte(testSecret))), signature},
			{"HS384 with the right secret", ptr("Bearer " + sign(t, valid, jwt.SigningMethodHS384, []byte(testSecret))), signature},
			{"alg none", ptr("Bearer " + sign(t, valid, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType)), signature},
			{"payload swapped", ptr("Bearer " + parts[0] + "." + otherPayload + "." + parts[2]), signature},
			{"expired an hour ago", ptr("Bearer " + hs256(t, expired)), expiredM},
			{"expired two seconds ago (no leeway)", ptr("Bearer " + hs256(t, with(valid, map[string]any{"exp": time.Now().Add(-2 * time.Second).Unix()}))), expiredM},
			{"expired and signed with another secret", ptr("Bearer " + sign(t, expired, jwt.SigningMethodHS256, []byte("another-secret-another-secret-012"))), signature},
			{"expired with a wrong issuer", ptr("Bearer " + hs256(t, with(expired, map[string]any{"iss": "someone-else"}))), expiredM},
			{"wrong issuer", ptr("Bearer " + hs256(t, with(valid, map[string]any{"iss": "someone-else"}))), invalid},
			{"missing iss", ptr("Bearer " + hs256(t, with(valid, map[string]any{"iss": nil}))), invalid},
			{"missing sub", ptr("Bearer " + hs256(t, with(valid, map[string]any{"sub": nil}))), invalid},
			{"missing iat", ptr("Bearer " + hs256(t, with(valid, map[string]any{"iat": nil}))), invalid},
			{"missing exp", ptr("Bearer " + hs256(t, with(valid, map[string]any{"exp": nil}))), invalid},
			{"missing jti", ptr("Bearer " + hs256(t, with(valid, map[string]any{"jti": nil}))), invalid},
			{"missing orig_iat", ptr("Bearer " + hs256(t, with(valid, map[string]any{"orig_iat": nil}))), invalid},
			{"unknown user id", ptr("Bearer " + hs256(t, claims(store.NewID()))), invalid},
			{"deleted user (forged)", ptr("Bearer " + hs256(t, claims(erin))), invalid},
			{"deleted user (issued)", ptr("Bearer " + erinToken), invalid},
			{"disabled user", ptr("Bearer " + frankToken), invalid},
		}
		for _, tt := range tests {
			r := request("GET", "/api/v1/projects", "", "")
			if tt.header != nil {
				r.Header.Set("Authorization", *tt.header)
			}
			status, _, env := c.send(r)
			wantError(t, tt.name, status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", tt.message)
		}
		// The control row: the valid token works.
		c.mustDo("GET", "/api/v1/projects", "", good, http.StatusOK)

		// Every protected route needs a token, and authentication comes
		// before looking anything up (401, not 404).
		for _, rt := range protectedRoutes {
			status, _, env := c.do(rt.method, rt.target, rt.body, "")
			wantError(t, rt.method+" "+rt.target+" without a token", status, env,
				http.StatusUnauthorized, "AUTHENTICATION_FAILED", noToken)
			status, _, env = c.do(rt.method, rt.target, rt.body, "notajwt")
			wantError(t, rt.method+" "+rt.target+" with a bad token", status, env,
				http.StatusUnauthorized, "AUTHENTICATION_FAILED", invalid)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestTokenOnlyFromHeader(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		tok := c.token("alice")
		for _, target := range []string{
			"/api/v1/projects?token=" + tok,
			"/api/v1/projects?access_token=" + tok,
			"/api/v1/projects?jwt=" + tok,
		} {
			status, _, env := c.do("GET", target, "", "")
			wantError(t, "GET "+target[:30]+"...", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
		}
		r := httptest.NewRequest("POST", "/api/v1/projects/formproj", strings.NewReader("access_token="+tok))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		status, _, env := c.send(r)
		if status == http.StatusCreated || status/100 != 4 {
			t.Errorf("token in a form body: status %d, want a 4xx: %s", status, env.raw)
		}
	})
}

func TestRefresh(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.ids["alice"]
		login := c.token("alice")
		loginClaims := parseToken(t, login)

		threeHoursAgo := time.Now().Add(-3 * time.Hour).Unix()
		expiredInWindow := hs256(t, with(claims(alice), map[string]any{
			"iat": threeHoursAgo, "exp": time.Now().Add(-2 * time.Hour).Unix(), "orig_iat": threeHoursAgo,
		}))
		tests := []struct {
			name     string
			token    string
			origIat  float64
			oldJTI   any
			checkUse bool
		}{
			{"a valid token", login, loginClaims["orig_iat"].(float64), loginClaims["jti"], true},
			{"a token expired two hours ago (inside the 7-day window)", expiredInWindow, float64(threeHoursAgo), nil, true},
		}
		for _, tt := range tests {
			status, h, env := c.do("POST", "/api/v1/auth/refresh", "", tt.token)
			if status != http.StatusOK {
				t.Errorf("refresh %s: status %d, want 200: %s", tt.name, status, env.raw)
				continue
			}
			if cc := h.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("refresh %s: Cache-Control %q, want no-store", tt.name, cc)
			}
			wantFields(t, "refresh data", env.Data, "token", "expires_in", "user_id")
			var out struct {
				Token     string `json:"token"`
				ExpiresIn int    `json:"expires_in"`
				UserID    string `json:"user_id"`
			}
			env.decode(t, &out)
			if out.ExpiresIn != 3600 || out.UserID != alice {
				t.Errorf("refresh %s: expires_in %d user_id %q, want 3600 %q", tt.name, out.ExpiresIn, out.UserID, alice)
			}
			m := parseToken(t, out.Token)
			if m["orig_iat"] != tt.origIat {
				t.Errorf("refresh %s: orig_iat %v, want it unchanged: %v", tt.name, m["orig_iat"], tt.origIat)
			}
			if m["sub"] != alice || m["iss"] != testIssuer {
				t.Errorf("refresh %s: sub %v iss %v", tt.name, m["sub"], m["iss"])
			}
			if jti, _ := m["jti"].(string); jti == "" || m["jti"] == tt.oldJTI {
				t.Errorf("refresh %s: jti %v, want a new one", tt.name, m["jti"])
			}
			exp, _ := m["exp"].(float64)
			if time.Until(time.Unix(int64(exp), 0)) < 59*time.Minute {
				t.Errorf("refresh %s: the new token expires at %v, want in an hour", tt.name, exp)
			}
			if out.Token == tt.token {
				t.Errorf("refresh %s: the same token came back", tt.name)
			}
			c.mustDo("GET", "/api/v1/projects", "", out.Token, http.StatusOK)
		}
	})
}

func TestRefreshFailures(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.ids["alice"]
		c.addUser("carol", "carol-password")
		carolToken := c.login("carol", "carol-password")
		if err := c.users.SetUserActive(t.Context(), "carol", false); err != nil {
			t.Fatal(err)
		}
		c.addUser("erin", "erin-password")
		erinToken := c.login("erin", "erin-password")
		if err := c.users.DeleteUser(t.Context(), "erin"); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		days := func(n int) int64 { return now.Add(-time.Duration(n) * 24 * time.Hour).Unix() }
		valid := claims(alice)
		otherSecret := []byte("another-secret-another-secret-012")
		const (
			noToken   = "No authorization token provided"
			invalid   = "Invalid or expired token"
			signature = "Invalid token signature"
			expiredM  = "Token has expired"
		)
		tests := []struct {
			name    string
			header  *string
			message string
		}{
			{"no Authorization header", nil, noToken},
			{"Basic scheme", ptr("Basic x"), invalid},
			{"not a JWT", ptr("Bearer notajwt"), invalid},
			{"expired 8 days ago, past the 7-day window", ptr("Bearer " + hs256(t, with(valid, map[string]any{
				"iat": days(8) - 3600, "exp": days(8), "orig_iat": days(8) - 3600}))), expiredM},
			{"session started 31 days ago", ptr("Bearer " + hs256(t, with(valid, map[string]any{"orig_iat": days(31)}))), expiredM},
			{"signed with another secret", ptr("Bearer " + sign(t, valid, jwt.SigningMethodHS256, otherSecret)), signature},
			{"expired and signed with another secret", ptr("Bearer " + sign(t, with(valid, map[string]any{"exp": days(1)}), jwt.SigningMethodHS256, otherSecret)), signature},
			{"HS512", ptr("Bearer " + sign(t, valid, jwt.SigningMethodHS512, []byte(testSecret))), signature},
			{"alg none", ptr("Bearer " + sign(t, valid, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType)), signature},
			{"wrong issuer", ptr("Bearer " + hs256(t, with(valid, map[string]any{"iss": "someone-else"}))), invalid},
			{"wrong issuer, expired inside the window", ptr("Bearer " + hs256(t, with(valid, map[string]any{"iss": "someone-else", "exp": days(1)}))), invalid},
			{"missing jti", ptr("Bearer " + hs256(t, with(valid, map[string]any{"jti": nil}))), invalid},
			{"missing orig_iat", ptr("Bearer " + hs256(t, with(valid, map[string]any{"orig_iat": nil}))), invalid},
			{"missing sub", ptr("Bearer " + hs256(t, with(valid, map[string]any{"sub": nil}))), invalid},
			{"missing exp", ptr("Bearer " + hs256(t, with(valid, map[string]any{"exp": nil}))), invalid},
			{"disabled user", ptr("Bearer " + carolToken), invalid},
			{"deleted user", ptr("Bearer " + erinToken), invalid},
		}
		for _, tt := range tests {
			r := request("POST", "/api/v1/auth/refresh", "", "")
			if tt.header != nil {
				r.Header.Set("Authorization", *tt.header)
			}
			status, _, env := c.send(r)
			wantError(t, "refresh: "+tt.name, status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", tt.message)
		}
	})
}

func TestTokenSettings(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithSecurity(hds.Security{
			JWTSecret: testSecret, JWTExpiration: "90m", JWTIssuer: "custom", RequireAuth: true,
			RefreshWindow: "1h", MaxSessionAge: "2d",
		}))
		alice := c.ids["alice"]
		status, _, env := c.do("POST", "/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, "")
		if status != http.StatusOK {
			t.Fatalf("login: %d %s", status, env.raw)
		}
		var out struct {
			Token     string `json:"token"`
			ExpiresIn int    `json:"expires_in"`
		}
		env.decode(t, &out)
		m := parseToken(t, out.Token)
		iat, _ := m["iat"].(float64)
		exp, _ := m["exp"].(float64)
		if out.ExpiresIn != 5400 || exp-iat != 5400 || m["iss"] != "custom" {
			t.Errorf("JWTExpiration 90m, JWTIssuer custom: expires_in %d, exp-iat %v, iss %v", out.ExpiresIn, exp-iat, m["iss"])
		}

		custom := with(claims(alice), map[string]any{"iss": "custom"})
		status, _, env = c.do("GET", "/api/v1/projects", "", hs256(t, claims(alice)))
		wantError(t, "a token of the default issuer", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
		c.mustDo("GET", "/api/v1/projects", "", hs256(t, custom), http.StatusOK)

		now := time.Now()
		ago := func(d time.Duration) int64 { return now.Add(-d).Unix() }
		tests := []struct {
			name    string
			claims  jwt.MapClaims
			message string // "" for success
		}{
			{"expired 30m ago, window 1h", with(custom, map[string]any{"iat": ago(2 * time.Hour), "exp": ago(30 * time.Minute), "orig_iat": ago(2 * time.Hour)}), ""},
			{"expired 2h ago, window 1h", with(custom, map[string]any{"iat": ago(4 * time.Hour), "exp": ago(2 * time.Hour), "orig_iat": ago(4 * time.Hour)}), "Token has expired"},
			{"session of 1 day, max 2d", with(custom, map[string]any{"orig_iat": ago(24 * time.Hour)}), ""},
			{"session of 3 days, max 2d", with(custom, map[string]any{"orig_iat": ago(72 * time.Hour)}), "Token has expired"},
		}
		for _, tt := range tests {
			// Each row is a token of its own: refresh is single-use (section 17).
			status, _, env := c.do("POST", "/api/v1/auth/refresh", "", hs256(t, with(tt.claims, map[string]any{"jti": randomID()})))
			if tt.message == "" {
				if status != http.StatusOK {
					t.Errorf("refresh, %s: %d %s", tt.name, status, env.raw)
				}
				continue
			}
			wantError(t, "refresh, "+tt.name, status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", tt.message)
		}
	})
}

func TestRequireAuthFalse(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithSecurity(hds.Security{JWTSecret: testSecret, RequireAuth: false}))
		env := c.mustDo("POST", pathP("anon-proj"), "", "", http.StatusCreated)
		var p projectJSON
		env.decode(t, &p)
		if p.OwnerID != "anonymous" {
			t.Errorf("project created without a token: owner_id %q, want anonymous", p.OwnerID)
		}
		c.mustDo("POST", pathC("anon-proj", "c"), "", "", http.StatusCreated)
		env = c.mustDo("GET", "/api/v1/projects", "", "", http.StatusOK)
		var list listJSON[projectJSON]
		env.decode(t, &list)
		if list.Total != 1 || len(list.Items) != 1 || list.Items[0].Name != "anon-proj" {
			t.Errorf("anonymous list: %s", env.Data)
		}

		// A request that sends a token is still checked.
		for _, h := range []string{"Bearer notajwt", "Basic x", "Bearer " + sign(t, claims(c.ids["alice"]), jwt.SigningMethodHS256, []byte("another-secret-another-secret-012"))} {
			r := request("GET", "/api/v1/projects", "", "")
			r.Header.Set("Authorization", h)
			status, _, env := c.send(r)
			if status != http.StatusUnauthorized || env.code() != "AUTHENTICATION_FAILED" {
				t.Errorf("require_auth false, Authorization %.20q: got %d %s, want 401", h, status, env.code())
			}
		}

		// A user with a token is that user, and anonymous's projects are
		// not theirs.
		alice := c.token("alice")
		env = c.mustDo("GET", "/api/v1/projects", "", alice, http.StatusOK)
		env.decode(t, &list)
		if list.Total != 0 {
			t.Errorf("alice sees anonymous's projects: %s", env.Data)
		}
		status, _, env := c.do("GET", pathP("anon-proj"), "", alice)
		wantError(t, "alice reading anonymous's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		env = c.mustDo("POST", pathP("alice-proj"), "", alice, http.StatusCreated)
		env.decode(t, &p)
		if p.OwnerID != c.ids["alice"] {
			t.Errorf("alice's project: owner_id %q", p.OwnerID)
		}
		status, _, env = c.do("GET", pathP("alice-proj"), "", "")
		wantError(t, "anonymous reading alice's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
	})
}

// ---------------------------------------------------------------------
// Sections 2 and 4: projects, collections, clusters.

func TestProjects(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice, bob := c.token("alice"), c.token("bob")
		projectFields := []string{"id", "name", "owner_id", "created_at", "updated_at", "collection_count"}

		creates := []struct{ form, target, body, name string }{
			{"path form", pathP("web"), "", "web"},
			{"body form", "/api/v1/projects", `{"name":"api"}`, "api"},
			{"path form with the same name in the body", pathP("docs"), `{"name":"docs"}`, "docs"},
		}
		ids := map[string]string{}
		for _, cr := range creates {
			env := c.mustDo("POST", cr.target, cr.body, alice, http.StatusCreated)
			what := "create project, " + cr.form
			if env.Message != "Project created" {
				t.Errorf("%s: message %q, want \"Project created\"", what, env.Message)
			}
			wantFields(t, what, env.Data, projectFields...)
			var p projectJSON
			env.decode(t, &p)
			wantID(t, what, p.ID)
			wantTimestamps(t, what, p.CreatedAt, p.UpdatedAt)
			if p.Name != cr.name || p.OwnerID != c.ids["alice"] || p.CollectionCount != 0 || p.CreatedAt != p.UpdatedAt {
				t.Errorf("%s: %s", what, env.Data)
			}
			ids[cr.name] = p.ID

			env = c.mustDo("GET", pathP(cr.name), "", alice, http.StatusOK)
			wantFields(t, "GET project", env.Data, projectFields...)
			var got projectJSON
			env.decode(t, &got)
			if got != p {
				t.Errorf("GET %s: %+v, want what create returned: %+v", cr.name, got, p)
			}
		}
		if ids["web"] >= ids["api"] || ids["api"] >= ids["docs"] {
			t.Errorf("ids do not sort by creation time: %v", ids)
		}

		c.mustDo("POST", pathP("bobs"), "", bob, http.StatusCreated)
		lists := []struct {
			token string
			want  []string
		}{{alice, []string{"api", "docs", "web"}}, {bob, []string{"bobs"}}}
		for _, l := range lists {
			env := c.mustDo("GET", "/api/v1/projects", "", l.token, http.StatusOK)
			wantFields(t, "project list", env.Data, "items", "total", "limit", "offset")
			var list listJSON[projectJSON]
			env.decode(t, &list)
			var names []string
			for _, p := range list.Items {
				names = append(names, p.Name)
			}
			if !slices.Equal(names, l.want) || list.Total != len(l.want) || list.Limit != 100 || list.Offset != 0 {
				t.Errorf("GET /api/v1/projects: %s, want only %v with limit 100 offset 0", env.Data, l.want)
			}
		}
	})
}

func TestProjectNamesUniqueAcrossUsers(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice, bob := c.token("alice"), c.token("bob")
		c.mustDo("POST", pathP("shared"), "", alice, http.StatusCreated)
		tests := []struct{ who, token, target, body string }{
			{"alice, path form", alice, pathP("shared"), ""},
			{"alice, body form", alice, "/api/v1/projects", `{"name":"shared"}`},
			{"bob, path form", bob, pathP("shared"), ""},
			{"bob, body form", bob, "/api/v1/projects", `{"name":"shared"}`},
		}
		for _, tt := range tests {
			status, _, env := c.do("POST", tt.target, tt.body, tt.token)
			wantError(t, "duplicate project name by "+tt.who, status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
		}
		env := c.mustDo("GET", pathP("shared"), "", alice, http.StatusOK)
		var p projectJSON
		env.decode(t, &p)
		if p.OwnerID != c.ids["alice"] {
			t.Errorf("the project changed owner: %s", env.Data)
		}
	})
}

func TestCollectionsAndClusters(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		collectionFields := []string{"id", "name", "project", "created_at", "updated_at", "cluster_count", "record_count"}
		clusterFields := []string{"id", "name", "project", "collection", "created_at", "updated_at", "record_count"}
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)

		for _, cr := range []struct{ form, target, body, name string }{
			{"path form", pathC("web", "prod"), "", "prod"},
			{"body form", pathP("web") + "/collections", `{"name":"dev"}`, "dev"},
		} {
			env := c.mustDo("POST", cr.target, cr.body, alice, http.StatusCreated)
			what := "create collection, " + cr.form
			wantFields(t, what, env.Data, collectionFields...)
			var col collectionJSON
			env.decode(t, &col)
			wantID(t, what, col.ID)
			wantTimestamps(t, what, col.CreatedAt, col.UpdatedAt)
			if col.Name != cr.name || col.Project != "web" || col.ClusterCount != 0 || col.RecordCount != 0 {
				t.Errorf("%s: %s", what, env.Data)
			}
		}
		for _, cr := range []struct{ form, target, body, name string }{
			{"path form", pathK("web", "prod", "k1"), "", "k1"},
			{"body form", pathC("web", "prod") + "/clusters", `{"name":"k2"}`, "k2"},
			{"path form with the same name in the body", pathK("web", "prod", "k3"), `{"name":"k3"}`, "k3"},
		} {
			env := c.mustDo("POST", cr.target, cr.body, alice, http.StatusCreated)
			what := "create cluster, " + cr.form
			wantFields(t, what, env.Data, clusterFields...)
			var k clusterJSON
			env.decode(t, &k)
			wantID(t, what, k.ID)
			wantTimestamps(t, what, k.CreatedAt, k.UpdatedAt)
			if k.Name != cr.name || k.Project != "web" || k.Collection != "prod" || k.RecordCount != 0 {
				t.Errorf("%s: %s", what, env.Data)
			}
		}
		k1, k2 := pathK("web", "prod", "k1"), pathK("web", "prod", "k2")
		c.addRecord(alice, k1, "a", "STRING", `"x"`)
		c.addRecord(alice, k1, "b", "INTEGER", `1`)
		for _, n := range []string{"a", "b", "c"} {
			c.addRecord(alice, k2, n, "NULL", `null`)
		}

		env := c.mustDo("GET", pathP("web"), "", alice, http.StatusOK)
		var p projectJSON
		env.decode(t, &p)
		if p.CollectionCount != 2 {
			t.Errorf("project collection_count %d, want 2", p.CollectionCount)
		}
		env = c.mustDo("GET", pathC("web", "prod"), "", alice, http.StatusOK)
		wantFields(t, "GET collection", env.Data, collectionFields...)
		var col collectionJSON
		env.decode(t, &col)
		if col.ClusterCount != 3 || col.RecordCount != 5 {
			t.Errorf("collection prod: cluster_count %d record_count %d, want 3 and 5 (records of all clusters)", col.ClusterCount, col.RecordCount)
		}

		env = c.mustDo("GET", pathP("web")+"/collections", "", alice, http.StatusOK)
		var cols listJSON[collectionJSON]
		env.decode(t, &cols)
		want := map[string][2]int{"dev": {0, 0}, "prod": {3, 5}}
		if cols.Total != 2 || len(cols.Items) != 2 {
			t.Errorf("collection list: %s", env.Data)
		}
		for _, it := range cols.Items {
			if w := want[it.Name]; it.ClusterCount != w[0] || it.RecordCount != w[1] || it.Project != "web" {
				t.Errorf("collection list item %s: %+v, want counts %v", it.Name, it, w)
			}
		}

		env = c.mustDo("GET", pathC("web", "prod")+"/clusters", "", alice, http.StatusOK)
		var ks listJSON[clusterJSON]
		env.decode(t, &ks)
		counts := map[string]int{}
		for _, it := range ks.Items {
			counts[it.Name] = it.RecordCount
			if it.Data != nil {
				t.Errorf("cluster list item %s carries data", it.Name)
			}
		}
		if ks.Total != 3 || counts["k1"] != 2 || counts["k2"] != 3 || counts["k3"] != 0 {
			t.Errorf("cluster list: %s", env.Data)
		}

		// GET K is the cluster data: the cluster fields plus data.
		env = c.mustDo("GET", k1, "", alice, http.StatusOK)
		wantFields(t, "GET cluster", env.Data, append(clusterFields, "data")...)
		var k clusterJSON
		env.decode(t, &k)
		if k.RecordCount != 2 || len(k.Data) != 2 || string(k.Data["a"]) != `"x"` || string(k.Data["b"]) != `1` {
			t.Errorf("cluster data of k1: %s", env.Data)
		}
		env = c.mustDo("GET", pathK("web", "prod", "k3"), "", alice, http.StatusOK)
		var raw struct {
			Data json.RawMessage `json:"data"`
		}
		env.decode(t, &raw)
		if string(raw.Data) != "{}" {
			t.Errorf("cluster data of an empty cluster: data %s, want {}", raw.Data)
		}

		// Duplicates.
		for _, d := range []struct{ what, target, body string }{
			{"collection, path form", pathC("web", "prod"), ""},
			{"collection, body form", pathP("web") + "/collections", `{"name":"prod"}`},
			{"cluster, path form", k1, ""},
			{"cluster, body form", pathC("web", "prod") + "/clusters", `{"name":"k1"}`},
			{"record, path form", k1 + "/records/a?type=NULL", ""},
			{"record, body form", k1 + "/records", `{"name":"a","type":"NULL"}`},
		} {
			status, _, env := c.do("POST", d.target, d.body, alice)
			wantError(t, "duplicate "+d.what, status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
		}
		// The same name under another parent is fine.
		c.mustDo("POST", pathK("web", "dev", "k1"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathR("web", "prod", "k2", "b")+"?type=NULL", "", alice, http.StatusConflict)
		c.mustDo("POST", pathR("web", "prod", "k3", "b")+"?type=NULL", "", alice, http.StatusCreated)
	})
}

// common are the fields every resource has.
type common struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	Version   int64  `json:"version"`
}

func TestRename(t *testing.T) {
	levels := []struct {
		level   string
		orig    string
		path    func(name string) string
		sibling string
		child   func(name string) string
	}{
		{"project", "web", pathP, "other", func(n string) string { return pathC(n, "prod") }},
		{"collection", "prod", func(n string) string { return pathC("web", n) }, "prod2",
			func(n string) string { return pathK("web", n, "k") }},
		{"cluster", "k", func(n string) string { return pathK("web", "prod", n) }, "k2",
			func(n string) string { return pathR("web", "prod", n, "r") }},
	}
	forms := []struct {
		form   string
		rename func(path, name string) (target, body string)
	}{
		{"?rename=", func(path, name string) (string, string) { return path + "?rename=" + url.QueryEscape(name), "" }},
		{"body", func(path, name string) (string, string) { return path, fmt.Sprintf(`{"name":%q}`, name) }},
	}
	forEachKind(t, func(t *testing.T, kind storeKind) {
		for _, lv := range levels {
			for _, f := range forms {
				t.Run(lv.level+" "+f.form, func(t *testing.T) {
					c := newServer(t, kind)
					alice := c.token("alice")
					c.tree(alice, "web", "prod", "k")
					c.addRecord(alice, pathK("web", "prod", "k"), "r", "STRING", `"v"`)
					c.mustDo("POST", pathP("other"), "", alice, http.StatusCreated)
					c.mustDo("POST", pathC("web", "prod2"), "", alice, http.StatusCreated)
					c.mustDo("POST", pathK("web", "prod", "k2"), "", alice, http.StatusCreated)
					c.mustDo("POST", pathP("bobs"), "", c.token("bob"), http.StatusCreated)

					var before, after, child, childAfter common
					c.mustDo("GET", lv.path(lv.orig), "", alice, http.StatusOK).decode(t, &before)
					c.mustDo("GET", lv.child(lv.orig), "", alice, http.StatusOK).decode(t, &child)
					time.Sleep(2 * time.Millisecond)

					target, body := f.rename(lv.path(lv.orig), "renamed")
					env := c.mustDo("PUT", target, body, alice, http.StatusOK)
					env.decode(t, &after)
					if after.ID != before.ID || after.Name != "renamed" {
						t.Errorf("rename: %s, want id %s and name renamed", env.Data, before.ID)
					}
					if after.UpdatedAt <= before.UpdatedAt || after.CreatedAt != before.CreatedAt {
						t.Errorf("rename: created_at %s -> %s, updated_at %s -> %s; want updated_at moved, created_at kept",
							before.CreatedAt, after.CreatedAt, before.UpdatedAt, after.UpdatedAt)
					}
					var reread common
					c.mustDo("GET", lv.path("renamed"), "", alice, http.StatusOK).decode(t, &reread)
					if reread != after {
						t.Errorf("GET after rename: %+v, want %+v", reread, after)
					}
					status, _, env := c.do("GET", lv.path(lv.orig), "", alice)
					wantError(t, "GET the old name", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
					c.mustDo("GET", lv.child("renamed"), "", alice, http.StatusOK).decode(t, &childAfter)
					if childAfter.ID != child.ID {
						t.Errorf("the child changed id across the rename: %s -> %s", child.ID, childAfter.ID)
					}

					siblings := []string{lv.sibling}
					if lv.level == "project" {
						siblings = append(siblings, "bobs") // unique across users
					}
					for _, s := range siblings {
						target, body = f.rename(lv.path("renamed"), s)
						status, _, env = c.do("PUT", target, body, alice)
						wantError(t, "rename onto "+s, status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
					}
					c.mustDo("GET", lv.path("renamed"), "", alice, http.StatusOK)

					var same common
					target, body = f.rename(lv.path("renamed"), "renamed")
					c.mustDo("PUT", target, body, alice, http.StatusOK).decode(t, &same)
					if same.ID != before.ID || same.Name != "renamed" {
						t.Errorf("rename to the current name: %+v", same)
					}
				})
			}
		}
	})
}

func TestDeleteCascades(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		k := pathK("web", "prod", "k")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, k, "r", "STRING", `"v"`)
		c.addRecord(alice, k, "s", "STRING", `"w"`)

		gone := func(what string, targets ...string) {
			t.Helper()
			for _, target := range targets {
				status, _, env := c.do("GET", target, "", alice)
				wantError(t, what+": GET "+target, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
			}
		}

		c.mustDo("DELETE", pathR("web", "prod", "k", "r"), "", alice, http.StatusNoContent)
		gone("deleted record", pathR("web", "prod", "k", "r"))
		var kk clusterJSON
		c.mustDo("GET", k, "", alice, http.StatusOK).decode(t, &kk)
		if kk.RecordCount != 1 || len(kk.Data) != 1 {
			t.Errorf("after deleting a record: %+v", kk)
		}

		c.mustDo("DELETE", k, "", alice, http.StatusNoContent)
		gone("deleted cluster", k, k+"/records", pathR("web", "prod", "k", "s"))
		var col collectionJSON
		c.mustDo("GET", pathC("web", "prod"), "", alice, http.StatusOK).decode(t, &col)
		if col.ClusterCount != 0 || col.RecordCount != 0 {
			t.Errorf("after deleting the cluster: %+v", col)
		}

		c.mustDo("POST", k, "", alice, http.StatusCreated)
		c.addRecord(alice, k, "r", "STRING", `"v"`)
		c.mustDo("DELETE", pathC("web", "prod"), "", alice, http.StatusNoContent)
		gone("deleted collection", pathC("web", "prod"), pathC("web", "prod")+"/clusters", k, pathR("web", "prod", "k", "r"))

		c.mustDo("POST", pathC("web", "prod"), "", alice, http.StatusCreated)
		c.mustDo("POST", k, "", alice, http.StatusCreated)
		c.addRecord(alice, k, "r", "STRING", `"v"`)
		var oldP projectJSON
		c.mustDo("GET", pathP("web"), "", alice, http.StatusOK).decode(t, &oldP)
		c.mustDo("DELETE", pathP("web"), "", alice, http.StatusNoContent)
		gone("deleted project", pathP("web"), pathP("web")+"/collections", pathC("web", "prod"), k, pathR("web", "prod", "k", "r"))
		var list listJSON[projectJSON]
		c.mustDo("GET", "/api/v1/projects", "", alice, http.StatusOK).decode(t, &list)
		if list.Total != 0 {
			t.Errorf("the deleted project is still listed: %+v", list)
		}
		var newP projectJSON
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated).decode(t, &newP)
		if newP.ID == oldP.ID || newP.CollectionCount != 0 {
			t.Errorf("re-created project: %+v (old id %s)", newP, oldP.ID)
		}
		gone("children of the deleted project", pathC("web", "prod"))

		for _, target := range []string{pathP("nope"), pathC("web", "nope"), pathK("web", "nope", "k"), pathR("web", "nope", "k", "r")} {
			status, _, env := c.do("DELETE", target, "", alice)
			wantError(t, "DELETE "+target, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		}
	})
}

func TestNotFoundNamesMissingLevel(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		tests := []struct{ method, target, body, details string }{
			{"GET", pathP("nope"), "", `project "nope" not found`},
			{"PUT", pathP("nope") + "?rename=x", "", `project "nope" not found`},
			{"GET", pathP("nope") + "/collections", "", `project "nope" not found`},
			{"POST", pathC("nope", "prod"), "", `project "nope" not found`},
			{"POST", pathP("nope") + "/collections", `{"name":"prod"}`, `project "nope" not found`},
			{"POST", pathR("nope", "prod", "k", "r") + "?type=NULL", "", `project "nope" not found`},
			{"GET", pathC("web", "prod2"), "", `collection "prod2" not found`},
			{"GET", pathC("web", "prod2") + "/clusters", "", `collection "prod2" not found`},
			{"POST", pathK("web", "prod2", "k"), "", `collection "prod2" not found`},
			{"POST", pathC("web", "prod2") + "/clusters", `{"name":"k"}`, `collection "prod2" not found`},
			{"POST", pathR("web", "prod2", "k", "r") + "?type=NULL", "", `collection "prod2" not found`},
			{"PUT", pathC("web", "prod2") + "?rename=x", "", `collection "prod2" not found`},
			{"GET", pathK("web", "prod", "k9"), "", `cluster "k9" not found`},
			{"GET", pathK("web", "prod", "k9") + "/records", "", `cluster "k9" not found`},
			{"POST", pathR("web", "prod", "k9", "r") + "?type=NULL", "", `cluster "k9" not found`},
			{"POST", pathK("web", "prod", "k9") + "/records", `{"name":"r","type":"NULL"}`, `cluster "k9" not found`},
			{"DELETE", pathK("web", "prod", "k9"), "", `cluster "k9" not found`},
			{"GET", pathR("web", "prod", "k", "r9"), "", `record "r9" not found`},
			{"PUT", pathR("web", "prod", "k", "r9") + "?value=x", "", `record "r9" not found`},
			{"DELETE", pathR("web", "prod", "k", "r9"), "", `record "r9" not found`},
		}
		for _, tt := range tests {
			status, _, env := c.do(tt.method, tt.target, tt.body, alice)
			what := tt.method + " " + tt.target
			wantError(t, what, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
			wantDetails(t, what, env, tt.details)
		}
	})
}

func TestOtherUsersProjectForbidden(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "web", "prod", "k")
		r := c.addRecord(alice, pathK("web", "prod", "k"), "r", "STRING", `"v"`)
		P, C, K, R := pathP("web"), pathC("web", "prod"), pathK("web", "prod", "k"), pathR("web", "prod", "k", "r")
		RID := pathR("web", "prod", "k", r.ID)
		tests := []struct{ method, target, body string }{
			{"GET", P, ""},
			{"PUT", P + "?rename=mine", ""},
			{"PUT", P, `{"name":"mine"}`},
			{"DELETE", P, ""},
			{"GET", P + "/collections", ""},
			{"POST", P + "/collections", `{"name":"new"}`},
			{"POST", pathC("web", "new"), ""},
			{"GET", C, ""},
			{"PUT", C + "?rename=x", ""},
			{"PUT", C, `{"name":"x"}`},
			{"DELETE", C, ""},
			{"GET", C + "/clusters", ""},
			{"POST", C + "/clusters", `{"name":"new"}`},
			{"POST", pathK("web", "prod", "new"), ""},
			{"GET", K, ""},
			{"GET", K + "?reveal=true", ""},
			{"PUT", K + "?rename=x", ""},
			{"PUT", K, `{"name":"x"}`},
			{"DELETE", K, ""},
			{"GET", K + "/records", ""},
			{"GET", K + "/records?type=STRING", ""},
			{"POST", K + "/records", `{"name":"n","type":"STRING","value":"x"}`},
			{"POST", pathR("web", "prod", "k", "n") + "?type=STRING&value=x", ""},
			{"GET", R, ""},
			{"GET", RID, ""},
			{"PUT", R + "?value=x", ""},
			{"PUT", RID, `{"value":"x"}`},
			{"PUT", R + "?rename=x", ""},
			{"DELETE", R, ""},
			{"DELETE", RID, ""},
			// Children that do not exist: still 403, never 404.
			{"GET", pathC("web", "missing"), ""},
			{"DELETE", pathC("web", "missing"), ""},
			{"GET", pathC("web", "missing") + "/clusters", ""},
			{"GET", pathK("web", "missing", "k"), ""},
			{"POST", pathK("web", "missing", "k"), ""},
			{"GET", pathR("web", "prod", "missing", "r"), ""},
			{"GET", pathR("web", "prod", "k", "missing"), ""},
			{"POST", pathR("web", "missing", "k", "r") + "?type=NULL", ""},
			{"PUT", pathR("web", "prod", "k", "missing") + "?value=x", ""},
		}
		for _, tt := range tests {
			status, _, env := c.do(tt.method, tt.target, tt.body, bob)
			wantError(t, "bob: "+tt.method+" "+tt.target, status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		}

		var got recordJSON
		c.mustDo("GET", R, "", alice, http.StatusOK).decode(t, &got)
		if got.Version != 1 || string(got.Value) != `"v"` {
			t.Errorf("alice's record changed: %+v", got)
		}
		var col collectionJSON
		c.mustDo("GET", C, "", alice, http.StatusOK).decode(t, &col)
		if col.ClusterCount != 1 || col.RecordCount != 1 {
			t.Errorf("alice's collection changed: %+v", col)
		}
		var list listJSON[projectJSON]
		c.mustDo("GET", "/api/v1/projects", "", bob, http.StatusOK).decode(t, &list)
		if list.Total != 0 || len(list.Items) != 0 {
			t.Errorf("bob's list shows alice's project: %+v", list)
		}
	})
}

// ---------------------------------------------------------------------
// Section 4: request forms and bodies; section 7: 413 and 415.

func TestMixedFormsAndBadBodies(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, pathK("web", "prod", "k"), "r", "STRING", `"v"`)
		P, C, K, R := pathP("web"), pathC("web", "prod"), pathK("web", "prod", "k"), pathR("web", "prod", "k", "r")
		rec := `{"type":"STRING","value":"x"}`
		tests := []struct {
			name, method, target, body string
		}{
			// A body with the path form's query parameters.
			{"PUT P body + ?rename", "PUT", P + "?rename=a", `{"name":"b"}`},
			{"PUT P body + ?rename (same name)", "PUT", P + "?rename=a", `{"name":"a"}`},
			{"PUT C body + ?rename", "PUT", C + "?rename=a", `{"name":"b"}`},
			{"PUT K body + ?rename", "PUT", K + "?rename=a", `{"name":"b"}`},
			{"POST R body + ?type", "POST", pathR("web", "prod", "k", "n1") + "?type=STRING", rec},
			{"POST R body + ?value", "POST", pathR("web", "prod", "k", "n2") + "?value=x", rec},
			{"POST K/records body + ?type", "POST", K + "/records?type=STRING", `{"name":"n3","type":"STRING","value":"x"}`},
			{"POST K/records body + ?value", "POST", K + "/records?value=x", `{"name":"n4","type":"STRING","value":"x"}`},
			{"POST K/records body + ?rename", "POST", K + "/records?rename=x", `{"name":"n5","type":"STRING","value":"x"}`},
			{"PUT R body + ?rename", "PUT", R + "?rename=z", `{"value":"y"}`},
			{"PUT R body + ?type", "PUT", R + "?type=STRING", `{"value":"y"}`},
			{"PUT R body + ?value", "PUT", R + "?value=y", `{"type":"STRING"}`},
			// A body name that differs from the path.
			{"POST P body name differs", "POST", pathP("new1"), `{"name":"other"}`},
			{"POST C body name differs", "POST", pathC("web", "new1"), `{"name":"other"}`},
			{"POST K body name differs", "POST", pathK("web", "prod", "new1"), `{"name":"other"}`},
			{"POST R body name differs", "POST", pathR("web", "prod", "k", "n6"), `{"name":"other","type":"STRING","value":"x"}`},
			// Unknown fields, case included.
			{"unknown field, POST /projects", "POST", "/api/v1/projects", `{"name":"x1","extra":1}`},
			{"field in another case, POST /projects", "POST", "/api/v1/projects", `{"Name":"x2"}`},
			{"unknown field, PUT P", "PUT", P, `{"name":"x3","owner_id":"bob"}`},
			{"unknown field, POST P/collections", "POST", P + "/collections", `{"name":"x4","id":"1"}`},
			{"unknown field, POST K/records", "POST", K + "/records", `{"name":"x5","type":"STRING","value":"x","version":3}`},
			{"field in another case, POST K/records", "POST", K + "/records", `{"name":"x6","Type":"STRING","value":"x"}`},
			{"unknown field, PUT R", "PUT", R, `{"value":"y","version":7}`},
			{"field in another case, PUT R", "PUT", R, `{"Value":"y"}`},
			// Malformed JSON, not an object, trailing data, wrong field types.
			{"malformed, POST /projects", "POST", "/api/v1/projects", `{"name":`},
			{"malformed, PUT R", "PUT", R, `{"value":}`},
			{"array, POST /projects", "POST", "/api/v1/projects", `[]`},
			{"array of objects, POST /projects", "POST", "/api/v1/projects", `[{"name":"x7"}]`},
			{"string, POST /projects", "POST", "/api/v1/projects", `"x8"`},
			{"null, POST /projects", "POST", "/api/v1/projects", `null`},
			{"number, PUT R", "PUT", R, `5`},
			{"string, POST R", "POST", pathR("web", "prod", "k", "n7"), `"x"`},
			{"trailing object, POST /projects", "POST", "/api/v1/projects", `{"name":"x9"} {"name":"x10"}`},
			{"trailing garbage, POST K/records", "POST", K + "/records", `{"name":"x11","type":"NULL"}x`},
			{"name is a number", "POST", "/api/v1/projects", `{"name":5}`},
			{"type is a number", "POST", K + "/records", `{"name":"x12","type":5,"value":1}`},
			// Missing required fields.
			{"POST /projects {}", "POST", "/api/v1/projects", `{}`},
			{"POST /projects no body", "POST", "/api/v1/projects", ``},
			{"POST P/collections {}", "POST", P + "/collections", `{}`},
			{"POST C/clusters {}", "POST", C + "/clusters", `{}`},
			{"POST K/records without name", "POST", K + "/records", `{"type":"STRING","value":"x"}`},
			{"POST K/records without type", "POST", K + "/records", `{"name":"x13","value":"x"}`},
			{"POST K/records no body", "POST", K + "/records", ``},
			{"POST K/records with only query parameters", "POST", K + "/records?type=STRING&value=x&rename=x14", ``},
			{"POST R body without type", "POST", pathR("web", "prod", "k", "n8"), `{"value":"x"}`},
			{"POST R without type", "POST", pathR("web", "prod", "k", "n9") + "?value=x", ``},
			{"PUT P {}", "PUT", P, `{}`},
			{"PUT P nothing", "PUT", P, ``},
			{"PUT C nothing", "PUT", C, ``},
			{"PUT K nothing", "PUT", K, ``},
			{"PUT R {}", "PUT", R, `{}`},
			{"PUT R nothing", "PUT", R, ``},
		}
		for _, tt := range tests {
			status, _, env := c.do(tt.method, tt.target, tt.body, alice)
			wantError(t, tt.name, status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
		}
		// Nothing was created or changed by those.
		var list listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &list)
		if list.Total != 1 || list.Items[0].Version != 1 || string(list.Items[0].Value) != `"v"` {
			t.Errorf("records after the bad requests: %+v", list)
		}
		var projects listJSON[projectJSON]
		c.mustDo("GET", "/api/v1/projects", "", alice, http.StatusOK).decode(t, &projects)
		if projects.Total != 1 {
			t.Errorf("projects after the bad requests: %+v", projects)
		}

		// Other parameters, such as reveal, may accompany a body.
		c.mustDo("POST", pathR("web", "prod", "k", "ok1")+"?reveal=true", rec, alice, http.StatusCreated)
		c.mustDo("POST", K+"/records?reveal=false", `{"name":"ok2","type":"NULL"}`, alice, http.StatusCreated)
		c.mustDo("PUT", R+"?reveal=true", `{"value":"y"}`, alice, http.StatusOK)
		c.mustDo("POST", pathP("ok3")+"?unrelated=1", `{"name":"ok3"}`, alice, http.StatusCreated)
		c.mustDo("POST", pathR("web", "prod", "k", "ok4"), `{"name":"ok4","type":"NULL"}`, alice, http.StatusCreated)
		c.mustDo("POST", pathC("web", "ok5"), `{}`, alice, http.StatusCreated)
	})
}

func TestContentTypeAndBodySize(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		send := func(contentType, body string, sized bool) (int, envelope) {
			t.Helper()
			var r *http.Request
			if sized {
				r = httptest.NewRequest("POST", "/api/v1/projects", strings.NewReader(body))
			} else { // unknown length: the body is streamed
				r = httptest.NewRequest("POST", "/api/v1/projects", io.MultiReader(strings.NewReader(body)))
			}
			if contentType != "" {
				r.Header.Set("Content-Type", contentType)
			}
			r.Header.Set("Authorization", "Bearer "+alice)
			status, _, env := c.send(r)
			return status, env
		}
		tests := []struct {
			name, contentType, body string
			status                  int
			code                    string
		}{
			{"text/plain", "text/plain", `{"name":"ct1"}`, 415, "INVALID_REQUEST"},
			{"no Content-Type", "", `{"name":"ct2"}`, 415, "INVALID_REQUEST"},
			{"form", "application/x-www-form-urlencoded", `name=ct3`, 415, "INVALID_REQUEST"},
			{"application/jsonx", "application/jsonx", `{"name":"ct4"}`, 415, "INVALID_REQUEST"},
			{"application/json; charset=utf-8", "application/json; charset=utf-8", `{"name":"ct5"}`, 201, ""},
			{"application/json", "application/json", `{"name":"ct6"}`, 201, ""},
		}
		for _, tt := range tests {
			for _, sized := range []bool{true, false} {
				status, env := send(tt.contentType, tt.body, sized)
				if tt.status == 201 {
					if status != 201 {
						t.Errorf("%s: status %d, want 201: %s", tt.name, status, env.raw)
					}
					c.mustDo("DELETE", pathP(strings.TrimSuffix(strings.TrimPrefix(tt.body, `{"name":"`), `"}`)), "", alice, 204)
					continue
				}
				wantError(t, tt.name, status, env, tt.status, tt.code, "")
			}
		}
		// An empty body needs no Content-Type.
		r := request("POST", pathP("ct7"), "", alice)
		r.Header.Set("Content-Type", "text/plain")
		if status, _, env := c.send(r); status != http.StatusCreated {
			t.Errorf("POST P with an empty text/plain body: %d %s", status, env.raw)
		}

		const mib = 1 << 20
		big := `{"name":"` + strings.Repeat("a", mib) + `"}`
		for _, sized := range []bool{true, false} {
			status, env := send("application/json", big, sized)
			wantError(t, fmt.Sprintf("body over 1 MiB (length known: %v)", sized), status, env, http.StatusRequestEntityTooLarge, "INVALID_REQUEST", "")
		}
		// A body of exactly 1 MiB is read (and refused for its content).
		head := `{"name":"exact","padding":"`
		exact := head + strings.Repeat("a", mib-len(head)-2) + `"}`
		status, env := send("application/json", exact, true)
		wantError(t, "body of exactly 1 MiB", status, env, http.StatusBadRequest, "INVALID_REQUEST", "")

		small := newServer(t, kind, hds.WithMaxBodyBytes(100))
		stok := small.token("alice")
		body200 := `{"name":"` + strings.Repeat("b", 189) + `"}`
		if len(body200) != 200 {
			t.Fatalf("body length %d", len(body200))
		}
		status, _, env = small.do("POST", "/api/v1/projects", body200, stok)
		wantError(t, "200-byte body with WithMaxBodyBytes(100)", status, env, http.StatusRequestEntityTooLarge, "INVALID_REQUEST", "")
		r = httptest.NewRequest("POST", "/api/v1/projects", io.MultiReader(strings.NewReader(body200)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+stok)
		status, _, env = small.send(r)
		wantError(t, "streamed 200-byte body with WithMaxBodyBytes(100)", status, env, http.StatusRequestEntityTooLarge, "INVALID_REQUEST", "")
		small.mustDo("POST", "/api/v1/projects", `{"name":"fits"}`, stok, http.StatusCreated)
	})
}

// ---------------------------------------------------------------------
// Section 2: names.

func TestNames(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K, R := pathK("web", "prod", "k"), pathR("web", "prod", "k", "r")
		c.addRecord(alice, K, "r", "NULL", "null")
		long := func(s string, n int) string { return strings.Repeat(s, n) }
		escaped := func(s string) string { return url.PathEscape(s) }
		invalid := []struct{ name, method, target, body string }{
			{"empty (body)", "POST", "/api/v1/projects", `{"name":""}`},
			{"129 code points (path)", "POST", "/api/v1/projects/" + escaped(long("é", 129)), ""},
			{"129 code points (body)", "POST", "/api/v1/projects", `{"name":"` + long("a", 129) + `"}`},
			{"U+0001 (path)", "POST", "/api/v1/projects/a%01b", ""},
			{"U+001F (body)", "POST", "/api/v1/projects", `{"name":"a\u001fb"}`},
			{"U+007F (path)", "POST", "/api/v1/projects/a%7F", ""},
			{"U+0080 (path)", "POST", "/api/v1/projects/a%C2%80", ""},
			{"U+0085 (body)", "POST", "/api/v1/projects", `{"name":"a\u0085b"}`},
			{"U+009F (path)", "POST", "/api/v1/projects/a%C2%9F", ""},
			{"tab (body)", "POST", "/api/v1/projects", `{"name":"a\tb"}`},
			{"U+0000 (path)", "POST", "/api/v1/projects/a%00b", ""},
			{"U+0000 (body)", "POST", "/api/v1/projects", `{"name":"a\u0000b"}`},
			{"slash (path, %2F)", "POST", "/api/v1/projects/a%2Fb", ""},
			{"slash (body)", "POST", "/api/v1/projects", `{"name":"a/b"}`},
			{"leading space (path)", "POST", "/api/v1/projects/%20a", ""},
			{"trailing space (path)", "POST", "/api/v1/projects/a%20", ""},
			{"leading space (body)", "POST", "/api/v1/projects", `{"name":" a"}`},
			{"trailing space (body)", "POST", "/api/v1/projects", `{"name":"a "}`},
			{"trailing no-break space (path)", "POST", "/api/v1/projects/a%C2%A0", ""},
			{"leading ideographic space (body)", "POST", "/api/v1/projects", `{"name":"\u3000a"}`},
			{"trailing em space (body)", "POST", "/api/v1/projects", `{"name":"a\u2003"}`},
			{"invalid UTF-8 (path)", "POST", "/api/v1/projects/%FF", ""},
			{"truncated UTF-8 (path)", "POST", "/api/v1/projects/a%C3", ""},
			{"dot (body)", "POST", "/api/v1/projects", `{"name":"."}`},
			{"dot-dot (body)", "POST", "/api/v1/projects", `{"name":".."}`},
			{"collection dot (body)", "POST", pathP("web") + "/collections", `{"name":"."}`},
			{"collection slash (path)", "POST", pathP("web") + "/collections/a%2Fb", ""},
			{"cluster dot-dot (body)", "POST", pathC("web", "prod") + "/clusters", `{"name":".."}`},
			{"cluster leading space (path)", "POST", pathC("web", "prod") + "/clusters/%20k", ""},
			{"record dot (body)", "POST", K + "/records", `{"name":".","type":"NULL"}`},
			{"record empty (body)", "POST", K + "/records", `{"name":"","type":"NULL"}`},
			{"record slash (path)", "POST", K + "/records/a%2Fb?type=NULL", ""},
			{"record control (path)", "POST", K + "/records/a%0Ab?type=NULL", ""},
			{"rename project to empty", "PUT", pathP("web") + "?rename=", ""},
			{"rename project with a slash", "PUT", pathP("web") + "?rename=a%2Fb", ""},
			{"rename project to ..", "PUT", pathP("web") + "?rename=..", ""},
			{"rename collection to .", "PUT", pathC("web", "prod"), `{"name":"."}`},
			{"rename cluster with a leading space", "PUT", K + "?rename=%20k", ""},
			{"rename record with a trailing space", "PUT", R + "?rename=r%20", ""},
			{"rename record to 129 code points", "PUT", R, `{"name":"` + long("x", 129) + `"}`},
		}
		for _, tt := range invalid {
			status, _, env := c.do(tt.method, tt.target, tt.body, alice)
			wantError(t, "name: "+tt.name, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			if env.details() == "" {
				t.Errorf("name: %s: details do not say which rule failed", tt.name)
			}
		}

		valid := []string{
			"my project", "日本語", "Ünïcödé ñ", "100%", "a.b", "...", ".hidden", "a+b", "a?b", "a#b", "a&b=c",
			"emoji 🎉", "zero\u200bwidth", long("x", 128), long("é", 128), "a b  c",
		}
		for _, name := range valid {
			var p projectJSON
			c.mustDo("POST", pathP(name), "", alice, http.StatusCreated).decode(t, &p)
			if p.Name != name {
				t.Errorf("project %q created as %q", name, p.Name)
			}
			c.mustDo("GET", pathP(name), "", alice, http.StatusOK).decode(t, &p)
			if p.Name != name {
				t.Errorf("project %q read as %q", name, p.Name)
			}
			c.mustDo("POST", pathC(name, name), "", alice, http.StatusCreated)
			c.mustDo("POST", pathK(name, name, name), "", alice, http.StatusCreated)
			var r recordJSON
			c.mustDo("POST", pathR(name, name, name, name)+"?type=NULL", "", alice, http.StatusCreated).decode(t, &r)
			if r.Name != name {
				t.Errorf("record %q created as %q", name, r.Name)
			}
			c.mustDo("GET", pathR(name, name, name, name), "", alice, http.StatusOK)
		}
		body, _ := json.Marshal(map[string]string{"name": "body form ✓"})
		c.mustDo("POST", "/api/v1/projects", string(body), alice, http.StatusCreated)
		c.mustDo("GET", "/api/v1/projects/body%20form%20%E2%9C%93", "", alice, http.StatusOK)

		// Case-sensitive, byte for byte, no normalization.
		for _, name := range []string{"Web", "WEB", "\u00e9", "e\u0301"} {
			c.mustDo("POST", pathP(name), "", alice, http.StatusCreated)
		}
		status, _, env := c.do("GET", pathP("wEB"), "", alice)
		wantError(t, "GET wEB", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		var p projectJSON
		c.mustDo("GET", pathP("e\u0301"), "", alice, http.StatusOK).decode(t, &p)
		if p.Name != "e\u0301" {
			t.Errorf("decomposed é read back as %q", p.Name)
		}
	})
}

func TestUnstorableNamesInPaths(t *testing.T) {
	// Names no resource can have (invalid UTF-8, U+0000, control
	// characters) are not found or refused, never a server error, whatever
	// the store does with such bytes.
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, pathK("web", "prod", "k"), "r", "NULL", "null")
		for _, bad := range []string{"%FF", "a%00b", "%C3%28", "a%01", "%ED%A0%80"} {
			for _, req := range []struct{ method, target string }{
				{"GET", "/api/v1/projects/" + bad},
				{"DELETE", "/api/v1/projects/" + bad},
				{"PUT", "/api/v1/projects/" + bad + "?rename=x"},
				{"GET", "/api/v1/projects/" + bad + "/collections"},
				{"GET", "/api/v1/projects/web/collections/" + bad},
				{"GET", "/api/v1/projects/web/collections/" + bad + "/clusters"},
				{"DELETE", "/api/v1/projects/web/collections/" + bad},
				{"GET", "/api/v1/projects/web/collections/prod/clusters/" + bad},
				{"GET", "/api/v1/projects/web/collections/prod/clusters/" + bad + "/records"},
				{"GET", "/api/v1/projects/web/collections/prod/clusters/k/records/" + bad},
				{"PUT", "/api/v1/projects/web/collections/prod/clusters/k/records/" + bad + "?value="},
				{"DELETE", "/api/v1/projects/web/collections/prod/clusters/k/records/" + bad},
				{"PUT", "/api/v1/projects/web/collections/prod/clusters/k/records/r?rename=" + bad},
				{"PUT", "/api/v1/projects/web?rename=" + bad},
			} {
				status, _, env := c.do(req.method, req.target, "", alice)
				if status != http.StatusNotFound && status != http.StatusBadRequest {
					t.Errorf("%s %s: %d %s, want 404 or 400", req.method, req.target, status, env.raw)
				}
			}
		}
		// A username or password no account can have fails like any other.
		for _, body := range []string{
			`{"username":"ali\u0000ce","password":"alice-password"}`,
			`{"username":"alice","password":"alice-\u0000password"}`,
			`{"username":"\udc00","password":"x"}`,
			`{"username":"","password":""}`,
		} {
			status, _, env := c.do("POST", "/api/v1/auth/login", body, "")
			if status != http.StatusUnauthorized && status != http.StatusBadRequest {
				t.Errorf("login %s: %d %s, want 401 or 400", body, status, env.raw)
			}
		}
	})
}

// ---------------------------------------------------------------------
// Section 3: record types and values.

// typeCase is one accepted value: sent as JSON in a body and as text in a
// query string.
type typeCase struct {
	typ       string // as sent, any case, short forms
	json      string // the body's value; "" leaves the field out
	text      string // the query's value
	noText    bool   // send no ?value= at all
	wantType  string
	wantValue string // canonical JSON
}

var typeCases = []typeCase{
	{typ: "STRING", json: `"hello"`, text: "hello", wantType: "STRING", wantValue: `"hello"`},
	{typ: "STRING", json: `""`, text: "", wantType: "STRING", wantValue: `""`},
	{typ: "str", json: `"a b/c?d"`, text: "a b/c?d", wantType: "STRING", wantValue: `"a b/c?d"`},
	{typ: "String", json: `"日本 \"q\""`, text: `日本 "q"`, wantType: "STRING", wantValue: `"日本 \"q\""`},
	{typ: "INTEGER", json: `42`, text: "42", wantType: "INTEGER", wantValue: `42`},
	{typ: "INT", json: `-3`, text: "-3", wantType: "INTEGER", wantValue: `-3`},
	{typ: "integer", json: `0`, text: "0", wantType: "INTEGER", wantValue: `0`},
	{typ: "int", json: `9223372036854775807`, text: "9223372036854775807", wantType: "INTEGER", wantValue: `9223372036854775807`},
	{typ: "INTEGER", json: `-9223372036854775808`, text: "-9223372036854775808", wantType: "INTEGER", wantValue: `-9223372036854775808`},
	{typ: "FLOAT", json: `3.14`, text: "3.14", wantType: "FLOAT", wantValue: `3.14`},
	{typ: "FLT", json: `1e21`, text: "1e21", wantType: "FLOAT", wantValue: `1e+21`},
	{typ: "float", json: `5`, text: "5", wantType: "FLOAT", wantValue: `5`},
	{typ: "Float", json: `2.50`, text: "2.50", wantType: "FLOAT", wantValue: `2.5`},
	{typ: "FLOAT", json: `-1.5E-7`, text: "-1.5E-7", wantType: "FLOAT", wantValue: `-1.5e-07`},
	{typ: "BOOLEAN", json: `true`, text: "true", wantType: "BOOLEAN", wantValue: `true`},
	{typ: "BOOL", json: `false`, text: "false", wantType: "BOOLEAN", wantValue: `false`},
	{typ: "boolean", json: `true`, text: "true", wantType: "BOOLEAN", wantValue: `true`},
	{typ: "DATE", json: `"2024-02-29"`, text: "2024-02-29", wantType: "DATE", wantValue: `"2024-02-29"`},
	{typ: "date", json: `"2026-12-31"`, text: "2026-12-31", wantType: "DATE", wantValue: `"2026-12-31"`},
	{typ: "TIME", json: `"08:18:19"`, text: "08:18:19", wantType: "TIME", wantValue: `"08:18:19"`},
	{typ: "time", json: `"23:59:59.123456789"`, text: "23:59:59.123456789", wantType: "TIME", wantValue: `"23:59:59.123456789"`},
	{typ: "TIME", json: `"00:00:00.5"`, text: "00:00:00.5", wantType: "TIME", wantValue: `"00:00:00.5"`},
	{typ: "DATETIME", json: `"2026-11-22T08:18:19Z"`, text: "2026-11-22T08:18:19Z", wantType: "DATETIME", wantValue: `"2026-11-22T08:18:19Z"`},
	{typ: "datetime", json: `"2026-11-22T09:18:19.500+01:00"`, text: "2026-11-22T09:18:19.500+01:00", wantType: "DATETIME", wantValue: `"2026-11-22T09:18:19.500+01:00"`},
	{typ: "DateTime", json: `"2026-11-22T08:18:19.120Z"`, text: "2026-11-22T08:18:19.120Z", wantType: "DATETIME", wantValue: `"2026-11-22T08:18:19.120Z"`},
	{typ: "UUID", json: `"0190A5B4-C0DE-7ABC-8DEF-0123456789AB"`, text: "0190A5B4-C0DE-7ABC-8DEF-0123456789AB", wantType: "UUID", wantValue: `"0190a5b4-c0de-7abc-8def-0123456789ab"`},
	{typ: "uuid", json: `"0190a5b4-c0de-7abc-8def-0123456789ab"`, text: "0190a5b4-c0de-7abc-8def-0123456789ab", wantType: "UUID", wantValue: `"0190a5b4-c0de-7abc-8def-0123456789ab"`},
	{typ: "NULL", json: `null`, text: "", wantType: "NULL", wantValue: `null`},
	{typ: "null", json: "", noText: true, wantType: "NULL", wantValue: `null`},
	{typ: "[]STRING", json: `["a","b"]`, text: `["a","b"]`, wantType: "[]STRING", wantValue: `["a","b"]`},
	{typ: "[]str", json: `[ "a" , "" ]`, text: `[ "a" , "" ]`, wantType: "[]STRING", wantValue: `["a",""]`},
	{typ: "[]STRING", json: `[]`, text: `[]`, wantType: "[]STRING", wantValue: `[]`},
	{typ: "[]INTEGER", json: `[1,-2]`, text: `[1, -2]`, wantType: "[]INTEGER", wantValue: `[1,-2]`},
	{typ: "[]int", json: `[]`, text: `[]`, wantType: "[]INTEGER", wantValue: `[]`},
	{typ: "[]FLOAT", json: `[1.50,1e21]`, text: `[1.50,1e21]`, wantType: "[]FLOAT", wantValue: `[1.5,1e+21]`},
	{typ: "[]FLT", json: `[2]`, text: `[2]`, wantType: "[]FLOAT", wantValue: `[2]`},
	{typ: "[]BOOLEAN", json: `[true,false]`, text: `[true,false]`, wantType: "[]BOOLEAN", wantValue: `[true,false]`},
	{typ: "[]bool", json: `[false]`, text: `[false]`, wantType: "[]BOOLEAN", wantValue: `[false]`},
	{typ: "[]DATE", json: `["2026-01-31"]`, text: `["2026-01-31"]`, wantType: "[]DATE", wantValue: `["2026-01-31"]`},
	{typ: "[]TIME", json: `["12:00:00","12:00:00.25"]`, text: `["12:00:00","12:00:00.25"]`, wantType: "[]TIME", wantValue: `["12:00:00","12:00:00.25"]`},
	{typ: "[]DATETIME", json: `["2026-11-22T09:18:19.500+01:00"]`, text: `["2026-11-22T09:18:19.500+01:00"]`, wantType: "[]DATETIME", wantValue: `["2026-11-22T09:18:19.500+01:00"]`},
	{typ: "[]UUID", json: `["0190A5B4-C0DE-7ABC-8DEF-0123456789AB"]`, text: `["0190A5B4-C0DE-7ABC-8DEF-0123456789AB"]`, wantType: "[]UUID", wantValue: `["0190a5b4-c0de-7abc-8def-0123456789ab"]`},
	{typ: "[]NULL", json: `[null,null]`, text: `[null,null]`, wantType: "[]NULL", wantValue: `[null,null]`},
	{typ: "[]null", json: `[]`, text: `[]`, wantType: "[]NULL", wantValue: `[]`},
}

func TestRecordTypes(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		recordFields := []string{"id", "name", "type", "value", "version", "created_at", "updated_at"}

		check := func(what, name string, env envelope, tc typeCase) {
			t.Helper()
			wantFields(t, what, env.Data, recordFields...)
			var r recordJSON
			env.decode(t, &r)
			wantID(t, what, r.ID)
			wantTimestamps(t, what, r.CreatedAt, r.UpdatedAt)
			if r.Name != name || r.Type != tc.wantType || compact(t, r.Value) != tc.wantValue || r.Version != 1 {
				t.Errorf("%s: got %s %s version %d, want %s %s version 1", what, r.Type, r.Value, r.Version, tc.wantType, tc.wantValue)
			}
			var got recordJSON
			c.mustDo("GET", pathR("web", "prod", "k", name), "", alice, http.StatusOK).decode(t, &got)
			if got.Type != tc.wantType || compact(t, got.Value) != tc.wantValue || got.ID != r.ID {
				t.Errorf("%s: GET returned %s %s, want %s %s", what, got.Type, got.Value, tc.wantType, tc.wantValue)
			}
		}
		for i, tc := range typeCases {
			// The body form, POST K/records.
			name := fmt.Sprintf("b%02d", i)
			body := fmt.Sprintf(`{"name":%q,"type":%q,"value":%s}`, name, tc.typ, tc.json)
			if tc.json == "" {
				body = fmt.Sprintf(`{"name":%q,"type":%q}`, name, tc.typ)
			}
			status, _, env := c.do("POST", K+"/records", body, alice)
			if status != http.StatusCreated {
				t.Errorf("body form %s %s: status %d: %s", tc.typ, tc.json, status, env.raw)
			} else {
				check("body form "+tc.typ+" "+tc.json, name, env, tc)
			}

			// The body form on POST R (the name in the path).
			name = fmt.Sprintf("r%02d", i)
			body = fmt.Sprintf(`{"type":%q,"value":%s}`, tc.typ, tc.json)
			if tc.json == "" {
				body = fmt.Sprintf(`{"type":%q}`, tc.typ)
			}
			status, _, env = c.do("POST", pathR("web", "prod", "k", name), body, alice)
			if status != http.StatusCreated {
				t.Errorf("POST R body %s %s: status %d: %s", tc.typ, tc.json, status, env.raw)
			} else {
				check("POST R body "+tc.typ+" "+tc.json, name, env, tc)
			}

			// The path form, POST R?type=T&value=V.
			name = fmt.Sprintf("q%02d", i)
			q := url.Values{"type": {tc.typ}}
			if !tc.noText {
				q.Set("value", tc.text)
			}
			status, _, env = c.do("POST", pathR("web", "prod", "k", name)+"?"+q.Encode(), "", alice)
			if status != http.StatusCreated {
				t.Errorf("path form ?%s: status %d: %s", q.Encode(), status, env.raw)
			} else {
				check("path form ?"+q.Encode(), name, env, tc)
			}
		}

		// [] written as is in the query string.
		for i, raw := range []string{`type=[]STRING&value=["a","b"]`, `type=[]str&value=[%22a%22,%22b%22]`, `type=%5B%5DSTRING&value=%5B%22a%22%2C%22b%22%5D`} {
			name := fmt.Sprintf("raw%d", i)
			var r recordJSON
			c.mustDo("POST", pathR("web", "prod", "k", name)+"?"+raw, "", alice, http.StatusCreated).decode(t, &r)
			if r.Type != "[]STRING" || compact(t, r.Value) != `["a","b"]` {
				t.Errorf("?%s: %s %s", raw, r.Type, r.Value)
			}
		}
	})
}

func TestRecordTypeRejections(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		const skip = "\x01skip"
		tests := []struct {
			typ, json, text string
			mention         string // details must contain it
			index           int    // the bad element's index, or -1
		}{
			{"INTEGER", `5.0`, "5.0", "INTEGER", -1},
			{"INTEGER", `1e3`, "1e3", "INTEGER", -1},
			{"INTEGER", `9223372036854775808`, "9223372036854775808", "INTEGER", -1},
			{"INTEGER", `-9223372036854775809`, "-9223372036854775809", "INTEGER", -1},
			{"INTEGER", `"5"`, "abc", "INTEGER", -1},
			{"int", `true`, "", "INTEGER", -1},
			{"FLOAT", `"3.14"`, "abc", "FLOAT", -1},
			{"FLOAT", `1e400`, "1e400", "FLOAT", -1},
			{"FLOAT", skip, "NaN", "FLOAT", -1},
			{"FLOAT", skip, "Inf", "FLOAT", -1},
			{"BOOLEAN", `"true"`, "yes", "BOOLEAN", -1},
			{"BOOLEAN", `1`, "1", "BOOLEAN", -1},
			{"DATE", `"2026-02-30"`, "2026-02-30", "DATE", -1},
			{"DATE", `"2026-2-3"`, "2026-2-3", "DATE", -1},
			{"DATE", `20260101`, "2026/01/01", "DATE", -1},
			{"TIME", `"24:00:00"`, "24:00:00", "TIME", -1},
			{"TIME", `"12:60:00"`, "12:60:00", "TIME", -1},
			{"TIME", `"12:00"`, "12:00", "TIME", -1},
			{"TIME", `"12:00:00.1234567890"`, "12:00:00.", "TIME", -1},
			{"DATETIME", `"2026-11-22T08:18:19"`, "2026-11-22T08:18:19", "DATETIME", -1},
			{"DATETIME", `"2026-11-22 08:18:19Z"`, "2026-02-30T00:00:00Z", "DATETIME", -1},
			{"UUID", `"not-a-uuid"`, "0190a5b4c0de7abc8def0123456789ab", "UUID", -1},
			{"NULL", `5`, "x", "NULL", -1},
			{"STRING", `5`, skip, "STRING", -1},
			{"STRING", "", skip, "STRING", -1}, // value left out is null
			{"STRING", `"a\u0000b"`, "a\x00b", "U+0000", -1},
			{"DATE", `"2026-01-01\u0000"`, "2026-01-01\x00", "", -1},
			{"CREDENTIAL", `""`, "", "CREDENTIAL", -1},
			{"CREDENTIAL", `5`, skip, "CREDENTIAL", -1},
			{"CREDENTIAL", `"se\u0000cret"`, "se\x00cret", "", -1},
			{"[]STRING", `["a",5]`, `["a",5]`, "[]STRING", 1},
			{"[]INTEGER", `[1,2,3.5]`, `[1,2,3.5]`, "[]INTEGER", 2},
			{"[]DATE", `["2026-01-01","2026-02-30"]`, `["2026-01-01","2026-02-30"]`, "[]DATE", 1},
			{"[]UUID", `["x"]`, `["x"]`, "[]UUID", 0},
			{"[]STRING", `["ok","a\u0000"]`, `["ok","a\u0000"]`, "", 1},
			{"[]STRING", `"a"`, `a`, "[]STRING", -1},
			{"[]INTEGER", `{"a":1}`, `{"a":1}`, "[]INTEGER", -1},
			{"[]NULL", `[null,0]`, `[null,0]`, "[]NULL", 1},
			{"[]CREDENTIAL", `["ok",""]`, `["ok",""]`, "[]CREDENTIAL", 1},
		}
		n := 0
		for _, tt := range tests {
			if tt.json != skip {
				n++
				body := fmt.Sprintf(`{"name":"x%d","type":%q,"value":%s}`, n, tt.typ, tt.json)
				if tt.json == "" {
					body = fmt.Sprintf(`{"name":"x%d","type":%q}`, n, tt.typ)
				}
				status, _, env := c.do("POST", K+"/records", body, alice)
				what := "body " + tt.typ + " " + tt.json
				wantError(t, what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
				checkRejection(t, what, env, tt.mention, tt.index)
			}
			if tt.text != skip {
				n++
				q := url.Values{"type": {tt.typ}, "value": {tt.text}}
				status, _, env := c.do("POST", pathR("web", "prod", "k", fmt.Sprintf("x%d", n))+"?"+q.Encode(), "", alice)
				what := "query ?" + q.Encode()
				wantError(t, what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
				checkRejection(t, what, env, tt.mention, tt.index)
			}
		}

		// An unknown type lists every supported type.
		for _, req := range []struct{ what, target, body string }{
			{"body", K + "/records", `{"name":"u1","type":"FOO","value":1}`},
			{"query", pathR("web", "prod", "k", "u2") + "?type=FOO&value=1", ""},
			{"query, empty type", pathR("web", "prod", "k", "u3") + "?type=&value=1", ""},
			{"body, array of unknown", K + "/records", `{"name":"u4","type":"[]FOO","value":[]}`},
			{"body, nested array", K + "/records", `{"name":"u5","type":"[][]STRING","value":[]}`},
		} {
			status, _, env := c.do("POST", req.target, req.body, alice)
			wantError(t, "unknown type, "+req.what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			wantDetails(t, "unknown type, "+req.what, env, allTypes...)
		}

		var list listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &list)
		if list.Total != 0 {
			t.Errorf("rejected values were stored: %+v", list.Items)
		}
	})
}

// checkRejection checks the details of a VALIDATION_ERROR for a value.
func checkRejection(t *testing.T, what string, env envelope, mention string, index int) {
	t.Helper()
	if mention != "" {
		wantDetails(t, what, env, mention)
	}
	if index >= 0 && !regexp.MustCompile(fmt.Sprintf(`\b%d\b`, index)).MatchString(env.details()) {
		t.Errorf("%s: details %q do not name the element index %d", what, env.details(), index)
	}
	if env.details() == "" {
		t.Errorf("%s: empty details", what)
	}
}

// ---------------------------------------------------------------------
// Section 4: record updates and addressing by id.

func TestRecordUpdate(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		path := func(name string) string { return pathR("web", "prod", "k", name) }

		// expect reads a record back and compares it.
		expect := func(what, name, typ, value string, version int64) recordJSON {
			t.Helper()
			var r recordJSON
			status, _, env := c.do("GET", path(name)+"?reveal=true", "", alice)
			if status != http.StatusOK {
				t.Errorf("%s: GET %s: %d %s", what, name, status, env.raw)
				return r
			}
			env.decode(t, &r)
			if r.Type != typ || compact(t, r.Value) != value || r.Version != version {
				t.Errorf("%s: record %s is %s %s version %d, want %s %s version %d",
					what, name, r.Type, r.Value, r.Version, typ, value, version)
			}
			return r
		}
		steps := []struct {
			what, target, body string
			status             int
			code               string
			// the record afterwards
			name, typ, value string
			version          int64
		}{
			{"create", path("n") + "?type=INTEGER&value=1", "", 201, "", "n", "INTEGER", `1`, 1},
			{"value alone (query)", path("n") + "?value=2", "", 200, "", "n", "INTEGER", `2`, 2},
			{"value not fitting the current type (query)", path("n") + "?value=abc", "", 400, "VALIDATION_ERROR", "n", "INTEGER", `2`, 2},
			{"value alone (body)", path("n"), `{"value":3}`, 200, "", "n", "INTEGER", `3`, 3},
			{"value not fitting the current type (body)", path("n"), `{"value":"3"}`, 400, "VALIDATION_ERROR", "n", "INTEGER", `3`, 3},
			{"type alone, the value fits", path("n") + "?type=FLOAT", "", 200, "", "n", "FLOAT", `3`, 4},
			{"type and value (query, short form)", path("n") + "?type=int&value=7", "", 200, "", "n", "INTEGER", `7`, 5},
			{"type and value (body)", path("n"), `{"type":"BOOLEAN","value":true}`, 200, "", "n", "BOOLEAN", `true`, 6},
			{"type and a value not fitting it", path("n"), `{"type":"DATE","value":"2026-02-30"}`, 400, "VALIDATION_ERROR", "n", "BOOLEAN", `true`, 6},
			{"unknown type", path("n") + "?type=FOO&value=1", "", 400, "VALIDATION_ERROR", "n", "BOOLEAN", `true`, 6},
			{"type null with no value", path("n") + "?type=NULL&value=", "", 200, "", "n", "NULL", `null`, 7},

			{"create s", path("s") + "?type=STRING&value=abc", "", 201, "", "s", "STRING", `"abc"`, 1},
			{"type alone, the value does not fit (query)", path("s") + "?type=INTEGER", "", 400, "VALIDATION_ERROR", "s", "STRING", `"abc"`, 1},
			{"type alone, the value does not fit (body)", path("s"), `{"type":"INTEGER"}`, 400, "VALIDATION_ERROR", "s", "STRING", `"abc"`, 1},
			{"type alone to UUID, the value does not fit", path("s") + "?type=UUID", "", 400, "VALIDATION_ERROR", "s", "STRING", `"abc"`, 1},
			{"type and value", path("s") + "?type=INTEGER&value=5", "", 200, "", "s", "INTEGER", `5`, 2},
			{"name and value in one step", path("s"), `{"name":"s2","value":6}`, 200, "", "s2", "INTEGER", `6`, 3},
			{"rename to the current name", path("s2") + "?rename=s2", "", 200, "", "s2", "INTEGER", `6`, 3},
			{"rename to the current name (body)", path("s2"), `{"name":"s2"}`, 200, "", "s2", "INTEGER", `6`, 3},
			{"rename onto a sibling", path("s2") + "?rename=n", "", 409, "RESOURCE_EXISTS", "s2", "INTEGER", `6`, 3},
			{"rename onto a sibling with a value", path("s2"), `{"name":"n","value":9}`, 409, "RESOURCE_EXISTS", "s2", "INTEGER", `6`, 3},
			{"rename (query)", path("s2") + "?rename=s3", "", 200, "", "s3", "INTEGER", `6`, 4},
			{"rename (body)", path("s3"), `{"name":"s4"}`, 200, "", "s4", "INTEGER", `6`, 5},
			{"value with a bad rename", path("s4") + "?value=8&rename=%20bad", "", 400, "VALIDATION_ERROR", "s4", "INTEGER", `6`, 5},
			{"value and rename in one step (query)", path("s4") + "?value=8&rename=s5", "", 200, "", "s5", "INTEGER", `8`, 6},
			{"type, value and rename in one step (query)", path("s5") + "?type=STRING&value=eight&rename=s6", "", 200, "", "s6", "STRING", `"eight"`, 7},

			{"create an int array", path("a") + "?type=[]INTEGER&value=[1,2]", "", 201, "", "a", "[]INTEGER", `[1,2]`, 1},
			{"array type alone, the value fits", path("a") + "?type=[]FLT", "", 200, "", "a", "[]FLOAT", `[1,2]`, 2},
			{"array type alone, the value does not fit", path("a") + "?type=[]BOOLEAN", "", 400, "VALIDATION_ERROR", "a", "[]FLOAT", `[1,2]`, 2},

			{"create a credential", path("c") + "?type=CREDENTIAL&value=s3cret", "", 201, "", "c", "CREDENTIAL", `"s3cret"`, 1},
			{"credential to STRING without a value (query)", path("c") + "?type=STRING", "", 400, "VALIDATION_ERROR", "c", "CREDENTIAL", `"s3cret"`, 1},
			{"credential to STRING without a value (body)", path("c"), `{"type":"STRING"}`, 400, "VALIDATION_ERROR", "c", "CREDENTIAL", `"s3cret"`, 1},
			{"credential to []CREDENTIAL without a value", path("c") + "?type=[]CREDENTIAL", "", 400, "VALIDATION_ERROR", "c", "CREDENTIAL", `"s3cret"`, 1},
			{"credential value alone", path("c") + "?value=n3w", "", 200, "", "c", "CREDENTIAL", `"n3w"`, 2},
			{"credential to STRING with a value", path("c") + "?type=STRING&value=plain", "", 200, "", "c", "STRING", `"plain"`, 3},
			{"create a credential array", path("ca"), `{"type":"[]CREDENTIAL","value":["x","y"]}`, 201, "", "ca", "[]CREDENTIAL", `["x","y"]`, 1},
			{"credential array to []STRING without a value", path("ca") + "?type=[]STRING", "", 400, "VALIDATION_ERROR", "ca", "[]CREDENTIAL", `["x","y"]`, 1},
			{"credential array to []STRING with a value", path("ca"), `{"type":"[]STRING","value":["z"]}`, 200, "", "ca", "[]STRING", `["z"]`, 2},
		}
		for _, s := range steps {
			method := "PUT"
			if s.status == 201 {
				method = "POST"
			}
			status, _, env := c.do(method, s.target, s.body, alice)
			if s.code != "" {
				wantError(t, s.what, status, env, s.status, s.code, "")
			} else if status != s.status {
				t.Errorf("%s: status %d, want %d: %s", s.what, status, s.status, env.raw)
			}
			before := recordJSON{}
			if status/100 == 2 {
				env.decode(t, &before)
				if before.Name != s.name || before.Version != s.version {
					t.Errorf("%s: response %s, want name %s version %d", s.what, env.Data, s.name, s.version)
				}
			}
			expect(s.what, s.name, s.typ, s.value, s.version)
		}

		// Nothing to update is a bad request.
		status, _, env := c.do("PUT", path("n"), "", alice)
		wantError(t, "PUT with nothing", status, env, http.StatusBadRequest, "INVALID_REQUEST", "")

		// An update moves updated_at and keeps created_at.
		var before, after recordJSON
		c.mustDo("GET", path("n"), "", alice, http.StatusOK).decode(t, &before)
		time.Sleep(2 * time.Millisecond)
		c.mustDo("PUT", path("n")+"?type=STRING&value=x", "", alice, http.StatusOK).decode(t, &after)
		if after.CreatedAt != before.CreatedAt || after.UpdatedAt <= before.UpdatedAt || after.ID != before.ID {
			t.Errorf("update: before %+v, after %+v", before, after)
		}

		var list listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &list)
		var names []string
		for _, r := range list.Items {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, []string{"a", "c", "ca", "n", "s6"}) {
			t.Errorf("records after the updates: %v", names)
		}
	})
}

func TestRecordByID(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.mustDo("POST", pathK("web", "prod", "k2"), "", alice, http.StatusCreated)
		K := pathK("web", "prod", "k")
		byID := func(id string) string { return K + "/records/" + id }
		r1 := c.addRecord(alice, K, "r1", "STRING", `"one"`)
		r2 := c.addRecord(alice, K, "r2", "STRING", `"two"`)

		var got recordJSON
		c.mustDo("GET", byID(r1.ID), "", alice, http.StatusOK).decode(t, &got)
		if got.Name != "r1" || got.ID != r1.ID {
			t.Errorf("GET by id: %+v", got)
		}
		c.mustDo("PUT", byID(r1.ID)+"?value=uno", "", alice, http.StatusOK).decode(t, &got)
		if got.Name != "r1" || string(got.Value) != `"uno"` || got.Version != 2 {
			t.Errorf("PUT by id: %+v", got)
		}
		c.mustDo("PUT", byID(r1.ID), `{"name":"first"}`, alice, http.StatusOK).decode(t, &got)
		if got.Name != "first" || got.ID != r1.ID || got.Version != 3 {
			t.Errorf("rename by id: %+v", got)
		}
		c.mustDo("GET", byID(r1.ID), "", alice, http.StatusOK)
		c.mustDo("GET", pathR("web", "prod", "k", "first"), "", alice, http.StatusOK)

		// An id of a record in another cluster is not found here.
		r3 := c.addRecord(alice, pathK("web", "prod", "k2"), "r3", "NULL", "null")
		status, _, env := c.do("GET", byID(r3.ID), "", alice)
		wantError(t, "GET a record of another cluster by id", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")

		// A name that looks like a UUID but is no record's id is a name.
		const uuidName = "0190a5b4-c0de-7abc-8def-0123456789ab"
		c.mustDo("POST", byID(uuidName)+"?type=STRING&value=named", "", alice, http.StatusCreated)
		c.mustDo("GET", byID(uuidName), "", alice, http.StatusOK).decode(t, &got)
		if got.Name != uuidName || string(got.Value) != `"named"` {
			t.Errorf("record named like a UUID: %+v", got)
		}
		// POST R where R is a record's id (in any case) names that
		// record, which exists: 409, in both forms, and nothing is created.
		for _, seg := range []string{r2.ID, strings.ToUpper(r2.ID)} {
			status, _, env = c.do("POST", byID(seg)+"?type=STRING&value=impostor", "", alice)
			wantError(t, "POST R with an existing record's id", status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
			status, _, env = c.do("POST", byID(seg), `{"type":"STRING","value":"impostor"}`, alice)
			wantError(t, "POST R (body) with an existing record's id", status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
		}
		c.mustDo("GET", byID(strings.ToUpper(r2.ID)), "", alice, http.StatusOK).decode(t, &got)
		if got.ID != r2.ID || got.Name != "r2" || string(got.Value) != `"two"` {
			t.Errorf("GET by the upper-case id returned %+v, want r2 unchanged", got)
		}
		// Renaming onto a record's id is taken as well.
		status, _, env = c.do("PUT", pathR("web", "prod", "k", uuidName)+"?rename="+r2.ID, "", alice)
		wantError(t, "rename onto another record's id", status, env, http.StatusConflict, "RESOURCE_EXISTS", "")

		c.mustDo("DELETE", byID(r1.ID), "", alice, http.StatusNoContent)
		for _, target := range []string{byID(r1.ID), pathR("web", "prod", "k", "first")} {
			status, _, env := c.do("GET", target, "", alice)
			wantError(t, "GET after DELETE by id", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		}
	})
}

// ---------------------------------------------------------------------
// Section 3: credentials.

func TestCredentials(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		const mask = `"********"`
		c.addRecord(alice, K, "plain", "STRING", `"visible"`)

		// value returns the record's value (compact) after a request that
		// must succeed with status.
		value := func(what, method, target, body string, status int) string {
			t.Helper()
			env := c.mustDo(method, target, body, alice, status)
			if !strings.Contains(target, "reveal=true") {
				if strings.Contains(string(env.raw), "s3cr3t") {
					t.Errorf("%s: the secret appears in a masked response: %s", what, env.raw)
				}
			}
			var r recordJSON
			env.decode(t, &r)
			return compact(t, r.Value)
		}
		tests := []struct {
			what, method, target, body string
			status                     int
			want                       string
		}{
			{"create (query)", "POST", R("pw") + "?type=CREDENTIAL&value=s3cr3t-1", "", 201, mask},
			{"create (body, lower case type)", "POST", K + "/records", `{"name":"pw2","type":"credential","value":"s3cr3t-2"}`, 201, mask},
			{"create with reveal=true", "POST", R("pw3") + "?type=CREDENTIAL&value=s3cr3t-3&reveal=true", "", 201, `"s3cr3t-3"`},
			{"create array", "POST", K + "/records", `{"name":"arr","type":"[]CREDENTIAL","value":["s3cr3t-a","s3cr3t-b"]}`, 201, `["********","********"]`},
			{"create array with reveal=true", "POST", K + "/records?reveal=true", `{"name":"arr2","type":"[]credential","value":["s3cr3t-c"]}`, 201, `["s3cr3t-c"]`},
			{"create empty array", "POST", R("arr3") + "?type=[]CREDENTIAL&value=[]", "", 201, `[]`},
			{"get", "GET", R("pw"), "", 200, mask},
			{"get reveal=false", "GET", R("pw") + "?reveal=false", "", 200, mask},
			{"get reveal=true", "GET", R("pw") + "?reveal=true", "", 200, `"s3cr3t-1"`},
			{"get array", "GET", R("arr"), "", 200, `["********","********"]`},
			{"get array reveal=true", "GET", R("arr") + "?reveal=true", "", 200, `["s3cr3t-a","s3cr3t-b"]`},
			{"update value", "PUT", R("pw") + "?value=s3cr3t-new", "", 200, mask},
			{"read the update", "GET", R("pw") + "?reveal=true", "", 200, `"s3cr3t-new"`},
			{"update with reveal=true", "PUT", R("pw2") + "?reveal=true", `{"value":"s3cr3t-newer"}`, 200, `"s3cr3t-newer"`},
			{"rename keeps the secret", "PUT", R("pw3") + "?rename=pw4", "", 200, mask},
			{"read the renamed", "GET", R("pw4") + "?reveal=true", "", 200, `"s3cr3t-3"`},
			{"STRING to CREDENTIAL with a value", "PUT", R("plain2") + "?type=CREDENTIAL&value=s3cr3t-x", "", 200, mask},
			{"STRING to CREDENTIAL, read back", "GET", R("plain2") + "?reveal=true", "", 200, `"s3cr3t-x"`},
		}
		c.addRecord(alice, K, "plain2", "STRING", `"x"`)
		for _, tt := range tests {
			if got := value(tt.what, tt.method, tt.target, tt.body, tt.status); got != tt.want {
				t.Errorf("%s: value %s, want %s", tt.what, got, tt.want)
			}
		}

		// Lists and cluster data.
		env := c.mustDo("GET", K+"/records", "", alice, http.StatusOK)
		if strings.Contains(string(env.raw), "s3cr3t") {
			t.Errorf("record list leaks a secret: %s", env.raw)
		}
		var list listJSON[recordJSON]
		env.decode(t, &list)
		for _, r := range list.Items {
			switch r.Type {
			case "CREDENTIAL":
				if string(r.Value) != mask {
					t.Errorf("record list: %s = %s, want masked", r.Name, r.Value)
				}
			case "[]CREDENTIAL":
				if !regexp.MustCompile(`^\[("\*{8}"(,"\*{8}")*)?\]$`).Match(r.Value) {
					t.Errorf("record list: %s = %s, want each element masked", r.Name, r.Value)
				}
			}
		}
		env = c.mustDo("GET", K+"/records?reveal=true", "", alice, http.StatusOK)
		for _, s := range []string{"s3cr3t-new", "s3cr3t-newer", "s3cr3t-a", "s3cr3t-c", "s3cr3t-x"} {
			if !strings.Contains(string(env.raw), s) {
				t.Errorf("record list with reveal=true lacks %s: %s", s, env.raw)
			}
		}
		env = c.mustDo("GET", K, "", alice, http.StatusOK)
		if strings.Contains(string(env.raw), "s3cr3t") {
			t.Errorf("cluster data leaks a secret: %s", env.raw)
		}
		var k clusterJSON
		env.decode(t, &k)
		if string(k.Data["pw"]) != mask || compact(t, k.Data["arr"]) != `["********","********"]` || string(k.Data["plain"]) != `"visible"` {
			t.Errorf("cluster data: %s", env.Data)
		}
		c.mustDo("GET", K+"?reveal=true", "", alice, http.StatusOK).decode(t, &k)
		if string(k.Data["pw"]) != `"s3cr3t-new"` || compact(t, k.Data["arr"]) != `["s3cr3t-a","s3cr3t-b"]` {
			t.Errorf("cluster data with reveal=true: %v", k.Data)
		}

		// reveal takes true or false only.
		for _, v := range []string{"yes", "1", "TRUE", "True", "", "no"} {
			for _, req := range []struct{ method, target, body string }{
				{"GET", R("pw"), ""},
				{"GET", K, ""},
				{"GET", K + "/records", ""},
				{"PUT", R("pw"), `{"value":"s3cr3t-zzz"}`},
				{"POST", R("never"), `{"type":"STRING","value":"x"}`},
			} {
				target := req.target + "?reveal=" + v
				status, _, env := c.do(req.method, target, req.body, alice)
				wantError(t, req.method+" "+target, status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
			}
		}
		status, _, _ := c.do("GET", R("never"), "", alice)
		if status != http.StatusNotFound {
			t.Errorf("a create with a bad reveal created the record: %d", status)
		}
		if got := value("after the bad reveals", "GET", R("pw")+"?reveal=true", "", 200); got != `"s3cr3t-new"` {
			t.Errorf("a PUT with a bad reveal changed the secret: %s", got)
		}

		// Never matched by value filters.
		for _, q := range []string{"value=s3cr3t-new", "valueContains=s3cr3t", "valueContains=S3CR3T", "valueContains=**", "value=********", `value="s3cr3t-new"`, "valueContains=hds"} {
			var l listJSON[recordJSON]
			c.mustDo("GET", K+"/records?"+q, "", alice, http.StatusOK).decode(t, &l)
			if l.Total != 0 {
				t.Errorf("?%s matched %d records: %+v", q, l.Total, l.Items)
			}
		}
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records?type=credential", "", alice, http.StatusOK).decode(t, &l)
		if l.Total != 4 { // pw, pw2, pw4, plain2
			t.Errorf("?type=credential: total %d, want 4", l.Total)
		}
	})
}

func TestCredentialsWithoutKey(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		c.addRecord(alice, K, "s", "STRING", `"plain"`)
		tests := []struct{ what, method, target, body string }{
			{"create (query)", "POST", R("c1") + "?type=CREDENTIAL&value=x", ""},
			{"create (body)", "POST", K + "/records", `{"name":"c2","type":"CREDENTIAL","value":"x"}`},
			{"create (POST R body)", "POST", R("c3"), `{"type":"credential","value":"x"}`},
			{"create array (query)", "POST", R("c4") + "?type=[]CREDENTIAL&value=[%22x%22]", ""},
			{"create array (body)", "POST", K + "/records", `{"name":"c5","type":"[]CREDENTIAL","value":["x"]}`},
			{"create empty array", "POST", K + "/records", `{"name":"c6","type":"[]CREDENTIAL","value":[]}`},
			{"type change alone", "PUT", R("s") + "?type=CREDENTIAL", ""},
			{"type change with a value", "PUT", R("s") + "?type=CREDENTIAL&value=x", ""},
			{"type change with a value (body)", "PUT", R("s"), `{"type":"[]CREDENTIAL","value":["x"]}`},
		}
		for _, tt := range tests {
			status, _, env := c.do(tt.method, tt.target, tt.body, alice)
			wantError(t, "without a credential key: "+tt.what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			if !strings.Contains(strings.ToLower(env.details()), "no credential key") {
				t.Errorf("without a credential key: %s: details %q do not say that no credential key is configured", tt.what, env.details())
			}
		}
		var r recordJSON
		c.mustDo("GET", R("s"), "", alice, http.StatusOK).decode(t, &r)
		if r.Type != "STRING" || string(r.Value) != `"plain"` || r.Version != 1 {
			t.Errorf("the STRING record changed: %+v", r)
		}
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &l)
		if l.Total != 1 {
			t.Errorf("credential records were stored: %+v", l.Items)
		}
	})
}

func TestCredentialsSealedAtRest(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		oldKey, newKey := testKey, []byte(strings.Repeat("N", 32))
		c := newServer(t, kind, hds.WithCredentialKey(oldKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		at := func(name string) store.Path {
			return store.Path{Project: "web", Collection: "prod", Cluster: "k", Record: name}
		}
		c.addRecord(alice, K, "one", "CREDENTIAL", `"plain-marker-1"`)
		c.addRecord(alice, K, "many", "[]CREDENTIAL", `["plain-marker-2","plain-marker-3"]`)
		c.addRecord(alice, K, "two", "CREDENTIAL", `"plain-marker-4"`)

		// The store never sees the plain text.
		for _, name := range []string{"one", "many", "two"} {
			r, err := c.store.FindRecord(t.Context(), at(name))
			if err != nil {
				t.Fatalf("store: find %s: %v", name, err)
			}
			if strings.Contains(string(r.Value), "plain-marker") {
				t.Errorf("the store holds the plain text of %s: %s", name, r.Value)
			}
		}
		recs, _, err := c.store.FindRecords(t.Context(), at(""), store.RecordQuery{ListQuery: store.NewListQuery()})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if strings.Contains(string(r.Value), "plain-marker") {
				t.Errorf("the store lists the plain text of %s: %s", r.Name, r.Value)
			}
		}

		// A sealed value moved to another record does not open there.
		one, err := c.store.FindRecord(t.Context(), at("one"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.store.UpdateRecord(t.Context(), at("two"), store.Write{}, func(r *store.Record) error {
			r.Value = one.Value
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		r := request("GET", R("two")+"?reveal=true", "", alice)
		status, _, env := c.send(r)
		if status == http.StatusOK || strings.Contains(string(env.raw), "plain-marker-1") {
			t.Errorf("a sealed value moved to another record opened: %d %s", status, env.raw)
		}
		c.mustDo("GET", R("two"), "", alice, http.StatusOK) // masked, no need to open

		// Keys rotate: a new primary key with the old one still opens.
		rotated := c.attach(hds.WithCredentialKey(newKey, oldKey))
		var got recordJSON
		rotated.mustDo("GET", R("one")+"?reveal=true", "", alice, http.StatusOK).decode(t, &got)
		if string(got.Value) != `"plain-marker-1"` {
			t.Errorf("after rotation: %s, want the plain text", got.Value)
		}
		rotated.mustDo("GET", R("many")+"?reveal=true", "", alice, http.StatusOK).decode(t, &got)
		if compact(t, got.Value) != `["plain-marker-2","plain-marker-3"]` {
			t.Errorf("after rotation: %s, want the plain text", got.Value)
		}
		rotated.addRecord(alice, K, "three", "CREDENTIAL", `"plain-marker-5"`)
		// Only the key that sealed a value (or a ring holding it) opens it.
		newOnly := c.attach(hds.WithCredentialKey(newKey))
		newOnly.mustDo("GET", R("three")+"?reveal=true", "", alice, http.StatusOK)
		status, _, env = newOnly.send(request("GET", R("one")+"?reveal=true", "", alice))
		if status == http.StatusOK || strings.Contains(string(env.raw), "plain-marker-1") {
			t.Errorf("a value sealed by a key not in the ring opened: %d %s", status, env.raw)
		}
		status, _, env = c.send(request("GET", R("three")+"?reveal=true", "", alice))
		if status == http.StatusOK || strings.Contains(string(env.raw), "plain-marker-5") {
			t.Errorf("a value sealed by the new key opened with the old ring: %d %s", status, env.raw)
		}
	})
}

// ---------------------------------------------------------------------
// Section 5: list queries.

// names lists the names of a page of items.
func names[T any](items []T, name func(T) string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func reversed[T any](s []T) []T {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

func recordNames(l listJSON[recordJSON]) []string {
	return names(l.Items, func(r recordJSON) string { return r.Name })
}

func TestListParameters(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		for i := range 3 {
			c.addRecord(alice, K, fmt.Sprintf("r%d", i), "INTEGER", fmt.Sprint(i))
		}
		lists := []struct {
			name, path string
			records    bool
		}{
			{"projects", "/api/v1/projects", false},
			{"collections", pathP("web") + "/collections", false},
			{"clusters", pathC("web", "prod") + "/clusters", false},
			{"records", K + "/records", true},
		}
		bad := []struct {
			query   string
			code    string
			records bool // only on record lists
		}{
			{"limit=0", "INVALID_REQUEST", false},
			{"limit=1001", "INVALID_REQUEST", false},
			{"limit=abc", "INVALID_REQUEST", false},
			{"limit=1e3", "INVALID_REQUEST", false},
			{"limit=1.5", "INVALID_REQUEST", false},
			{"limit=%2B5", "INVALID_REQUEST", false},
			{"limit=+5", "INVALID_REQUEST", false},
			{"limit=-1", "INVALID_REQUEST", false},
			{"limit=", "INVALID_REQUEST", false},
			{"limit=%205", "INVALID_REQUEST", false},
			{"limit=0x10", "INVALID_REQUEST", false},
			{"limit=99999999999999999999", "INVALID_REQUEST", false},
			{"offset=-1", "INVALID_REQUEST", false},
			{"offset=abc", "INVALID_REQUEST", false},
			{"offset=1.5", "INVALID_REQUEST", false},
			{"offset=%2B1", "INVALID_REQUEST", false},
			{"offset=1e3", "INVALID_REQUEST", false},
			{"sortBy=password", "INVALID_REQUEST", false},
			{"sortBy=", "INVALID_REQUEST", false},
			{"sortOrder=up", "INVALID_REQUEST", false},
			{"sortOrder=", "INVALID_REQUEST", false},
			{"search=a%00b", "INVALID_REQUEST", false},
			{"limit=5&sortOrder=sideways", "INVALID_REQUEST", false},
			{"value=a%00b", "INVALID_REQUEST", true},
			{"valueContains=%00", "INVALID_REQUEST", true},
			{"type=FOO", "VALIDATION_ERROR", true},
			{"type=", "VALIDATION_ERROR", true},
			{"reveal=yes", "INVALID_REQUEST", true},
		}
		for _, l := range lists {
			for _, b := range bad {
				if b.records && !l.records {
					continue
				}
				status, _, env := c.do("GET", l.path+"?"+b.query, "", alice)
				wantError(t, l.name+"?"+b.query, status, env, http.StatusBadRequest, b.code, "")
				if b.query == "type=FOO" {
					wantDetails(t, l.name+"?"+b.query, env, allTypes...)
				}
			}
			if !l.records {
				for _, q := range []string{"sortBy=value", "sortBy=type"} {
					status, _, env := c.do("GET", l.path+"?"+q, "", alice)
					wantError(t, l.name+"?"+q, status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
				}
			}

			good := []struct {
				query         string
				limit, offset int
			}{
				{"", 100, 0},
				{"limit=1", 1, 0},
				{"limit=1000", 1000, 0},
				{"offset=0", 100, 0},
				{"offset=2", 100, 2},
				{"offset=500", 100, 500},
				{"limit=2&offset=1", 2, 1},
				{"sortOrder=asc", 100, 0},
				{"sortOrder=desc", 100, 0},
				{"sortBy=name", 100, 0},
				{"sortBy=id&sortOrder=desc", 100, 0},
				{"sortBy=created_at", 100, 0},
				{"sortBy=updated_at", 100, 0},
				{"search=", 100, 0},
				{"foo=bar&unknown=%00", 100, 0},
				{"page=2&per_page=abc", 100, 0},
			}
			if l.records {
				good = append(good, []struct {
					query         string
					limit, offset int
				}{
					{"sortBy=value", 100, 0}, {"sortBy=type&sortOrder=desc", 100, 0},
					{"type=int", 100, 0}, {"type=%5B%5Dstring", 100, 0}, {"type=[]STR", 100, 0},
					{"reveal=true", 100, 0}, {"reveal=false", 100, 0}, {"value=", 100, 0}, {"valueContains=", 100, 0},
				}...)
			}
			for _, g := range good {
				status, _, env := c.do("GET", l.path+"?"+g.query, "", alice)
				what := l.name + "?" + g.query
				if status != http.StatusOK {
					t.Errorf("%s: status %d, want 200: %s", what, status, env.raw)
					continue
				}
				wantFields(t, what, env.Data, "items", "total", "limit", "offset")
				var page struct {
					Items  []json.RawMessage `json:"items"`
					Total  int               `json:"total"`
					Limit  int               `json:"limit"`
					Offset int               `json:"offset"`
				}
				env.decode(t, &page)
				if page.Items == nil {
					t.Errorf("%s: items is not an array: %s", what, env.Data)
				}
				if page.Limit != g.limit || page.Offset != g.offset {
					t.Errorf("%s: limit %d offset %d, want %d %d", what, page.Limit, page.Offset, g.limit, g.offset)
				}
				if page.Total < len(page.Items) || len(page.Items) > page.Limit {
					t.Errorf("%s: total %d, %d items, limit %d", what, page.Total, len(page.Items), page.Limit)
				}
			}
		}
		// Paging: total counts every match, the window is cut after.
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records?limit=2&offset=1", "", alice, http.StatusOK).decode(t, &l)
		if l.Total != 3 || !slices.Equal(recordNames(l), []string{"r1", "r2"}) {
			t.Errorf("limit=2&offset=1: %+v", l)
		}
		c.mustDo("GET", K+"/records?offset=3", "", alice, http.StatusOK).decode(t, &l)
		if l.Total != 3 || len(l.Items) != 0 {
			t.Errorf("offset=3: %+v", l)
		}
	})
}

func TestListOrderAndSearch(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		all := []string{
			"b", "B", "a", "Z", "_x", "10", "9", "é", "ÄRGER", "ärgerlich",
			"Alpha", "alphabet", "ALPHA-2", "100%", "1000", "a_b", "axb", `a\b`, "ab", "Straße",
		}
		for _, n := range all {
			c.mustDo("POST", pathP(n), "", alice, http.StatusCreated)
		}
		c.mustDo("POST", pathP("bob-alpha"), "", c.token("bob"), http.StatusCreated)
		byteWise := slices.Sorted(slices.Values(all)) // Go compares strings byte-wise
		list := func(query string) (listJSON[projectJSON], []string) {
			t.Helper()
			var l listJSON[projectJSON]
			c.mustDo("GET", "/api/v1/projects?"+query, "", alice, http.StatusOK).decode(t, &l)
			return l, names(l.Items, func(p projectJSON) string { return p.Name })
		}
		if _, got := list(""); !slices.Equal(got, byteWise) {
			t.Errorf("default order:\n got %q\nwant %q (byte-wise)", got, byteWise)
		}
		if _, got := list("sortBy=name&sortOrder=desc"); !slices.Equal(got, reversed(byteWise)) {
			t.Errorf("name desc:\n got %q\nwant %q", got, reversed(byteWise))
		}
		l, _ := list("sortBy=created_at")
		if !slices.IsSortedFunc(l.Items, func(a, b projectJSON) int { return strings.Compare(a.CreatedAt, b.CreatedAt) }) {
			t.Errorf("sortBy=created_at is not in created_at order")
		}
		if _, got := list("sortBy=id"); !slices.Equal(got, all) {
			t.Errorf("sortBy=id (UUIDv7, creation order):\n got %q\nwant %q", got, all)
		}
		if _, got := list("sortBy=id&sortOrder=desc"); !slices.Equal(got, reversed(all)) {
			t.Errorf("sortBy=id desc:\n got %q", got)
		}

		searches := []struct {
			search string
			want   []string
		}{
			{"alpha", []string{"ALPHA-2", "Alpha", "alphabet"}},
			{"ALPHA", []string{"ALPHA-2", "Alpha", "alphabet"}},
			{"ärger", []string{"ÄRGER", "ärgerlich"}},
			{"ÄRGER", []string{"ÄRGER", "ärgerlich"}},
			{"É", []string{"é"}},
			{"straße", []string{"Straße"}},
			{"%", []string{"100%"}},
			{"_", []string{"_x", "a_b"}},
			{"a_b", []string{"a_b"}},
			{`\`, []string{`a\b`}},
			{`a\b`, []string{`a\b`}},
			{"100", []string{"100%", "1000"}},
			{"nothing-like-this", []string{}},
		}
		for _, s := range searches {
			l, got := list("search=" + url.QueryEscape(s.search))
			if !slices.Equal(got, s.want) || l.Total != len(s.want) {
				t.Errorf("search=%s: %q (total %d), want %q", s.search, got, l.Total, s.want)
			}
		}
		l, got := list("search=a&limit=2&offset=1&sortOrder=desc")
		var want []string
		for _, n := range reversed(byteWise) {
			if strings.Contains(strings.ToLower(n), "a") {
				want = append(want, n)
			}
		}
		if l.Total != len(want) || !slices.Equal(got, want[1:3]) {
			t.Errorf("search=a&limit=2&offset=1&sortOrder=desc: %q total %d, want %q total %d", got, l.Total, want[1:3], len(want))
		}

		// The other lists search and sort the same way.
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		for _, n := range []string{"Key1", "key2", "other"} {
			c.mustDo("POST", pathC("web", n), "", alice, http.StatusCreated)
		}
		var cols listJSON[collectionJSON]
		c.mustDo("GET", pathP("web")+"/collections?search=KEY", "", alice, http.StatusOK).decode(t, &cols)
		if got := names(cols.Items, func(c collectionJSON) string { return c.Name }); !slices.Equal(got, []string{"Key1", "key2"}) {
			t.Errorf("collections search=KEY: %q", got)
		}
		for _, n := range []string{"k_1", "k%1", "kx1"} {
			c.mustDo("POST", pathK("web", "other", n), "", alice, http.StatusCreated)
		}
		var ks listJSON[clusterJSON]
		c.mustDo("GET", pathC("web", "other")+"/clusters?search=_&sortOrder=desc", "", alice, http.StatusOK).decode(t, &ks)
		if got := names(ks.Items, func(k clusterJSON) string { return k.Name }); !slices.Equal(got, []string{"k_1"}) {
			t.Errorf("clusters search=_: %q", got)
		}
		c.mustDo("GET", pathC("web", "other")+"/clusters?sortOrder=desc", "", alice, http.StatusOK).decode(t, &ks)
		if got := names(ks.Items, func(k clusterJSON) string { return k.Name }); !slices.Equal(got, []string{"kx1", "k_1", "k%1"}) {
			t.Errorf("clusters desc: %q", got)
		}
	})
}

func TestListSortByValue(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		records := []struct{ name, typ, value string }{
			{"i1", "INTEGER", `10`},
			{"i2", "INTEGER", `-5`},
			{"i3", "INTEGER", `9007199254740993`},
			{"f1", "FLOAT", `2.5`},
			{"f2", "FLOAT", `10`},
			{"f3", "FLOAT", `9007199254740992`},
			{"s1", "STRING", `"apple"`},
			{"s2", "STRING", `""`},
			{"s3", "STRING", `"Banana"`},
			{"an", "[]NULL", `[null]`},
			{"b", "BOOLEAN", `true`},
			{"n", "NULL", `null`},
			{"c", "CREDENTIAL", `"aaa"`},
			{"ca", "[]CREDENTIAL", `["a"]`},
		}
		for _, r := range records {
			c.addRecord(alice, K, r.name, r.typ, r.value)
		}
		order := func(query string) []string {
			t.Helper()
			var l listJSON[recordJSON]
			c.mustDo("GET", K+"/records?"+query, "", alice, http.StatusOK).decode(t, &l)
			return recordNames(l)
		}
		// Numbers by value (ties by name), then canonical texts byte-wise
		// ("" < "Banana" < "[null]" < "apple" < "true"), then NULL and
		// credentials (ties by name).
		asc := []string{"i2", "f1", "f2", "i1", "f3", "i3", "s2", "s3", "an", "s1", "b", "c", "ca", "n"}
		desc := []string{"c", "ca", "n", "b", "s1", "an", "s3", "s2", "i3", "f3", "f2", "i1", "f1", "i2"}
		if got := order("sortBy=value"); !slices.Equal(got, asc) {
			t.Errorf("sortBy=value:\n got %q\nwant %q", got, asc)
		}
		if got := order("sortBy=value&sortOrder=asc"); !slices.Equal(got, asc) {
			t.Errorf("sortBy=value&sortOrder=asc:\n got %q\nwant %q", got, asc)
		}
		if got := order("sortBy=value&sortOrder=desc"); !slices.Equal(got, desc) {
			t.Errorf("sortBy=value&sortOrder=desc:\n got %q\nwant %q", got, desc)
		}
		byType := slices.Clone(records)
		slices.SortFunc(byType, func(a, b struct{ name, typ, value string }) int {
			if c := strings.Compare(a.typ, b.typ); c != 0 {
				return c
			}
			return strings.Compare(a.name, b.name)
		})
		wantType := names(byType, func(r struct{ name, typ, value string }) string { return r.name })
		if got := order("sortBy=type"); !slices.Equal(got, wantType) {
			t.Errorf("sortBy=type:\n got %q\nwant %q", got, wantType)
		}
		slices.SortStableFunc(byType, func(a, b struct{ name, typ, value string }) int { return strings.Compare(b.typ, a.typ) })
		wantType = names(byType, func(r struct{ name, typ, value string }) string { return r.name })
		if got := order("sortBy=type&sortOrder=desc"); !slices.Equal(got, wantType) {
			t.Errorf("sortBy=type&sortOrder=desc (ties by name ascending):\n got %q\nwant %q", got, wantType)
		}
		if got := order("sortBy=value&type=STRING&sortOrder=desc"); !slices.Equal(got, []string{"s1", "s3", "s2"}) {
			t.Errorf("sortBy=value&type=STRING desc: %q", got)
		}
	})
}

func TestListPaging(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		const n = 25
		for i := range n {
			j := i * 7 % n // creation order differs from name order
			typ, value := "INTEGER", fmt.Sprint(j%3)
			if j%5 == 0 {
				typ, value = "STRING", `"same"`
			}
			c.addRecord(alice, K, fmt.Sprintf("r%02d", j), typ, value)
		}
		for _, sortBy := range []string{"name", "value", "type", "id", "created_at", "updated_at"} {
			for _, order := range []string{"asc", "desc"} {
				base := "sortBy=" + sortBy + "&sortOrder=" + order
				var full listJSON[recordJSON]
				c.mustDo("GET", K+"/records?limit=1000&"+base, "", alice, http.StatusOK).decode(t, &full)
				want := recordNames(full)
				var got []string
				for offset := 0; offset < n+7; offset += 7 {
					var page listJSON[recordJSON]
					c.mustDo("GET", fmt.Sprintf("%s/records?limit=7&offset=%d&%s", K, offset, base), "", alice, http.StatusOK).decode(t, &page)
					if page.Total != n || page.Limit != 7 || page.Offset != offset {
						t.Errorf("%s offset %d: total %d limit %d offset %d", base, offset, page.Total, page.Limit, page.Offset)
					}
					got = append(got, recordNames(page)...)
				}
				if len(want) != n || !slices.Equal(got, want) {
					t.Errorf("%s: pages of 7 give %q, want %q", base, got, want)
				}
				if uniq := slices.Compact(slices.Sorted(slices.Values(got))); len(uniq) != n {
					t.Errorf("%s: pages overlap or skip: %q", base, got)
				}
			}
		}
	})
}

func TestRecordFilters(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		for _, r := range []struct{ name, typ, value string }{
			{"i10", "INTEGER", `10`},
			{"f10", "FLOAT", `10.0`},
			{"s10", "STRING", `"10"`},
			{"f21", "FLOAT", `1e21`},
			{"bool", "BOOLEAN", `true`},
			{"strue", "STRING", `"true"`},
			{"nul", "NULL", `null`},
			{"snull", "STRING", `"null"`},
			{"uuid", "UUID", `"0190A5B4-C0DE-7ABC-8DEF-0123456789AB"`},
			{"arr", "[]STRING", `["a", "b"]`},
			{"pct", "STRING", `"100%"`},
			{"pct2", "STRING", `"1000"`},
			{"und", "STRING", `"a_b"`},
			{"und2", "STRING", `"axb"`},
			{"bs", "STRING", `"a\\b"`},
			{"hello", "STRING", `"Hello World"`},
			{"dt", "DATETIME", `"2026-11-22T09:18:19.500+01:00"`},
			{"empty", "STRING", `""`},
			{"umlaut", "STRING", `"ÄRGER"`},
		} {
			c.addRecord(alice, K, r.name, r.typ, r.value)
		}
		tests := []struct {
			query string
			want  []string // in name order
		}{
			{"value=10", []string{"f10", "i10", "s10"}},
			{"value=10.0", []string{}},
			{"value=1e%2B21", []string{"f21"}},
			{"value=1e21", []string{}},
			{"value=true", []string{"bool", "strue"}},
			{"value=null", []string{"nul", "snull"}},
			{"value=0190A5B4-C0DE-7ABC-8DEF-0123456789AB", []string{}},
			{"value=0190a5b4-c0de-7abc-8def-0123456789ab", []string{"uuid"}},
			{"value=" + url.QueryEscape(`["a","b"]`), []string{"arr"}},
			{"value=hello%20world", []string{}},
			{"value=Hello%20World", []string{"hello"}},
			{"value=", []string{"empty"}},
			{"value=2026-11-22T09:18:19.500%2B01:00", []string{"dt"}},
			{"valueContains=HELLO", []string{"hello"}},
			{"valueContains=ärger", []string{"umlaut"}},
			{"valueContains=%25", []string{"pct"}},
			{"valueContains=_", []string{"und"}},
			{"valueContains=%5C", []string{"bs"}},
			{"valueContains=%2B01:00", []string{"dt"}},
			{"valueContains=%22a%22", []string{"arr"}},
			{"valueContains=e%2B2", []string{"f21"}},
			{"type=STRING&valueContains=10", []string{"pct", "pct2", "s10"}},
			{"type=INTEGER&value=10", []string{"i10"}},
			{"type=flt&value=10", []string{"f10"}},
			{"type=%5B%5DSTRING", []string{"arr"}},
			{"type=[]str", []string{"arr"}},
			{"type=null", []string{"nul"}},
			{"search=10&value=10", []string{"f10", "i10", "s10"}},
			{"search=F&value=10", []string{"f10"}},
			{"search=s&valueContains=u&type=string", []string{"strue", "snull"}},
			{"type=BOOLEAN&value=false", []string{}},
		}
		for _, tt := range tests {
			var l listJSON[recordJSON]
			c.mustDo("GET", K+"/records?"+tt.query, "", alice, http.StatusOK).decode(t, &l)
			want := slices.Sorted(slices.Values(tt.want))
			if got := recordNames(l); !slices.Equal(got, want) || l.Total != len(want) {
				t.Errorf("?%s: %q (total %d), want %q", tt.query, got, l.Total, want)
			}
		}
	})
}

// ---------------------------------------------------------------------
// Section 1: routing.

func TestUnknownRoutes(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		for _, target := range []string{
			"/api/v1/nothing",
			"/api/v1",
			"/api/v2/projects",
			"/api/v1/project",
			"/api/v1/auth",
			"/api/v1/auth/unknown",
			"/api/v1/projects/web/unknown",
			"/api/v1/projects/web/collections/prod/unknown",
			"/api/v1/projects/web/collections/prod/clusters/k/records/r/extra",
			"/api/v1/projects/web/collections/prod/clusters/k/data",
			"/nothing",
			"/",
		} {
			for _, token := range []string{"", alice, "notajwt"} {
				for _, method := range []string{"GET", "POST"} {
					status, _, env := c.do(method, target, "", token)
					wantError(t, fmt.Sprintf("%s %s (token: %v)", method, target, token != ""), status, env,
						http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
				}
			}
		}
	})
}

func TestMethodNotAllowed(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		P, C, K, R := pathP("web"), pathC("web", "prod"), pathK("web", "prod", "k"), pathR("web", "prod", "k", "r")
		tests := []struct {
			method, target string
			allow          []string
		}{
			{"DELETE", "/api/v1/projects", []string{"GET", "POST"}},
			{"PUT", "/api/v1/projects", []string{"GET", "POST"}},
			{"PATCH", P, []string{"GET", "POST", "PUT", "DELETE"}},
			{"PATCH", C, []string{"GET", "POST", "PUT", "DELETE"}},
			{"PATCH", K, []string{"GET", "POST", "PUT", "DELETE"}},
			{"PATCH", R, []string{"GET", "POST", "PUT", "DELETE"}},
			{"PUT", P + "/collections", []string{"GET", "POST"}},
			{"DELETE", C + "/clusters", []string{"GET", "POST"}},
			{"PUT", K + "/records", []string{"GET", "POST"}},
			{"DELETE", K + "/records", []string{"GET", "POST"}},
			{"GET", "/api/v1/auth/login", []string{"POST"}},
			{"DELETE", "/api/v1/auth/login", []string{"POST"}},
			{"GET", "/api/v1/auth/refresh", []string{"POST"}},
			{"POST", "/health", []string{"GET"}},
			{"DELETE", "/health", []string{"GET"}},
		}
		known := []string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"}
		for _, tt := range tests {
			for _, token := range []string{"", alice, "notajwt"} {
				status, h, env := c.do(tt.method, tt.target, "", token)
				what := fmt.Sprintf("%s %s (token: %v)", tt.method, tt.target, token != "")
				wantError(t, what, status, env, http.StatusMethodNotAllowed, "INVALID_REQUEST", "")
				allow := strings.Split(h.Get("Allow"), ", ")
				for _, m := range tt.allow {
					if !slices.Contains(allow, m) {
						t.Errorf("%s: Allow %q lacks %s", what, h.Get("Allow"), m)
					}
				}
				for _, m := range allow {
					if !slices.Contains(known, m) || (m != "HEAD" && m != "OPTIONS" && !slices.Contains(tt.allow, m)) {
						t.Errorf("%s: Allow %q has %s, want %v", what, h.Get("Allow"), m, tt.allow)
					}
				}
			}
		}
	})
}

// nonCanonical are raw paths with an empty, "." or ".." segment.
var nonCanonical = []string{
	"/api/v1/projects/",
	"/api/v1/projects/web/",
	"/api/v1/projects/web/collections/",
	"/api/v1/projects/web/collections/prod/clusters/k/records/r/",
	"/health/",
	"//api/v1/projects",
	"/api/v1//projects",
	"/api/v1/projects//web",
	"/api//v1/projects/web",
	"/api/v1/./projects",
	"/./health",
	"/api/v1/projects/./web",
	"/api/v1/projects/web/..",
	"/api/v1/projects/web/../web",
	"/api/v1/projects/../projects/web",
	"/api/v1/projects/%2e%2e",
	"/api/v1/projects/%2E%2E/projects/web",
	"/api/v1/projects/%2e",
	"/api/v1/projects/.%2e",
	"/api/v1/projects/web/collections/%2e%2e/clusters/k",
	"/api/v1/projects/web/collections/prod/clusters/k/records/%2E",
	"/api/v1/projects/web/collections/prod/clusters/k/records/..",
}

func TestNonCanonicalPaths(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, pathK("web", "prod", "k"), "r", "NULL", "null")

		srv := httptest.NewServer(c.h)
		defer srv.Close()
		noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

		for _, raw := range nonCanonical {
			for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
				// Through the handler, the URL built by hand.
				unescaped, err := url.PathUnescape(raw)
				if err != nil {
					t.Fatal(err)
				}
				r := request(method, "/", "", alice)
				r.URL = &url.URL{Path: unescaped, RawPath: raw}
				r.RequestURI = raw
				status, h, env := c.send(r)
				what := method + " " + raw
				wantError(t, what, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
				if loc := h.Get("Location"); loc != "" {
					t.Errorf("%s: redirected to %s", what, loc)
				}

				// Over the wire.
				req, err := http.NewRequest(method, srv.URL+raw, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+alice)
				res, err := noRedirects.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusNotFound || res.Header.Get("Location") != "" {
					t.Errorf("%s over the wire: %d (Location %q), want 404 and no redirect", what, res.StatusCode, res.Header.Get("Location"))
				}
				if err := checkEnvelope(res.StatusCode, res.Header, body); err != nil {
					t.Errorf("%s over the wire: %v", what, err)
				}
			}
		}
		// The resources are still there.
		c.mustDo("GET", pathR("web", "prod", "k", "r"), "", alice, http.StatusOK)
	})
}

// ---------------------------------------------------------------------
// Section 7: panics and store failures.

// faultyStore misbehaves for some project names.
type faultyStore struct {
	store.Store
	ping error
}

func (s faultyStore) FindProject(ctx context.Context, p store.Path) (*store.Project, error) {
	switch p.Project {
	case "boom":
		panic("kaboom: secret panic detail")
	case "leak":
		return nil, errors.New("secret sql detail")
	case "down":
		return nil, fmt.Errorf("find project: dial tcp 10.0.0.1:5432: %w", store.ErrUnavailable)
	}
	return s.Store.FindProject(ctx, p)
}

func (s faultyStore) FindProjects(ctx context.Context, owner string, q store.ListQuery) ([]*store.Project, int, error) {
	if q.Search == "down" {
		return nil, 0, fmt.Errorf("query: %w", store.ErrUnavailable)
	}
	return s.Store.FindProjects(ctx, owner, q)
}

func (s faultyStore) Ping(ctx context.Context) error {
	if s.ping != nil {
		return s.ping
	}
	return s.Store.Ping(ctx)
}

func TestPanicBecomes500(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServerWrapped(t, kind, func(s store.Store) store.Store { return faultyStore{Store: s} })
		alice := c.token("alice")
		for range 2 {
			status, _, env := c.do("GET", pathP("boom"), "", alice)
			wantError(t, "a panicking store", status, env, http.StatusInternalServerError, "SERVER_ERROR", "")
			if env.details() != "" {
				t.Errorf("500 details %q, want empty", env.details())
			}
			for _, leak := range []string{"kaboom", "secret", "goroutine", ".go:", "panic("} {
				if strings.Contains(string(env.raw), leak) {
					t.Errorf("500 body leaks %q: %s", leak, env.raw)
				}
			}
			// The server keeps serving.
			c.mustDo("GET", "/api/v1/projects", "", alice, http.StatusOK)
			c.mustDo("POST", pathP("fine"), "", alice, http.StatusCreated)
			c.mustDo("DELETE", pathP("fine"), "", alice, http.StatusNoContent)
		}
		// Over the wire, too: the connection survives the panic.
		srv := httptest.NewServer(c.h)
		defer srv.Close()
		for _, target := range []string{pathP("boom"), "/health"} {
			req, _ := http.NewRequest("GET", srv.URL+target, nil)
			req.Header.Set("Authorization", "Bearer "+alice)
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatalf("GET %s over the wire: %v", target, err)
			}
			res.Body.Close()
			if want := map[bool]int{true: 500, false: 200}[target != "/health"]; res.StatusCode != want {
				t.Errorf("GET %s over the wire: %d, want %d", target, res.StatusCode, want)
			}
		}
	})
}

func TestStoreErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServerWrapped(t, kind, func(s store.Store) store.Store { return faultyStore{Store: s} })
		alice := c.token("alice")

		status, _, env := c.do("GET", pathP("leak"), "", alice)
		wantError(t, "a store error", status, env, http.StatusInternalServerError, "SERVER_ERROR", "")
		if env.details() != "" || strings.Contains(string(env.raw), "secret sql detail") || strings.Contains(string(env.raw), "sql") {
			t.Errorf("a store error leaks: %s", env.raw)
		}

		status, _, env = c.do("GET", pathP("down"), "", alice)
		wantError(t, "an unavailable store", status, env, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "")
		if strings.Contains(string(env.raw), "10.0.0.1") {
			t.Errorf("503 leaks the cause: %s", env.raw)
		}
		status, _, env = c.do("GET", "/api/v1/projects?search=down", "", alice)
		wantError(t, "an unavailable store (list)", status, env, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "")

		// Health reports a store that does not answer.
		down := newServerWrapped(t, kind, func(s store.Store) store.Store {
			return faultyStore{Store: s, ping: fmt.Errorf("ping: %w", store.ErrUnavailable)}
		})
		res := down.raw(httptest.NewRequest("GET", "/health", nil))
		body, _ := io.ReadAll(res.Body)
		var h struct{ Status, Timestamp, Version string }
		_ = json.Unmarshal(body, &h)
		if res.StatusCode != http.StatusServiceUnavailable || h.Status != "unavailable" {
			t.Errorf("GET /health with the store down: %d %s, want 503 status unavailable", res.StatusCode, body)
		}
		if ct := res.Header.Get("Content-Type"); ct != jsonType {
			t.Errorf("GET /health with the store down: Content-Type %q", ct)
		}
		wantTimestamps(t, "GET /health with the store down", h.Timestamp)
	})
}

// ---------------------------------------------------------------------
// Section 3: secrets never reach the logs; section 2: versions under
// concurrency.

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestLogsHoldNoSecrets(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var logs syncBuffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c := newServer(t, kind, hds.WithCredentialKey(testKey), hds.WithLogger(logger))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		c.mustDo("POST", pathR("web", "prod", "k", "q")+"?type=CREDENTIAL&value=log-s3cret-1", "", alice, http.StatusCreated)
		c.mustDo("POST", K+"/records", `{"name":"b","type":"[]CREDENTIAL","value":["log-s3cret-2"]}`, alice, http.StatusCreated)
		c.mustDo("PUT", pathR("web", "prod", "k", "q")+"?value=log-s3cret-3&reveal=true", "", alice, http.StatusOK)
		c.mustDo("GET", K+"?reveal=true", "", alice, http.StatusOK)
		c.mustDo("GET", K+"/records?reveal=true", "", alice, http.StatusOK)
		c.do("POST", "/api/v1/auth/login", `{"username":"bob","password":"wrong-log-password"}`, "")
		c.do("PUT", pathR("web", "prod", "k", "q")+"?type=STRING", "", alice) // refused
		c.do("GET", K+"/records?value=log-s3cret-4", "", alice)
		refreshed := c.mustDo("POST", "/api/v1/auth/refresh", "", alice, http.StatusOK)

		out := logs.String()
		if out == "" {
			t.Fatal("nothing was logged")
		}
		secrets := []string{"log-s3cret", "alice-password", "wrong-log-password", alice, strings.Split(alice, ".")[2], "Bearer"}
		var tok struct {
			Token string `json:"token"`
		}
		refreshed.decode(t, &tok)
		secrets = append(secrets, tok.Token)
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("the log holds %.24q...:\n%s", s, out)
			}
		}
	})
}

func TestConcurrentRequests(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		counter := pathR("web", "prod", "k", "counter")
		c.addRecord(alice, K, "counter", "INTEGER", "0")
		const n = 20
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if status, _, env := c.do("PUT", fmt.Sprintf("%s?value=%d", counter, i), "", alice); status != http.StatusOK {
					t.Errorf("concurrent update %d: %d %s", i, status, env.raw)
				}
			})
			wg.Go(func() {
				if status, _, env := c.do("POST", fmt.Sprintf("%s?type=INTEGER&value=%d", pathR("web", "prod", "k", fmt.Sprint("r", i)), i), "", alice); status != http.StatusCreated {
					t.Errorf("concurrent create %d: %d %s", i, status, env.raw)
				}
			})
			wg.Go(func() {
				if status, _, env := c.do("POST", K+"/records", `{"name":"same","type":"NULL"}`, alice); status != http.StatusCreated && status != http.StatusConflict {
					t.Errorf("concurrent create of one name: %d %s", status, env.raw)
				}
			})
		}
		wg.Wait()
		var r recordJSON
		c.mustDo("GET", counter, "", alice, http.StatusOK).decode(t, &r)
		if r.Version != n+1 {
			t.Errorf("after %d concurrent updates: version %d, want %d", n, r.Version, n+1)
		}
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &l)
		if l.Total != n+2 {
			t.Errorf("after %d concurrent creates: %d records, want %d", n, l.Total, n+2)
		}
	})
}

// ---------------------------------------------------------------------
// Sections 1 and 11: mounting under a prefix.

func TestMounted(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		mux := http.NewServeMux()
		mux.Handle("/hds/", http.StripPrefix("/hds", c.h))
		mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "host") })
		m := &client{t: t, h: mux, store: c.store, users: c.users, ids: c.ids, tokens: map[string]string{}, mount: "/hds"}

		res := m.raw(httptest.NewRequest("GET", "/hds/health", nil))
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET /hds/health: %d", res.StatusCode)
		}
		status, h, env := m.do("POST", "/hds/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, "")
		if status != http.StatusOK || h.Get("Cache-Control") != "no-store" {
			t.Fatalf("login under /hds: %d %s", status, env.raw)
		}
		var tok struct {
			Token string `json:"token"`
		}
		env.decode(t, &tok)
		m.mustDo("POST", "/hds"+pathP("mounted"), "", tok.Token, http.StatusCreated)
		m.mustDo("POST", "/hds"+pathC("mounted", "c"), "", tok.Token, http.StatusCreated)
		var l listJSON[projectJSON]
		m.mustDo("GET", "/hds/api/v1/projects", "", tok.Token, http.StatusOK).decode(t, &l)
		if l.Total != 1 || l.Items[0].Name != "mounted" || l.Items[0].CollectionCount != 1 {
			t.Errorf("list under /hds: %+v", l)
		}
		status, _, env = m.do("GET", "/hds/api/v1/nothing", "", tok.Token)
		wantError(t, "unknown route under /hds", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		status, _, env = m.do("DELETE", "/hds/api/v1/projects", "", tok.Token)
		wantError(t, "wrong method under /hds", status, env, http.StatusMethodNotAllowed, "INVALID_REQUEST", "")
		status, _, env = m.do("GET", "/hds/api/v1/projects", "", "")
		wantError(t, "no token under /hds", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
		// The refreshed token works under the prefix too.
		var ref struct {
			Token string `json:"token"`
		}
		m.mustDo("POST", "/hds/api/v1/auth/refresh", "", tok.Token, http.StatusOK).decode(t, &ref)
		m.mustDo("GET", "/hds"+pathP("mounted"), "", ref.Token, http.StatusOK)
	})
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

// ---------------------------------------------------------------------
// Fuzzing the list query parser through the handler.

func FuzzListQuery(f *testing.F) {
	for _, seed := range []string{
		"", "limit=0", "limit=1", "limit=1000", "limit=1001", "limit=abc", "limit=1e3", "limit=1.5", "limit=+5",
		"limit=%2B5", "limit=-1", "limit=", "limit=99999999999999999999", "offset=-1", "offset=9223372036854775807",
		"offset=99999999999999999999", "limit=1000&offset=1", "sortBy=password", "sortBy=value&sortOrder=desc",
		"sortBy=type", "sortOrder=up", "type=FOO", "type=%5B%5DSTRING", "type=[]int", "type=credential", "type=",
		"search=%00", "value=%00", "valueContains=%00", "search=%25", "search=_", "search=%5C", "search=%FF",
		"value=%FF", "valueContains=%C0%80", "value=10&type=INTEGER", "value=", "reveal=true", "reveal=yes",
		"a=%zz", "limit=1&limit=2", ";", "&&&", "=", "%", "search=%E2%80%AE", "sortBy=name;sortOrder=desc",
		"valueContains=" + strings.Repeat("x", 5000),
	} {
		f.Add(seed)
	}
	type target struct {
		c     *client
		path  string
		token string
	}
	var targets []target
	for _, kind := range storeKinds {
		c := newServer(f, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		for i, r := range []struct{ typ, value string }{
			{"INTEGER", "10"}, {"FLOAT", "2.5"}, {"STRING", `"abc"`}, {"NULL", "null"}, {"CREDENTIAL", `"pw"`},
			{"[]STRING", `["a"]`}, {"UUID", `"0190a5b4-c0de-7abc-8def-0123456789ab"`}, {"BOOLEAN", "true"},
		} {
			c.addRecord(alice, K, fmt.Sprintf("r%d", i), r.typ, r.value)
		}
		targets = append(targets, target{c, K + "/records", alice})
	}
	f.Fuzz(func(t *testing.T, query string) {
		for _, tg := range targets {
			c := *tg.c
			c.t = t
			r := request("GET", tg.path, "", tg.token)
			r.URL.RawQuery = query
			status, _, env := c.send(r) // reports a broken envelope
			switch status {
			case http.StatusOK:
				var page struct {
					Items  []json.RawMessage `json:"items"`
					Total  *int              `json:"total"`
					Limit  int               `json:"limit"`
					Offset *int              `json:"offset"`
				}
				if err := json.Unmarshal(env.Data, &page); err != nil || page.Items == nil || page.Total == nil ||
					page.Offset == nil || page.Limit < 1 || page.Limit > 1000 || len(page.Items) > page.Limit {
					t.Errorf("?%q: bad page: %s", query, env.Data)
				}
			case http.StatusBadRequest:
				if code := env.code(); code != "INVALID_REQUEST" && code != "VALIDATION_ERROR" {
					t.Errorf("?%q: 400 with code %q", query, code)
				}
			default:
				t.Errorf("?%q: status %d, want 200 or 400: %s", query, status, env.raw)
			}
		}
	})
}

package e2e_test

// Authentication (docs/api.md#authentication): login, tokens, refresh,
// AllowAnonymous.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

func TestLogin(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
			r := request("POST", "/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, "")
			r.Header.Set("Content-Type", ct)
			status, h, env := c.send(r)
			require.EqualValues(t, http.StatusOK, status, "login (Content-Type %s): status %d, want 200: %s", ct, status, env.raw)
			assert.Equal(t, "no-store", h.Get("Cache-Control"), "login: Cache-Control")
			wantFields(t, "login data", env.Data, "token", "expires_in", "user_id")
			var out struct {
				Token     string `json:"token"`
				ExpiresIn int    `json:"expires_in"`
				UserID    string `json:"user_id"`
			}
			env.decode(t, &out)
			assert.EqualValues(t, 3600, out.ExpiresIn, "login: expires_in %d, want 3600", out.ExpiresIn)
			assert.EqualValues(t, c.ids["alice"], out.UserID, "login: user_id %q, want %q", out.UserID, c.ids["alice"])
			m := parseToken(t, out.Token)
			assert.Equal(t, c.ids["alice"], m["sub"], "login token: sub")
			assert.Equal(t, testIssuer, m["iss"], "login token: iss")
			jti, _ := m["jti"].(string)
			assert.NotEmpty(t, jti, "login token: jti (claims %v)", m)
			iat, _ := m["iat"].(float64)
			exp, _ := m["exp"].(float64)
			orig, _ := m["orig_iat"].(float64)
			assert.Equal(t, float64(3600), exp-iat, "login token: exp = iat+3600 (iat %v exp %v)", iat, exp)
			assert.Equal(t, iat, orig, "login token: orig_iat = iat")
			assert.LessOrEqual(t, time.Since(time.Unix(int64(iat), 0)), time.Minute, "login token: iat %v is now", iat)
			c.mustDo("GET", "/api/v1/projects", "", out.Token, http.StatusOK)
		}
	})
}

func TestLoginFailures(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		c.addUser("carol", "carol-password")
		require.NoError(t, c.users.SetUserActive(t.Context(), "carol", false), "deactivate carol")
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
		require.NoError(t, c.users.DeleteUser(t.Context(), "erin"), "delete erin")
		c.addUser("frank", "frank-password")
		frankToken := c.login("frank", "frank-password")
		require.NoError(t, c.users.SetUserActive(t.Context(), "frank", false), "deactivate frank")
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
		assert.Equal(t, 4, status/100, "token in a form body: status %d, want a 4xx: %s", status, env.raw)
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
			if !assert.Equal(t, http.StatusOK, status, "refresh %s: %s", tt.name, env.raw) {
				continue
			}
			assert.Equal(t, "no-store", h.Get("Cache-Control"), "refresh %s: Cache-Control", tt.name)
			wantFields(t, "refresh data", env.Data, "token", "expires_in", "user_id")
			var out struct {
				Token     string `json:"token"`
				ExpiresIn int    `json:"expires_in"`
				UserID    string `json:"user_id"`
			}
			env.decode(t, &out)
			assert.EqualValues(t, 3600, out.ExpiresIn, "refresh %s: expires_in", tt.name)
			assert.Equal(t, alice, out.UserID, "refresh %s: user_id", tt.name)
			m := parseToken(t, out.Token)
			assert.EqualValues(t, tt.origIat, m["orig_iat"], "refresh %s: orig_iat %v, want it unchanged: %v", tt.name, m["orig_iat"], tt.origIat)
			assert.Equal(t, alice, m["sub"], "refresh %s: sub", tt.name)
			assert.Equal(t, testIssuer, m["iss"], "refresh %s: iss", tt.name)
			jti, _ := m["jti"].(string)
			assert.NotEmpty(t, jti, "refresh %s: jti, want a new one", tt.name)
			assert.NotEqual(t, tt.oldJTI, m["jti"], "refresh %s: jti, want a new one", tt.name)
			exp, _ := m["exp"].(float64)
			assert.GreaterOrEqual(t, time.Until(time.Unix(int64(exp), 0)), 59*time.Minute, "refresh %s: the new token expires at %v, want in an hour", tt.name, exp)
			assert.NotEqualValues(t, tt.token, out.Token, "refresh %s: the same token came back", tt.name)
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
		require.NoError(t, c.users.SetUserActive(t.Context(), "carol", false), "deactivate carol")
		c.addUser("erin", "erin-password")
		erinToken := c.login("erin", "erin-password")
		require.NoError(t, c.users.DeleteUser(t.Context(), "erin"), "delete erin")
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
			JWTSecret: testSecret, JWTExpiration: "90m", JWTIssuer: "custom",
			RefreshWindow: "1h", MaxSessionAge: "2d",
		}))
		alice := c.ids["alice"]
		status, _, env := c.do("POST", "/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, "")
		require.EqualValues(t, http.StatusOK, status, "login: %d %s", status, env.raw)
		var out struct {
			Token     string `json:"token"`
			ExpiresIn int    `json:"expires_in"`
		}
		env.decode(t, &out)
		m := parseToken(t, out.Token)
		iat, _ := m["iat"].(float64)
		exp, _ := m["exp"].(float64)
		assert.EqualValues(t, 5400, out.ExpiresIn, "JWTExpiration 90m: expires_in")
		assert.Equal(t, float64(5400), exp-iat, "JWTExpiration 90m: exp-iat")
		assert.Equal(t, "custom", m["iss"], "JWTIssuer custom: iss")

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
			status, _, env := c.do("POST", "/api/v1/auth/refresh", "", hs256(t, with(tt.claims, map[string]any{"jti": randomID()})))
			if tt.message == "" {
				assert.EqualValues(t, http.StatusOK, status, "refresh, %s: %d %s", tt.name, status, env.raw)
				continue
			}
			wantError(t, "refresh, "+tt.name, status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", tt.message)
		}
	})
}

func TestAllowAnonymous(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: true}))
		env := c.mustDo("POST", pathP("anon-proj"), "", "", http.StatusCreated)
		var p projectJSON
		env.decode(t, &p)
		assert.EqualValues(t, "anonymous", p.OwnerID, "project created without a token: owner_id %q, want anonymous", p.OwnerID)
		c.mustDo("POST", pathC("anon-proj", "c"), "", "", http.StatusCreated)
		env = c.mustDo("GET", "/api/v1/projects", "", "", http.StatusOK)
		var list listJSON[projectJSON]
		env.decode(t, &list)
		assert.Equal(t, 1, list.Total, "anonymous list: total (%s)", env.Data)
		if assert.Len(t, list.Items, 1, "anonymous list: items (%s)", env.Data) {
			assert.Equal(t, "anon-proj", list.Items[0].Name, "anonymous list: name")
		}

		// A request that sends a token is still checked.
		for _, h := range []string{"Bearer notajwt", "Basic x", "Bearer " + sign(t, claims(c.ids["alice"]), jwt.SigningMethodHS256, []byte("another-secret-another-secret-012"))} {
			r := request("GET", "/api/v1/projects", "", "")
			r.Header.Set("Authorization", h)
			status, _, env := c.send(r)
			wantError(t, fmt.Sprintf("require_auth false, Authorization %.20q", h), status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "")
		}

		// A user with a token is that user, and anonymous's projects are
		// not theirs.
		alice := c.token("alice")
		env = c.mustDo("GET", "/api/v1/projects", "", alice, http.StatusOK)
		env.decode(t, &list)
		assert.EqualValues(t, 0, list.Total, "alice sees anonymous's projects: %s", env.Data)
		status, _, env := c.do("GET", pathP("anon-proj"), "", alice)
		wantError(t, "alice reading anonymous's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		env = c.mustDo("POST", pathP("alice-proj"), "", alice, http.StatusCreated)
		env.decode(t, &p)
		assert.EqualValues(t, c.ids["alice"], p.OwnerID, "alice's project: owner_id %q", p.OwnerID)
		status, _, env = c.do("GET", pathP("alice-proj"), "", "")
		wantError(t, "anonymous reading alice's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
	})
}

package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
)

// twoInstances returns clients of two handlers sharing one storage: for
// PostgreSQL two Stores, each with its own pool, on one database (two
// instances of the service); for the memory store one store served twice.
// Both have alice and bob; opts apply to both.
func twoInstances(t *testing.T, kind storeKind, opts ...hds.Option) (a, b *client) {
	t.Helper()
	if kind.name != "postgres" {
		a = newServer(t, kind, opts...)
		return a, a.attach(opts...)
	}
	first, second := pgtest.Pair(t)
	a = newServer(t, storeKind{name: kind.name, new: func(testing.TB) (store.Projects, store.Accounts) {
		return first, first
	}}, opts...)
	b = (&client{t: t, store: second, users: second, ids: a.ids, tokens: a.tokens}).attach(opts...)
	return a, b
}

// tokenOf returns the token of a 200 token response.
func tokenOf(t *testing.T, what string, status int, h http.Header, env envelope) string {
	t.Helper()
	require.Equal(t, http.StatusOK, status, "%s: %s", what, env.raw)
	var out struct {
		Token     string `json:"token"`
		ExpiresIn int    `json:"expires_in"`
		UserID    string `json:"user_id"`
	}
	env.decode(t, &out)
	require.NotEmpty(t, out.Token, "%s: a token", what)
	assert.Equal(t, 3600, out.ExpiresIn, "%s: expires_in", what)
	assert.NotEmpty(t, out.UserID, "%s: user_id", what)
	assert.Equal(t, "no-store", h.Get("Cache-Control"), "%s: token responses are never cached", what)
	return out.Token
}

func (c *client) refresh(t *testing.T, token string) string {
	t.Helper()
	status, h, env := c.do("POST", "/api/v1/auth/refresh", "", token)
	return tokenOf(t, "refresh", status, h, env)
}

// wantRefused checks that token is refused on every client, as a request
// and as a refresh, with 401 "Invalid or expired token".
func wantRefused(t *testing.T, what, token string, clients ...*client) {
	t.Helper()
	for i, c := range clients {
		status, _, env := c.do("GET", "/api/v1/projects", "", token)
		wantError(t, what+" (request, instance "+string(rune('A'+i))+")", status, env,
			http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
		status, _, env = c.do("POST", "/api/v1/auth/refresh", "", token)
		wantError(t, what+" (refresh, instance "+string(rune('A'+i))+")", status, env,
			http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
	}
}

// wantAccepted checks that token is accepted on every client.
func wantAccepted(t *testing.T, what, token string, clients ...*client) {
	t.Helper()
	for i, c := range clients {
		status, _, env := c.do("GET", "/api/v1/projects", "", token)
		assert.Equal(t, http.StatusOK, status, "%s (instance %c): %s", what, 'A'+i, env.raw)
	}
}

func TestSessionClaims(t *testing.T) {
	c := newServer(t, storeKinds[0])
	tok := c.login("alice", "alice-password")
	m := parseToken(t, tok)
	sid, _ := m["sid"].(string)
	assert.GreaterOrEqual(t, len(sid), 22, "sid: a random session id of 128 bits")
	assert.NotEmpty(t, m["jti"], "jti")
	again := parseToken(t, c.login("alice", "alice-password"))
	assert.NotEqual(t, sid, again["sid"], "each login starts a session of its own")
	assert.NotEqual(t, m["jti"], again["jti"], "each token has its own jti")
	r := parseToken(t, c.refresh(t, tok))
	assert.Equal(t, sid, r["sid"], "refresh keeps sid")
	assert.Equal(t, m["orig_iat"], r["orig_iat"], "refresh keeps orig_iat")
	assert.NotEqual(t, m["jti"], r["jti"], "refresh makes a new jti")
}

func TestLogout(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		a, b := twoInstances(t, kind)
		t1 := a.login("alice", "alice-password")
		t2 := a.login("alice", "alice-password") // another session, most likely begun in the same second
		t1r := a.refresh(t, t1)
		bobTok := a.token("bob")

		status, _, env := a.do("POST", "/api/v1/auth/logout", "", t1r)
		require.Equal(t, http.StatusNoContent, status, "logout: %s", env.raw)
		wantRefused(t, "the token that logged out", t1r, a, b)
		wantRefused(t, "the token it was refreshed from", t1, a, b)
		wantAccepted(t, "another session of the same user", t2, a, b)
		wantAccepted(t, "another user", bobTok, a, b)
		status, _, env = b.do("POST", "/api/v1/auth/logout", "", t1)
		wantError(t, "logout of an ended session", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")

		// A token refreshed before its session ended cannot be refreshed
		// after, even though it never was.
		t3 := b.login("alice", "alice-password")
		t3r := b.refresh(t, t3)
		b.mustDo("POST", "/api/v1/auth/logout", "", t3, http.StatusNoContent)
		wantRefused(t, "a token refreshed from the session before it ended", t3r, a, b)

		// A token without sid (issued before sessions could end) is a
		// session of its own, named by its jti.
		legacy := hs256(t, claims(a.ids["alice"]))
		other := hs256(t, claims(a.ids["alice"]))
		refreshed := a.refresh(t, legacy)
		assert.Equal(t, parseToken(t, legacy)["jti"], parseToken(t, refreshed)["sid"], "a token without sid: its session is named by its jti")
		a.mustDo("POST", "/api/v1/auth/logout", "", legacy, http.StatusNoContent)
		wantRefused(t, "a token without sid after its logout", legacy, a, b)
		wantRefused(t, "a token refreshed from it", refreshed, a, b)
		wantAccepted(t, "another token without sid", other, a, b)
	})
}

func TestLogoutErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		expired := hs256(t, with(claims(c.ids["alice"]), map[string]any{
			"iat": time.Now().Add(-2 * time.Hour).Unix(), "exp": time.Now().Add(-time.Hour).Unix()}))
		for _, tt := range []struct {
			name, header, message string
		}{
			{"no Authorization header", "", "No authorization token provided"},
			{"not a bearer token", "Basic YWxpY2U6cHc=", "Invalid or expired token"},
			{"not a JWT", "Bearer notajwt", "Invalid or expired token"},
			{"a wrong signature", "Bearer " + alice[:len(alice)-4] + "AAAA", "Invalid token signature"},
			{"an expired token", "Bearer " + expired, "Token has expired"},
			{"a token of a user that does not exist", "Bearer " + hs256(t, claims(store.NewID())), "Invalid or expired token"},
		} {
			r := request("POST", "/api/v1/auth/logout", "", "")
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			status, _, env := c.send(r)
			wantError(t, "logout with "+tt.name, status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", tt.message)
		}
		wantAccepted(t, "failed logouts end nothing", alice, c)
		status, h, env := c.do("GET", "/api/v1/auth/logout", "", alice)
		wantError(t, "GET logout", status, env, http.StatusMethodNotAllowed, "INVALID_REQUEST", "Method not allowed")
		assert.Equal(t, "POST", h.Get("Allow"), "Allow")

		open := newServer(t, kind, hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: true}))
		status, _, env = open.do("POST", "/api/v1/auth/logout", "", "")
		wantError(t, "logout without a token, authentication not required", status, env,
			http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
	})
}

func TestRefreshIsSingleUse(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		a, b := twoInstances(t, kind)
		tok := a.login("alice", "alice-password")
		next := a.refresh(t, tok)
		status, _, env := b.do("POST", "/api/v1/auth/refresh", "", tok)
		wantError(t, "a second refresh, on another instance", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
		status, _, env = a.do("POST", "/api/v1/auth/refresh", "", tok)
		wantError(t, "a second refresh, on the same instance", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
		wantAccepted(t, "a refreshed token stays valid until it expires", tok, a, b)
		b.refresh(t, next) // the new token refreshes once, on any instance

		// Two concurrent refreshes of one token: exactly one succeeds.
		handlers := []http.Handler{a.h, b.h}
		for round := range 4 {
			tok := a.login("alice", "alice-password")
			const n = 8
			codes := make([]int, n)
			bodies := make([]string, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					rec := httptest.NewRecorder()
					handlers[i%2].ServeHTTP(rec, request("POST", "/api/v1/auth/refresh", "", tok))
					codes[i], bodies[i] = rec.Code, rec.Body.String()
				})
			}
			close(start)
			wg.Wait()
			ok := 0
			for i := range n {
				switch codes[i] {
				case http.StatusOK:
					ok++
				default:
					var env envelope
					require.NoError(t, json.Unmarshal([]byte(bodies[i]), &env))
					wantError(t, "a losing concurrent refresh", codes[i], env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
				}
			}
			assert.Equal(t, 1, ok, "round %d: exactly one of %d concurrent refreshes on two instances succeeds", round, n)
		}
	})
}

func passwordBody(current, next string) string {
	b, _ := json.Marshal(map[string]string{"current_password": current, "new_password": next})
	return string(b)
}

func TestPasswordChange(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		a, b := twoInstances(t, kind)
		t1 := a.login("alice", "alice-password")
		t2 := b.login("alice", "alice-password")
		t2r := b.refresh(t, t2)
		legacy := hs256(t, claims(a.ids["alice"]))
		bobTok := a.token("bob")

		status, h, env := a.do("POST", "/api/v1/auth/password", passwordBody("alice-password", "new alice pw"), t1)
		fresh := tokenOf(t, "password change", status, h, env)
		assert.Equal(t, "Password changed", env.Message, "message")
		wantAccepted(t, "the new token", fresh, a, b)
		wantRefused(t, "the session that asked", t1, a, b)
		wantRefused(t, "another session of the user", t2r, a, b)
		wantRefused(t, "a token issued before sessions could end", legacy, a, b)
		wantAccepted(t, "another user", bobTok, a, b)
		status, _, env = b.do("POST", "/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, "")
		wantError(t, "login with the old password", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")
		wantAccepted(t, "a login with the new password", b.login("alice", "new alice pw"), a, b)
		b.refresh(t, fresh)

		// Again from the new session: the generation moves on once more.
		status, h, env = b.do("POST", "/api/v1/auth/password", passwordBody("new alice pw", "third"), fresh)
		third := tokenOf(t, "a second password change", status, h, env)
		wantRefused(t, "the session of the first change", fresh, a, b)
		wantAccepted(t, "the newest token", third, a, b)

		// user disable and delete still end access at once, everywhere.
		require.NoError(t, a.users.SetUserActive(t.Context(), "alice", false))
		wantRefused(t, "a disabled user", third, a, b)
		require.NoError(t, a.users.SetUserActive(t.Context(), "alice", true))
		wantRefused(t, "enabled again: the sessions the disable ended stay ended (docs/api.md#server-administrators-and-user-accounts-v12)", third, a, b)
		require.NoError(t, a.users.DeleteUser(t.Context(), "alice"))
		wantRefused(t, "a deleted user", third, a, b)
	})
}

func TestPasswordChangeErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithLoginThrottle(3, 100, time.Hour))
		alice := c.token("alice")
		long := strings.Repeat("x", 73)
		for _, tt := range []struct {
			name, body    string
			status        int
			code, message string
			details       string
		}{
			{"a wrong current_password", passwordBody("wrong", "new-pw"), 400, "VALIDATION_ERROR", "Validation failed", "current_password"},
			{"an empty new_password", passwordBody("alice-password", ""), 400, "VALIDATION_ERROR", "Validation failed", "new_password"},
			{"a new_password of 73 bytes", passwordBody("alice-password", long), 400, "VALIDATION_ERROR", "Validation failed", "72 bytes"},
			{"no new_password", `{"current_password":"alice-password"}`, 400, "INVALID_REQUEST", "", "new_password"},
			{"no current_password", `{"new_password":"x"}`, 400, "INVALID_REQUEST", "", "current_password"},
			{"an unknown field", `{"current_password":"alice-password","new_password":"x","extra":1}`, 400, "INVALID_REQUEST", "", ""},
			{"no body", "", 400, "INVALID_REQUEST", "", ""},
			{"malformed JSON", `{"current_password":`, 400, "INVALID_REQUEST", "", ""},
		} {
			status, _, env := c.do("POST", "/api/v1/auth/password", tt.body, alice)
			wantError(t, tt.name, status, env, tt.status, tt.code, tt.message)
			wantDetails(t, tt.name, env, tt.details)
		}
		r := request("POST", "/api/v1/auth/password", passwordBody("alice-password", "x"), alice)
		r.Header.Set("Content-Type", "text/plain")
		status, _, env := c.send(r)
		wantError(t, "a body that is not JSON", status, env, http.StatusUnsupportedMediaType, "INVALID_REQUEST", "")
		status, _, env = c.do("POST", "/api/v1/auth/password", passwordBody("alice-password", "x"), "")
		wantError(t, "no token", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
		status, _, env = c.do("POST", "/api/v1/auth/password", passwordBody("alice-password", "x"), "notajwt")
		wantError(t, "not a JWT", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
		wantAccepted(t, "failed changes end no session", alice, c)
		c.login("alice", "alice-password") // the password is unchanged (and a success does not reset the count)

		// Wrong current passwords count as failed logins: one was counted
		// above; two more use up the 3 allowed, then even the right one is
		// refused, as is a login.
		for range 2 {
			status, _, env = c.do("POST", "/api/v1/auth/password", passwordBody("guess", "new-pw"), alice)
			wantError(t, "another wrong current_password", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		}
		status, h, env := c.do("POST", "/api/v1/auth/password", passwordBody("alice-password", "new-pw"), alice)
		wantError(t, "past the limit of failed logins", status, env, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
		assert.NotEmpty(t, h.Get("Retry-After"), "Retry-After")
		status, _, env = c.do("POST", "/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, "")
		wantError(t, "a login past the limit", status, env, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
		wantAccepted(t, "the session goes on", alice, c)

		open := newServer(t, kind, hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: true}))
		status, _, env = open.do("POST", "/api/v1/auth/password", passwordBody("x", "y"), "")
		wantError(t, "no token, authentication not required", status, env,
			http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
	})
}

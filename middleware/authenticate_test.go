package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// authFixture is a user directory with one active user, alice, and a
// token of hers.
type authFixture struct {
	users  *memory.Store
	tokens *auth.Tokens
	alice  *store.User
	token  string
}

func newAuthFixture(t *testing.T) authFixture {
	t.Helper()
	users := memory.New()
	alice, err := users.CreateUser(context.Background(), &store.User{Username: "alice", PasswordHash: []byte("x"), Active: true})
	require.NoError(t, err)
	tokens, err := auth.NewTokens(auth.TokenConfig{Secret: []byte(strings.Repeat("s", 32)), Issuer: "hds", Expiration: time.Hour})
	require.NoError(t, err)
	tok, err := tokens.Issue(alice.ID, time.Time{})
	require.NoError(t, err)
	return authFixture{users: users, tokens: tokens, alice: alice, token: tok}
}

// noLimit is the rejected wrapper of a test that does not count refusals.
func noLimit(next http.Handler) http.Handler { return next }

// serve answers a GET with token (none when empty) by h.
func serve(h http.Handler, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// withReqinfo returns h behind RequestID, which starts the request's
// reqinfo, for the "reqinfo" case; h alone (the identity in the
// context) otherwise.
func withReqinfo(name string, h http.Handler) http.Handler {
	if name == "reqinfo" {
		return middleware.RequestID()(h)
	}
	return h
}

// TestAuthenticateIdentity: the route sees the token's user and claims,
// or auth.Anonymous without a token when that is allowed, whether the
// identity is recorded in the request's reqinfo (RequestID around it, as
// hds runs it) or carried in its context (no reqinfo).
func TestAuthenticateIdentity(t *testing.T) {
	f := newAuthFixture(t)
	for _, name := range []string{"reqinfo", "context"} {
		var user *store.User
		var claims *auth.Claims
		route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, claims = auth.UserFrom(r.Context()), auth.ClaimsFrom(r.Context())
			assert.Nil(t, auth.APITokenFrom(r.Context()), name)
			assert.Nil(t, auth.SessionCheckFrom(r.Context()), name)
			w.WriteHeader(http.StatusOK)
		})
		h := withReqinfo(name, middleware.Authenticate(f.tokens, f.users, nil, false, noLimit)(route))
		rec := serve(h, f.token)
		require.Equal(t, http.StatusOK, rec.Code, name)
		require.NotNil(t, user, name)
		assert.Equal(t, f.alice.ID, user.ID, name)
		require.NotNil(t, claims, name)
		assert.Equal(t, f.alice.ID, claims.Subject, name)

		rec = serve(h, "")
		require.Equal(t, http.StatusOK, rec.Code, name)
		require.NotNil(t, user, name)
		assert.Equal(t, store.AnonymousUserID, user.ID, "%s: no token runs as Anonymous", name)
		assert.Nil(t, claims, name)
	}
}

// TestDeferSessionRefusesEndedSession: behind DeferSession the route
// sees a session check, not a user, and once the session has ended its
// answer never goes out: the request is refused as Authenticate refuses
// it, with reqinfo (as hds runs it) and without.
func TestDeferSessionRefusesEndedSession(t *testing.T) {
	for _, name := range []string{"reqinfo", "context"} {
		f := newAuthFixture(t)
		route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			assert.Nil(t, auth.UserFrom(r.Context()), name)
			check := auth.SessionCheckFrom(r.Context())
			if assert.NotNil(t, check, name) {
				assert.Equal(t, f.alice.ID, check.UserID, name)
			}
			assert.NotNil(t, auth.ClaimsFrom(r.Context()), name)
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("the route's answer"))
		})
		h := withReqinfo(name, middleware.DeferSession(f.tokens, f.users, nil, true, noLimit)(route))
		rec := serve(h, f.token)
		require.Equal(t, http.StatusOK, rec.Code, name)
		assert.Equal(t, "the route's answer", rec.Body.String(), name)

		claims, err := f.tokens.Verify(f.token)
		require.NoError(t, err)
		require.NoError(t, f.users.EndSession(context.Background(), f.alice.ID, claims.Session().ID, time.Now().Add(time.Hour)))
		rec = serve(h, f.token)
		require.Equal(t, http.StatusUnauthorized, rec.Code, name)
		assert.NotContains(t, rec.Body.String(), "the route's answer", name)
		var env struct {
			Success bool
			Error   struct{ Code, Message string }
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env), name)
		assert.False(t, env.Success, name)
		assert.Equal(t, "AUTHENTICATION_FAILED", env.Error.Code, name)
		assert.Equal(t, "Invalid or expired token", env.Error.Message, name)
	}
}

// TestTokenFrom: the token is the one word after a "Bearer" scheme (in
// any case); anything else is not a bearer token.
func TestTokenFrom(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc.def.ghi": "abc.def.ghi",
		"bearer abc":         "abc",
		"BEARER abc":         "abc",
		"Bearer a b":         "",
		"Bearer a\tb":        "",
		"Bearer  abc":        "",
		"Bearer abc ":        "",
		"Bearer\tabc":        "",
		"Bearer ":            "",
		"Bearer":             "",
		"Basic abc":          "",
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
		r.Header.Set("Authorization", header)
		got, err := middleware.TokenFrom(r)
		if want == "" {
			assert.ErrorIs(t, err, auth.ErrInvalidToken, "%q", header)
			continue
		}
		assert.NoError(t, err, "%q", header)
		assert.Equal(t, want, got, "%q", header)
	}
	r := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
	_, err := middleware.TokenFrom(r)
	assert.ErrorIs(t, err, auth.ErrNoToken)
	r.Header.Add("Authorization", "Bearer a")
	r.Header.Add("Authorization", "Bearer b")
	_, err = middleware.TokenFrom(r)
	assert.ErrorIs(t, err, auth.ErrInvalidToken, "two Authorization headers")
}

// TestLogLineNamesCaller: the request's log line names the caller
// authentication found: the user's id, Anonymous, the user of a deferred
// check, and nobody for a deferred check that failed.
func TestLogLineNamesCaller(t *testing.T) {
	f := newAuthFixture(t)
	var log bytes.Buffer
	logged := func(h http.Handler) http.Handler {
		return middleware.RequestID()(middleware.Logging(slog.New(slog.NewTextHandler(&log, nil)))(h))
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	// userID reads the user_id of the line just logged.
	userID := func() string {
		t.Helper()
		line := log.String()
		log.Reset()
		_, after, found := strings.Cut(line, " user_id=")
		require.True(t, found, "a log line with user_id: %q", line)
		id, _, _ := strings.Cut(after, " ")
		return strings.Trim(id, `"`)
	}
	authn := logged(middleware.Authenticate(f.tokens, f.users, nil, false, noLimit)(ok))
	serve(authn, f.token)
	assert.Equal(t, f.alice.ID, userID())
	serve(authn, "")
	assert.Equal(t, store.AnonymousUserID, userID())

	deferred := logged(middleware.DeferSession(f.tokens, f.users, nil, true, noLimit)(ok))
	serve(deferred, f.token)
	assert.Equal(t, f.alice.ID, userID())
	claims, err := f.tokens.Verify(f.token)
	require.NoError(t, err)
	require.NoError(t, f.users.EndSession(context.Background(), f.alice.ID, claims.Session().ID, time.Now().Add(time.Hour)))
	rec := serve(deferred, f.token)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Equal(t, "", userID(), "a refused request names nobody")
}

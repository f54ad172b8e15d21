package middleware

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// Authenticate requires a valid bearer token from the Authorization header
// (never the query string or a form), a user that still exists and is
// active, and a session that has not ended (a logout, a password change):
// all looked up on every request, in one store call (store.Sessions's
// FindSessionUser: one indexed lookup of the user with the ended-session
// mark beside it), so that a disabled account or an ended session is
// refused at once on every instance. On success the user is in the
// context (auth.UserFrom), and so are the token's claims (auth.ClaimsFrom).
// With requireAuth false, a request without an Authorization header runs
// as auth.Anonymous, without claims; a request that sends one is checked
// all the same.
//
// A refused request is answered by rejected wrapped around the error
// response, so that it can be counted against the client IP before its
// 401 is written.
func Authenticate(tokens *auth.Tokens, sessions store.Sessions, requireAuth bool, rejected func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, claims, err := authenticate(r, tokens, sessions, requireAuth)
			if err != nil {
				rejected(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					envelope.Error(w, r, err)
				})).ServeHTTP(w, r)
				return
			}
			reqinfo.From(r.Context()).UserID = user.ID
			ctx := auth.NewContext(r.Context(), user)
			if claims != nil {
				ctx = auth.WithClaims(ctx, claims)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

func authenticate(r *http.Request, tokens *auth.Tokens, sessions store.Sessions, requireAuth bool) (*store.User, *auth.Claims, error) {
	raw, err := TokenFrom(r)
	if errors.Is(err, auth.ErrNoToken) && !requireAuth {
		anon := auth.Anonymous
		return &anon, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	claims, err := tokens.Verify(raw)
	if err != nil {
		return nil, nil, err
	}
	user, err := SessionUser(r.Context(), sessions, claims)
	if err != nil {
		return nil, nil, err
	}
	return user, claims, nil
}

// SessionUser returns the user of a verified token when the user exists
// and is active and the token's session is live: not ended by a logout,
// and begun in the user's current session generation (a password change
// ends every session begun before it). Otherwise it returns
// auth.ErrInvalidToken. Store failures are returned as they are. It makes
// one store call.
func SessionUser(ctx context.Context, sessions store.Sessions, claims *auth.Claims) (*store.User, error) {
	session := claims.Session()
	su, err := sessions.FindSessionUser(ctx, claims.Subject, session.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, auth.ErrInvalidToken
	case err != nil:
		return nil, err
	case !su.User.Active, su.Ended, session.Generation < su.User.SessionGeneration:
		return nil, auth.ErrInvalidToken
	}
	return su.User, nil
}

// TokenFrom returns the bearer token of r's Authorization header, the only
// place a token is read from: auth.ErrNoToken without the header,
// auth.ErrInvalidToken when it is not one "Bearer <token>" (the scheme in
// any case, as RFC 9110 allows).
func TokenFrom(r *http.Request) (string, error) {
	header, present := r.Header["Authorization"]
	if !present {
		return "", auth.ErrNoToken
	}
	raw, ok := bearerToken(header[0])
	if !ok || len(header) > 1 {
		return "", auth.ErrInvalidToken
	}
	return raw, nil
}

func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

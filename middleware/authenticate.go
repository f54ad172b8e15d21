package middleware

import (
	"errors"
	"net/http"
	"strings"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// Authenticate requires a valid bearer token from the Authorization header
// (never the query string or a form) and a user that still exists and is
// active, looked up on every request so that a disabled account is
// refused at once. On success the user is in the context (auth.UserFrom).
// With requireAuth false, a request without an Authorization header runs
// as auth.Anonymous; a request that sends one is checked all the same.
//
// A refused request is answered by rejected wrapped around the error
// response, so that it can be counted against the client IP before its
// 401 is written.
func Authenticate(tokens *auth.Tokens, users store.UserDirectory, requireAuth bool, rejected func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, err := authenticate(r, tokens, users, requireAuth)
			if err != nil {
				rejected(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					envelope.Error(w, r, err)
				})).ServeHTTP(w, r)
				return
			}
			reqinfo.From(r.Context()).UserID = user.ID
			next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), user)))
		})
	}
}

func authenticate(r *http.Request, tokens *auth.Tokens, users store.UserDirectory, requireAuth bool) (*store.User, error) {
	raw, err := TokenFrom(r)
	if errors.Is(err, auth.ErrNoToken) && !requireAuth {
		anon := auth.Anonymous
		return &anon, nil
	}
	if err != nil {
		return nil, err
	}
	claims, err := tokens.Verify(raw)
	if err != nil {
		return nil, err
	}
	return ActiveUser(r, users, claims.Subject)
}

// ActiveUser returns the user with id when it exists and is active, and
// auth.ErrInvalidToken otherwise. Store failures are returned as they are.
func ActiveUser(r *http.Request, users store.UserDirectory, id string) (*store.User, error) {
	user, err := users.FindUserByID(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, auth.ErrInvalidToken
	case err != nil:
		return nil, err
	case !user.Active:
		return nil, auth.ErrInvalidToken
	}
	return user, nil
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

package handler

import (
	"errors"
	"net/http"
	"time"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// tokenOut is the payload of login and refresh.
type tokenOut struct {
	Token     string `json:"token"`
	ExpiresIn int    `json:"expires_in"`
	UserID    string `json:"user_id"`
}

// issue signs a token and writes it; token responses are never cached.
func issue(w http.ResponseWriter, r *http.Request, tokens *auth.Tokens, userID string, origIat time.Time, message string) {
	token, err := tokens.Issue(userID, origIat)
	if err != nil {
		envelope.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	envelope.OK(w, http.StatusOK, tokenOut{Token: token, ExpiresIn: tokens.ExpiresIn(), UserID: userID}, message)
}

// handleLogin serves POST /api/v1/auth/login. An unknown user, a wrong
// password and a disabled account get the same answer after the same
// work (one bcrypt comparison), so neither the message nor the timing
// tells them apart. With a throttle, a username or client IP with too many
// recent failures is refused with 429 before the password is looked at.
func handleLogin(users store.UserDirectory, tokens *auth.Tokens, throttle *middleware.LoginThrottle, clientIP middleware.ClientIP) http.Handler {
	type request struct {
		Username *string `json:"username"`
		Password *string `json:"password"`
	}
	return strictQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req request
		_, err := envelope.Decode(r, &req)
		if err == nil && (req.Username == nil || req.Password == nil) {
			err = envelope.BadRequest(`the fields "username" and "password" are required`)
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		user, err := users.FindUserByName(r.Context(), *req.Username)
		var hash []byte
		switch {
		case err == nil:
			hash = user.PasswordHash
		case !errors.Is(err, store.ErrNotFound):
			envelope.Error(w, r, err)
			return
		}
		// One bcrypt comparison whatever the case, so that neither the
		// answer nor its timing tells the cases apart.
		check := func() bool { return auth.CheckPassword(hash, *req.Password) && user.Active }
		if throttle == nil {
			if !check() {
				err = auth.ErrBadCredentials
			}
		} else {
			var retry string
			if retry, err = throttle.Attempt(r.Context(), *req.Username, clientIP.Of(r), check); retry != "" {
				w.Header().Set(middleware.HeaderRetryAfter, retry)
			}
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		issue(w, r, tokens, user.ID, time.Time{}, "Login successful")
	}))
}

// handleRefresh serves POST /api/v1/auth/refresh: the token in the
// Authorization header, possibly expired within the refresh window,
// becomes a new token of the same session.
func handleRefresh(users store.UserDirectory, tokens *auth.Tokens) http.Handler {
	return strictQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := refreshClaims(r, tokens)
		if err == nil {
			_, err = middleware.ActiveUser(r, users, claims.Subject)
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		issue(w, r, tokens, claims.Subject, time.Unix(claims.OrigIat, 0), "Token refreshed")
	}))
}

func refreshClaims(r *http.Request, tokens *auth.Tokens) (*auth.Claims, error) {
	raw, err := middleware.TokenFrom(r)
	if err != nil {
		return nil, err
	}
	return tokens.VerifyForRefresh(raw)
}

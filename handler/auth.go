package handler

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// tokenOut is the payload of login and refresh.
type tokenOut struct {
	Token     string `json:"token"`
	ExpiresIn int    `json:"expires_in"`
	UserID    string `json:"user_id"`
}

// issue signs a token of session s and writes it; token responses are
// never cached.
func issue(w http.ResponseWriter, r *http.Request, tokens *auth.Tokens, userID string, s auth.Session, message string) {
	token, err := tokens.IssueFor(userID, s)
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
		startSession(w, r, tokens, user, "Login successful")
	}))
}

// startSession issues the first token of a new session of user, begun in
// the user's current session generation.
func startSession(w http.ResponseWriter, r *http.Request, tokens *auth.Tokens, user *store.User, message string) {
	s, err := tokens.NewSession(user.SessionGeneration)
	if err != nil {
		envelope.Error(w, r, err)
		return
	}
	issue(w, r, tokens, user.ID, s, message)
}

// handleRefresh serves POST /api/v1/auth/refresh: the token in the
// Authorization header, possibly expired within the refresh window,
// becomes a new token of the same session (same sid, orig_iat and
// generation). A session that has ended cannot be refreshed, and a token
// can be refreshed once: the store records its jti, and of concurrent
// refreshes of one token exactly one records it (store.Sessions.UseToken).
func handleRefresh(sessions store.Sessions, tokens *auth.Tokens, access store.Access) http.Handler {
	return strictQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := refreshClaims(r, tokens, access)
		if err == nil {
			_, err = middleware.SessionUser(r.Context(), sessions, claims)
		}
		if err == nil {
			err = sessions.UseToken(r.Context(), claims.Subject, claims.ID, tokens.RefreshUntil(claims.ExpiresAt.Time))
			if errors.Is(err, store.ErrTokenUsed) || errors.Is(err, store.ErrNotFound) {
				err = auth.ErrInvalidToken
			}
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		issue(w, r, tokens, claims.Subject, claims.Session(), "Token refreshed")
	}))
}

// handleLogout serves POST /api/v1/auth/logout: the session of the token
// in the header ends, so that it and every token refreshed from the same
// login are refused from then on, on every instance sharing the store.
// A request without a token (require_auth false) has no session to end.
func handleLogout(sessions store.Sessions, tokens *auth.Tokens) http.Handler {
	return strictQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims := auth.ClaimsFrom(r.Context())
		if claims == nil {
			envelope.Error(w, r, auth.ErrNoToken)
			return
		}
		s := claims.Session()
		err := sessions.EndSession(r.Context(), claims.Subject, s.ID, tokens.SessionUntil(s, claims.ExpiresAt.Time))
		if errors.Is(err, store.ErrNotFound) { // the user was deleted meanwhile
			err = auth.ErrInvalidToken
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.NoContent(w)
	}))
}

// handlePassword serves POST /api/v1/auth/password: with the right
// current password, the user's password becomes the new one and every
// earlier session of the user ends (the session generation moves on, in
// the same store call); the answer is the first token of a new session.
// A wrong current password is 400 VALIDATION_ERROR and counts as a failed
// login of the user for the login throttle; the new password follows the
// rules of account creation (not empty, at most 72 bytes).
func handlePassword(sessions store.Sessions, tokens *auth.Tokens, throttle *middleware.LoginThrottle, clientIP middleware.ClientIP) http.Handler {
	type request struct {
		CurrentPassword *string `json:"current_password"`
		NewPassword     *string `json:"new_password"`
	}
	return strictQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, claims := auth.UserFrom(r.Context()), auth.ClaimsFrom(r.Context())
		if claims == nil {
			envelope.Error(w, r, auth.ErrNoToken)
			return
		}
		var req request
		_, err := envelope.Decode(r, &req)
		if err == nil && (req.CurrentPassword == nil || req.NewPassword == nil) {
			err = envelope.BadRequest(`the fields "current_password" and "new_password" are required`)
		}
		if err == nil {
			err = checkNewPassword(*req.NewPassword)
		}
		if err == nil {
			check := func() bool { return auth.CheckPassword(user.PasswordHash, *req.CurrentPassword) }
			if throttle == nil {
				if !check() {
					err = auth.ErrBadCredentials
				}
			} else {
				var retry string
				if retry, err = throttle.Attempt(r.Context(), user.Username, clientIP.Of(r), check); retry != "" {
					w.Header().Set(middleware.HeaderRetryAfter, retry)
				}
			}
			if errors.Is(err, auth.ErrBadCredentials) {
				err = &store.ValidationError{Message: "current_password is not the password of the account"}
			}
		}
		var changed *store.User
		if err == nil {
			var hash []byte
			if hash, err = auth.HashPassword(*req.NewPassword); err == nil {
				changed, err = sessions.SetPassword(r.Context(), user.ID, hash)
				if errors.Is(err, store.ErrNotFound) { // the user was deleted meanwhile
					err = auth.ErrInvalidToken
				}
			}
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		startSession(w, r, tokens, changed, "Password changed")
	}))
}

// checkNewPassword applies the rules of account creation to a new
// password.
func checkNewPassword(pw string) error {
	switch {
	case pw == "":
		return &store.ValidationError{Message: "new_password must not be empty"}
	case len(pw) > auth.MaxPasswordBytes:
		return &store.ValidationError{Message: fmt.Sprintf("new_password must be at most %d bytes long", auth.MaxPasswordBytes)}
	}
	return nil
}

// refreshClaims returns the claims of the token to refresh. An API token
// is never refreshed: a live one is 403
// (docs/api.md#17-sharing-and-api-tokens), any other 401 as for every
// route.
func refreshClaims(r *http.Request, tokens *auth.Tokens, access store.Access) (*auth.Claims, error) {
	raw, err := middleware.TokenFrom(r)
	if err != nil {
		return nil, err
	}
	if auth.IsAPIToken(raw) {
		if _, err := middleware.APIToken(r.Context(), access, raw); err != nil {
			return nil, err
		}
		return nil, store.ErrPermissionDenied
	}
	return tokens.VerifyForRefresh(raw)
}

// authRoutes registers the session routes: login, refresh, logout,
// password and me.
func (d *deps) authRoutes(rt *router) {
	cfg, authn, byIP, byUser, limitBody, protect := d.cfg, d.authn, d.byIP, d.byUser, d.limitBody, d.protect
	rt.handle("POST /api/v1/auth/login", noProject, byIP(limitBody(handleLogin(cfg.Users, cfg.Tokens, cfg.LoginThrottle, cfg.ClientIP))), openapi.Operation{
		ID: "login", Tag: "auth", Summary: "Log in",
		Description: "Exchanges a username and password for a token. A wrong password, an unknown user and a disabled account all answer 401 \"Invalid username or password\". Failed logins are limited per username and per client IP: past the limit every login for them answers 429 until the window has passed.",
		Access:      openapi.Public, Counted: true, Body: "Login", Status: 200, Success: "Token",
		Errors: []int{400, 401},
	})
	rt.handle("POST /api/v1/auth/refresh", noProject, byIP(limitBody(handleRefresh(cfg.Sessions, cfg.Tokens, cfg.Access))), openapi.Operation{
		ID: "refreshToken", Tag: "auth", Summary: "Refresh a token",
		Description: "Exchanges the token in the Authorization header for a new one of the same session. The token may have expired, by no more than the refresh window, and its session must be younger than the maximum session age and not ended. A token can be refreshed once: a second refresh of it is 401 \"Invalid or expired token\" (of two concurrent ones exactly one succeeds); the token itself stays valid until it expires. No body.",
		Access:      openapi.ExpiredBearer, Counted: true, Status: 200, Success: "Token",
		Errors: []int{400},
	})
	rt.handle("POST /api/v1/auth/logout", noProject, authn(byUser(limitBody(handleLogout(cfg.Sessions, cfg.Tokens)))), openapi.Operation{
		ID: "logout", Tag: "auth", Summary: "End the session",
		Description: "Ends the session of the token in the Authorization header: that token and every token refreshed from the same login are refused from then on (401 \"Invalid or expired token\"), on every instance sharing the store. Other sessions of the user go on. Needs a token even when authentication is not required. No body.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Status: 204, Success: "LoggedOut",
		Errors: []int{400},
	})
	rt.handle("POST /api/v1/auth/password", noProject, authn(byUser(limitBody(handlePassword(cfg.Sessions, cfg.Tokens, cfg.LoginThrottle, cfg.ClientIP)))), openapi.Operation{
		ID: "changePassword", Tag: "auth", Summary: "Change the caller's password",
		Description: "With the right current_password, the password becomes new_password (not empty, at most 72 bytes) and every earlier session of the user, this one included, is refused from then on; the answer is a token of a new session. A wrong current_password is 400 VALIDATION_ERROR and counts as a failed login of the user: past the limit of failed logins it answers 429. Needs a token even when authentication is not required.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Body: "PasswordChange", Status: 200, Success: "Token",
		Errors: []int{400},
	})
	rt.handle("GET /api/v1/auth/me", noProject, protect(handleMe()), openapi.Operation{
		ID: "getMe", Tag: "auth", Summary: "Who the caller is",
		Description: "The user the token names: id, username, whether a server administrator, and when the account was created. Needs a token even when authentication is not required; API tokens may not (403).",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Status: 200, Success: "Me",
	})
}

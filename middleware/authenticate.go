package middleware

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

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
// refused at once on every instance. On success the user is the
// request's identity (auth.UserFrom), with the token's claims
// (auth.ClaimsFrom).
// With requireAuth false, a request without an Authorization header runs
// as auth.Anonymous, without claims; a request that sends one is checked
// all the same.
//
// A bearer token starting "hds_" is an API token of a project
// (docs/api.md#sharing-and-api-tokens), looked up by its hash in access
// (APIToken) instead: one indexed lookup, like the user lookup it replaces,
// and no cache, so a revoked token is refused on the next request on every
// instance. The token is then the request's identity (auth.APITokenFrom)
// and no user is.
//
// A refused request is answered by rejected wrapped around the error
// response, so that it can be counted against the client IP before its
// 401 is written.
func Authenticate(tokens *auth.Tokens, sessions store.Sessions, access store.Access, requireAuth bool, rejected func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := authenticate(r, tokens, sessions, access, requireAuth)
			if err != nil {
				refuse(w, r, rejected, err)
				return
			}
			next.ServeHTTP(w, withIdentity(r, id))
		})
	}
}

// withIdentity returns r with id as its identity (auth.IdentityFrom):
// recorded in its reqinfo when it has one, which costs no copy of the
// request, with the caller's id for the log line, and in a new context
// otherwise.
func withIdentity(r *http.Request, id *auth.Identity) *http.Request {
	if info, ok := reqinfo.Lookup(r.Context()); ok {
		info.Identity, info.UserID = id, id.CallerID()
		return r
	}
	return r.WithContext(auth.WithIdentity(r.Context(), id))
}

// refuse answers a request authentication refused: rejected (counting it
// against the client IP) wrapped around the error response.
func refuse(w http.ResponseWriter, r *http.Request, rejected func(http.Handler) http.Handler, err error) {
	rejected(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		envelope.Error(w, r, err)
	})).ServeHTTP(w, r)
}

// authenticate returns the request's caller: the user (and the token's
// claims), the API token, or auth.Anonymous.
func authenticate(r *http.Request, tokens *auth.Tokens, sessions store.Sessions, access store.Access, requireAuth bool) (*auth.Identity, error) {
	id, raw, err := bearer(r, access, requireAuth)
	if id != nil || err != nil {
		return id, err
	}
	user, claims, err := verify(r.Context(), tokens, sessions, raw)
	if err != nil {
		return nil, err
	}
	return &auth.Identity{User: user, Claims: claims}, nil
}

// bearer is the part of authentication that does not depend on how a
// user's session is checked: no token (auth.Anonymous, when allowed) and
// API tokens are done with it (their identity), and anything else
// returns the user's token, raw, still to be verified.
func bearer(r *http.Request, access store.Access, requireAuth bool) (_ *auth.Identity, raw string, _ error) {
	raw, err := TokenFrom(r)
	if errors.Is(err, auth.ErrNoToken) && !requireAuth {
		anon := auth.Anonymous
		return &auth.Identity{User: &anon}, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if auth.IsAPIToken(raw) {
		t, err := APIToken(r.Context(), access, raw)
		if err != nil {
			return nil, "", err
		}
		return &auth.Identity{APIToken: t}, "", nil
	}
	return nil, raw, nil
}

// APIToken returns the live API token whose string is raw: well formed,
// known by its hash, not expired (its project, deleted, takes its tokens
// along). Anything else is auth.ErrInvalidToken, the same for every case,
// so that no answer tells whether a token exists. Store failures are
// returned as they are. On its first use, and then at most once every
// store.TouchInterval, it records the use (last_used_at): a conditional
// write, never one per request.
func APIToken(ctx context.Context, access store.Access, raw string) (*store.APIToken, error) {
	hash, ok := auth.HashAPIToken(raw)
	if !ok || access == nil {
		return nil, auth.ErrInvalidToken
	}
	t, err := access.FindTokenByHash(ctx, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, auth.ErrInvalidToken
	case err != nil:
		return nil, err
	}
	now := time.Now()
	if t.Expired(now) {
		return nil, auth.ErrInvalidToken
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= store.TouchInterval {
		if err := access.TouchToken(ctx, t.ID, now); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// verify checks a user's JWT and returns its user and claims.
func verify(ctx context.Context, tokens *auth.Tokens, sessions store.Sessions, raw string) (*store.User, *auth.Claims, error) {
	claims, err := tokens.Verify(raw)
	if err != nil {
		return nil, nil, err
	}
	user, err := SessionUser(ctx, sessions, claims)
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
	var check store.SessionCheck // on the stack: checkSession keeps no pointer to it
	setCheck(&check, claims)
	return checkSession(ctx, sessions, &check)
}

// checkSession is SessionUser for a session check: the user when the
// session is live, auth.ErrInvalidToken when not, store failures as they
// are. It makes one store call and does not settle check.
func checkSession(ctx context.Context, sessions store.Sessions, check *store.SessionCheck) (*store.User, error) {
	su, err := sessions.FindSessionUser(ctx, check.UserID, check.SessionID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, auth.ErrInvalidToken
	case err != nil:
		return nil, err
	case !check.Live(su):
		return nil, auth.ErrInvalidToken
	}
	return su.User, nil
}

// setCheck makes c the session check of a verified token's claims.
func setCheck(c *store.SessionCheck, claims *auth.Claims) {
	session := claims.Session()
	c.UserID, c.SessionID, c.Generation = claims.Subject, session.ID, session.Generation
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
	// IndexByte is vectorized: 8 ns for a 200-byte token, where
	// ContainsAny(token, " \t") took 91 looking at each byte in turn.
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" ||
		strings.IndexByte(token, ' ') >= 0 || strings.IndexByte(token, '\t') >= 0 {
		return "", false
	}
	return token, true
}

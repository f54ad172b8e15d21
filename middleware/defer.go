package middleware

import (
	"context"
	"errors"
	"maps"
	"net/http"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// DeferSession is Authenticate for the read routes whose one store call
// can make the session check itself (store.SessionChecker: sessions must
// be the store that serves the route). A user's token is verified in
// process, and the check that the user exists and is active and that the
// session is live is left to that store call, which makes it in the
// statement that resolves the path: the request costs one database round
// trip instead of two. No token, API tokens, and every refusal before the
// check are as Authenticate has them.
//
// The caller is then a store.SessionCheck (auth.SessionCheckFrom) in
// place of the user, and the response goes
// through a gate that lets nothing out before the check is settled: when
// the route answers, whatever the answer, a check no store call made is
// made then (sessions.FindSessionUser, as Authenticate does), and a
// session that is not live is answered exactly as Authenticate answers
// it, 401 "Invalid or expired token" counted against the client IP
// (rejected), in place of what the route wrote; the count the rate limit
// made against the user is taken back. So an ended session is refused
// before a missing path (404), a refused access (403), a bad query (400)
// or the user's rate limit (429), as before, and a store method that
// leaves the check undone costs a round trip, never a leak. Routes that
// write must not use it.
func DeferSession(tokens *auth.Tokens, sessions store.Sessions, access store.Access, requireAuth bool, rejected func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, raw, err := bearer(r, access, requireAuth)
			var claims *auth.Claims
			if err == nil && id == nil {
				claims, err = tokens.Verify(raw)
			}
			switch {
			case err != nil:
				refuse(w, r, rejected, err)
			case id != nil:
				next.ServeHTTP(w, withIdentity(r, id))
			default:
				g := newGate(w, r, sessions, rejected, claims)
				r = withIdentity(r, &auth.Identity{Claims: claims, SessionCheck: g.check})
				next.ServeHTTP(g, r.WithContext(context.WithValue(r.Context(), gateKey{}, g)))
				g.settle() // a route that wrote nothing is settled all the same
			}
		})
	}
}

type gateKey struct{}

// gateOf returns the gate of a request whose session check was deferred,
// or nil.
func gateOf(ctx context.Context) *sessionGate {
	g, _ := ctx.Value(gateKey{}).(*sessionGate)
	return g
}

// sessionGate is the response writer of a request whose session check
// was deferred (DeferSession): the first write settles the check, and a
// session that is not live replaces the response with the refusal.
type sessionGate struct {
	http.ResponseWriter
	r        *http.Request // the request as authentication got it
	sessions store.Sessions
	rejected func(http.Handler) http.Handler
	check    *store.SessionCheck
	// header is the response's header as authentication found it, what
	// a refusal is answered with.
	header http.Header
	// uncount, set by the rate limit, takes back the request's count
	// against the user.
	uncount func()
	// open: the check passed and the route's answer goes out; refused:
	// the refusal went out instead and the route's answer is dropped.
	open, refused bool
}

func newGate(w http.ResponseWriter, r *http.Request, sessions store.Sessions, rejected func(http.Handler) http.Handler, claims *auth.Claims) *sessionGate {
	g := &sessionGate{ResponseWriter: w, r: r, sessions: sessions, rejected: rejected, check: new(store.SessionCheck),
		header: w.Header().Clone()}
	setCheck(g.check, claims)
	return g
}

// WriteHeader implements http.ResponseWriter.
func (g *sessionGate) WriteHeader(code int) {
	if g.settle() {
		g.ResponseWriter.WriteHeader(code)
	}
}

// Write implements http.ResponseWriter; once the request was refused it
// drops b.
func (g *sessionGate) Write(b []byte) (int, error) {
	if !g.settle() {
		return len(b), nil
	}
	return g.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (g *sessionGate) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// settle settles the check, making it here when no store call did, and
// reports whether the route's answer may go out; when not, the refusal
// has gone out in its place.
func (g *sessionGate) settle() bool {
	switch {
	case g.open:
		return true
	case g.refused:
		return false
	}
	c := g.check
	if c.Due() {
		user, err := checkSession(g.r.Context(), g.sessions, c)
		switch {
		case err == nil:
			c.Pass(user.Username)
		case errors.Is(err, auth.ErrInvalidToken):
			_ = c.Fail()
		default:
			g.refuse(err) // the store failed: answered as Authenticate answers it
			return false
		}
	}
	if c.Failed() {
		g.refuse(auth.ErrInvalidToken)
		return false
	}
	g.open = true
	return true
}

// refuse answers the request as Authenticate answers a refusal, in place
// of what the route wrote: its headers dropped, the user's rate limit
// count taken back, no user in the log line.
func (g *sessionGate) refuse(err error) {
	g.refused = true
	h := g.ResponseWriter.Header()
	clear(h)
	maps.Copy(h, g.header)
	if g.uncount != nil {
		g.uncount()
	}
	reqinfo.From(g.r.Context()).UserID = ""
	refuse(g.ResponseWriter, g.r, g.rejected, err)
}

package handler

import (
	"cmp"
	"net/http"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// deps is what the route functions share: the configuration, its defaults
// filled in, the middleware chains the routes are served behind, and the
// values several resources use.
type deps struct {
	cfg     Config
	cursors cursors
	// byIP counts a request against the client IP, byUser against the
	// authenticated user or API token (the client IP before that).
	byIP, byUser func(http.Handler) http.Handler
	// authn authenticates the request; limitBody limits its body
	// (Config.MaxBodyBytes).
	authn, limitBody func(http.Handler) http.Handler
	// protect is the chain of every protected route: authentication,
	// rate limit, body limit, then the strict query parsing (withQuery).
	// protectRead is protect for the reads that make one store call,
	// protectImport for the routes with larger bodies.
	protect, protectRead, protectImport func(queryHandler) http.Handler
	// audit is the store's audit log, nil when it keeps none.
	audit store.AuditLog
	// records serves the record routes and the cluster data.
	records records
}

// newDeps builds the middleware chains and shared values of cfg.
func newDeps(cfg Config) *deps {
	if cfg.Sessions == nil {
		cfg.Sessions, _ = cfg.Users.(store.Sessions)
	}
	if cfg.Access == nil {
		cfg.Access, _ = cfg.Store.(store.Access)
	}
	d := &deps{cfg: cfg, cursors: newCursors(cfg.Tokens)}
	// Requests are counted against the user once the token verifies, and
	// against the client IP when answered before that.
	d.byIP = cfg.RateLimiter.Limit(func(r *http.Request) string { return "ip:" + cfg.ClientIP.Of(r) })
	d.byUser = cfg.RateLimiter.Limit(func(r *http.Request) string {
		if t := auth.APITokenFrom(r.Context()); t != nil {
			return "token:" + t.ID
		}
		if u := auth.UserFrom(r.Context()); u != nil && u.ID != store.AnonymousUserID {
			return "user:" + u.ID
		}
		if c := auth.SessionCheckFrom(r.Context()); c != nil {
			return "user:" + c.UserID // the same user, its session not checked yet
		}
		return "ip:" + cfg.ClientIP.Of(r)
	})
	d.authn = middleware.Authenticate(cfg.Tokens, cfg.Sessions, cfg.Access, !cfg.AllowAnonymous, d.byIP)
	// Bodies are limited only once the route is known and the caller
	// authenticated, so that an oversized request to an unknown route, with
	// a wrong method or without a token still gets its 404, 405 or 401.
	d.limitBody = middleware.BodyLimit(cfg.MaxBodyBytes)
	// The query string is parsed, strictly, last (withQuery). Every
	// protected route has this order; only authentication and the body
	// limit vary.
	chain := func(authn, limit func(http.Handler) http.Handler) func(queryHandler) http.Handler {
		return func(h queryHandler) http.Handler { return authn(d.byUser(limit(withQuery(cfg.Store, h)))) }
	}
	d.protect = chain(d.authn, d.limitBody)
	// The reads of one record and of a list of records make one store
	// call and change nothing: when the store can check sessions itself
	// (store.SessionChecker), authentication leaves the session check to
	// that call, which makes it in the statement that resolves the path.
	d.protectRead = d.protect
	if sc, ok := cfg.Store.(store.SessionChecker); ok && cfg.Sessions != nil && sc.ChecksSessions(cfg.Sessions) {
		d.protectRead = chain(middleware.DeferSession(cfg.Tokens, cfg.Sessions, cfg.Access, !cfg.AllowAnonymous, d.byIP), d.limitBody)
	}
	// Batches and imports take larger bodies (limits.max_import_bytes).
	d.protectImport = chain(d.authn, middleware.BodyLimit(cfg.MaxImportBytes))

	s := cfg.Store
	d.audit, _ = s.(store.AuditLog)
	d.records = records{store: s, creds: credentials{ring: cfg.Sealer}, audit: d.audit, cursors: d.cursors,
		clusterTags: store.KeepsClusterState(s), maxResolved: cmp.Or(cfg.MaxResolvedBytes, DefaultMaxResolvedBytes),
		pre:           preconditions{requireIfMatch: cfg.RequireIfMatch, maxVersions: cfg.MaxVersions},
		keepAutomatic: keepAutomatic(cfg.KeepAutomaticSnapshots)}
	return d
}

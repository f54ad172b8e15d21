package handler

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// Path prefixes of the resource routes (API.md section 4).
const (
	pathP = "/api/v1/projects/{project}"
	pathC = pathP + "/collections/{collection}"
	pathK = pathC + "/clusters/{cluster}"
	pathR = pathK + "/records/{record}"
)

// New returns the API's router: every route of API.md section 4 and the
// OpenAPI document that describes them (openapi.go), an enveloped 405
// (with Allow) for a known path with a wrong method, an enveloped 404 for
// anything else, and no redirects for non-canonical paths.
func New(cfg Config) http.Handler { return routes(cfg).finish() }

// routes registers every route on a new router.
func routes(cfg Config) *router {
	// Requests are counted against the user once the token verifies, and
	// against the client IP when answered before that.
	byIP := cfg.RateLimiter.Limit(func(r *http.Request) string { return "ip:" + cfg.ClientIP.Of(r) })
	byUser := cfg.RateLimiter.Limit(func(r *http.Request) string {
		if u := auth.UserFrom(r.Context()); u != nil && u.ID != store.AnonymousUserID {
			return "user:" + u.ID
		}
		return "ip:" + cfg.ClientIP.Of(r)
	})
	authn := middleware.Authenticate(cfg.Tokens, cfg.Users, cfg.RequireAuth, byIP)
	// Bodies are limited only once the route is known and the caller
	// authenticated, so that an oversized request to an unknown route, with
	// a wrong method or without a token still gets its 404, 405 or 401.
	limitBody := middleware.BodyLimit(cfg.MaxBodyBytes)
	protect := func(h http.Handler) http.Handler { return authn(byUser(limitBody(h))) }
	rt := newRouter(byIP)
	s := cfg.Store

	rt.handle("GET /health", handleHealth(s, cfg.Version))
	rt.handle("GET /api/v1/openapi.json", handleOpenAPI(cfg.Version, cfg.RequireAuth))
	rt.handle("POST /api/v1/auth/login", byIP(limitBody(handleLogin(cfg.Users, cfg.Tokens, cfg.LoginThrottle, cfg.ClientIP))))
	rt.handle("POST /api/v1/auth/refresh", byIP(limitBody(handleRefresh(cfg.Users, cfg.Tokens))))

	rt.handle("GET /api/v1/projects", protect(handleList(s, projects)))
	rt.handle("POST /api/v1/projects", protect(handleCreateFromBody(s, projects)))
	rt.handle("POST "+pathP, protect(handleCreate(s, projects)))
	rt.handle("GET "+pathP, protect(handleGet(s, projects)))
	rt.handle("PUT "+pathP, protect(handleRename(s, projects)))
	rt.handle("DELETE "+pathP, protect(handleDelete(s, projects)))

	rt.handle("GET "+pathP+"/collections", protect(handleList(s, collections)))
	rt.handle("POST "+pathP+"/collections", protect(handleCreateFromBody(s, collections)))
	rt.handle("POST "+pathC, protect(handleCreate(s, collections)))
	rt.handle("GET "+pathC, protect(handleGet(s, collections)))
	rt.handle("PUT "+pathC, protect(handleRename(s, collections)))
	rt.handle("DELETE "+pathC, protect(handleDelete(s, collections)))

	rec := records{store: s, creds: credentials{ring: cfg.Keyring},
		pre: preconditions{requireIfMatch: cfg.RequireIfMatch, maxVersions: cfg.MaxVersions}}
	rt.handle("GET "+pathC+"/clusters", protect(handleList(s, clusters)))
	rt.handle("POST "+pathC+"/clusters", protect(handleCreateFromBody(s, clusters)))
	rt.handle("POST "+pathK, protect(handleCreate(s, clusters)))
	rt.handle("GET "+pathK, protect(rec.handleClusterData()))
	rt.handle("PUT "+pathK, protect(handleRename(s, clusters)))
	rt.handle("DELETE "+pathK, protect(handleDelete(s, clusters)))

	rt.handle("GET "+pathK+"/records", protect(rec.handleList()))
	rt.handle("POST "+pathK+"/records", protect(rec.handleCreate(true)))
	rt.handle("POST "+pathR, protect(rec.handleCreate(false)))
	rt.handle("GET "+pathR, protect(rec.handleGet()))
	rt.handle("PUT "+pathR, protect(rec.handleUpdate()))
	rt.handle("DELETE "+pathR, protect(rec.handleDelete()))
	rt.handle("GET "+pathR+"/versions", protect(rec.handleVersions()))
	rt.handle("POST "+pathR+"/restore", protect(rec.handleRestore()))

	return rt
}

// router records the methods of each path so that it can answer a wrong
// method with an enveloped 405 and an Allow header, which ServeMux would
// answer in plain text.
type router struct {
	mux     *http.ServeMux
	paths   []string
	methods map[string][]string
	// limit counts the 404 and 405 answers against the client IP.
	limit func(http.Handler) http.Handler
	// patterns are the registered "METHOD /path" patterns, in order; the
	// OpenAPI document describes each one (openapi_test.go).
	patterns []string
}

func newRouter(limit func(http.Handler) http.Handler) *router {
	return &router{mux: http.NewServeMux(), methods: make(map[string][]string), limit: limit}
}

// handle registers "METHOD /path" and notes the method for the path's
// Allow header. The handler records the matched pattern for the log.
func (rt *router) handle(pattern string, h http.Handler) {
	rt.patterns = append(rt.patterns, pattern)
	method, path, _ := strings.Cut(pattern, " ")
	if _, seen := rt.methods[path]; !seen {
		rt.paths = append(rt.paths, path)
	}
	rt.methods[path] = append(rt.methods[path], method)
	if method == http.MethodGet {
		rt.methods[path] = append(rt.methods[path], http.MethodHead)
	}
	rt.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqinfo.From(r.Context()).Pattern = pattern
		h.ServeHTTP(w, r)
	}))
}

// finish registers the 405 fallbacks and the 404 catch-all and returns the
// router behind the canonical-path check.
func (rt *router) finish() http.Handler {
	for _, path := range rt.paths {
		allow := strings.Join(rt.methods[path], ", ")
		rt.mux.Handle(path, rt.limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			envelope.Error(w, r, &envelope.RequestError{Status: http.StatusMethodNotAllowed,
				Message: "Method not allowed", Details: "allowed methods: " + allow})
		})))
	}
	rt.mux.Handle("/", rt.limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		envelope.Error(w, r, envelope.ErrNoRoute)
	})))
	mux := rt.mux
	notCanonical := rt.limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		envelope.Error(w, r, envelope.ErrNoRoute)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !canonical(r.URL.EscapedPath()) {
			notCanonical.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// canonical reports whether path has no empty segment (a trailing '/'
// included) and no "." or ".." segment, raw or percent-encoded. ServeMux
// would redirect such paths to a cleaned one; the API answers 404.
func canonical(path string) bool {
	if !strings.HasPrefix(path, "/") {
		return false
	}
	for seg := range strings.SplitSeq(path[1:], "/") {
		if seg == "" {
			return false
		}
		if strings.Contains(seg, ".") || strings.Contains(seg, "%") {
			if u, err := url.PathUnescape(seg); err != nil || u == "." || u == ".." {
				return false
			}
		}
	}
	return true
}

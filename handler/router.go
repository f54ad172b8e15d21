package handler

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/hds-go/hds/handler/console"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// router records the methods of each path so that it can answer a wrong
// method with an enveloped 405 and an Allow header, which ServeMux would
// answer in plain text.
type router struct {
	mux     *http.ServeMux
	paths   []string
	methods map[string][]string
	// limit counts the 404 and 405 answers against the client IP.
	limit func(http.Handler) http.Handler
	// routes are the registered routes, in order, each with its
	// description: the OpenAPI document is built from them (openapi.go).
	routes []openapi.Route
	// needs is the right each registered pattern needs (noProject for
	// the routes outside any project).
	needs map[string]store.Right
	// console, when set, serves console.Prefix and beneath, before the
	// canonical-path check (its page is a path with a trailing slash).
	console http.Handler
	// background is the work API.Start starts (the webhook
	// dispatcher); each runs until Config.Shutdown is closed.
	background []func()
}

func newRouter(limit func(http.Handler) http.Handler) *router {
	return &router{mux: http.NewServeMux(), methods: make(map[string][]string), needs: make(map[string]store.Right), limit: limit}
}

// handle registers "METHOD /path" with the right it needs on its project
// (noProject for the routes outside any project) and its OpenAPI
// operation, and notes the method for the path's Allow header. The
// handler records the matched pattern for the log.
//
// It panics when the route's need is not declared (the zero store.Right)
// or is not a right, and when a route that reads no token (openapi.Public,
// openapi.ExpiredBearer) declares a right it could not check: a route
// table that forgets what a route needs does not build.
func (rt *router) handle(pattern string, need store.Right, h http.Handler, op openapi.Operation) {
	switch {
	case need == 0:
		panic("hds: route " + pattern + " declares no need: name the store.Right it needs on its project, or noProject")
	case need != noProject && (need < store.RightRead || need > store.RightOwn):
		panic(fmt.Sprintf("hds: route %s declares need %d, which is not a store.Right", pattern, need))
	case need != noProject && op.Access != openapi.Bearer:
		panic("hds: route " + pattern + " reads no token but needs a right on its project")
	}
	rt.routes = append(rt.routes, openapi.Route{Pattern: pattern, Operation: op})
	rt.needs[pattern] = need
	method, path, _ := strings.Cut(pattern, " ")
	if _, seen := rt.methods[path]; !seen {
		rt.paths = append(rt.paths, path)
	}
	rt.methods[path] = append(rt.methods[path], method)
	if method == http.MethodGet {
		rt.methods[path] = append(rt.methods[path], http.MethodHead)
	}
	// A route outside any project puts no need in the store.Path of its
	// requests: a store asked to check a project for it refuses.
	req := &requirement{within: levelOf(pattern), usersOnly: op.UsersOnly}
	if need != noProject {
		req.need = need
	}
	rt.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := reqinfo.Lookup(r.Context())
		if ok {
			info.Pattern = pattern
		}
		if op.Access == openapi.Bearer {
			r = withRequirement(r, info, ok, req)
		}
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
	mux, consoleHandler := rt.mux, rt.console
	notCanonical := rt.limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		envelope.Error(w, r, envelope.ErrNoRoute)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; consoleHandler != nil && (p+"/" == console.Prefix || strings.HasPrefix(p, console.Prefix)) {
			reqinfo.From(r.Context()).Pattern = "GET " + console.Prefix
			consoleHandler.ServeHTTP(w, r)
			return
		}
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
	// One pass over the bytes (every request takes it): a segment is
	// unescaped only when it holds a '.' or a '%'.
	start, special := 1, false
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			special = special || path[i] == '.' || path[i] == '%'
			continue
		}
		seg := path[start:i]
		if seg == "" {
			return false
		}
		if special {
			if u, err := url.PathUnescape(seg); err != nil || u == "." || u == ".." {
				return false
			}
		}
		start, special = i+1, false
	}
	return true
}

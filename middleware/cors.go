package middleware

import (
	"net/http"
	"strconv"
	"strings"
)

// varyOrigin is the Vary value of every response, shared by all of them
// (as envelope.SetContentType shares Content-Type's).
var varyOrigin = []string{"Origin"}

// CORS headers answered to allowed origins (docs/api.md#cors).
const (
	corsAllowMethods  = "GET, POST, PUT, DELETE, OPTIONS"
	corsAllowHeaders  = "Content-Type, Authorization, If-Match, If-None-Match, Last-Event-ID"
	corsExposeHeaders = HeaderLimit + ", " + HeaderRemaining + ", " + HeaderReset + ", " + HeaderRetryAfter + ", " + RequestIDHeader + ", ETag"
	corsMaxAge        = 600 // seconds
)

// CORS answers cross-origin requests from the allowed origins (exact
// match, or "*" for any): Access-Control-Allow-Origin with the origin
// itself and the exposed rate limit headers and ETag. It answers preflights (OPTIONS
// with Access-Control-Request-Method) from allowed origins itself, with
// 204, before authentication and rate limiting. An origin not allowed gets
// no Access-Control-* header, and its preflight goes to the router like
// any OPTIONS request. Every response varies by Origin.
func CORS(allowedOrigins ...string) func(http.Handler) http.Handler {
	allowed := make(map[string]bool, len(allowedOrigins))
	for _, o := range allowedOrigins {
		allowed[o] = true
	}
	anyOrigin := allowed["*"]
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			if _, ok := h["Vary"]; ok {
				h.Add("Vary", "Origin")
			} else {
				h["Vary"] = varyOrigin[:1:1] // Add, without allocating
			}
			origin := r.Header.Get("Origin")
			ok := origin != "" && (anyOrigin || allowed[origin])
			preflight := r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != ""
			if ok {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
			}
			if !preflight || !ok {
				// A preflight from an origin not allowed is an ordinary
				// OPTIONS request: the router answers it (405 or 404).
				next.ServeHTTP(w, r)
				return
			}
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", strconv.Itoa(corsMaxAge))
			h.Add("Vary", strings.Join([]string{"Access-Control-Request-Method", "Access-Control-Request-Headers"}, ", "))
			w.WriteHeader(http.StatusNoContent)
		})
	}
}

package middleware

import (
	"net/http"
	"strings"
)

// noStoreValue is the Cache-Control value NoStore sets, shared by every
// response (as envelope.SetContentType shares Content-Type's).
var noStoreValue = []string{"no-store"}

// NoStore sets Cache-Control: no-store on every response to prefix or a
// path beneath it, before the request goes on (docs/api.md#conventions:
// the API serves private data and secrets), so that every answer carries
// it: successes and errors, 404s and 405s from routing, 401s and 429s. A
// handler may set its own Cache-Control over it.
func NoStore(prefix string) func(http.Handler) http.Handler {
	prefix = strings.TrimSuffix(prefix, "/")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := r.URL.Path; p == prefix || strings.HasPrefix(p, prefix+"/") {
				w.Header()["Cache-Control"] = noStoreValue[:1:1] // Set, without allocating
			}
			next.ServeHTTP(w, r)
		})
	}
}

package middleware

import (
	"net/http"

	"github.com/hds-go/hds/internal/envelope"
)

// BodyLimit refuses request bodies over limit bytes with 413: at once when
// Content-Length says so, and through http.MaxBytesReader (which
// envelope.Decode maps to 413) when the body is streamed.
func BodyLimit(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				envelope.Error(w, r, envelope.TooLarge(limit))
				return
			}
			if r.Body != http.NoBody { // nothing to limit (most GETs): no reader to make
				r.Body = http.MaxBytesReader(w, r.Body, limit)
			}
			next.ServeHTTP(w, r)
		})
	}
}

package middleware

import (
	"net/http"
	"time"

	"github.com/hds-go/hds/internal/observe"
	"github.com/hds-go/hds/internal/reqinfo"
)

// RequestObserver is told of requests (hds.Observer's request facts,
// which hds.New wires to Observe).
type RequestObserver interface {
	// RequestStarted is told of a request starting.
	RequestStarted(method string)
	// RequestFinished is told of a request answered.
	RequestFinished(method, route string, status int, duration time.Duration)
	// StoreError is told of the store error a request's answer reports:
	// "timeout", "unavailable" or "other".
	StoreError(kind string)
}

// Observe tells o of each request as it starts (its method) and as it
// ends (method, route pattern, status, duration), and of the store error
// its answer reports, if any (docs/library.md#metrics-hdswithobserver).
// The route is the matched pattern without its method, "unmatched" when
// no route matched; the method is one the contract lists or "OTHER".
// Neither ever holds a name from the path. It must run inside RequestID,
// and outside Recover so that a panic's 500 is told. The calls are made
// on the request's goroutine: o must not block (hds's observer queues
// them). With a nil o it returns next itself.
func Observe(o RequestObserver) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if o == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			method := observe.Method(r.Method)
			o.RequestStarted(method)
			info := reqinfo.From(r.Context())
			start := info.Start // Logging's, when it runs outside
			if start.IsZero() {
				start = time.Now()
			}
			// Logging's writer, when it runs outside, already knows the
			// status.
			sw, ok := w.(*statusWriter)
			if !ok {
				sw = &statusWriter{ResponseWriter: w}
				w = sw
			}
			defer func() {
				if info.StoreError != "" {
					o.StoreError(info.StoreError)
				}
				info.End = time.Now()
				o.RequestFinished(method, observe.Route(info.Pattern), sw.status(), info.End.Sub(start))
			}()
			next.ServeHTTP(w, r)
		})
	}
}

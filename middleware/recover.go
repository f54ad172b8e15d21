package middleware

import (
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/reqinfo"
)

// Recover turns a panic in a handler into a 500 SERVER_ERROR envelope; the
// panic value and stack go to the log line, never to the client, and the
// server keeps serving. http.ErrAbortHandler is passed on, as net/http
// expects.
func Recover() func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				if p == http.ErrAbortHandler {
					panic(p)
				}
				envelope.Error(w, r, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
				reqinfo.From(r.Context()).StoreError = "" // a bug, not the store's
			}()
			next.ServeHTTP(w, r)
		})
	}
}

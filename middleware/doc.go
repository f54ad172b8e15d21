// Package middleware holds the HTTP middleware of the handler chain, one
// file each: request id, logging, panic recovery, body limit and
// authentication (Authenticate, and DeferSession for reads whose store
// call checks the session). Each is a func(http.Handler) http.Handler maker in the
// style of go-chi/chi's middleware package. Rate limiting and CORS slot in
// beside them (see hds.New for the order).
package middleware

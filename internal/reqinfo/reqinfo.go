// Package reqinfo carries the facts about one request that the logging
// middleware reports once the request is done: its id, route pattern,
// user, and the internal error behind a 500, which is logged but never
// sent to the client.
package reqinfo

import (
	"context"
	"time"
)

// Info is filled in as the request passes through the handler chain. It
// is owned by one request and needs no locking.
type Info struct {
	RequestID string
	Pattern   string // the route pattern that matched, empty when none did
	UserID    string
	Err       error // the unexpected error behind a 500 response, if any
	// StoreError is the kind of store error the response reports
	// ("timeout", "unavailable" or "other", internal/observe), empty when
	// none: the observer is told of it when the request ends.
	StoreError string
	// Route is what the router records for the handler of the route that
	// matched (the handler package's access requirement), nil when none:
	// kept here, in the Info the request already carries, it costs no
	// copy of the request.
	Route any
	// Identity is who authentication found the caller to be (an
	// *auth.Identity, read by auth.IdentityFrom), nil before it ran;
	// kept here for the same reason.
	Identity any
	// Start is when the request reached the logging middleware, and End
	// when the observer's middleware saw it answered (zero without
	// one): the log line and the observer share the two readings of the
	// clock instead of each making its own.
	Start, End time.Time
}

type ctxKey struct{}

// NewContext returns ctx carrying info.
func NewContext(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, ctxKey{}, info)
}

// Lookup returns the Info in ctx and whether there is one.
func Lookup(ctx context.Context) (*Info, bool) {
	info, ok := ctx.Value(ctxKey{}).(*Info)
	return info, ok
}

// From returns the Info in ctx, or a throwaway one when there is none, so
// that callers never need a nil check.
func From(ctx context.Context) *Info {
	if info, ok := ctx.Value(ctxKey{}).(*Info); ok {
		return info
	}
	return &Info{}
}

// Package reqinfo carries the facts about one request that the logging
// middleware reports once the request is done: its id, route pattern,
// user, and the internal error behind a 500, which is logged but never
// sent to the client.
package reqinfo

import "context"

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
}

type ctxKey struct{}

// NewContext returns ctx carrying info.
func NewContext(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, ctxKey{}, info)
}

// From returns the Info in ctx, or a throwaway one when there is none, so
// that callers never need a nil check.
func From(ctx context.Context) *Info {
	if info, ok := ctx.Value(ctxKey{}).(*Info); ok {
		return info
	}
	return &Info{}
}

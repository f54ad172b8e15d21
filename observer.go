package hds

import "time"

// Observer is told what the service does, for a host's own metrics
// system (docs/library.md#metrics-hdswithobserver): the library imports no
// metrics library, the host turns these facts into its counters, gauges
// and histograms. Each field is a function the host implements, or nil to
// not be told of that fact; the zero Observer is told of nothing and costs
// nothing.
//
// The functions never run on a request's goroutine: each fact is queued
// and one goroutine calls them in order, so a slow function never holds a
// request. They should still return quickly: facts that find the queue
// full (4096 waiting) are dropped, and the count dropped is logged. A
// panic in a function is recovered and logged; the next fact is told as
// usual. Facts never carry a project, collection, cluster or record name,
// a username, a token or a value.
type Observer struct {
	// RequestStarted is told of each request as it starts. method is
	// GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH, or OTHER for any
	// other method. An in-flight gauge counts up here and down in
	// RequestFinished.
	RequestStarted func(method string)
	// RequestFinished is told of each request as it ends: method as in
	// RequestStarted; route the matched route's pattern as
	// docs/api.md#routes writes it ("/api/v1/projects/{project}",
	// "/health"), "/console/" for every console path, and "unmatched"
	// for a request no route matched (routing answered 404 or 405, or
	// CORS answered a preflight); status the HTTP status (499 when the
	// client went away first); duration from start to end (for a
	// change-feed stream, the stream's life).
	RequestFinished func(method, route string, status int, duration time.Duration)
	// StoreError is told of each request answered with a store error,
	// and of each failed check of /health: kind is "timeout" (the store
	// did not answer in time), "unavailable" (it could not be reached or
	// had no room left) or "other" (any other unexpected error: a 500).
	StoreError func(kind string)
	// EventStreamOpened and EventStreamClosed are told of each
	// change-feed stream (GET .../events) as it starts and as it ends: a
	// gauge of open streams counts up and down.
	EventStreamOpened func()
	EventStreamClosed func()
	// WebhookDelivery is told of each attempt at a webhook delivery:
	// outcome "succeeded", "failed" (it will not be tried again) or
	// "retried" (it failed and will be tried again).
	WebhookDelivery func(outcome string)
	// WebhookPending is told the number of webhook deliveries not yet
	// succeeded or failed, of every project (and every instance sharing
	// the store), once when the sender starts and then at most once a
	// second while it runs (WithWebhooks; a store that cannot count them,
	// see store.PendingCounter, is never asked).
	WebhookPending func(n int)
	// RateLimitShared is told where the rate limit counters are: once
	// when the handler is built (false without a shared store,
	// WithRateLimitStore), then at each switch: true while they are in
	// the shared store (Redis), false while it is down and they are
	// counted in this process.
	RateLimitShared func(shared bool)
	// LoginFailed is told of each failed login: an unknown username, a
	// wrong password or a disabled account (POST /api/v1/auth/login), and
	// a wrong current password of a password change. A login refused for
	// too many failures (429) is not one.
	LoginFailed func()
	// Backup is for backups, outcome "succeeded" or "failed". The
	// handler makes none, so it never calls it: a program that makes
	// backups (store/sqlite's Backup) calls it itself, as the standalone
	// server does, so that one Observer holds every fact.
	Backup func(outcome string)
}

// WithObserver tells o what the service does (Observer). Default: nobody
// is told, and nothing is queued. Called more than once, the last one
// holds.
func WithObserver(o Observer) Option {
	return func(c *config) { c.observer = o }
}

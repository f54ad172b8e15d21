// Package observe tells a host's observer (hds.Observer,
// docs/library.md#metrics-hdswithobserver) what the service does: requests,
// store errors, change-feed streams, webhook deliveries, the rate limiter's
// switches, failed logins and backups. The library's packages call the
// methods of an *Observer; a nil one costs one comparison and tells nobody.
//
// The host's functions never run on the caller's goroutine: each fact is
// queued (a bounded buffer, without allocating) and one goroutine calls
// them in order, so a slow or blocked host function never holds a request.
// That goroutine starts with the first fact and ends after a minute
// without one.
// A fact that finds the buffer full is dropped and counted, and the drops
// are logged at most once every 30 seconds. A panic in a host function is
// recovered and logged, and the next fact is told as usual.
package observe

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Hooks are the host's functions, one per fact; a nil one is not told.
// hds.Observer has the same fields and converts to it.
type Hooks struct {
	RequestStarted    func(method string)
	RequestFinished   func(method, route string, status int, duration time.Duration)
	StoreError        func(kind string)
	EventStreamOpened func()
	EventStreamClosed func()
	WebhookDelivery   func(outcome string)
	WebhookPending    func(n int)
	RateLimitShared   func(shared bool)
	LoginFailed       func()
	Backup            func(outcome string)
}

// The kinds of store errors (Hooks.StoreError).
const (
	StoreTimeout     = "timeout"
	StoreUnavailable = "unavailable"
	StoreOther       = "other"
)

// The outcomes of webhook delivery attempts (Hooks.WebhookDelivery).
const (
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
	DeliveryRetried   = "retried"
)

// The outcomes of backups (Hooks.Backup).
const (
	BackupSucceeded = "succeeded"
	BackupFailed    = "failed"
)

// Unmatched is the route of a request that no route matched: routing
// answered it 404 or 405 (or CORS answered its preflight before routing).
const Unmatched = "unmatched"

// MethodOther is the method of a request whose method is none of those
// the contract lists.
const MethodOther = "OTHER"

// QueueSize is how many facts wait for the host's functions at most;
// more are dropped (and counted).
const QueueSize = 4096

// dropLogInterval is how often, at most, dropped facts are logged.
const dropLogInterval = 30 * time.Second

// kind is which hook an event is for.
type kind uint8

const (
	requestStarted kind = iota
	requestFinished
	storeError
	streamOpened
	streamClosed
	webhookDelivery
	webhookPending
	rateLimitShared
	loginFailed
	backup
)

// names are the hooks' names, for the log line of a panic.
var names = [...]string{"RequestStarted", "RequestFinished", "StoreError", "EventStreamOpened",
	"EventStreamClosed", "WebhookDelivery", "WebhookPending", "RateLimitShared", "LoginFailed", "Backup"}

// event is one fact in the queue: 16 bytes without a pointer, copied,
// never allocated. Its texts (the method, and the route, kind or outcome)
// are indexes in texts, so the queue is a quarter of the bytes it would be
// holding strings and the collector never scans it: it is live for as
// long as the handler is, and on a server whose heap is small every byte
// of it leaves less room before the next collection.
type event struct {
	n      int64  // the duration, the pending count, or 1 for shared
	status uint16 // an HTTP status (net/http allows 100 to 999)
	method uint16 // index in texts
	text   uint16 // index in texts: the route, the kind or the outcome
	kind   kind
}

// Observer queues facts for the host's Hooks. The zero value is not
// usable: New makes one. A nil *Observer tells nobody.
type Observer struct {
	hooks   Hooks
	logger  *slog.Logger
	queue   chan event
	dropped atomic.Int64
	// running is true while a goroutine tells the queued facts; it
	// starts with the first fact and ends after idleExit without one.
	running atomic.Bool
	mu      sync.Mutex // guards lastLog
	lastLog time.Time
}

// idleExit is how long the telling goroutine waits for a fact before it
// ends (the next fact starts another).
const idleExit = time.Minute

// New returns an Observer of hooks. With no hook set it returns nil,
// which tells nobody and costs nothing. logger (slog.Default() when nil)
// receives the panics of hooks and the count of dropped facts. It starts
// no goroutine: the first fact does, and it ends after a minute without
// facts.
func New(hooks Hooks, logger *slog.Logger) *Observer {
	if hooks.empty() {
		return nil
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Observer{hooks: hooks, logger: logger, queue: make(chan event, QueueSize)}
}

// empty reports whether no hook is set.
func (h *Hooks) empty() bool {
	return h.RequestStarted == nil && h.RequestFinished == nil && h.StoreError == nil &&
		h.EventStreamOpened == nil && h.EventStreamClosed == nil && h.WebhookDelivery == nil &&
		h.WebhookPending == nil && h.RateLimitShared == nil && h.LoginFailed == nil && h.Backup == nil
}

// tellBatch bounds a run of facts told before the idle timer is reset
// and dropped facts are logged.
const tellBatch = 256

// gatherPause is how long the telling goroutine waits, once it has
// emptied the queue, before it reads it again: facts put meanwhile are
// told together, for one wake-up of the goroutine, where a wait on the
// empty queue is woken by each (a request puts two). A fact may be
// told this much later; the queue (QueueSize) holds what comes in the
// pause up to four million facts a second.
const gatherPause = time.Millisecond

// run tells the host each queued fact, in order, and ends once none came
// for idleExit. A run of facts waiting together is told in one go, the
// idle timer reset once after it. Only one run goroutine exists at a
// time (running).
func (o *Observer) run() {
	idle := time.NewTimer(idleExit)
	defer idle.Stop()
	for {
		select {
		case e := <-o.queue:
			o.tell(e)
			// Tell what else is waiting before the idle timer is
			// reset: once for a run of facts, not once for each.
			emptied := false
		batch:
			for range tellBatch {
				select {
				case e := <-o.queue:
					o.tell(e)
				default:
					emptied = true
					break batch
				}
			}
			o.logDropped()
			idle.Reset(idleExit)
			if emptied {
				// Let the next facts gather: waiting on the empty
				// queue, this goroutine would be woken by each fact
				// put, two goroutine switches a request under load.
				time.Sleep(gatherPause)
			}
		case <-idle.C:
			o.running.Store(false)
			// A fact queued just before running went false found it
			// true and started nobody: go on for it.
			if len(o.queue) == 0 || !o.running.CompareAndSwap(false, true) {
				return
			}
			idle.Reset(idleExit)
		}
	}
}

// logDropped logs the facts dropped since the last line, at most once
// every dropLogInterval; it never waits for another caller.
func (o *Observer) logDropped() {
	n := o.dropped.Load()
	if n == 0 {
		return
	}
	if !o.mu.TryLock() {
		return // another caller is logging them
	}
	defer o.mu.Unlock()
	if time.Since(o.lastLog) < dropLogInterval {
		return
	}
	o.dropped.Add(-n)
	o.lastLog = time.Now()
	o.logger.Warn("hds: the observer is behind: facts dropped", "dropped", n)
}

// tell calls the hook of e, recovering and logging a panic in it.
func (o *Observer) tell(e event) {
	defer func() {
		if p := recover(); p != nil {
			o.logger.Error("hds: the observer panicked", "hook", names[e.kind], "panic", fmt.Sprint(p))
		}
	}()
	h := &o.hooks
	switch e.kind {
	case requestStarted:
		h.RequestStarted(texts.at(e.method))
	case requestFinished:
		h.RequestFinished(texts.at(e.method), texts.at(e.text), int(e.status), time.Duration(e.n))
	case storeError:
		h.StoreError(texts.at(e.text))
	case streamOpened:
		h.EventStreamOpened()
	case streamClosed:
		h.EventStreamClosed()
	case webhookDelivery:
		h.WebhookDelivery(texts.at(e.text))
	case webhookPending:
		h.WebhookPending(int(e.n))
	case rateLimitShared:
		h.RateLimitShared(e.n == 1)
	case loginFailed:
		h.LoginFailed()
	case backup:
		h.Backup(texts.at(e.text))
	}
}

// putText queues e with its method and text, interned (texts); a text
// the table has no room for drops the fact.
func (o *Observer) putText(e event, method, text string) {
	var ok1, ok2 bool
	e.method, ok1 = texts.index(method)
	e.text, ok2 = texts.index(text)
	if !ok1 || !ok2 {
		o.drop()
		return
	}
	o.put(e)
}

// put queues e, or drops and counts it when the queue is full, and
// starts the telling goroutine when none runs.
func (o *Observer) put(e event) {
	select {
	case o.queue <- e:
	default:
		o.drop()
	}
	if !o.running.Load() && o.running.CompareAndSwap(false, true) {
		go o.run()
	}
}

// drop counts a fact dropped and logs the count when it is time.
func (o *Observer) drop() {
	o.dropped.Add(1)
	o.logDropped() // the telling goroutine may be stuck in a hook
}

// WantsRequests reports whether the host is told of requests: the
// request middleware is needed only then.
func (o *Observer) WantsRequests() bool {
	return o != nil && (o.hooks.RequestStarted != nil || o.hooks.RequestFinished != nil || o.hooks.StoreError != nil)
}

// WantsPending reports whether the host is told the number of pending
// webhook deliveries, which costs a count in the store.
func (o *Observer) WantsPending() bool { return o != nil && o.hooks.WebhookPending != nil }

// RequestStarted tells of a request starting; method is Method's.
func (o *Observer) RequestStarted(method string) {
	if o != nil && o.hooks.RequestStarted != nil {
		o.putText(event{kind: requestStarted}, method, "")
	}
}

// RequestFinished tells of a request answered: method is Method's, route
// Route's, status the HTTP status.
func (o *Observer) RequestFinished(method, route string, status int, d time.Duration) {
	if o != nil && o.hooks.RequestFinished != nil {
		o.putText(event{kind: requestFinished, status: uint16(status), n: int64(d)}, method, route)
	}
}

// StoreError tells of a store error: StoreTimeout, StoreUnavailable or
// StoreOther.
func (o *Observer) StoreError(kind string) {
	if o != nil && o.hooks.StoreError != nil {
		o.putText(event{kind: storeError}, "", kind)
	}
}

// EventStreamOpened tells of a change-feed stream starting.
func (o *Observer) EventStreamOpened() {
	if o != nil && o.hooks.EventStreamOpened != nil {
		o.put(event{kind: streamOpened})
	}
}

// EventStreamClosed tells of a change-feed stream ending.
func (o *Observer) EventStreamClosed() {
	if o != nil && o.hooks.EventStreamClosed != nil {
		o.put(event{kind: streamClosed})
	}
}

// WebhookDelivery tells of a delivery attempt: DeliverySucceeded,
// DeliveryFailed (no more attempts) or DeliveryRetried (another attempt
// will follow).
func (o *Observer) WebhookDelivery(outcome string) {
	if o != nil && o.hooks.WebhookDelivery != nil {
		o.putText(event{kind: webhookDelivery}, "", outcome)
	}
}

// WebhookPending tells the number of deliveries not yet succeeded or
// failed.
func (o *Observer) WebhookPending(n int) {
	if o != nil && o.hooks.WebhookPending != nil {
		o.put(event{kind: webhookPending, n: int64(n)})
	}
}

// RateLimitShared tells where the rate limit counters are: true in the
// shared store (Redis), false in this process.
func (o *Observer) RateLimitShared(shared bool) {
	if o != nil && o.hooks.RateLimitShared != nil {
		var n int64
		if shared {
			n = 1
		}
		o.put(event{kind: rateLimitShared, n: n})
	}
}

// LoginFailed tells of a failed login: a wrong username or password, or
// a disabled account (and a wrong current password on a password change).
func (o *Observer) LoginFailed() {
	if o != nil && o.hooks.LoginFailed != nil {
		o.put(event{kind: loginFailed})
	}
}

// Backup tells of a backup made: BackupSucceeded or BackupFailed.
func (o *Observer) Backup(outcome string) {
	if o != nil && o.hooks.Backup != nil {
		o.putText(event{kind: backup}, "", outcome)
	}
}

// Method is the method as the facts carry it: one of GET, HEAD, POST,
// PUT, DELETE, OPTIONS and PATCH, or MethodOther for any other, so that
// a client cannot make up label values.
func Method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
		http.MethodOptions, http.MethodPatch:
		return m
	}
	return MethodOther
}

// Route is the route of a request whose matched pattern ("GET /health",
// reqinfo.Info.Pattern) is pattern: the pattern without its method, or
// Unmatched when no route matched.
func Route(pattern string) string {
	if pattern == "" {
		return Unmatched
	}
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

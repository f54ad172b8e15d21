package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hds-go/hds/internal/observe"
	"github.com/hds-go/hds/store"
)

// Defaults of the configuration (docs/api.md#webhooks).
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxBackoff  = time.Hour
	DefaultMaxAttempts = 10
	// DefaultMaxPending bounds each webhook's deliveries not yet
	// succeeded or failed (webhooks.max_pending).
	DefaultMaxPending = store.DefaultMaxPending
	// DefaultKeepDeliveries is how long finished deliveries are kept
	// (webhooks.keep_deliveries).
	DefaultKeepDeliveries = 7 * 24 * time.Hour
	// DefaultPruneEvery is how often finished deliveries past
	// KeepDeliveries are deleted.
	DefaultPruneEvery = time.Minute
	// DefaultWorkers bounds the deliveries in flight from one instance:
	// each holds one goroutine and one connection, for at most Timeout.
	DefaultWorkers = 16
	// DefaultPoll is how often the outbox is read when nothing woke the
	// dispatcher earlier.
	DefaultPoll = 500 * time.Millisecond
	// DefaultCountEvery is how often, at most, the pending deliveries
	// are counted for an observer.
	DefaultCountEvery = time.Second
	// firstBackoff is the wait before the second attempt; each later
	// wait doubles it, up to MaxBackoff.
	firstBackoff = time.Second
	// leaseMargin is how much longer than Timeout a claim lasts: a
	// sender that stops mid-attempt leaves the delivery to another after
	// it.
	leaseMargin = 30 * time.Second
	// maxAnswer is how much of an answer is read (and dropped) so that
	// its connection may be used again.
	maxAnswer = 64 << 10
)

// Config configures a Dispatcher. Zero fields take the defaults.
type Config struct {
	Store       store.Webhooks
	Timeout     time.Duration
	MaxBackoff  time.Duration
	MaxAttempts int
	Workers     int
	Poll        time.Duration
	// KeepDeliveries is how long a finished delivery is kept before the
	// dispatcher deletes it (store.Webhooks.PruneDeliveries).
	KeepDeliveries time.Duration
	// PruneEvery is how often they are looked for.
	PruneEvery time.Duration
	Guard      Guard
	// Body is the JSON body of an event's delivery: the audit entry as
	// the API writes it.
	Body func(*store.AuditEntry) []byte
	// Secret returns the plain secret of a webhook (opening a sealed
	// one); its error, which must hold no secret, fails the delivery at
	// once. nil: the stored secret as it is.
	Secret func(*store.Webhook) ([]byte, error)
	// Logger receives the errors of the store; nil: slog.Default().
	Logger *slog.Logger
	// Observer is told the outcome of each attempt and, with
	// CountPending and a store.PendingCounter store, the number of
	// pending deliveries (at start, then at most every CountEvery); nil
	// tells nobody.
	Observer Observer
	// CountPending asks the store for the pending count for Observer.
	CountPending bool
	// CountEvery is how often, at most, pending deliveries are counted
	// for the Observer; 0 is DefaultCountEvery.
	CountEvery time.Duration
}

// Observer is told of the dispatcher's attempts and backlog (the
// handler's Observer).
type Observer interface {
	// WebhookDelivery is told of each attempt: observe.DeliverySucceeded,
	// observe.DeliveryFailed or observe.DeliveryRetried.
	WebhookDelivery(outcome string)
	// WebhookPending is told the number of pending deliveries.
	WebhookPending(n int)
}

// Dispatcher sends the deliveries of the store's outbox. Several
// dispatchers, in one process or on several instances sharing a
// database, may run at once: the store's claims keep each delivery with
// one of them at a time.
type Dispatcher struct {
	cfg    Config
	client *http.Client
	owner  string
	wake   chan struct{}

	mu sync.Mutex
	// inflight are the cancels of the sends in flight, by webhook id.
	inflight map[string]map[*send]struct{}
	// gone are the webhooks deleted (Forget) and when: a claim made just
	// before the delete is not sent.
	gone map[string]time.Time
}

// send is one attempt in flight.
type send struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a Dispatcher; Run starts it.
func New(cfg Config) *Dispatcher {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.KeepDeliveries <= 0 {
		cfg.KeepDeliveries = DefaultKeepDeliveries
	}
	if cfg.PruneEvery <= 0 {
		cfg.PruneEvery = DefaultPruneEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.CountEvery <= 0 {
		cfg.CountEvery = DefaultCountEvery
	}
	return &Dispatcher{cfg: cfg, client: NewClient(cfg.Guard, cfg.Timeout, cfg.Workers), owner: store.NewID(),
		wake: make(chan struct{}, 1), inflight: map[string]map[*send]struct{}{}, gone: map[string]time.Time{}}
}

// NewClient returns the HTTP client of deliveries: its dialer checks
// every address it connects to (g.Control), it uses no proxy (which
// would connect for it), follows no redirect, and gives up after
// timeout. At most conns idle connections are kept.
func NewClient(g Guard, timeout time.Duration, conns int) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: g.Control}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			MaxIdleConns:          conns,
			MaxIdleConnsPerHost:   conns,
			IdleConnTimeout:       30 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       timeout,
	}
}

// Wake makes the dispatcher read the outbox now (a ping was added).
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Forget stops the deliveries of a deleted webhook at once: a send in
// flight from this dispatcher is cancelled, and Forget returns once it
// has ended; a claim not yet sent is dropped. Other instances' sends end
// within the timeout.
func (d *Dispatcher) Forget(webhookID string) {
	d.mu.Lock()
	now := time.Now()
	d.gone[webhookID] = now
	for id, at := range d.gone {
		if now.Sub(at) > d.cfg.Timeout+leaseMargin {
			delete(d.gone, id)
		}
	}
	var wait []chan struct{}
	for s := range d.inflight[webhookID] {
		s.cancel()
		wait = append(wait, s.done)
	}
	d.mu.Unlock()
	for _, c := range wait {
		<-c
	}
}

// Run sends deliveries until stop is closed, then cancels the sends in
// flight and returns once they have ended. A nil stop runs for ever.
func (d *Dispatcher) Run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	if stop != nil {
		go func() {
			<-stop
			cancel()
		}()
	}
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, d.cfg.Workers)
	ticker := time.NewTicker(d.cfg.Poll)
	defer ticker.Stop()
	var pruned, counted time.Time
	counter, _ := d.cfg.Store.(store.PendingCounter)
	if d.cfg.Observer == nil || !d.cfg.CountPending {
		counter = nil
	}
	for {
		if now := time.Now(); counter != nil && now.Sub(counted) >= d.cfg.CountEvery {
			counted = now
			if n, err := counter.CountPendingDeliveries(ctx); err == nil {
				d.cfg.Observer.WebhookPending(n)
			} else if ctx.Err() == nil {
				d.cfg.Logger.Error("webhooks: count pending deliveries", "error", err)
			}
		}
		if now := time.Now(); now.Sub(pruned) >= d.cfg.PruneEvery {
			pruned = now
			if _, err := d.cfg.Store.PruneDeliveries(ctx, now.Add(-d.cfg.KeepDeliveries)); err != nil && ctx.Err() == nil {
				d.cfg.Logger.Error("webhooks: delete old deliveries", "error", err)
			}
		}
		if free := cap(slots) - len(slots); free > 0 {
			claims, err := d.cfg.Store.ClaimDeliveries(ctx, d.owner, time.Now(), d.cfg.Timeout+leaseMargin, free)
			if err != nil && ctx.Err() == nil {
				d.cfg.Logger.Error("webhooks: claim deliveries", "error", err)
			}
			for _, c := range claims {
				slots <- struct{}{}
				wg.Go(func() {
					defer func() {
						<-slots
						d.Wake() // the webhook's next delivery may go
					}()
					d.deliver(ctx, c)
				})
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-ticker.C:
		}
	}
}

// deliver makes one attempt at the claimed delivery and records it.
func (d *Dispatcher) deliver(ctx context.Context, c *store.Claim) {
	sctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	s := &send{cancel: cancel, done: make(chan struct{})}
	defer close(s.done)
	hook := c.Webhook.ID
	d.mu.Lock()
	if _, gone := d.gone[hook]; gone {
		d.mu.Unlock()
		return
	}
	if d.inflight[hook] == nil {
		d.inflight[hook] = map[*send]struct{}{}
	}
	d.inflight[hook][s] = struct{}{}
	d.mu.Unlock()

	var code int
	secret, sendErr := c.Webhook.Secret, error(nil)
	if d.cfg.Secret != nil {
		secret, sendErr = d.cfg.Secret(c.Webhook)
	}
	unopened := sendErr != nil
	if !unopened {
		code, sendErr = d.post(sctx, c, secret)
	}

	d.mu.Lock()
	delete(d.inflight[hook], s)
	if len(d.inflight[hook]) == 0 {
		delete(d.inflight, hook)
	}
	_, gone := d.gone[hook]
	d.mu.Unlock()
	if gone {
		return // deleted meanwhile: its deliveries are gone too
	}
	a := store.Attempt{StatusCode: code, Status: store.DeliverySucceeded}
	if sendErr != nil {
		if ctx.Err() != nil {
			sendErr = errors.New("interrupted: the server shut down")
		}
		a.Error = sendErr.Error()
		attempts := c.Delivery.Attempts + 1
		if attempts >= d.cfg.MaxAttempts || unopened {
			a.Status = store.DeliveryFailed
		} else {
			wait := d.backoff(attempts)
			a.Status, a.NextAttemptAt = store.DeliveryPending, time.Now().Add(wait)
			// Read the outbox again when it is due, rather than at the
			// next poll after.
			time.AfterFunc(wait, d.Wake)
		}
	}
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.Timeout)
	defer fcancel()
	if err := d.cfg.Store.FinishAttempt(fctx, c.Delivery.ID, d.owner, a); err != nil {
		d.cfg.Logger.Error("webhooks: record an attempt", "delivery", c.Delivery.ID, "error", err)
	}
	switch {
	case d.cfg.Observer == nil:
	case a.Status == store.DeliverySucceeded:
		d.cfg.Observer.WebhookDelivery(observe.DeliverySucceeded)
	case a.Status == store.DeliveryFailed:
		d.cfg.Observer.WebhookDelivery(observe.DeliveryFailed)
	default:
		d.cfg.Observer.WebhookDelivery(observe.DeliveryRetried)
	}
}

// backoff is the wait after the attempts-th failed attempt: 1 s, then
// doubling, at most MaxBackoff.
func (d *Dispatcher) backoff(attempts int) time.Duration {
	w := firstBackoff
	for i := 1; i < attempts && w < d.cfg.MaxBackoff; i++ {
		w *= 2
	}
	return min(w, d.cfg.MaxBackoff)
}

// post sends the delivery: the status code of the answer, and an error
// unless it was a 2xx.
func (d *Dispatcher) post(ctx context.Context, c *store.Claim, secret []byte) (int, error) {
	body := d.body(c)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Webhook.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("the url cannot be requested: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hds-webhooks")
	req.Header.Set("X-Hds-Event", string(c.Delivery.Action))
	req.Header.Set("X-Hds-Delivery", c.Delivery.ID)
	req.Header.Set("X-Hds-Signature", Sign(secret, time.Now().Unix(), body))
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, describe(err, d.cfg.Timeout, d.cfg.Guard.AllowPrivate)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return resp.StatusCode, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return resp.StatusCode, fmt.Errorf("answered %d (redirects are not followed)", resp.StatusCode)
	}
	return resp.StatusCode, fmt.Errorf("answered %d", resp.StatusCode)
}

// describe is the last_error of a request that got no answer. It names
// no secret: the URL is the webhook's own.
func describe(err error, timeout time.Duration, allowPrivate bool) error {
	var ue interface{ Timeout() bool }
	var fe *ForbiddenError
	switch {
	case errors.As(err, &fe):
		note := " (webhooks.allow_private_addresses is off)"
		if allowPrivate {
			note = " (refused even with webhooks.allow_private_addresses)"
		}
		return errors.New("refused by the request forgery guard: " + fe.Error() + note)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ue) && ue.Timeout():
		return fmt.Errorf("no answer within %s", timeout)
	}
	return errors.New(innermost(err).Error())
}

// innermost unwraps err to the error that caused it.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// body is the body of the claimed delivery: the entry, or for a ping
// {"webhook", "time"}.
func (d *Dispatcher) body(c *store.Claim) []byte {
	if c.Entry != nil {
		return d.cfg.Body(c.Entry)
	}
	b := []byte(`{"webhook":"` + c.Webhook.ID + `","time":"`)
	b = c.Delivery.CreatedAt.UTC().AppendFormat(b, "2006-01-02T15:04:05.000000Z")
	return append(b, `"}`...)
}

// Sign returns the X-Hds-Signature of body sent at unix time t:
// "t=<t>,v1=<hex of HMAC-SHA256(secret, "<t>.<body>")>".
func Sign(secret []byte, t int64, body []byte) string {
	ts := strconv.FormatInt(t, 10)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

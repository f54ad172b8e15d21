package handler

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/webhook"
	"github.com/hds-go/hds/store"
)

// Webhooks configures the webhooks of docs/api.md#webhooks. The zero
// value takes the defaults and refuses private addresses.
type Webhooks struct {
	// Store keeps the webhooks and their outbox; nil: Config.Store, which
	// must then implement store.Webhooks.
	Store store.Webhooks
	// Timeout bounds one attempt (webhooks.timeout; 0: 10s).
	Timeout time.Duration
	// MaxBackoff bounds the wait between attempts (webhooks.max_backoff;
	// 0: 1h).
	MaxBackoff time.Duration
	// MaxAttempts is how many attempts a delivery gets before it is
	// failed (webhooks.max_attempts; 0: 10).
	MaxAttempts int
	// AllowPrivateAddresses narrows the request forgery guard to the
	// addresses it never lifts (webhooks.allow_private_addresses).
	AllowPrivateAddresses bool
	// MaxPending bounds each webhook's deliveries not yet succeeded or
	// failed (webhooks.max_pending; 0: 10,000; store.Unlimited: no
	// bound), set on the store when the handler is made.
	MaxPending int
	// KeepDeliveries is how long finished deliveries are kept
	// (webhooks.keep_deliveries; 0: 7 days).
	KeepDeliveries time.Duration
}

// Limits of a webhook's fields.
const (
	minWebhookSecret = 16
	maxWebhookSecret = 256
	maxWebhookURL    = 2048
)

// hooks serves the webhook routes.
type hooks struct {
	store    store.Store
	webhooks store.Webhooks
	guard    webhook.Guard
	sender   *webhook.Dispatcher
	// sealer seals webhook secrets as credential values; nil: no
	// credential key, and no webhook may be created.
	sealer Sealer
}

// errNoKeyForSecrets refuses a webhook when no credential key is
// configured: its secret would have to be kept in clear.
var errNoKeyForSecrets = &store.ValidationError{
	Message: "no credential key is configured: webhook secrets are sealed like credential values, so webhooks are disabled"}

// sealSecret returns the secret of the webhook id sealed as a CREDENTIAL
// value is (the webhook id bound to it).
func sealSecret(s Sealer, id string, secret []byte) ([]byte, error) {
	plain, err := json.Marshal(string(secret))
	if err != nil {
		return nil, err
	}
	return s.SealValue(store.Credential, id, plain)
}

// openSecret returns the plain secret of w: opened when sealed, as
// stored when in clear (an earlier version's, until a rotation). Its
// error names no secret; it becomes the delivery's last_error.
func openSecret(s Sealer, w *store.Webhook) ([]byte, error) {
	if !w.SecretSealed {
		return w.Secret, nil
	}
	if s == nil {
		return nil, errors.New("the webhook's secret is sealed and no credential key is configured")
	}
	plain, err := s.OpenValue(store.Credential, w.ID, w.Secret)
	var secret string
	if err == nil {
		err = json.Unmarshal(plain, &secret)
	}
	if err != nil {
		return nil, errors.New("the webhook's secret does not open with the configured credential keys")
	}
	return []byte(secret), nil
}

type webhookOut struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	Actions    []string `json:"actions"`
	Collection *string  `json:"collection"`
	Cluster    *string  `json:"cluster"`
	CreatedAt  string   `json:"created_at"`
}

// webhookCreatedOut is the answer to POST P/webhooks, the only one with
// the secret.
type webhookCreatedOut struct {
	webhookOut
	Secret string `json:"secret"`
}

// eventActions are the actions a webhook receives by default: every
// action of the change feed.
func eventActions() []store.Action {
	var out []store.Action
	for _, a := range store.Actions {
		if a.IsEvent() {
			out = append(out, a)
		}
	}
	return out
}

func webhookJSON(w *store.Webhook) webhookOut {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	actions := w.Actions
	if len(actions) == 0 {
		actions = eventActions()
	}
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = string(a)
	}
	return webhookOut{w.ID, w.URL, names, opt(w.Collection), opt(w.Cluster), formatTime(w.CreatedAt)}
}

type deliveryOut struct {
	ID             string  `json:"id"`
	Revision       *int64  `json:"revision"`
	Action         string  `json:"action"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	LastStatusCode *int    `json:"last_status_code"`
	LastError      *string `json:"last_error"`
	NextAttemptAt  *string `json:"next_attempt_at"`
	CreatedAt      string  `json:"created_at"`
}

func deliveryJSON(d *store.Delivery) deliveryOut {
	out := deliveryOut{ID: d.ID, Action: string(d.Action), Status: string(d.Status), Attempts: d.Attempts,
		CreatedAt: formatTime(d.CreatedAt)}
	if d.Revision != 0 {
		out.Revision = &d.Revision
	}
	if d.LastStatusCode != 0 {
		out.LastStatusCode = &d.LastStatusCode
	}
	if d.LastError != "" {
		out.LastError = &d.LastError
	}
	if d.NextAttemptAt != nil {
		s := formatTime(*d.NextAttemptAt)
		out.NextAttemptAt = &s
	}
	return out
}

// webhookBody is the body of POST P/webhooks.
type webhookBody struct {
	URL        *string   `json:"url"`
	Actions    *[]string `json:"actions"`
	Collection *string   `json:"collection"`
	Cluster    *string   `json:"cluster"`
	Secret     *string   `json:"secret"`
}

// check validates the body, but for the url's address (the guard's), and
// returns the webhook it asks for.
func (b webhookBody) check() (*store.Webhook, error) {
	invalid := func(msg string) error { return &store.ValidationError{Message: msg} }
	if b.URL == nil {
		return nil, envelope.BadRequest(`the field "url" is required`)
	}
	if len(*b.URL) > maxWebhookURL || !utf8.ValidString(*b.URL) {
		return nil, invalid("url must be at most 2048 bytes of text")
	}
	w := &store.Webhook{URL: *b.URL}
	if b.Actions != nil {
		if len(*b.Actions) == 0 {
			return nil, invalid("actions must not be empty (leave it out for every action)")
		}
		for _, a := range *b.Actions {
			act := store.Action(a)
			if !act.Valid() || !act.IsEvent() {
				return nil, invalid("actions: " + strconv.Quote(a) + " is not an action of the change feed")
			}
			if !slices.Contains(w.Actions, act) {
				w.Actions = append(w.Actions, act)
			}
		}
	}
	if b.Cluster != nil && b.Collection == nil {
		return nil, invalid("a cluster scope needs a collection")
	}
	for _, s := range []struct {
		v   *string
		dst *string
	}{{b.Collection, &w.Collection}, {b.Cluster, &w.Cluster}} {
		if s.v != nil {
			if err := store.ValidateName(*s.v); err != nil {
				return nil, err
			}
			*s.dst = *s.v
		}
	}
	if b.Secret != nil {
		if n := len(*b.Secret); n < minWebhookSecret || n > maxWebhookSecret {
			return nil, invalid("secret must be 16 to 256 bytes")
		}
		w.Secret = []byte(*b.Secret)
	} else {
		raw := make([]byte, 32)
		_, _ = rand.Read(raw) // crypto/rand never fails on supported platforms
		w.Secret = []byte("whsec_" + hex.EncodeToString(raw))
	}
	return w, nil
}

// handleCreate serves POST P/webhooks: the secret appears in this answer
// only.
func (h hooks) handleCreate() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		var body webhookBody
		_, err := envelope.Decode(r, &body)
		var hook *store.Webhook
		if err == nil {
			hook, err = body.check()
		}
		if err == nil && h.sealer == nil {
			err = errNoKeyForSecrets
		}
		if err == nil {
			if gerr := h.guard.CheckURL(r.Context(), hook.URL); gerr != nil {
				err = &store.ValidationError{Message: gerr.Error()}
			}
		}
		var plain []byte
		if err == nil {
			plain, hook.ID = hook.Secret, store.NewID()
			hook.Secret, err = sealSecret(h.sealer, hook.ID, plain)
			hook.SecretSealed = true
		}
		if err != nil {
			reject(w, r, h.store, err)
			return
		}
		p := pathOf(r)
		hook.CreatedBy = p.Caller.UserID
		got, err := h.webhooks.CreateWebhook(r.Context(), p, hook)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusCreated, webhookCreatedOut{webhookJSON(got), string(plain)}, "Webhook created")
	}
}

// handleList serves GET P/webhooks, oldest first, without the secrets.
func (h hooks) handleList() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		q, err := parsePage(query)
		if err != nil {
			reject(w, r, h.store, err)
			return
		}
		items, total, err := h.webhooks.FindWebhooks(r.Context(), pathOf(r), q)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		streamPage(w, r, total, q, store.Items(items), func(out *stream, it *store.Webhook) error {
			return appendJSONValue(out, webhookJSON(it))
		}, nil)
	}
}

// handleGet serves GET P/webhooks/{id}, without the secret.
func (h hooks) handleGet() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		got, err := h.webhooks.FindWebhook(r.Context(), pathOf(r), r.PathValue("id"))
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusOK, webhookJSON(got), "OK")
	}
}

// handleDelete serves DELETE P/webhooks/{id}: once the store has deleted
// it with its outbox, this instance's send in flight, if any, is
// cancelled and waited for, so that nothing is sent after the answer.
func (h hooks) handleDelete() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		id := r.PathValue("id")
		if err := h.webhooks.DeleteWebhook(r.Context(), pathOf(r), id); err != nil {
			envelope.Error(w, r, err)
			return
		}
		h.sender.Forget(id)
		envelope.NoContent(w)
	}
}

// handlePing serves POST P/webhooks/{id}/ping: a ping delivery, sent at
// once.
func (h hooks) handlePing() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		d, err := h.webhooks.PingWebhook(r.Context(), pathOf(r), r.PathValue("id"))
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		h.sender.Wake()
		envelope.OK(w, http.StatusAccepted, deliveryJSON(d), "Ping queued")
	}
}

// handleDeliveries serves GET P/webhooks/{id}/deliveries, newest first.
func (h hooks) handleDeliveries() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		q, err := parsePage(query)
		if err != nil {
			reject(w, r, h.store, err)
			return
		}
		items, total, err := h.webhooks.FindDeliveries(r.Context(), pathOf(r), r.PathValue("id"), q)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		streamPage(w, r, total, q, store.Items(items), func(out *stream, it *store.Delivery) error {
			return appendJSONValue(out, deliveryJSON(it))
		}, nil)
	}
}

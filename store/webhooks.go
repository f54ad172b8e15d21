package store

import (
	"context"
	"slices"
	"time"
)

// Webhook is a project's webhook (docs/api.md#webhooks): the events of
// its actions and scope are POSTed to URL, signed with Secret.
type Webhook struct {
	ID        string
	ProjectID string
	URL       string
	// Actions are the change-feed actions it receives; empty: every one.
	Actions []Action
	// Collection and Cluster narrow it to that subtree, names as at the
	// time of each event (empty: not narrowed; a Cluster needs a
	// Collection).
	Collection string
	Cluster    string
	// Secret keys the HMAC-SHA256 signature of each delivery. It leaves
	// the store for the dispatcher only; the API shows it once, when the
	// webhook is created. When SecretSealed it is sealed above the store
	// as credential values are (internal/sealing, the webhook id as
	// additional data); otherwise it is in clear (written by v1.2, until
	// a credential rotation seals it).
	Secret       []byte
	SecretSealed bool
	CreatedAt    time.Time
	// CreatedBy is the id of the user who created it.
	CreatedBy string
}

// Matches reports whether the audit entry e is an event w receives:
// an event of the change feed (not credential.reveal), of one of w's
// actions, in w's scope. The SQL stores make the same test in SQL.
func (w *Webhook) Matches(e *AuditEntry) bool {
	switch {
	case !e.Action.IsEvent(),
		len(w.Actions) > 0 && !slices.Contains(w.Actions, e.Action),
		w.Collection != "" && e.Collection != w.Collection,
		w.Cluster != "" && e.Cluster != w.Cluster:
		return false
	}
	return true
}

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

// The statuses of a delivery.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"
)

// DefaultMaxPending is how many deliveries of one webhook not yet
// succeeded or failed a store holds unless told otherwise
// (webhooks.max_pending, Webhooks.SetMaxPending).
const DefaultMaxPending = 10_000

// QueueFull is the LastError of a delivery failed because its webhook
// already held the most deliveries not yet succeeded or failed.
const QueueFull = "queue full"

// ActionPing is the action of the event POST P/webhooks/{id}/ping sends.
const ActionPing Action = "ping"

// Delivery is one event on its way to one webhook.
type Delivery struct {
	// ID is the X-Hds-Delivery value, the same on every attempt.
	ID        string
	WebhookID string
	ProjectID string
	// Revision is the event's audit entry; 0 for a ping.
	Revision int64
	Action   Action
	Status   DeliveryStatus
	Attempts int
	// LastStatusCode is the HTTP status of the last answer (0: none);
	// LastError says why the last attempt failed (empty: it did not).
	LastStatusCode int
	LastError      string
	// NextAttemptAt is when a pending delivery is tried next; nil once it
	// has succeeded or failed.
	NextAttemptAt *time.Time
	CreatedAt     time.Time
}

// Claim is a delivery handed to one sender (Webhooks.ClaimDeliveries): the
// delivery, its webhook, and the event's audit entry (nil for a ping).
type Claim struct {
	Delivery *Delivery
	Webhook  *Webhook
	Entry    *AuditEntry
}

// Attempt is the outcome of one attempt at a delivery
// (Webhooks.FinishAttempt).
type Attempt struct {
	// StatusCode is the answer's HTTP status, 0 when none came.
	StatusCode int
	// Error says why the attempt failed; empty when it succeeded.
	Error string
	// Status is the delivery's status after the attempt: succeeded,
	// failed (no more attempts) or pending (NextAttemptAt says when).
	Status        DeliveryStatus
	NextAttemptAt time.Time
}

// Webhooks keeps the webhooks of projects and the outbox of their
// deliveries (docs/api.md#webhooks). Every audit entry that a webhook
// receives (Webhook.Matches, and a revision above that of the
// webhook.create entry that made it) gets a pending delivery for that
// webhook in the same atomic step that writes the entry, so that nothing
// is lost when the process stops. storetest.RunWebhooks is its
// conformance suite. Implementations must be safe for concurrent use.
//
// The methods that take a Path resolve it as the Store does (Path.Check
// with Path.Need).
type Webhooks interface {
	// CreateWebhook adds w to p.Project (w.ProjectID, w.ID when empty and
	// w.CreatedAt are set by the store) and writes the audit entry
	// webhook.create (Target the id). A scope naming a collection or
	// cluster that does not exist is ErrNotFound naming it.
	CreateWebhook(ctx context.Context, p Path, w *Webhook) (*Webhook, error)
	// FindWebhooks lists the webhooks of p.Project, oldest first, paged
	// by q.Limit and q.Offset, with their number.
	FindWebhooks(ctx context.Context, p Path, q ListQuery) ([]*Webhook, int, error)
	// FindWebhook returns the webhook id of p.Project: ErrNotFound (kind
	// "webhook") when the project has none of that id.
	FindWebhook(ctx context.Context, p Path, id string) (*Webhook, error)
	// DeleteWebhook deletes the webhook id of p.Project with its
	// deliveries and writes the audit entry webhook.delete: ErrNotFound
	// (kind "webhook") when the project has none of that id.
	DeleteWebhook(ctx context.Context, p Path, id string) error
	// FindDeliveries lists the deliveries of the webhook id of p.Project,
	// newest first, paged by q.Limit and q.Offset, with their number.
	// ErrNotFound (kind "webhook") as FindWebhook.
	FindDeliveries(ctx context.Context, p Path, id string, q ListQuery) ([]*Delivery, int, error)
	// PingWebhook adds a pending ping delivery (Revision 0, ActionPing)
	// to the webhook id of p.Project and returns it; a ping waits for no
	// other delivery. ErrNotFound (kind "webhook") as FindWebhook.
	PingWebhook(ctx context.Context, p Path, id string) (*Delivery, error)

	// ClaimDeliveries hands owner at most limit pending deliveries due
	// at now, each leased to owner until now+lease: no other claim
	// returns it meanwhile, on any instance sharing the storage. Of one
	// webhook's event deliveries only the oldest pending one may be
	// claimed (revision order: a later one waits while it is retried);
	// pings wait for nothing. It checks no access.
	ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*Claim, error)
	// FinishAttempt records the outcome of an attempt at the delivery id
	// claimed by owner (Attempts grows by one) and ends the lease. A
	// delivery that is gone (its webhook deleted) or no longer leased to
	// owner is left alone, without error.
	FinishAttempt(ctx context.Context, id, owner string, a Attempt) error

	// SetMaxPending bounds the deliveries of each webhook not yet
	// succeeded or failed (webhooks.max_pending,
	// docs/api.md#webhooks): once a new delivery makes them more than
	// n, the oldest one not in flight (no lease holds it) is recorded as
	// failed, LastError QueueFull, in the atomic step that adds the new
	// one. n 0 takes DefaultMaxPending and Unlimited lifts the bound; a
	// store never told holds DefaultMaxPending. Where instances share the
	// storage they share the bound too: the last one set holds.
	SetMaxPending(ctx context.Context, n int) error
	// PruneDeliveries deletes the deliveries that finished (succeeded or
	// failed) before before, of every webhook, and returns how many
	// (webhooks.keep_deliveries). Pending deliveries stay.
	PruneDeliveries(ctx context.Context, before time.Time) (int, error)
	// ResealWebhooks calls reseal with each webhook of every project, one
	// at a time, and, when it asks (write true), replaces the webhook's
	// secret with the one it returns, marked sealed (SecretSealed). It
	// returns how many it replaced; an error from reseal stops it. It
	// checks no access: credentials rotate calls it.
	ResealWebhooks(ctx context.Context, reseal func(w *Webhook) (secret []byte, write bool, err error)) (int, error)
}

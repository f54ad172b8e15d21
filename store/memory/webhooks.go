package memory

import (
	"context"
	"slices"
	"time"

	"github.com/hds-go/hds/store"
)

var _ store.Webhooks = (*Store)(nil)

// hook is a webhook of a project with its outbox, under s.mu.
type hook struct {
	store.Webhook
	// after is the revision of its webhook.create entry: it receives the
	// entries above it.
	after int64
	// deliveries are its deliveries, oldest first.
	deliveries []*delivery
}

// delivery is a delivery with its lease, under s.mu.
type delivery struct {
	store.Delivery
	owner string
	until time.Time
}

func cloneWebhook(w *store.Webhook) *store.Webhook {
	c := *w
	c.Actions = slices.Clone(w.Actions)
	c.Secret = slices.Clone(w.Secret)
	return &c
}

func cloneDelivery(d *store.Delivery) *store.Delivery {
	c := *d
	if d.NextAttemptAt != nil {
		t := *d.NextAttemptAt
		c.NextAttemptAt = &t
	}
	return &c
}

// outbox adds a pending delivery of e to each of the project's webhooks
// that receives it; audit calls it under the write lock, with the entry.
func (s *Store) outbox(pr *project, e *store.AuditEntry) {
	for _, h := range pr.hooks {
		if e.Revision > h.after && h.Matches(e) {
			at := e.Time
			h.deliveries = append(h.deliveries, &delivery{Delivery: store.Delivery{ID: store.NewID(), WebhookID: h.ID,
				ProjectID: pr.ID, Revision: e.Revision, Action: e.Action, Status: store.DeliveryPending,
				NextAttemptAt: &at, CreatedAt: e.Time}})
		}
	}
}

// unoutbox drops the deliveries of the project's entries above revision
// (a batch that rolls back).
func (pr *project) unoutbox(revision int64) {
	for _, h := range pr.hooks {
		h.deliveries = slices.DeleteFunc(h.deliveries, func(d *delivery) bool { return d.Revision > revision })
	}
}

// KeptDeliveries is how many finished (succeeded or failed) deliveries
// the memory store keeps of each webhook, the newest: memory is the only
// place it keeps them. Pending deliveries are always kept.
const KeptDeliveries = 1000

// trim drops the oldest finished deliveries beyond KeptDeliveries.
func (h *hook) trim() {
	finished := 0
	for _, d := range h.deliveries {
		if d.Status != store.DeliveryPending {
			finished++
		}
	}
	for i := 0; finished > KeptDeliveries && i < len(h.deliveries); {
		if h.deliveries[i].Status != store.DeliveryPending {
			h.deliveries = slices.Delete(h.deliveries, i, i+1)
			finished--
			continue
		}
		i++
	}
}

// hook returns the project's webhook id.
func (pr *project) hook(id string) (*hook, error) {
	for _, h := range pr.hooks {
		if h.ID == id {
			return h, nil
		}
	}
	return nil, &store.NotFoundError{Kind: "webhook", Name: id}
}

// CreateWebhook implements store.Webhooks.
func (s *Store) CreateWebhook(_ context.Context, p store.Path, w *store.Webhook) (*store.Webhook, error) {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	if w.Collection != "" {
		c, ok := pr.collections[w.Collection]
		if !ok {
			return nil, &store.NotFoundError{Kind: "collection", Name: w.Collection}
		}
		if _, ok := c.clusters[w.Cluster]; w.Cluster != "" && !ok {
			return nil, &store.NotFoundError{Kind: "cluster", Name: w.Cluster}
		}
	}
	c := cloneWebhook(w)
	c.ProjectID = pr.ID
	if c.ID == "" {
		c.ID = store.NewID()
	}
	c.CreatedAt = s.now()
	e := s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionWebhookCreate, Target: c.ID})
	pr.hooks = append(pr.hooks, &hook{Webhook: *c, after: e.Revision})
	return cloneWebhook(c), nil
}

// FindWebhooks implements store.Webhooks.
func (s *Store) FindWebhooks(_ context.Context, p store.Path, q store.ListQuery) ([]*store.Webhook, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, 0, err
	}
	items := make([]*store.Webhook, 0, len(pr.hooks))
	for _, h := range pr.hooks {
		items = append(items, cloneWebhook(&h.Webhook))
	}
	return window(items, q), len(items), nil
}

// FindWebhook implements store.Webhooks.
func (s *Store) FindWebhook(_ context.Context, p store.Path, id string) (*store.Webhook, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	h, err := pr.hook(id)
	if err != nil {
		return nil, err
	}
	return cloneWebhook(&h.Webhook), nil
}

// DeleteWebhook implements store.Webhooks.
func (s *Store) DeleteWebhook(_ context.Context, p store.Path, id string) error {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return err
	}
	h, err := pr.hook(id)
	if err != nil {
		return err
	}
	pr.hooks = slices.DeleteFunc(pr.hooks, func(x *hook) bool { return x == h })
	s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionWebhookDelete, Target: id})
	return nil
}

// FindDeliveries implements store.Webhooks.
func (s *Store) FindDeliveries(_ context.Context, p store.Path, id string, q store.ListQuery) ([]*store.Delivery, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, 0, err
	}
	h, err := pr.hook(id)
	if err != nil {
		return nil, 0, err
	}
	items := make([]*store.Delivery, 0, len(h.deliveries))
	for i := len(h.deliveries) - 1; i >= 0; i-- {
		items = append(items, cloneDelivery(&h.deliveries[i].Delivery))
	}
	return window(items, q), len(items), nil
}

// PingWebhook implements store.Webhooks.
func (s *Store) PingWebhook(_ context.Context, p store.Path, id string) (*store.Delivery, error) {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	h, err := pr.hook(id)
	if err != nil {
		return nil, err
	}
	now := s.now()
	d := &delivery{Delivery: store.Delivery{ID: store.NewID(), WebhookID: h.ID, ProjectID: pr.ID, Action: store.ActionPing,
		Status: store.DeliveryPending, NextAttemptAt: &now, CreatedAt: now}}
	h.deliveries = append(h.deliveries, d)
	return cloneDelivery(&d.Delivery), nil
}

// ClaimDeliveries implements store.Webhooks.
func (s *Store) ClaimDeliveries(_ context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*store.Claim, error) {
	s.lock()
	defer s.unlock()
	var out []*store.Claim
	for _, pr := range s.projects {
		for _, h := range pr.hooks {
			blocked := false // an earlier event delivery is pending
			for _, d := range h.deliveries {
				if len(out) >= limit {
					return out, nil
				}
				if d.Status != store.DeliveryPending || d.Revision != 0 && blocked {
					continue
				}
				if d.Revision != 0 {
					blocked = true
				}
				if d.NextAttemptAt.After(now) || d.owner != "" && now.Before(d.until) {
					continue
				}
				d.owner, d.until = owner, now.Add(lease)
				c := &store.Claim{Delivery: cloneDelivery(&d.Delivery), Webhook: cloneWebhook(&h.Webhook)}
				if d.Revision != 0 {
					e := *pr.log[d.Revision-1]
					c.Entry = &e
				}
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// FinishAttempt implements store.Webhooks.
func (s *Store) FinishAttempt(_ context.Context, id, owner string, a store.Attempt) error {
	s.lock()
	defer s.unlock()
	for _, pr := range s.projects {
		for _, h := range pr.hooks {
			for _, d := range h.deliveries {
				if d.ID != id {
					continue
				}
				if d.owner != owner {
					return nil
				}
				d.Attempts++
				d.Status, d.LastStatusCode, d.LastError, d.owner = a.Status, a.StatusCode, a.Error, ""
				d.NextAttemptAt = nil
				if a.Status == store.DeliveryPending {
					t := a.NextAttemptAt.UTC().Truncate(time.Microsecond)
					d.NextAttemptAt = &t
				} else {
					h.trim()
				}
				return nil
			}
		}
	}
	return nil
}

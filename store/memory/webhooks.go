package memory

import (
	"cmp"
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
	// events are its pending event deliveries in revision order, pings
	// its pending pings, finished the others in the order they finished.
	events, pings, finished []*delivery
}

// delivery is one delivery, kept small: a full queue of
// store.DefaultMaxPending is about 2 MB (its event is in the audit log
// already). Times are Unix microseconds.
type delivery struct {
	seq       uint64
	id        string
	revision  int64
	action    store.Action
	status    store.DeliveryStatus
	attempts  int32
	code      int32
	lastError string
	next      int64 // while pending
	created   int64
	finished  int64 // once finished
	// owner holds the lease until until (none when owner is empty).
	owner string
	until int64
}

// outbox is what the store keeps about the outboxes as a whole, under
// s.mu.
type outbox struct {
	seq uint64
	// maxPending is the bound of store.Webhooks.SetMaxPending as in
	// force: more than 0, or store.Unlimited.
	maxPending int
	// leased are the deliveries under a lease, by id, for FinishAttempt.
	leased map[string]leaseRef
	// grown are the hooks that got a delivery in this write: unlock
	// bounds their queues once the write stands (a batch that rolls back
	// takes its deliveries away first).
	grown []*hook
}

// leaseRef is where a leased delivery is.
type leaseRef struct {
	pr *project
	h  *hook
	d  *delivery
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func cloneWebhook(w *store.Webhook) *store.Webhook {
	c := *w
	c.Actions = slices.Clone(w.Actions)
	c.Secret = slices.Clone(w.Secret)
	return &c
}

// public is d as store.Delivery, of the webhook h of project pr.
func (d *delivery) public(pr *project, h *hook) *store.Delivery {
	out := &store.Delivery{ID: d.id, WebhookID: h.ID, ProjectID: pr.ID, Revision: d.revision, Action: d.action,
		Status: d.status, Attempts: int(d.attempts), LastStatusCode: int(d.code), LastError: d.lastError,
		CreatedAt: fromMicros(d.created)}
	if d.status == store.DeliveryPending {
		t := fromMicros(d.next)
		out.NextAttemptAt = &t
	}
	return out
}

// newDelivery returns a pending delivery due at once.
func (s *Store) newDelivery(revision int64, action store.Action, at time.Time) *delivery {
	s.out.seq++
	us := micros(at)
	return &delivery{seq: s.out.seq, id: store.NewID(), revision: revision, action: action,
		status: store.DeliveryPending, next: us, created: us}
}

// outbox adds a pending delivery of e to each of the project's webhooks
// that receives it; audit calls it under the write lock, with the entry.
func (s *Store) outbox(pr *project, e *store.AuditEntry) {
	for _, h := range pr.hooks {
		if e.Revision > h.after && h.Matches(e) {
			h.events = append(h.events, s.newDelivery(e.Revision, e.Action, e.Time))
			s.grew(h)
		}
	}
}

// grew notes that h got a delivery in this write.
func (s *Store) grew(h *hook) {
	if !slices.Contains(s.out.grown, h) {
		s.out.grown = append(s.out.grown, h)
	}
}

// unoutbox drops the deliveries of the project's entries above revision
// (a batch that rolls back).
func (pr *project) unoutbox(revision int64) {
	for _, h := range pr.hooks {
		h.events = slices.DeleteFunc(h.events, func(d *delivery) bool { return d.revision > revision })
	}
}

// boundQueues fails, in each hook that grew in this write, the oldest
// deliveries not in flight until no more than maxPending are pending
// (store.QueueFull). unlock calls it under the write lock.
func (s *Store) boundQueues() {
	grown := s.out.grown
	s.out.grown = nil
	if s.out.maxPending <= 0 {
		return
	}
	now := s.now()
	us := micros(now)
	for _, h := range grown {
		for len(h.events)+len(h.pings) > s.out.maxPending {
			list, i := h.oldestIdle(us)
			if list == nil {
				break // every one is in flight
			}
			d := (*list)[i]
			*list = slices.Delete(*list, i, i+1)
			d.status, d.lastError, d.finished = store.DeliveryFailed, store.QueueFull, us
			delete(s.out.leased, d.id) // a lease that had run out
			h.finish(d)
		}
	}
}

// oldestIdle finds the oldest pending delivery that no lease holds at
// us: the list it is in and its index, or a nil list.
func (h *hook) oldestIdle(us int64) (*[]*delivery, int) {
	var list *[]*delivery
	at := -1
	for _, l := range []*[]*delivery{&h.events, &h.pings} {
		for i, d := range *l {
			if d.owner != "" && us < d.until {
				continue
			}
			if list == nil || d.seq < (*list)[at].seq {
				list, at = l, i
			}
			break
		}
	}
	return list, at
}

// KeptDeliveries is how many finished (succeeded or failed) deliveries
// the memory store keeps of each webhook at most, the newest, besides
// the bound of time (store.Webhooks.PruneDeliveries): memory is the only
// place it keeps them. Pending deliveries are bounded by
// store.Webhooks.SetMaxPending.
const KeptDeliveries = 1000

// finish adds d, just finished, to h's finished ones, dropping the
// oldest beyond KeptDeliveries.
func (h *hook) finish(d *delivery) {
	d.owner, d.until = "", 0
	h.finished = append(h.finished, d)
	if extra := len(h.finished) - KeptDeliveries; extra > 0 {
		h.finished = slices.Delete(h.finished, 0, extra)
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
	if err := s.quotas.CheckWebhooks(len(pr.hooks)); err != nil {
		return nil, err
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
	for did, ref := range s.out.leased {
		if ref.h == h {
			delete(s.out.leased, did)
		}
	}
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
	all := slices.Concat(h.events, h.pings, h.finished)
	slices.SortFunc(all, func(a, b *delivery) int { return cmp.Compare(b.seq, a.seq) }) // newest first
	page := window(all, q)
	items := make([]*store.Delivery, len(page))
	for i, d := range page {
		items[i] = d.public(pr, h)
	}
	return items, len(all), nil
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
	d := s.newDelivery(0, store.ActionPing, s.now())
	h.pings = append(h.pings, d)
	s.grew(h)
	return d.public(pr, h), nil
}

// ClaimDeliveries implements store.Webhooks. Of each webhook's events
// only the oldest pending one may go; its pings go whenever due.
func (s *Store) ClaimDeliveries(_ context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*store.Claim, error) {
	s.lock()
	defer s.unlock()
	if s.out.leased == nil {
		s.out.leased = map[string]leaseRef{}
	}
	us, until := micros(now), micros(now.Add(lease))
	var out []*store.Claim
	for _, pr := range s.projects {
		for _, h := range pr.hooks {
			candidates := h.pings
			if len(h.events) > 0 {
				candidates = append(candidates[:len(candidates):len(candidates)], h.events[0])
			}
			for _, d := range candidates {
				if len(out) >= limit {
					return out, nil
				}
				if d.next > us || d.owner != "" && us < d.until {
					continue
				}
				d.owner, d.until = owner, until
				s.out.leased[d.id] = leaseRef{pr: pr, h: h, d: d}
				c := &store.Claim{Delivery: d.public(pr, h), Webhook: cloneWebhook(&h.Webhook)}
				if d.revision != 0 {
					e := *pr.log[d.revision-1]
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
	ref, ok := s.out.leased[id]
	if !ok || ref.d.owner != owner {
		return nil
	}
	delete(s.out.leased, id)
	if s.projects[ref.pr.Name] != ref.pr || !slices.Contains(ref.pr.hooks, ref.h) {
		return nil // gone with its project
	}
	d, h := ref.d, ref.h
	d.attempts++
	d.status, d.code, d.lastError, d.owner, d.until = a.Status, int32(a.StatusCode), a.Error, "", 0
	if a.Status == store.DeliveryPending {
		d.next = micros(a.NextAttemptAt.UTC().Truncate(time.Microsecond))
		return nil
	}
	d.finished = micros(s.now())
	if d.revision != 0 {
		h.events = slices.DeleteFunc(h.events, func(x *delivery) bool { return x == d })
	} else {
		h.pings = slices.DeleteFunc(h.pings, func(x *delivery) bool { return x == d })
	}
	h.finish(d)
	return nil
}

// SetMaxPending implements store.Webhooks.
func (s *Store) SetMaxPending(_ context.Context, n int) error {
	s.lock()
	defer s.unlock()
	s.out.maxPending = effectiveMaxPending(n)
	return nil
}

// effectiveMaxPending is the bound SetMaxPending(n) sets.
func effectiveMaxPending(n int) int {
	if n == 0 {
		return store.DefaultMaxPending
	}
	return n
}

// PruneDeliveries implements store.Webhooks.
func (s *Store) PruneDeliveries(_ context.Context, before time.Time) (int, error) {
	s.lock()
	defer s.unlock()
	us, n := micros(before), 0
	for _, pr := range s.projects {
		for _, h := range pr.hooks {
			kept := slices.DeleteFunc(h.finished, func(d *delivery) bool { return d.finished < us })
			n += len(h.finished) - len(kept)
			h.finished = kept
		}
	}
	return n, nil
}

// ResealWebhooks implements store.Webhooks.
func (s *Store) ResealWebhooks(_ context.Context, reseal func(w *store.Webhook) ([]byte, bool, error)) (int, error) {
	s.lock()
	defer s.unlock()
	n := 0
	for _, pr := range s.projects {
		for _, h := range pr.hooks {
			secret, write, err := reseal(cloneWebhook(&h.Webhook))
			if err != nil {
				return n, err
			}
			if write {
				h.Secret, h.SecretSealed = slices.Clone(secret), true
				n++
			}
		}
	}
	return n, nil
}

package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// WebhookStore is what RunWebhooks tests: the tree, its audit log, and
// the webhooks with their outbox, on one value.
type WebhookStore interface {
	store.Store
	store.AuditLog
	store.Webhooks
}

// RunWebhooks runs the conformance suite of store.Webhooks. newStores
// must return two handles on one fresh, empty storage (the same store
// twice for a store held in process, two stores on one database for
// PostgreSQL): claims made through both at once must never hand out one
// delivery twice.
func RunWebhooks(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	t.Run("CRUD", func(t *testing.T) { testWebhookCRUD(t, newStores) })
	t.Run("Outbox", func(t *testing.T) { testWebhookOutbox(t, newStores) })
	t.Run("Claims", func(t *testing.T) { testWebhookClaims(t, newStores) })
	t.Run("Delete", func(t *testing.T) { testWebhookDelete(t, newStores) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testWebhookConcurrentClaims(t, newStores) })
}

// newHook creates a webhook on the fixture's project as its owner.
func newHook(t *testing.T, s WebhookStore, f *fixture, w store.Webhook) *store.Webhook {
	t.Helper()
	p := f.path(0)
	p.Need = store.RightAdmin
	if w.URL == "" {
		w.URL = "https://hooks.example/in"
	}
	if w.Secret == nil {
		w.Secret = []byte("0123456789abcdef")
	}
	w.CreatedBy = owner
	got, err := s.CreateWebhook(f.ctx, p, &w)
	require.NoError(t, err, "CreateWebhook")
	return got
}

// recordPath is the path of the record name in the fixture's cluster.
func recordPath(f *fixture, name string) store.Path {
	p := f.path(2)
	p.Record = name
	return p
}

// deliveries lists the webhook's deliveries, newest first.
func deliveries(t *testing.T, s WebhookStore, f *fixture, id string) []*store.Delivery {
	t.Helper()
	p := f.path(0)
	p.Need = store.RightAdmin
	items, total, err := s.FindDeliveries(f.ctx, p, id, store.NewListQuery())
	require.NoError(t, err, "FindDeliveries")
	assert.Equal(t, len(items), total, "the total counts the deliveries")
	return items
}

func testWebhookCRUD(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, other := newStores(t)
	f := newFixture(t, s)
	p := f.path(0)
	p.Need = store.RightAdmin

	_, err := s.CreateWebhook(f.ctx, p, &store.Webhook{URL: "https://x.example", Collection: "nope", Secret: []byte("0123456789abcdef")})
	assertNotFound(t, err, "collection", "nope", "a scope that does not exist")
	_, err = s.CreateWebhook(f.ctx, p, &store.Webhook{URL: "https://x.example", Collection: collName, Cluster: "nope", Secret: []byte("0123456789abcdef")})
	assertNotFound(t, err, "cluster", "nope", "a cluster scope that does not exist")

	a := newHook(t, s, f, store.Webhook{URL: "https://a.example/hook", Actions: []store.Action{store.ActionRecordCreate}})
	assertID(t, a.ID, "webhook id")
	assertStamp(t, a.CreatedAt, "webhook created_at")
	tick()
	b := newHook(t, s, f, store.Webhook{URL: "https://b.example/hook", Collection: collName, Cluster: clusName})

	got, err := other.FindWebhook(f.ctx, p, a.ID)
	require.NoError(t, err, "FindWebhook through the other handle")
	assert.Equal(t, a, got, "the webhook as created, secret included")
	list, total, err := other.FindWebhooks(f.ctx, p, store.NewListQuery())
	require.NoError(t, err, "FindWebhooks")
	assert.Equal(t, 2, total)
	if assert.Len(t, list, 2) {
		assert.Equal(t, []string{a.ID, b.ID}, []string{list[0].ID, list[1].ID}, "oldest first")
		assert.Equal(t, collName, list[1].Collection)
		assert.Equal(t, clusName, list[1].Cluster)
	}
	q := store.NewListQuery()
	q.Limit, q.Offset = 1, 1
	list, total, err = s.FindWebhooks(f.ctx, p, q)
	require.NoError(t, err)
	assert.Equal(t, 2, total, "the total before paging")
	if assert.Len(t, list, 1) {
		assert.Equal(t, b.ID, list[0].ID, "the second page")
	}

	_, err = s.FindWebhook(f.ctx, p, store.NewID())
	assert.ErrorIs(t, err, store.ErrNotFound, "an unknown id")
	_, err = s.FindWebhook(f.ctx, p, "not-a-uuid")
	assert.ErrorIs(t, err, store.ErrNotFound, "a malformed id")

	entries, _, err := s.FindAuditEntries(f.ctx, p, store.AuditQuery{Limit: 10, Action: store.ActionWebhookCreate})
	require.NoError(t, err)
	if assert.Len(t, entries, 2, "one webhook.create entry each") {
		assert.Equal(t, b.ID, entries[0].Target, "target is the webhook id")
		assert.Equal(t, owner, entries[0].Actor)
	}

	viewer := p
	viewer.Caller = store.Caller{UserID: stranger}
	_, err = s.CreateWebhook(f.ctx, viewer, &store.Webhook{URL: "https://x.example", Secret: []byte("0123456789abcdef")})
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "a stranger may not create one")
	_, _, err = s.FindWebhooks(f.ctx, viewer, store.NewListQuery())
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "nor list them")
}

func testWebhookOutbox(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, _ := newStores(t)
	f := newFixture(t, s)
	all := newHook(t, s, f, store.Webhook{})
	creates := newHook(t, s, f, store.Webhook{Actions: []store.Action{store.ActionRecordCreate}})
	scoped := newHook(t, s, f, store.Webhook{Collection: collName, Cluster: clusName})
	assert.Empty(t, deliveries(t, s, f, scoped.ID), "a webhook receives no entry from before its creation, its own included")
	assert.Empty(t, deliveries(t, s, f, creates.ID), "an action it does not receive")
	assert.Len(t, deliveries(t, s, f, all.ID), 2, "the creation of a later webhook is an event")

	other := f.path(1)
	other.Collection = "other"
	mustCollection(t, s, other) // collection.create, outside the scope
	r := mustRecord(t, s, recordPath(f, "r2"), store.Integer, "2")
	reveal := f.path(2)
	require.NoError(t, s.RecordReveal(f.ctx, reveal, r), "RecordReveal: no event")

	got := deliveries(t, s, f, all.ID)
	if assert.Len(t, got, 4, "every event after its creation; a reveal is no event") {
		assert.Equal(t, store.ActionRecordCreate, got[0].Action, "newest first")
		assert.Equal(t, store.ActionCollectionCreate, got[1].Action)
		assert.Equal(t, store.ActionWebhookCreate, got[2].Action)
		assert.Greater(t, got[0].Revision, got[1].Revision, "revision order")
	}
	for _, d := range got {
		assertID(t, d.ID, "delivery id")
		assert.Equal(t, store.DeliveryPending, d.Status)
		assert.Zero(t, d.Attempts)
		assert.NotZero(t, d.Revision)
		if assert.NotNil(t, d.NextAttemptAt, "a pending delivery has its next attempt") {
			assert.Equal(t, d.CreatedAt, *d.NextAttemptAt, "due at once")
		}
	}
	got = deliveries(t, s, f, creates.ID)
	if assert.Len(t, got, 1, "record.create only") {
		assert.Equal(t, store.ActionRecordCreate, got[0].Action)
	}
	got = deliveries(t, s, f, scoped.ID)
	if assert.Len(t, got, 1, "only the record created in its cluster") {
		assert.Equal(t, store.ActionRecordCreate, got[0].Action)
	}
}

func testWebhookClaims(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, _ := newStores(t)
	f := newFixture(t, s)
	h := newHook(t, s, f, store.Webhook{Actions: []store.Action{store.ActionRecordCreate}})
	r1 := mustRecord(t, s, recordPath(f, "r1"), store.Integer, "1")
	mustRecord(t, s, recordPath(f, "r2"), store.Integer, "2")
	now := time.Now().Add(time.Second)
	lease := time.Minute

	claims, err := s.ClaimDeliveries(f.ctx, "a", now, lease, 10)
	require.NoError(t, err, "ClaimDeliveries")
	require.Len(t, claims, 1, "one webhook's deliveries go one at a time")
	c := claims[0]
	assert.Equal(t, h.ID, c.Webhook.ID)
	assert.Equal(t, h.URL, c.Webhook.URL)
	assert.Equal(t, h.Secret, c.Webhook.Secret, "the sender needs the secret")
	if assert.NotNil(t, c.Entry, "an event's claim has its entry") {
		assert.Equal(t, store.ActionRecordCreate, c.Entry.Action)
		assert.Equal(t, "r1", c.Entry.Record)
		assert.Equal(t, r1.ID, c.Entry.RecordID)
		assert.Equal(t, c.Delivery.Revision, c.Entry.Revision)
	}

	again, err := s.ClaimDeliveries(f.ctx, "b", now, lease, 10)
	require.NoError(t, err)
	assert.Empty(t, again, "a leased delivery is not claimed again, and the next waits for it")

	p := f.path(0)
	p.Need = store.RightAdmin
	ping, err := s.PingWebhook(f.ctx, p, h.ID)
	require.NoError(t, err, "PingWebhook")
	assert.Equal(t, store.ActionPing, ping.Action)
	assert.Zero(t, ping.Revision)
	claims, err = s.ClaimDeliveries(f.ctx, "b", now, lease, 10)
	require.NoError(t, err)
	if assert.Len(t, claims, 1, "a ping waits for nothing") {
		assert.Equal(t, ping.ID, claims[0].Delivery.ID)
		assert.Nil(t, claims[0].Entry)
		require.NoError(t, s.FinishAttempt(f.ctx, ping.ID, "b", store.Attempt{StatusCode: 204, Status: store.DeliverySucceeded}))
	}

	// A failed attempt: pending again, due later; the next still waits.
	retry := now.Add(time.Hour)
	require.NoError(t, s.FinishAttempt(f.ctx, c.Delivery.ID, "a", store.Attempt{StatusCode: 500, Error: "answered 500",
		Status: store.DeliveryPending, NextAttemptAt: retry}))
	require.NoError(t, s.FinishAttempt(f.ctx, c.Delivery.ID, "someone else", store.Attempt{Status: store.DeliverySucceeded}),
		"an attempt by another owner is ignored")
	claims, err = s.ClaimDeliveries(f.ctx, "a", now, lease, 10)
	require.NoError(t, err)
	assert.Empty(t, claims, "a later event waits while an earlier one is retried")
	got := deliveries(t, s, f, h.ID)
	require.Len(t, got, 3)
	first := got[2]
	assert.Equal(t, store.DeliveryPending, first.Status)
	assert.Equal(t, 1, first.Attempts)
	assert.Equal(t, 500, first.LastStatusCode)
	assert.Equal(t, "answered 500", first.LastError)
	if assert.NotNil(t, first.NextAttemptAt) {
		assert.True(t, first.NextAttemptAt.Equal(retry.UTC().Truncate(time.Microsecond)), "next attempt %s", first.NextAttemptAt)
	}
	assert.Equal(t, store.DeliverySucceeded, got[0].Status, "the ping")
	assert.Nil(t, got[0].NextAttemptAt, "none after success")
	assert.Equal(t, 204, got[0].LastStatusCode)
	assert.Empty(t, got[0].LastError)

	claims, err = s.ClaimDeliveries(f.ctx, "a", retry, lease, 10)
	require.NoError(t, err)
	require.Len(t, claims, 1, "due again")
	assert.Equal(t, first.ID, claims[0].Delivery.ID, "the same delivery (same id) is retried")
	require.NoError(t, s.FinishAttempt(f.ctx, first.ID, "a", store.Attempt{Error: "connection refused", Status: store.DeliveryFailed}))
	claims, err = s.ClaimDeliveries(f.ctx, "a", now, lease, 10)
	require.NoError(t, err)
	if assert.Len(t, claims, 1, "a failed delivery no longer blocks") {
		assert.Equal(t, "r2", claims[0].Entry.Record)
	}
	got = deliveries(t, s, f, h.ID)
	assert.Equal(t, store.DeliveryFailed, got[2].Status)
	assert.Equal(t, 2, got[2].Attempts)
	assert.Zero(t, got[2].LastStatusCode, "no answer")
	assert.Nil(t, got[2].NextAttemptAt)

	// A lease that ends makes the delivery claimable again (a sender that
	// stopped): at least once.
	claims, err = s.ClaimDeliveries(f.ctx, "b", now.Add(2*lease), lease, 10)
	require.NoError(t, err)
	assert.Len(t, claims, 1, "claimed again once the lease has ended")
}

func testWebhookDelete(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, other := newStores(t)
	f := newFixture(t, s)
	h := newHook(t, s, f, store.Webhook{})
	mustRecord(t, s, recordPath(f, "r1"), store.Integer, "1")
	claims, err := s.ClaimDeliveries(f.ctx, "a", time.Now().Add(time.Second), time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, claims, 1)

	p := f.path(0)
	p.Need = store.RightAdmin
	require.NoError(t, other.DeleteWebhook(f.ctx, p, h.ID), "DeleteWebhook")
	assert.ErrorIs(t, s.DeleteWebhook(f.ctx, p, h.ID), store.ErrNotFound, "a second delete")
	assert.ErrorIs(t, s.DeleteWebhook(f.ctx, p, "nope"), store.ErrNotFound, "a malformed id")
	_, err = s.FindWebhook(f.ctx, p, h.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, _, err = s.FindDeliveries(f.ctx, p, h.ID, store.NewListQuery())
	assert.ErrorIs(t, err, store.ErrNotFound, "the deliveries went with it")
	_, err = s.PingWebhook(f.ctx, p, h.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.NoError(t, s.FinishAttempt(f.ctx, claims[0].Delivery.ID, "a", store.Attempt{Status: store.DeliverySucceeded}),
		"finishing a delivery that is gone is no error")
	mustRecord(t, s, recordPath(f, "r2"), store.Integer, "2")
	claims, err = s.ClaimDeliveries(f.ctx, "a", time.Now().Add(time.Hour), time.Minute, 10)
	require.NoError(t, err)
	assert.Empty(t, claims, "nothing is claimed for a deleted webhook")

	entries, _, err := s.FindAuditEntries(f.ctx, p, store.AuditQuery{Limit: 10, Action: store.ActionWebhookDelete})
	require.NoError(t, err)
	if assert.Len(t, entries, 1) {
		assert.Equal(t, h.ID, entries[0].Target)
	}
}

func testWebhookConcurrentClaims(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, other := newStores(t)
	f := newFixture(t, s)
	const hooks, events = 8, 5
	for range hooks {
		newHook(t, s, f, store.Webhook{Actions: []store.Action{store.ActionRecordCreate}})
	}
	for i := range events {
		mustRecord(t, s, recordPath(f, "e"+string(rune('a'+i))), store.Integer, "1")
	}
	now := time.Now().Add(time.Second)
	seen := map[string]string{}
	var mu sync.Mutex
	// Rounds: both handles claim at once, each finishes what it got;
	// every delivery is claimed exactly once overall.
	for round := range events + 1 {
		var wg sync.WaitGroup
		for i, h := range []WebhookStore{s, other} {
			wg.Go(func() {
				owner := string(rune('a'+i)) + string(rune('0'+round))
				claims, err := h.ClaimDeliveries(f.ctx, owner, now, time.Minute, 3)
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				for _, c := range claims {
					if prev, dup := seen[c.Delivery.ID]; dup {
						t.Errorf("delivery %s claimed by %s and %s", c.Delivery.ID, prev, owner)
					}
					seen[c.Delivery.ID] = owner
				}
				mu.Unlock()
				for _, c := range claims {
					assert.NoError(t, h.FinishAttempt(f.ctx, c.Delivery.ID, owner, store.Attempt{StatusCode: 200, Status: store.DeliverySucceeded}))
				}
			})
		}
		wg.Wait()
	}
	// What is left is claimed in one go.
	for {
		claims, err := s.ClaimDeliveries(f.ctx, "z", now, time.Minute, 100)
		require.NoError(t, err)
		if len(claims) == 0 {
			break
		}
		for _, c := range claims {
			if prev, dup := seen[c.Delivery.ID]; dup {
				t.Errorf("delivery %s claimed by %s and z", c.Delivery.ID, prev)
			}
			seen[c.Delivery.ID] = "z"
			require.NoError(t, s.FinishAttempt(f.ctx, c.Delivery.ID, "z", store.Attempt{Status: store.DeliverySucceeded}))
		}
	}
	assert.Len(t, seen, hooks*events, "every delivery claimed once")
}

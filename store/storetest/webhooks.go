package storetest

import (
	"context"
	"errors"
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
	store.QuotaSetter
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
	t.Run("Quota", func(t *testing.T) { testWebhookQuota(t, newStores) })
	t.Run("MaxPending", func(t *testing.T) { testWebhookMaxPending(t, newStores) })
	t.Run("Prune", func(t *testing.T) { testWebhookPrune(t, newStores) })
	t.Run("Reseal", func(t *testing.T) { testWebhookReseal(t, newStores) })
	t.Run("Pending", func(t *testing.T) { testWebhookPending(t, newStores) })
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

// testWebhookQuota: Quotas.MaxWebhooksPerProject bounds a project's
// webhooks (docs/api.md#webhooks): one more is a *QuotaError naming
// max_webhooks_per_project that writes nothing; 0 takes the default 20,
// NoneAllowed refuses every one, Unlimited none.
func testWebhookQuota(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, _ := newStores(t)
	f := newFixture(t, s)
	p := f.path(0)
	p.Need = store.RightAdmin
	create := func() (*store.Webhook, error) {
		return s.CreateWebhook(f.ctx, p, &store.Webhook{URL: "https://q.example", Secret: []byte("0123456789abcdef"), CreatedBy: owner})
	}
	wantQuota := func(err error, limit int64, what string) {
		t.Helper()
		var qe *store.QuotaError
		if assert.ErrorAs(t, err, &qe, what) {
			assert.Equal(t, store.QuotaWebhooksPerProject, qe.Quota, what)
			assert.Equal(t, limit, qe.Limit, what)
			assert.ErrorIs(t, err, store.ErrQuotaExceeded, what)
		}
	}
	count := func() int {
		_, n, err := s.FindWebhooks(f.ctx, p, store.NewListQuery())
		require.NoError(t, err)
		return n
	}
	revision := func() int64 {
		pr, err := s.FindProject(f.ctx, p)
		require.NoError(t, err)
		return pr.Revision
	}

	s.SetQuotas(store.Quotas{MaxWebhooksPerProject: 2})
	first, err := create()
	require.NoError(t, err)
	_, err = create()
	require.NoError(t, err)
	before := revision()
	_, err = create()
	wantQuota(err, 2, "a third webhook past 2")
	assert.Equal(t, 2, count(), "nothing created")
	assert.Equal(t, before, revision(), "no audit entry written")
	require.NoError(t, s.DeleteWebhook(f.ctx, p, first.ID))
	_, err = create()
	assert.NoError(t, err, "room again after a delete")

	s.SetQuotas(store.Quotas{MaxWebhooksPerProject: store.NoneAllowed})
	_, err = create()
	wantQuota(err, 0, "NoneAllowed")

	s.SetQuotas(store.Quotas{})
	for count() < store.DefaultQuotas.MaxWebhooksPerProject {
		_, err := create()
		require.NoError(t, err)
	}
	_, err = create()
	wantQuota(err, 20, "the default bound, 20")

	s.SetQuotas(store.Quotas{MaxWebhooksPerProject: store.Unlimited})
	_, err = create()
	assert.NoError(t, err, "Unlimited")
	s.SetQuotas(store.Quotas{})
}

// testWebhookMaxPending: once a webhook holds more pending deliveries
// than SetMaxPending's bound, the oldest not in flight fails with
// store.QueueFull in the same step; pings count; Unlimited lifts it.
func testWebhookMaxPending(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, other := newStores(t)
	f := newFixture(t, s)
	for _, h := range []WebhookStore{s, other} {
		require.NoError(t, h.SetMaxPending(f.ctx, 3), "SetMaxPending")
	}
	t.Cleanup(func() {
		for _, h := range []WebhookStore{s, other} {
			_ = h.SetMaxPending(context.Background(), 0)
		}
	})
	h := newHook(t, s, f, store.Webhook{Actions: []store.Action{store.ActionRecordCreate}})
	mustRecord(t, s, recordPath(f, "r1"), store.Integer, "1")
	now := time.Now().Add(time.Second)
	claims, err := s.ClaimDeliveries(f.ctx, "a", now, time.Hour, 10)
	require.NoError(t, err)
	require.Len(t, claims, 1, "r1's delivery in flight")
	inFlight := claims[0].Delivery.ID
	for _, name := range []string{"r2", "r3", "r4", "r5"} {
		mustRecord(t, s, recordPath(f, name), store.Integer, "1")
	}
	got := deliveries(t, s, f, h.ID) // newest first: r5 r4 r3 r2 r1
	require.Len(t, got, 5, "failed deliveries stay listed")
	status := func(ds []*store.Delivery) []store.DeliveryStatus {
		var out []store.DeliveryStatus
		for _, d := range ds {
			out = append(out, d.Status)
		}
		return out
	}
	assert.Equal(t, []store.DeliveryStatus{store.DeliveryPending, store.DeliveryPending, store.DeliveryFailed,
		store.DeliveryFailed, store.DeliveryPending}, status(got), "r2 and r3 failed: the oldest not in flight (r1 is)")
	assert.Equal(t, inFlight, got[4].ID)
	for _, d := range got[2:4] {
		assert.Equal(t, store.QueueFull, d.LastError, "last_error")
		assert.Nil(t, d.NextAttemptAt, "no next attempt")
		assert.Zero(t, d.Attempts, "never attempted")
		assert.Zero(t, d.LastStatusCode)
	}

	p := f.path(0)
	p.Need = store.RightAdmin
	ping, err := other.PingWebhook(f.ctx, p, h.ID)
	require.NoError(t, err)
	got = deliveries(t, s, f, h.ID)
	require.Len(t, got, 6)
	assert.Equal(t, ping.ID, got[0].ID)
	assert.Equal(t, store.DeliveryPending, got[0].Status, "the new ping waits")
	assert.Equal(t, store.DeliveryFailed, got[2].Status, "a ping counts: r4 failed")
	assert.Equal(t, store.QueueFull, got[2].LastError)
	assert.Equal(t, store.DeliveryPending, got[1].Status, "r5 waits")
	assert.Equal(t, store.DeliveryPending, got[5].Status, "r1 is still in flight")

	require.NoError(t, s.FinishAttempt(f.ctx, inFlight, "a", store.Attempt{StatusCode: 200, Status: store.DeliverySucceeded}),
		"the delivery in flight finishes as usual")
	for _, st := range []WebhookStore{s, other} {
		require.NoError(t, st.SetMaxPending(f.ctx, store.Unlimited))
	}
	for i := range 5 {
		mustRecord(t, s, recordPath(f, "u"+string(rune('a'+i))), store.Integer, "1")
	}
	pending := 0
	for _, d := range deliveries(t, s, f, h.ID) {
		if d.Status == store.DeliveryPending {
			pending++
		}
	}
	assert.Equal(t, 7, pending, "no bound: r5, the ping and five more")
}

// testWebhookPrune: PruneDeliveries deletes the deliveries finished
// before the time given, of every webhook, and no pending one.
func testWebhookPrune(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, other := newStores(t)
	f := newFixture(t, s)
	h := newHook(t, s, f, store.Webhook{Actions: []store.Action{store.ActionRecordCreate}})
	p := f.path(0)
	p.Need = store.RightAdmin
	mustRecord(t, s, recordPath(f, "r1"), store.Integer, "1")
	_, err := s.PingWebhook(f.ctx, p, h.ID)
	require.NoError(t, err)
	claims, err := s.ClaimDeliveries(f.ctx, "a", time.Now().Add(time.Second), time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, claims, 2, "the event and the ping")
	require.NoError(t, s.FinishAttempt(f.ctx, claims[0].Delivery.ID, "a", store.Attempt{StatusCode: 200, Status: store.DeliverySucceeded}))
	require.NoError(t, s.FinishAttempt(f.ctx, claims[1].Delivery.ID, "a", store.Attempt{Error: "x", Status: store.DeliveryFailed}))
	mustRecord(t, s, recordPath(f, "r2"), store.Integer, "1") // pending

	n, err := other.PruneDeliveries(f.ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.Zero(t, n, "nothing finished an hour ago")
	assert.Len(t, deliveries(t, s, f, h.ID), 3)
	n, err = other.PruneDeliveries(f.ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 2, n, "both finished ones")
	got := deliveries(t, s, f, h.ID)
	if assert.Len(t, got, 1, "the pending one stays") {
		assert.Equal(t, store.DeliveryPending, got[0].Status)
	}
}

// testWebhookReseal: ResealWebhooks hands each webhook to the resealer
// and stores what it asks, marked sealed.
func testWebhookReseal(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, other := newStores(t)
	f := newFixture(t, s)
	a := newHook(t, s, f, store.Webhook{Secret: []byte("clear-secret-of-a")})
	b := newHook(t, s, f, store.Webhook{Secret: []byte("clear-secret-of-b")})
	assert.False(t, a.SecretSealed, "as given")
	seen := map[string][]byte{}
	n, err := other.ResealWebhooks(f.ctx, func(w *store.Webhook) ([]byte, bool, error) {
		seen[w.ID] = w.Secret
		assert.False(t, w.SecretSealed, w.ID)
		return []byte("sealed:" + w.ID), w.ID == a.ID, nil
	})
	require.NoError(t, err, "ResealWebhooks")
	assert.Equal(t, 1, n, "one written")
	assert.Equal(t, map[string][]byte{a.ID: []byte("clear-secret-of-a"), b.ID: []byte("clear-secret-of-b")}, seen, "each webhook once")
	p := f.path(0)
	p.Need = store.RightAdmin
	got, err := s.FindWebhook(f.ctx, p, a.ID)
	require.NoError(t, err)
	assert.Equal(t, []byte("sealed:"+a.ID), got.Secret)
	assert.True(t, got.SecretSealed)
	got, err = s.FindWebhook(f.ctx, p, b.ID)
	require.NoError(t, err)
	assert.Equal(t, []byte("clear-secret-of-b"), got.Secret, "not asked: unchanged")
	assert.False(t, got.SecretSealed)

	c := newHook(t, s, f, store.Webhook{Secret: []byte("sealed-by-caller"), SecretSealed: true})
	got, err = other.FindWebhook(f.ctx, p, c.ID)
	require.NoError(t, err)
	assert.True(t, got.SecretSealed, "SecretSealed is kept as created")
	mustRecord(t, s, recordPath(f, "r1"), store.Integer, "1")
	claims, err := s.ClaimDeliveries(f.ctx, "a", time.Now().Add(time.Second), time.Minute, 10)
	require.NoError(t, err)
	for _, cl := range claims {
		if cl.Webhook.ID == c.ID {
			assert.True(t, cl.Webhook.SecretSealed, "a claim says the secret is sealed")
		}
	}

	boom := errors.New("boom")
	_, err = s.ResealWebhooks(f.ctx, func(*store.Webhook) ([]byte, bool, error) { return nil, false, boom })
	assert.ErrorIs(t, err, boom, "an error of the resealer stops it")
}

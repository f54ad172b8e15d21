package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// testWebhookPending: a store.PendingCounter counts the deliveries not
// yet succeeded or failed, in flight or waiting, of every webhook, as
// another instance sees them. The interface is optional: a store that
// is none has nothing to check.
func testWebhookPending(t *testing.T, newStores func(t *testing.T) (WebhookStore, WebhookStore)) {
	s, other := newStores(t)
	counter, ok := other.(store.PendingCounter)
	if !ok {
		return // the sender never asks it
	}
	f := newFixture(t, s)
	count := func(want int, msg string) {
		t.Helper()
		n, err := counter.CountPendingDeliveries(f.ctx)
		require.NoError(t, err, "CountPendingDeliveries")
		assert.Equal(t, want, n, msg)
	}
	count(0, "no webhook: nothing pending")
	a := newHook(t, s, f, store.Webhook{Actions: []store.Action{store.ActionRecordCreate}})
	newHook(t, s, f, store.Webhook{Actions: []store.Action{store.ActionRecordCreate}})
	mustRecord(t, s, recordPath(f, "r1"), store.Integer, "1")
	mustRecord(t, s, recordPath(f, "r2"), store.Integer, "2")
	p := f.path(0)
	p.Need = store.RightAdmin
	_, err := s.PingWebhook(f.ctx, p, a.ID)
	require.NoError(t, err)
	count(5, "two events for each of two webhooks and a ping")

	claims, err := s.ClaimDeliveries(f.ctx, "a", time.Now().Add(time.Second), time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, claims, 3, "the oldest event of each webhook and the ping")
	count(5, "claimed deliveries are still pending")
	require.NoError(t, s.FinishAttempt(f.ctx, claims[0].Delivery.ID, "a", store.Attempt{StatusCode: 200, Status: store.DeliverySucceeded}))
	require.NoError(t, s.FinishAttempt(f.ctx, claims[1].Delivery.ID, "a", store.Attempt{Error: "x", Status: store.DeliveryFailed}))
	require.NoError(t, s.FinishAttempt(f.ctx, claims[2].Delivery.ID, "a",
		store.Attempt{Error: "x", Status: store.DeliveryPending, NextAttemptAt: time.Now().Add(time.Hour)}))
	count(3, "one succeeded and one failed; one to be tried again is pending")
}

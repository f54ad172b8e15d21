package memory_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memory.New() })
}

func TestUsersConformance(t *testing.T) {
	storetest.RunUsers(t, func(t *testing.T) store.UserDirectory { return memory.New() })
}

func TestQuotas(t *testing.T) {
	storetest.RunQuotas(t, func(t *testing.T, q store.Quotas) store.Store { return memory.New(memory.WithQuotas(q)) })
}

func TestSessionsConformance(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T) (storetest.SessionStore, storetest.SessionStore) {
		s := memory.New()
		return s, s
	})
}

func TestAuditConformance(t *testing.T) {
	storetest.RunAudit(t, func(t *testing.T) storetest.AuditStore { return memory.New() })
}

func TestEventsConformance(t *testing.T) {
	storetest.RunEvents(t, func(t *testing.T) (storetest.EventStore, storetest.EventStore) {
		s := memory.New()
		return s, s
	})
}

func TestAccessConformance(t *testing.T) {
	storetest.RunAccess(t, func(t *testing.T) (storetest.AccessStore, storetest.AccessStore) {
		s := memory.New()
		return s, s
	})
}

func TestUserAdminConformance(t *testing.T) {
	storetest.RunUserAdmin(t, func(t *testing.T) (storetest.UserAdminStore, storetest.UserAdminStore) {
		s := memory.New()
		return s, s
	})
}

func TestWebhooksConformance(t *testing.T) {
	storetest.RunWebhooks(t, func(t *testing.T) (storetest.WebhookStore, storetest.WebhookStore) {
		s := memory.New()
		return s, s
	})
}

// TestWebhookDeliveriesKept: the memory store keeps the newest
// KeptDeliveries finished deliveries of a webhook, and every pending one.
func TestWebhookDeliveriesKept(t *testing.T) {
	s := memory.New()
	ctx := t.Context()
	p := store.Path{Project: "web", Need: store.RightAdmin}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	h, err := s.CreateWebhook(ctx, p, &store.Webhook{URL: "https://hooks.example", Secret: []byte("0123456789abcdef")})
	require.NoError(t, err)
	for range memory.KeptDeliveries + 5 {
		_, err := s.PingWebhook(ctx, p, h.ID)
		require.NoError(t, err)
	}
	claims, err := s.ClaimDeliveries(ctx, "a", time.Now().Add(time.Second), time.Minute, memory.KeptDeliveries+3)
	require.NoError(t, err)
	for _, c := range claims {
		require.NoError(t, s.FinishAttempt(ctx, c.Delivery.ID, "a", store.Attempt{StatusCode: 200, Status: store.DeliverySucceeded}))
	}
	ds, total, err := s.FindDeliveries(ctx, p, h.ID, store.ListQuery{Limit: 2 * memory.KeptDeliveries})
	require.NoError(t, err)
	assert.Equal(t, memory.KeptDeliveries+2, total, "the newest finished ones and the two pending")
	assert.Equal(t, store.DeliveryPending, ds[0].Status)
	assert.Equal(t, store.DeliveryPending, ds[1].Status)
	assert.Equal(t, claims[len(claims)-1].Delivery.ID, ds[2].ID, "the newest finished one is kept")
	assert.NotEqual(t, claims[0].Delivery.ID, ds[len(ds)-1].ID, "the oldest went")
}

func TestSnapshotsConformance(t *testing.T) {
	storetest.RunSnapshots(t, func(t *testing.T) storetest.SnapshotStore { return memory.New() })
}

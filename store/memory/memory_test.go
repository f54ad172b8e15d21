package memory_test

import (
	"testing"

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

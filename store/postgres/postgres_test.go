package postgres_test

import (
	"os"
	"testing"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return postgres.New(pgtest.New(t)) })
}

func TestUsers(t *testing.T) {
	storetest.RunUsers(t, func(t *testing.T) store.UserDirectory { return postgres.New(pgtest.New(t)) })
}

func TestQuotas(t *testing.T) {
	storetest.RunQuotas(t, func(t *testing.T, q store.Quotas) store.Store {
		return postgres.New(pgtest.New(t), postgres.WithQuotas(q))
	})
}

func TestAudit(t *testing.T) {
	storetest.RunAudit(t, func(t *testing.T) storetest.AuditStore { return postgres.New(pgtest.New(t)) })
}

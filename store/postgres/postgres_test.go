package postgres_test

import (
	"os"
	"testing"
	"time"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// testTimeout is the deadline of a store call in the conformance runs:
// a shared CI machine, loaded many times over and running the race
// detector, took more than the default 5 s to write a value of 1 MiB,
// and no test may fail because the machine is slow.
const testTimeout = time.Minute

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return postgres.New(pgtest.New(t), postgres.WithTimeout(testTimeout)) })
}

func TestUsers(t *testing.T) {
	storetest.RunUsers(t, func(t *testing.T) store.UserDirectory {
		return postgres.New(pgtest.New(t), postgres.WithTimeout(testTimeout))
	})
}

func TestQuotas(t *testing.T) {
	storetest.RunQuotas(t, func(t *testing.T, q store.Quotas) store.Store {
		return postgres.New(pgtest.New(t), postgres.WithQuotas(q))
	})
}

func TestAudit(t *testing.T) {
	storetest.RunAudit(t, func(t *testing.T) storetest.AuditStore {
		return postgres.New(pgtest.New(t), postgres.WithTimeout(testTimeout))
	})
}

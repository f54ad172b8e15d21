package postgres_test

import (
	"testing"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/storetest"
)

func TestSnapshotsConformance(t *testing.T) {
	storetest.RunSnapshots(t, func(t *testing.T) storetest.SnapshotStore {
		return postgres.New(pgtest.New(t), postgres.WithTimeout(testTimeout))
	})
}

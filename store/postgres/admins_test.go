package postgres_test

import (
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/storetest"
)

// TestUserAdmin runs the user administration suite on two Stores on one
// database, as two instances.
func TestUserAdmin(t *testing.T) {
	storetest.RunUserAdmin(t, func(t *testing.T) (storetest.UserAdminStore, storetest.UserAdminStore) {
		url := pgtest.NewURL(t)
		open := func() *postgres.Store {
			db, err := sqlx.Open("postgres", url)
			require.NoError(t, err)
			db.SetMaxOpenConns(4)
			t.Cleanup(func() { db.Close() })
			return postgres.New(db)
		}
		return open(), open()
	})
}

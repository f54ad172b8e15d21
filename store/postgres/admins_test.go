package postgres_test

import (
	"testing"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store/storetest"
)

// TestUserAdmin runs the user administration suite on two Stores on one
// database, as two instances.
func TestUserAdmin(t *testing.T) {
	storetest.RunUserAdmin(t, func(t *testing.T) (storetest.UserAdminStore, storetest.UserAdminStore) {
		return pgtest.Pair(t)
	})
}

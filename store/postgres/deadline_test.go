package postgres_test

import (
	"testing"
	"time"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/storetest"
)

// TestApplyDeadline: a batch's deadline follows its work
// (storetest.RunApplyDeadline).
func TestApplyDeadline(t *testing.T) {
	storetest.RunApplyDeadline(t, func(t *testing.T, timeout time.Duration) store.Store {
		_, s, _ := openStore(t, 4, postgres.WithTimeout(timeout))
		return s
	})
}

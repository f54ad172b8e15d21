package sqlite

import (
	"context"

	"github.com/hds-go/hds/store"
)

var _ store.PendingCounter = (*Store)(nil)

// CountPendingDeliveries implements store.PendingCounter.
func (s *Store) CountPendingDeliveries(ctx context.Context) (int, error) {
	n := 0
	err := s.read(ctx, func(t *tx) error {
		return t.row(`SELECT count(*) FROM hds_webhook_deliveries WHERE status = 'pending'`).Scan(&n)
	})
	return n, err
}

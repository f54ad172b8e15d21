package postgres

import (
	"context"

	"github.com/hds-go/hds/store"
)

var _ store.PendingCounter = (*Store)(nil)

// CountPendingDeliveries implements store.PendingCounter.
func (s *Store) CountPendingDeliveries(ctx context.Context) (_ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	row, err := s.q().row(ctx, `SELECT count(*) FROM hds_webhook_deliveries WHERE status = 'pending'`)
	if err != nil {
		return 0, err
	}
	n := 0
	if err := row.Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}

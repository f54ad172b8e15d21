package memory

import (
	"context"

	"github.com/hds-go/hds/store"
)

var _ store.PendingCounter = (*Store)(nil)

// CountPendingDeliveries implements store.PendingCounter.
func (s *Store) CountPendingDeliveries(context.Context) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, pr := range s.projects {
		for _, h := range pr.hooks {
			n += len(h.events) + len(h.pings)
		}
	}
	return n, nil
}

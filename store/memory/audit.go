package memory

import (
	"context"
	"slices"

	"github.com/hds-go/hds/store"
)

var (
	_ store.AuditLog       = (*Store)(nil)
	_ store.EventSource    = (*Store)(nil)
	_ store.AuditLogSetter = (*Store)(nil)
)

// FindAuditEntries implements store.AuditLog.
func (s *Store) FindAuditEntries(_ context.Context, p store.Path, q store.AuditQuery) ([]*store.AuditEntry, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, 0, err
	}
	// The total counts every match, also those a cursor (Before) skips.
	before := q.Before
	q.Before = 0
	var match []*store.AuditEntry
	total := 0
	for _, e := range slices.Backward(pr.log) {
		if q.Matches(e) {
			total++
			if before == 0 || e.Revision < before {
				match = append(match, e)
			}
		}
	}
	page := window(match, store.ListQuery{Limit: q.Limit, Offset: q.Offset})
	out := make([]*store.AuditEntry, len(page))
	for i, e := range page {
		c := *e
		out[i] = &c
	}
	if q.NoCount {
		total = store.NotCounted
	}
	return out, total, nil
}

// RecordReveal implements store.AuditLog.
func (s *Store) RecordReveal(_ context.Context, p store.Path, r *store.Record, through ...store.RevealedRecord) error {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return err
	}
	for _, e := range store.RevealEntries(p, r, through) {
		s.audit(pr, p.Caller, e)
	}
	return nil
}

// AuditEntriesAfter implements store.EventSource. The entries are shared
// (they are never changed).
func (s *Store) AuditEntriesAfter(_ context.Context, projectID string, after int64, limit int) ([]*store.AuditEntry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr := s.projectByID(projectID)
	if pr == nil || after >= int64(len(pr.log)) {
		return nil, nil
	}
	page := pr.log[max(after, 0):]
	if len(page) > limit {
		page = page[:limit]
	}
	return slices.Clone(page), nil
}

// Subscribe implements store.EventSource: entries are delivered under the
// write lock that wrote them, so in revision order.
func (s *Store) Subscribe(_ context.Context, projectID string, deliver func(*store.AuditEntry)) (func(), error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr := s.projectByID(projectID)
	if pr == nil {
		return nil, &store.NotFoundError{Kind: "project", Name: projectID}
	}
	return s.hub.Subscribe(projectID, pr.Revision, deliver), nil
}

// projectByID returns the project with id, or nil; the caller holds mu.
func (s *Store) projectByID(id string) *project {
	for _, pr := range s.projects {
		if pr.ID == id {
			return pr
		}
	}
	return nil
}

package memory

import (
	"context"
	"iter"

	"github.com/hds-go/hds/store"
)

// StreamRecordVersions implements store.Streamer: the states are shared,
// immutable, as StreamRecords does.
func (s *Store) StreamRecordVersions(_ context.Context, p store.Path, q store.ListQuery) (int, iter.Seq2[*store.RecordVersion, error], error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, r, err := s.record(p)
	if err != nil {
		return 0, nil, err
	}
	all := r.versions()
	return len(all), store.Items(window(all, q)), nil
}

// sharedVersion returns the state cur as a RecordVersion sharing cur's
// (immutable) value.
func sharedVersion(cur *store.Record) *store.RecordVersion {
	return &store.RecordVersion{RecordID: cur.ID, Version: cur.Version, Name: cur.Name, Type: cur.Type,
		Value: cur.Value, ChangedAt: cur.UpdatedAt, ChangedBy: cur.UpdatedBy}
}

// versions returns the record's states, newest first, shared (read-only).
func (r *record) versions() []*store.RecordVersion {
	history := r.hist()
	out := make([]*store.RecordVersion, 0, len(history)+1)
	out = append(out, sharedVersion(r.state()))
	for i := len(history) - 1; i >= 0; i-- {
		out = append(out, history[i])
	}
	return out
}

// version returns a copy of the record's state at version v, or nil.
func (r *record) version(v int64) *store.RecordVersion {
	if v == r.Version {
		return store.VersionOf(r.state())
	}
	for _, h := range r.hist() {
		if h.Version == v {
			return h.Clone()
		}
	}
	return nil
}

// FindRecordVersions implements store.Store.
func (s *Store) FindRecordVersions(_ context.Context, p store.Path, q store.ListQuery) ([]*store.RecordVersion, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, r, err := s.record(p)
	if err != nil {
		return nil, 0, err
	}
	all := r.versions()
	page := window(all, q)
	for i, v := range page {
		page[i] = v.Clone()
	}
	return page, len(all), nil
}

// FindRecordVersion implements store.Store.
func (s *Store) FindRecordVersion(_ context.Context, p store.Path, version int64) (*store.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, r, err := s.record(p)
	if err != nil {
		return nil, err
	}
	v := r.version(version)
	if v == nil {
		return nil, store.VersionNotFound(version)
	}
	return v.At(r.state()), nil
}

// RestoreRecord implements store.Store.
func (s *Store) RestoreRecord(_ context.Context, p store.Path, version int64, w store.Write) (*store.Record, error) {
	s.lock()
	defer s.unlock()
	k, r, err := s.record(p)
	if err != nil {
		return nil, err
	}
	v := r.version(version)
	if v == nil {
		return nil, store.VersionNotFound(version)
	}
	if err := w.Check(r.state()); err != nil {
		return nil, err
	}
	if err := s.write(k, r, r.Name(), v.Type, v.Value, p.Caller, w); err != nil {
		return nil, err
	}
	s.auditRecord(k, r, p.Caller, store.ActionRecordRestore)
	return r.Clone(), nil
}

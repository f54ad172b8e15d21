package memory

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"strconv"
	"time"

	"github.com/hds-go/hds/store"
)

// FindRecords implements store.Store.
func (s *Store) FindRecords(_ context.Context, p store.Path, q store.RecordQuery) ([]*store.Record, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, err := s.cluster(p)
	if err != nil {
		return nil, 0, err
	}
	page, total := matchRecords(k, q)
	return cloneRecords(page), total, nil
}

// snapshot returns the current states of recs: immutable pointers, safe
// to read once s.mu is released.
func snapshot(recs []*record) []*store.Record {
	states := fillStates(recs)
	out := make([]*store.Record, len(recs))
	for i := range states {
		out[i] = &states[i]
	}
	return out
}

// snapshotSeq is snapshot as a sequence, without the slice of pointers:
// a page of 100 records is 800 bytes less to collect.
func snapshotSeq(recs []*record) iter.Seq2[*store.Record, error] {
	states := fillStates(recs)
	return func(yield func(*store.Record, error) bool) {
		for i := range states {
			if !yield(&states[i], nil) {
				return
			}
		}
	}
}

// fillStates returns the current states of recs, in one allocation
// besides their ids' text.
func fillStates(recs []*record) []store.Record {
	states := make([]store.Record, len(recs))
	ids := idsText(recs)
	for i, r := range recs {
		r.fill(&states[i], idAt(ids, i))
	}
	return states
}

// StreamRecords implements store.Streamer: the page is a snapshot of
// immutable record pointers taken under the read lock; no value is
// copied and no lock is held while the caller reads.
func (s *Store) StreamRecords(_ context.Context, p store.Path, q store.RecordQuery) (int, iter.Seq2[*store.Record, error], error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, err := s.cluster(p)
	if err != nil {
		return 0, nil, err
	}
	page, total := matchRecords(k, q)
	return total, snapshotSeq(page), nil
}

// StreamClusterRecords implements store.Streamer, as StreamRecords does.
func (s *Store) StreamClusterRecords(_ context.Context, p store.Path) (*store.Cluster, iter.Seq2[*store.Record, error], error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, err := s.cluster(p)
	if err != nil {
		return nil, nil, err
	}
	return k.out(false), snapshotSeq(k.records.all()), nil
}

// cloneRecords copies records out, values included, that the caller may
// change: snapshot's states with every value copied into one buffer, so
// four allocations in all (the states, the pointers, the ids' text and
// the values).
func cloneRecords(src []*record) []*store.Record {
	size := 0
	for _, r := range src {
		size += len(r.value())
	}
	out := snapshot(src)
	buf := make([]byte, 0, size)
	for _, o := range out {
		start := len(buf)
		buf = append(buf, o.Value...)
		o.Value = buf[start:len(buf):len(buf)]
	}
	return out
}

// FindRecord implements store.Store.
func (s *Store) FindRecord(_ context.Context, p store.Path) (*store.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, r, err := s.record(p)
	if err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// CreateRecord implements store.Store.
func (s *Store) CreateRecord(_ context.Context, p store.Path, in *store.Record, _ store.Write) (*store.Record, error) {
	s.lock()
	defer s.unlock()
	k, err := s.cluster(p)
	if err != nil {
		return nil, err
	}
	r, err := s.createRecord(k, p.Record, in, p.Caller, s.now())
	if err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// createRecord adds the record name to k from in, made by c, with its
// audit entry; the caller holds the write lock.
func (s *Store) createRecord(k *cluster, name string, in *store.Record, c store.Caller, now time.Time) (*record, error) {
	if err := store.ValidateName(name); err != nil {
		return nil, err
	}
	if k.records.get(name) != nil {
		return nil, &store.ExistsError{Kind: "record", Name: name}
	}
	if id, ok := parseID(name); ok && k.records.getID(id) != nil {
		// The segment names that record, so it exists
		// (docs/api.md#data-model).
		return nil, &store.ExistsError{Kind: "record", Name: name}
	}
	if err := s.quotas.CheckRecords(k.records.len()); err != nil {
		return nil, err
	}
	if err := s.quotas.CheckBytes(k.project().bytes, size(name, in.Value)); err != nil {
		return nil, err
	}
	id := in.ID
	if id == "" {
		id = store.NewID()
	} else if s.idTaken(id) {
		return nil, &store.ExistsError{Kind: "record id", Name: id}
	}
	r := &record{Version: 1, created: micros(now), updated: micros(now), by: actorOf(c.ID())}
	var ok bool
	if r.id, ok = parseID(id); !ok {
		return nil, &store.ValidationError{Message: "record id " + strconv.Quote(id) + " is not a UUID"}
	}
	r.set(name, in.Type, in.Value)
	k.records.insert(r)
	k.project().bytes += size(r.Name(), r.Value())
	s.auditRecord(k, r, c, store.ActionRecordCreate)
	return r, nil
}

// idTaken reports whether any record anywhere has id. Only used for
// caller-chosen ids, which are fresh UUIDs, so the scan is rare.
func (s *Store) idTaken(id string) bool { return s.recordByID(id) != nil }

// UpdateRecord implements store.Store.
func (s *Store) UpdateRecord(_ context.Context, p store.Path, w store.Write, update func(*store.Record) error) (*store.Record, error) {
	s.lock()
	defer s.unlock()
	k, r, err := s.record(p)
	if err != nil {
		return nil, err
	}
	if err := s.updateRecord(k, r, p.Caller, w, update); err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// updateRecord applies update to r, in k, by c, with the checks of
// UpdateRecord; the caller holds the write lock.
func (s *Store) updateRecord(k *cluster, r *record, c store.Caller, w store.Write, update func(*store.Record) error) error {
	next := r.Clone()
	if err := update(next); err != nil {
		return err
	}
	if next.Name != r.Name() {
		if err := store.ValidateName(next.Name); err != nil {
			return err
		}
		if k.records.get(next.Name) != nil {
			return &store.ExistsError{Kind: "record", Name: next.Name}
		}
		if id, ok := parseID(next.Name); ok && k.records.getID(id) != nil && id != r.id {
			return &store.ExistsError{Kind: "record", Name: next.Name}
		}
	}
	if err := w.Check(r.state()); err != nil {
		return err
	}
	action := store.UpdateAction(r.state(), next)
	if err := s.write(k, r, next.Name, next.Type, next.Value, c, w); err != nil {
		return err
	}
	s.auditRecord(k, r, c, action)
	return nil
}

// auditRecord writes the audit entry of action on r, in k, by c; the
// caller holds the write lock.
func (s *Store) auditRecord(k *cluster, r *record, c store.Caller, action store.Action) {
	s.audit(k.project(), c, store.AuditEntry{Action: action, Collection: k.parent.Name, Cluster: k.Name,
		Record: r.Name(), RecordID: r.ID(), Version: r.Version})
}

// write makes name, type and value the record's new state, keeping the
// state it replaces in its history, cut to w.MaxVersions; or returns the
// *QuotaError of a project that would grow past its quota and changes
// nothing. c made the change.
func (s *Store) write(k *cluster, r *record, name string, t store.DataType, value json.RawMessage, c store.Caller, w store.Write) error {
	old := size(r.Name(), r.Value())
	delta := size(name, value) - old
	history := slices.Clone(r.hist()) // the old one may be shared (a batch's undo)
	kept := len(history)
	if w.MaxVersions > 0 {
		delta += old
		kept++
	}
	for i := 0; i < kept-max(w.MaxVersions, 0); i++ { // the versions dropped
		delta -= size(history[i].Name, history[i].Value)
	}
	if err := s.grow(k.project(), delta); err != nil {
		return err
	}
	if w.MaxVersions > 0 {
		history = append(history, sharedVersion(r.state()))
	}
	if drop := len(history) - max(w.MaxVersions, 0); drop > 0 {
		history = slices.Delete(history, 0, drop)
	}
	r.setHist(history)
	k.records.detach(r)
	r.set(name, t, value)
	r.Version++
	r.updated, r.by = micros(s.now()), actorOf(c.ID())
	k.records.attach(r)
	k.records.state++
	return nil
}

// DeleteRecord implements store.Store.
func (s *Store) DeleteRecord(_ context.Context, p store.Path, w store.Write) error {
	s.lock()
	defer s.unlock()
	k, r, err := s.record(p)
	if err != nil {
		return err
	}
	if err := w.Check(r.state()); err != nil {
		return err
	}
	k.remove(r)
	s.auditRecord(k, r, p.Caller, store.ActionRecordDelete)
	return nil
}

// remove takes r out of k, and its bytes out of the project's count.
func (k *cluster) remove(r *record) {
	k.project().bytes -= r.bytes()
	k.records.remove(r)
}

// add puts r into k, and its bytes into the project's count.
func (k *cluster) add(r *record) {
	k.project().bytes += r.bytes()
	k.records.insert(r)
}

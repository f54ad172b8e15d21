package memory

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/hds-go/hds/store"
)

// ResealRecord implements store.Store. It finds the record by id across
// the store (an administrative walk, not a request path).
func (s *Store) ResealRecord(_ context.Context, id string, reseal store.Resealer) (bool, error) {
	s.lock()
	defer s.unlock()
	k, r := s.clusterRecordByID(id)
	if r == nil {
		return false, &store.NotFoundError{Kind: "record", Name: id}
	}
	before := r.bytes()
	// Every new value is computed first, so that an error changes nothing.
	cur := r.Value()
	changed := false
	if r.Type().IsCredential() {
		v, ok, err := reseal(r.Type(), r.Value())
		if err != nil {
			return false, err
		}
		if ok {
			cur, changed = append(json.RawMessage(nil), v...), true
		}
	}
	history := r.hist()
	hist := make([]json.RawMessage, len(history))
	for i, h := range history {
		hist[i] = h.Value
		if !h.Type.IsCredential() {
			continue
		}
		v, ok, err := reseal(h.Type, h.Value)
		if err != nil {
			return false, err
		}
		if ok {
			hist[i], changed = append(json.RawMessage(nil), v...), true
		}
	}
	// Copy-on-write: states already handed to readers stay as they are.
	if changed {
		k.records.detach(r)
		r.setData(r.Name(), string(cur))
		k.records.attach(r)
		history = slices.Clone(history)
		for i, h := range history {
			if string(hist[i]) != string(h.Value) {
				c := *h
				c.Value = hist[i]
				history[i] = &c
			}
		}
		r.setHist(history)
		k.project().bytes += r.bytes() - before // re-sealing is never refused
	}
	return changed, nil
}

// recordByID returns the record with id anywhere in the store, or nil.
func (s *Store) recordByID(id string) *record {
	_, r := s.clusterRecordByID(id)
	return r
}

// clusterRecordByID returns the record with id anywhere in the store and
// its cluster, or nils.
func (s *Store) clusterRecordByID(text string) (*cluster, *record) {
	id, ok := parseID(text)
	if !ok {
		return nil, nil
	}
	for _, pr := range s.projects {
		for _, c := range pr.collections {
			for _, k := range c.clusters {
				if r := k.records.getID(id); r != nil {
					return k, r
				}
			}
		}
	}
	return nil, nil
}

// FindCredentialRecords implements store.Store.
func (s *Store) FindCredentialRecords(_ context.Context, afterID string, limit int) ([]store.RecordRef, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var refs []store.RecordRef
	for _, pr := range s.projects {
		for _, c := range pr.collections {
			for _, k := range c.clusters {
				k.records.scan(func(r *record) bool {
					if r.hasCredential() && r.ID() > afterID {
						refs = append(refs, store.RecordRef{
							Path:   store.Path{Project: pr.Name, Collection: c.Name, Cluster: k.Name, Record: r.ID()},
							Record: r.Clone(),
						})
					}
					return true
				})
			}
		}
	}
	slices.SortFunc(refs, func(a, b store.RecordRef) int { return strings.Compare(a.Record.ID, b.Record.ID) })
	if len(refs) > limit {
		refs = refs[:limit]
	}
	return refs, nil
}

// hasCredential reports whether the record's current state or a kept
// version is a credential.
func (r *record) hasCredential() bool {
	if r.Type().IsCredential() {
		return true
	}
	for _, h := range r.hist() {
		if h.Type.IsCredential() {
			return true
		}
	}
	return false
}

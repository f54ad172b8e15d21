package memory

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/hds-go/hds/store"
)

var _ store.Snapshots = (*Store)(nil)

// snap is a snapshot as the memory store keeps it: its records are
// states of their own, never changed in place (a re-seal replaces one).
type snap struct {
	store.Snapshot
	// bytes is what it counts toward the project's bytes (0 for an
	// automatic one).
	bytes    int64
	clusters []snapClusterRecords
}

// snapClusterRecords is a cluster of a snapshot, its records in name
// order.
type snapClusterRecords struct {
	name    string
	records []*store.Record
}

// take copies side under the write lock the caller holds, as a snapshot
// named name, and writes its snapshot.create entry.
func (s *Store) take(pr *project, c store.Caller, side store.Side, name, description string, automatic bool) (*snap, error) {
	col, ok := pr.collections[side.Collection]
	if !ok {
		return nil, &store.NotFoundError{Kind: "collection", Name: side.Collection}
	}
	var clusters []*cluster
	if side.Cluster == "" {
		for _, kn := range slices.Sorted(maps.Keys(col.clusters)) {
			clusters = append(clusters, col.clusters[kn])
		}
	} else {
		k, ok := col.clusters[side.Cluster]
		if !ok {
			return nil, &store.NotFoundError{Kind: "cluster", Name: side.Cluster}
		}
		clusters = []*cluster{k}
	}
	if _, ok := pr.snaps[name]; ok {
		return nil, &store.ExistsError{Kind: "snapshot", Name: name}
	}
	sn := &snap{Snapshot: store.Snapshot{Name: name, Collection: side.Collection, Cluster: side.Cluster,
		Description: description, Revision: pr.Revision, Automatic: automatic, CreatedAt: s.now(), CreatedBy: c.ActorName()}}
	for _, k := range clusters {
		recs := snapshot(k.records.all())
		for _, r := range recs {
			sn.bytes += store.SnapshotSize(r.Name, r.Value)
		}
		sn.Records += len(recs)
		sn.clusters = append(sn.clusters, snapClusterRecords{name: k.Name, records: recs})
	}
	if automatic {
		sn.bytes = 0
	} else {
		n := 0
		for _, o := range pr.snaps {
			if !o.Automatic {
				n++
			}
		}
		if err := s.quotas.CheckSnapshots(n); err != nil {
			return nil, err
		}
		if err := s.grow(pr, sn.bytes); err != nil {
			return nil, err
		}
	}
	if pr.snaps == nil {
		pr.snaps = map[string]*snap{}
	}
	pr.snaps[name] = sn
	s.audit(pr, c, store.AuditEntry{Action: store.ActionSnapshotCreate, Collection: sn.Collection, Cluster: sn.Cluster, Target: name})
	return sn, nil
}

// drop deletes the snapshot under the write lock the caller holds and
// writes its snapshot.delete entry.
func (s *Store) drop(pr *project, c store.Caller, sn *snap) {
	delete(pr.snaps, sn.Name)
	pr.bytes -= sn.bytes
	s.audit(pr, c, store.AuditEntry{Action: store.ActionSnapshotDelete, Collection: sn.Collection, Cluster: sn.Cluster, Target: sn.Name})
}

// autoSnapshot takes the automatic snapshot of a batch (store.AutoSnapshot)
// and prunes the automatic ones beyond its Keep, noting the undo of each
// step in tx.
func (tx *memTx) autoSnapshot(a *store.AutoSnapshot) (string, error) {
	pr := tx.pr
	sn, err := tx.s.take(pr, tx.c, a.Side, store.AutomaticName(pr.Revision), "", true)
	if err != nil {
		return "", err
	}
	tx.undo = append(tx.undo, func() { delete(pr.snaps, sn.Name) })
	var autos []*snap
	for _, o := range pr.snaps {
		if o.Automatic {
			autos = append(autos, o)
		}
	}
	slices.SortFunc(autos, func(a, b *snap) int { return store.CompareSnapshots(&b.Snapshot, &a.Snapshot) })
	for len(autos) > max(a.Keep, 1) {
		old := autos[0]
		autos = autos[1:]
		tx.s.drop(pr, tx.c, old)
		tx.undo = append(tx.undo, func() { pr.snaps[old.Name] = old })
	}
	return sn.Name, nil
}

// CreateSnapshot implements store.Snapshots.
func (s *Store) CreateSnapshot(_ context.Context, p store.Path, name, description string) (*store.Snapshot, error) {
	if err := store.ValidateSnapshotName(name); err != nil {
		return nil, err
	}
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	sn, err := s.take(pr, p.Caller, store.Side{Collection: p.Collection, Cluster: p.Cluster}, name, description, false)
	if err != nil {
		return nil, err
	}
	out := sn.Snapshot
	return &out, nil
}

// FindSnapshots implements store.Snapshots.
func (s *Store) FindSnapshots(_ context.Context, p store.Path, q store.SnapshotQuery) ([]*store.Snapshot, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, 0, err
	}
	var all []*store.Snapshot
	for _, sn := range pr.snaps {
		if q.Matches(&sn.Snapshot) {
			out := sn.Snapshot
			all = append(all, &out)
		}
	}
	slices.SortFunc(all, store.CompareSnapshots)
	total := len(all)
	all = all[min(q.Offset, len(all)):]
	if q.Limit > 0 && len(all) > q.Limit {
		all = all[:q.Limit]
	}
	return all, total, nil
}

// find returns the snapshot name of p's project under the lock the caller
// holds.
func (s *Store) findSnap(p store.Path, name string) (*project, *snap, error) {
	pr, err := s.project(p)
	if err != nil {
		return nil, nil, err
	}
	sn, ok := pr.snaps[name]
	if !ok {
		return nil, nil, &store.NotFoundError{Kind: "snapshot", Name: name}
	}
	return pr, sn, nil
}

// FindSnapshot implements store.Snapshots.
func (s *Store) FindSnapshot(_ context.Context, p store.Path, name string) (*store.Snapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, sn, err := s.findSnap(p, name)
	if err != nil {
		return nil, err
	}
	out := sn.Snapshot
	return &out, nil
}

// SnapshotRecords implements store.Snapshots: the snapshot's records are
// never changed in place, so they are visited without the lock.
func (s *Store) SnapshotRecords(_ context.Context, p store.Path, name string, visit func(string, *store.Record) error) error {
	s.mu.RLock()
	_, sn, err := s.findSnap(p, name)
	var clusters []snapClusterRecords
	if err == nil {
		clusters = sn.clusters
	}
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	for _, k := range clusters {
		if err := visit(k.name, nil); err != nil {
			return err
		}
		for _, r := range k.records {
			if err := visit(k.name, r.Clone()); err != nil {
				return err
			}
		}
	}
	return nil
}

// DeleteSnapshot implements store.Snapshots.
func (s *Store) DeleteSnapshot(_ context.Context, p store.Path, name string) error {
	s.lock()
	defer s.unlock()
	pr, sn, err := s.findSnap(p, name)
	if err != nil {
		return err
	}
	s.drop(pr, p.Caller, sn)
	return nil
}

// RecordSnapshotReveal implements store.Snapshots.
func (s *Store) RecordSnapshotReveal(_ context.Context, p store.Path, name string) error {
	s.lock()
	defer s.unlock()
	pr, sn, err := s.findSnap(p, name)
	if err != nil {
		return err
	}
	s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionCredentialReveal, Collection: sn.Collection, Cluster: sn.Cluster, Target: name})
	return nil
}

// CompareSnapshot implements store.Snapshots: the snapshot's records and
// the to side's are taken under the read lock, and merged once it is
// released.
func (s *Store) CompareSnapshot(_ context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
	revision, side, a, b, err := s.snapshotSides(p, from.Snapshot, to)
	if err != nil {
		return err
	}
	if err := visit(store.Pair{Revision: revision}); err != nil {
		return err
	}
	return store.MergeSides(side, store.Items(a), store.Items(b), visit)
}

// snapshotSides reads the snapshot name and the side to under the read
// lock: the project's change revision, the snapshot's side, and the
// records of each side by cluster and name.
func (s *Store) snapshotSides(p store.Path, name string, to store.Side) (int64, store.Side, []store.SideRecord, []store.SideRecord, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, sn, err := s.findSnap(p, name)
	if err != nil {
		return 0, store.Side{}, nil, nil, err
	}
	c, ok := pr.collections[to.Collection]
	if !ok {
		return 0, store.Side{}, nil, nil, &store.NotFoundError{Kind: "collection", Name: to.Collection}
	}
	var clusters []*cluster
	if to.Cluster == "" {
		for _, name := range slices.Sorted(maps.Keys(c.clusters)) {
			clusters = append(clusters, c.clusters[name])
		}
	} else {
		k, ok := c.clusters[to.Cluster]
		if !ok {
			return 0, store.Side{}, nil, nil, &store.NotFoundError{Kind: "cluster", Name: to.Cluster}
		}
		clusters = []*cluster{k}
	}
	var a, b []store.SideRecord
	for _, k := range sn.clusters {
		for _, r := range k.records {
			a = append(a, store.SideRecord{Cluster: k.name, Record: r})
		}
	}
	for _, k := range clusters {
		for _, r := range snapshot(k.records.all()) {
			b = append(b, store.SideRecord{Cluster: k.Name, Record: r})
		}
	}
	return pr.changeRevision(), sn.Snapshot.Side(), a, b, nil
}

// ResealSnapshots implements store.Snapshots: each value re-sealed
// replaces its record state (copy on write).
func (s *Store) ResealSnapshots(_ context.Context, reseal store.SnapshotResealer) (int, error) {
	s.lock()
	defer s.unlock()
	n := 0
	for _, pr := range s.projects {
		for _, sn := range pr.snaps {
			var out []snapClusterRecords // a copy, once a value changes: readers hold the old one
			for ci, k := range sn.clusters {
				recs, cloned := k.records, false
				for i, r := range recs {
					if !r.Type.IsCredential() {
						continue
					}
					v, write, err := reseal(r.ID, r.Type, r.Value)
					if err != nil {
						return n, err
					}
					if !write {
						continue
					}
					if !cloned {
						recs, cloned = slices.Clone(recs), true
					}
					c := *r
					c.Value = append(json.RawMessage(nil), v...)
					if !sn.Automatic {
						delta := int64(len(c.Value) - len(r.Value))
						sn.bytes += delta
						pr.bytes += delta
					}
					recs[i] = &c
					n++
				}
				if cloned {
					if out == nil {
						out = slices.Clone(sn.clusters)
					}
					out[ci].records = recs
				}
			}
			if out != nil {
				sn.clusters = out
			}
		}
	}
	return n, nil
}

package memory

import (
	"context"
	"maps"
	"slices"

	"github.com/hds-go/hds/store"
)

// CompareRecords implements store.Comparer: both sides are taken under the
// read lock as immutable record pointers (no value is copied), and merged
// once the lock is released.
func (s *Store) CompareRecords(_ context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
	revision, a, b, err := s.compareSnapshot(p, from, to)
	if err != nil {
		return err
	}
	if err := visit(store.Pair{Revision: revision}); err != nil {
		return err
	}
	return store.MergeSides(from, store.Items(a), store.Items(b), visit)
}

// compareSnapshot returns the project's newest revision that changes
// something (changeRevision) and the records of each
// side, by cluster and name.
func (s *Store) compareSnapshot(p store.Path, from, to store.Side) (int64, []store.SideRecord, []store.SideRecord, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return 0, nil, nil, err
	}
	var sides [2][]*cluster
	for i, side := range []store.Side{from, to} {
		c, ok := pr.collections[side.Collection]
		if !ok {
			return 0, nil, nil, &store.NotFoundError{Kind: "collection", Name: side.Collection}
		}
		if side.Cluster == "" {
			for _, name := range slices.Sorted(maps.Keys(c.clusters)) {
				sides[i] = append(sides[i], c.clusters[name])
			}
			continue
		}
		k, ok := c.clusters[side.Cluster]
		if !ok {
			return 0, nil, nil, &store.NotFoundError{Kind: "cluster", Name: side.Cluster}
		}
		sides[i] = []*cluster{k}
	}
	var out [2][]store.SideRecord
	for i, clusters := range sides {
		for _, k := range clusters {
			for _, r := range snapshot(k.records.all()) {
				out[i] = append(out[i], store.SideRecord{Cluster: k.Name, Record: r})
			}
		}
	}
	return pr.changeRevision(), out[0], out[1], nil
}

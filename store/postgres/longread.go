package postgres

import (
	"context"

	"github.com/hds-go/hds/internal/readahead"
	"github.com/hds-go/hds/store"
)

// Long reads (docs/api.md#limits-rate-limits-and-quotas). An export and
// a comparison read one snapshot, which holds a connection of the pool
// until the last row is read, and their caller writes each item to a
// client that may read slowly. So that no number of slow readers starves
// the instance, they run through readahead: at most half of the pool
// (readahead.Share of its size when the read starts) holds such
// snapshots at once, a read beyond that waits for a place within the
// store's timeout (then fails with store.ErrUnavailable), and the rows
// are read ahead of the caller into a buffer of at most readAheadBytes,
// so that a snapshot that fits gives its connection back as soon as it is
// read.

// readAheadBytes bounds what a long read holds in memory ahead of its
// caller (one item is held whatever its size).
const readAheadBytes = 1 << 20

// poolSize is the bound of the Store's pool (0: none).
func (s *Store) poolSize() int {
	if s.db == nil {
		return 0
	}
	return s.db.Stats().MaxOpenConnections
}

// ExportProject implements store.Store: exportProject, read ahead.
func (s *Store) ExportProject(ctx context.Context, p store.Path, visit func(store.ExportItem) error) error {
	return readahead.Visit(ctx, readAheadBytes, store.ExportItem.Size,
		func(ctx context.Context, push func(store.ExportItem) error) error {
			return s.exportProject(ctx, p, push)
		}, visit)
}

// CompareRecords implements store.Comparer: compareRecords, read ahead.
func (s *Store) CompareRecords(ctx context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
	return readahead.Visit(ctx, readAheadBytes, store.Pair.Size,
		func(ctx context.Context, push func(store.Pair) error) error {
			return s.compareRecords(ctx, p, from, to, push)
		}, visit)
}

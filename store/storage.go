package store

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrStorageFull reports that the storage had no room left for a write
// (a full disk: SQLite's SQLITE_FULL, PostgreSQL's disk_full). It matches
// ErrUnavailable: the write changed nothing and may succeed once room is
// made. Stores wrap their driver's error with it.
var ErrStorageFull = fmt.Errorf("%w: storage full", ErrUnavailable)

// StorageChecker is implemented by stores that know when their writes
// fail for want of storage, so that /health can say so while reads still
// work (docs/api.md#health).
type StorageChecker interface {
	// StorageFull reports whether a write failed with ErrStorageFull
	// within the last StorageFullFor and no write succeeded since.
	StorageFull() bool
}

// StorageFullFor is how long a write that failed for want of storage is
// reported by a StorageWatch when no write follows it.
const StorageFullFor = 30 * time.Second

// StorageWatch remembers the last write of a store that failed for want
// of storage (see StorageChecker). Its zero value is ready; it is safe
// for concurrent use.
type StorageWatch struct {
	failed atomic.Int64 // Unix nanoseconds of the last failure; 0: none since the last success
}

// Failed records err when it matches ErrStorageFull.
func (w *StorageWatch) Failed(err error) {
	if errors.Is(err, ErrStorageFull) {
		w.failed.Store(time.Now().UnixNano())
	}
}

// Succeeded records a write that committed: storage is not full.
func (w *StorageWatch) Succeeded() { w.failed.Store(0) }

// Full implements StorageChecker's StorageFull.
func (w *StorageWatch) Full() bool {
	t := w.failed.Load()
	return t != 0 && time.Since(time.Unix(0, t)) < StorageFullFor
}

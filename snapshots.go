package hds

import (
	"github.com/hds-go/hds/handler"
)

// DefaultKeepAutomaticSnapshots is how many automatic snapshots a project
// keeps unless WithKeepAutomaticSnapshots says otherwise
// (snapshots.keep_automatic).
const DefaultKeepAutomaticSnapshots = handler.DefaultKeepAutomaticSnapshots

// WithKeepAutomaticSnapshots sets how many automatic snapshots a project
// keeps (config snapshots.keep_automatic,
// docs/api.md#snapshots-and-rollback-v13): every promote that changes
// something first takes a snapshot of what it changes, named auto-N, and
// the automatic snapshots beyond n are deleted, oldest first, in the same
// step. n 0 takes none (the promote's snapshot is then null); a negative
// n is refused. Without the option: DefaultKeepAutomaticSnapshots (20).
// Snapshots need a store that keeps them (store.Snapshots, as the memory,
// SQLite and PostgreSQL stores do); with another, the snapshot routes are
// 404 and promotes take none.
func WithKeepAutomaticSnapshots(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.fail("WithKeepAutomaticSnapshots: the number must be 0 or more, got %d", n)
		}
		c.keepAutomatic = n
		if n == 0 {
			c.keepAutomatic = -1 // handler.Config: none
		}
	}
}

// Package storetest holds the conformance suites of hds's storage
// interfaces. Every implementation of store.Store runs Run, and every
// implementation of store.UserDirectory runs RunUsers, from an ordinary
// test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return mystore.New(...) })
//	}
//
// The suites check the error contract first (which sentinel error, and
// which *store.NotFoundError or *store.ExistsError, each failure gives),
// then behaviour (fields, counts, renames, cascades, copies, and the
// sorting, filtering and paging rules of docs/api.md#list-queries), then
// concurrency. Each subtest asks the constructor for a fresh, empty store.
package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/store"
)

// The owners used by the suite: owner owns the fixture; stranger owns
// nothing of it.
const (
	owner    = "alice"
	stranger = "mallory"
	bob      = "bob"
)

// The names of the fixture's resources.
const (
	projName = "proj"
	collName = "coll"
	clusName = "clus"
	recName  = "rec"
)

// Kinds named by *store.NotFoundError and *store.ExistsError, by level.
var kinds = []string{"project", "collection", "cluster", "record"}

// Run runs the conformance suite of store.Store. newStore must return a
// fresh, empty store each time it is called; it is called once per
// subtest.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Errors", func(t *testing.T) { testErrors(t, newStore) })
	t.Run("Projects", func(t *testing.T) { testProjects(t, newStore) })
	t.Run("Collections", func(t *testing.T) { testCollections(t, newStore) })
	t.Run("Clusters", func(t *testing.T) { testClusters(t, newStore) })
	t.Run("Records", func(t *testing.T) { testRecords(t, newStore) })
	t.Run("Lists", func(t *testing.T) { testLists(t, newStore) })
	t.Run("RecordLists", func(t *testing.T) { testRecordLists(t, newStore) })
	t.Run("ListFilters", func(t *testing.T) { testListFilters(t, newStore) })
	t.Run("Cursors", func(t *testing.T) { testCursors(t, newStore) })
	t.Run("Substrings", func(t *testing.T) { testSubstrings(t, newStore) })
	t.Run("CredentialRecords", func(t *testing.T) { testCredentialRecords(t, newStore) })
	t.Run("LargeValues", func(t *testing.T) { testLargeValues(t, newStore) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, newStore) })
	t.Run("Preconditions", func(t *testing.T) { testPreconditions(t, newStore) })
	t.Run("History", func(t *testing.T) { testHistory(t, newStore) })
	t.Run("Batches", func(t *testing.T) { testBatches(t, newStore) })
	t.Run("BatchSource", func(t *testing.T) { testBatchSource(t, newStore) })
	t.Run("Exports", func(t *testing.T) { testExports(t, newStore) })
	t.Run("Comparisons", func(t *testing.T) { testComparisons(t, newStore) })
	t.Run("Streaming", func(t *testing.T) { testStreaming(t, newStore) })
	t.Run("ClusterState", func(t *testing.T) { testClusterState(t, newStore) })
	t.Run("Ping", func(t *testing.T) {
		assert.NoError(t, newStore(t).Ping(t.Context()), "Ping on a healthy store")
	})
}

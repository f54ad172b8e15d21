package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// TestMigrateClusterState upgrades a database of schema 0001 that holds
// clusters with records to migration 0002 (cluster tags): every cluster
// starts at state 0 with its records kept, and from then on the triggers
// move the states of the clusters a write touches, and only theirs.
func TestMigrateClusterState(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "hds.db")
	old, err := sqlite.Open(ctx, path, sqlite.WithMigrationsTo("migrations/0001_schema.sql"))
	require.NoError(t, err)
	alice := store.Caller{UserID: "alice"}
	a := store.Path{Need: store.RightRead, Caller: alice, Project: "web", Collection: "prod", Cluster: "a"}
	_, err = old.CreateProject(ctx, a)
	require.NoError(t, err)
	c, err := old.CreateCollection(ctx, a)
	require.NoError(t, err)
	// Clusters and records as schema 0001 holds them (this version's
	// store reads hds_clusters.state, which 0001 lacks).
	for i, k := range []string{"a", "b"} {
		kid, rid := store.NewID(), store.NewID()
		require.NoError(t, old.Exec(ctx, `INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at, records)
			VALUES (?, ?, ?, ?, 1, 1, 1)`, kid, c.ID, k, k), "cluster %s", k)
		require.NoError(t, old.Exec(ctx, `INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version,
			vtext, vtext_lower, vkey, rkey, bytes, created_at, updated_at, updated_by)
			VALUES (?, ?, 'r', 'r', 'INTEGER', ?, 1, ?, ?, x'00', NULL, 2, 1, 1, 'alice')`,
			rid, kid, i+1, i+1, i+1), "record of %s", k)
	}
	require.NoError(t, old.Close())

	s := openAt(t, path)
	state := func(p store.Path) int64 {
		t.Helper()
		k, err := s.FindCluster(ctx, p, true)
		require.NoError(t, err)
		require.Len(t, k.Records, 1, "the records of %s are kept", p.Cluster)
		return k.State
	}
	b := a
	b.Cluster = "b"
	assert.Equal(t, [2]int64{0, 0}, [2]int64{state(a), state(b)}, "every cluster starts at state 0")

	r := a
	r.Record = "r"
	_, err = s.UpdateRecord(ctx, r, store.Write{}, func(*store.Record) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, [2]int64{1, 0}, [2]int64{state(a), state(b)}, "an update of a record of a moves a's state only")

	_, err = s.RenameCollection(ctx, a, "live")
	require.NoError(t, err)
	a.Collection, b.Collection = "live", "live"
	assert.Equal(t, [2]int64{2, 1}, [2]int64{state(a), state(b)}, "renaming the collection moves the state of each of its clusters")
}

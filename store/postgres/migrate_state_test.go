package postgres_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateClusterState upgrades a database of the schema before
// migration 0011 (cluster tags) that holds clusters with records: every
// cluster starts at state 0 with its records kept, and from then on the
// triggers move the states of the clusters a write touches, whichever
// instance writes, and only theirs.
func TestMigrateClusterState(t *testing.T) {
	db := emptyDatabase(t)
	ctx := t.Context()
	migrateBefore(t, db, "0011")
	old := postgres.New(db)
	alice := store.Caller{UserID: "alice"}
	a := store.Path{Need: store.RightRead, Caller: alice, Project: "web", Collection: "prod", Cluster: "a"}
	b := a
	b.Cluster = "b"
	_, err := old.CreateProject(ctx, a)
	require.NoError(t, err)
	_, err = old.CreateCollection(ctx, a)
	require.NoError(t, err)
	for _, k := range []store.Path{a, b} {
		_, err = old.CreateCluster(ctx, k)
		require.NoError(t, err)
		r := k
		r.Record = "r"
		_, err = old.CreateRecord(ctx, r, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
		require.NoError(t, err)
	}

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	other := postgres.New(db) // a second instance on the same database
	state := func(s *postgres.Store, p store.Path) (int64, string) {
		t.Helper()
		k, err := s.FindCluster(ctx, p, true)
		require.NoError(t, err)
		require.Len(t, k.Records, 1, "the records are kept")
		return k.State, k.ETag()
	}
	for _, k := range []store.Path{a, b} {
		st, _ := state(s, k)
		assert.Zero(t, st, "cluster %s starts at state 0", k.Cluster)
	}

	r := a
	r.Record = "r"
	_, err = other.UpdateRecord(ctx, r, store.Write{}, func(*store.Record) error { return nil })
	require.NoError(t, err, "an update by the other instance")
	sa, tagA := state(s, a)
	sb, _ := state(s, b)
	assert.Equal(t, int64(1), sa, "the update moved a's state")
	assert.Zero(t, sb, "b is as it was")
	_, tagOther := state(other, a)
	assert.Equal(t, tagA, tagOther, "both instances give a the same tag")

	_, err = s.RenameCollection(ctx, a, "live")
	require.NoError(t, err)
	a.Collection, b.Collection = "live", "live"
	sa2, _ := state(other, a)
	sb2, _ := state(other, b)
	assert.Equal(t, [2]int64{sa + 1, sb + 1}, [2]int64{sa2, sb2}, "renaming the collection moves the state of each of its clusters")
}

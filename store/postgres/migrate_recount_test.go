package postgres_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateRecountsDriftedBytes upgrades a database of schema 0008 whose
// byte counters drifted (as creates racing deletes of their parent left
// them before migration 0009): the upgrade sets every counter to what the
// project holds, and a write the drifted counter refused succeeds.
func TestMigrateRecountsDriftedBytes(t *testing.T) {
	db := emptyDatabase(t)
	ctx := t.Context()
	migrateBefore(t, db, "0009")
	old := postgres.New(db)
	alice := store.Caller{UserID: "alice"}
	for _, proj := range []string{"web", "empty", "gone"} {
		_, err := old.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: alice, Project: proj})
		require.NoError(t, err)
	}
	k := store.Path{Need: store.RightRead, Caller: alice, Project: "web", Collection: "prod", Cluster: "k"}
	_, err := old.CreateCollection(ctx, k)
	require.NoError(t, err)
	_, err = old.CreateCluster(ctx, k)
	require.NoError(t, err)
	for i := range 3 {
		r := k
		r.Record = fmt.Sprint("r", i)
		_, err = old.CreateRecord(ctx, r, &store.Record{Type: store.Integer, Value: json.RawMessage("12345")}, store.Write{MaxVersions: 5})
		require.NoError(t, err)
		_, err = old.UpdateRecord(ctx, r, store.Write{MaxVersions: 5}, func(r *store.Record) error { r.Value = json.RawMessage("1"); return nil })
		require.NoError(t, err)
	}
	// prod 4 + k 1 + 3 × (r0 2 + 1, and the version r0 2 + 5) = 35
	_, err = db.Exec(`UPDATE hds_projects SET bytes = bytes + 19942 WHERE name IN ('web', 'empty')`)
	require.NoError(t, err, "drift the counters")
	_, err = db.Exec(`UPDATE hds_projects SET bytes = -240 WHERE name = 'gone'`)
	require.NoError(t, err, "drift a counter below zero")

	s := postgres.New(db, postgres.WithQuotas(store.Quotas{MaxBytesPerProject: 100}))
	require.NoError(t, s.Migrate(ctx), "Migrate the drifted database")
	for name, want := range map[string]int64{"web": 35, "empty": 0, "gone": 0} {
		var got int64
		require.NoError(t, db.Get(&got, `SELECT bytes FROM hds_projects WHERE name = $1`, name))
		assert.Equal(t, want, got, "the bytes of %s after the recount", name)
	}
	assertCounted(t, s)
	r := k
	r.Record = "big"
	_, err = s.CreateRecord(ctx, r, &store.Record{Type: store.String, Value: json.RawMessage(`"` + strings.Repeat("x", 60) + `"`)}, store.Write{})
	require.NoError(t, err, "65 bytes onto 35 of 100: refused by the drifted counter, accepted by the recount")
}

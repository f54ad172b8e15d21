package sqlite_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// TestMigrateSnapshots upgrades a database filled under the schema before
// migration 0006 (snapshots): the data stays, and a snapshot taken after
// the upgrade copies it at the project's revision.
func TestMigrateSnapshots(t *testing.T) {
	ctx := t.Context()
	file := filepath.Join(t.TempDir(), "hds.db")
	old, err := sqlite.Open(ctx, file, sqlite.WithMigrationsTo("migrations/0005_webhook_bounds.sql"))
	require.NoError(t, err)
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice", Name: "alice"}, Project: "web"}
	_, err = old.CreateProject(ctx, p)
	require.NoError(t, err, "the old schema takes writes")
	_, err = old.Apply(ctx, p, store.Batch{CreateParents: true, Ops: []store.Op{
		{Kind: store.OpCreate, Collection: "prod", Cluster: "app", Record: "port", New: &store.Record{Type: store.Integer, Value: json.RawMessage(`8080`)}},
		{Kind: store.OpCreate, Collection: "prod", Cluster: "empty", Record: "x", New: &store.Record{Type: store.Null, Value: json.RawMessage(`null`)}},
	}})
	require.NoError(t, err)
	require.NoError(t, old.DeleteRecord(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "web", Collection: "prod", Cluster: "empty", Record: "x"}, store.Write{}))
	before, err := old.FindProject(ctx, p)
	require.NoError(t, err)
	_, err = old.QueryString(ctx, `SELECT name FROM hds_snapshots`)
	require.Error(t, err, "no snapshot table before the upgrade")
	require.NoError(t, old.Close())

	s, err := sqlite.Open(ctx, file)
	require.NoError(t, err, "Open upgrades the file")
	t.Cleanup(func() { s.Close() })
	got, err := s.CreateSnapshot(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "web", Collection: "prod"}, "v1", "")
	require.NoError(t, err, "CreateSnapshot after the upgrade")
	assert.Equal(t, before.Revision, got.Revision)
	assert.Equal(t, 1, got.Records)
	var lines []string
	require.NoError(t, s.SnapshotRecords(ctx, p, "v1", func(k string, r *store.Record) error {
		if r == nil {
			lines = append(lines, k+"/")
		} else {
			lines = append(lines, k+"/"+r.Name+" "+string(r.Value))
		}
		return nil
	}))
	assert.Equal(t, []string{"app/", "app/port 8080", "empty/"}, lines)
}

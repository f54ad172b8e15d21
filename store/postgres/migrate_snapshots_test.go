package postgres_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateSnapshots upgrades a database filled under the schema before
// migration 0014 (snapshots): the data stays, a snapshot taken after the
// upgrade copies it, and its bytes count toward the project's from the
// count the old schema kept.
func TestMigrateSnapshots(t *testing.T) {
	db := emptyDatabase(t)
	ctx := t.Context()
	migrateBefore(t, db, "0014")
	s := postgres.New(db)
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice", Name: "alice"}, Project: "web"}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err, "the old schema takes writes")
	_, err = s.Apply(ctx, p, store.Batch{CreateParents: true, Ops: []store.Op{
		{Kind: store.OpCreate, Collection: "prod", Cluster: "app", Record: "port", New: &store.Record{Type: store.Integer, Value: json.RawMessage(`8080`)}},
		{Kind: store.OpCreate, Collection: "prod", Cluster: "app", Record: "host", New: &store.Record{Type: store.String, Value: json.RawMessage(`"db"`)}},
	}})
	require.NoError(t, err)
	before, err := s.FindProject(ctx, p)
	require.NoError(t, err)
	var bytesBefore int64
	require.NoError(t, db.Get(&bytesBefore, `SELECT bytes FROM hds_projects WHERE name = 'web'`))

	require.NoError(t, s.MigrateTo(ctx, ""), "the upgrade")
	got, err := s.CreateSnapshot(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "web", Collection: "prod"}, "v1", "")
	require.NoError(t, err, "CreateSnapshot after the upgrade")
	assert.Equal(t, before.Revision, got.Revision)
	assert.Equal(t, 2, got.Records)
	var lines []string
	require.NoError(t, s.SnapshotRecords(ctx, p, "v1", func(k string, r *store.Record) error {
		if r != nil {
			lines = append(lines, k+"/"+r.Name+" "+string(r.Value))
		}
		return nil
	}))
	assert.Equal(t, []string{`app/host "db"`, "app/port 8080"}, lines)
	var bytesAfter int64
	require.NoError(t, db.Get(&bytesAfter, `SELECT bytes FROM hds_projects WHERE name = 'web'`))
	assert.Equal(t, bytesBefore+int64(len("host")+len(`"db"`)+len("port")+len("8080")), bytesAfter, "the snapshot's bytes added")
}

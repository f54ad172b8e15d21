package postgres_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateAudit upgrades a database filled under the schema before
// migration 0006: every project starts at revision 0 with an empty log,
// and the first change after the upgrade is revision 1.
func TestMigrateAudit(t *testing.T) {
	db := emptyDatabase(t)
	ctx := context.Background()
	migrateBefore(t, db, "0006")
	proj, coll, clus, rec := store.NewID(), store.NewID(), store.NewID(), store.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at, bytes) VALUES ($1, 'web', 'web', 'owner-1', now(), now(), 17)`, []any{proj}},
		{`INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'prod', 'prod', now(), now())`, []any{coll, proj}},
		{`INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'k', 'k', now(), now())`, []any{clus, coll}},
		{`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at, updated_by)
			VALUES ($1, $2, 'port', 'port', 'INTEGER', '8080', 2, '8080', '8080', 0, 8080, NULL, now(), now(), 'owner-1')`, []any{rec, clus}},
	} {
		_, err := db.Exec(q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %s", q.sql)
	}

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	caller := store.Caller{UserID: "owner-1", Name: "owner", RequestID: "req-9"}
	p := store.Path{Need: store.RightRead, Caller: caller, Project: "web", Collection: "prod", Cluster: "k", Record: "port"}
	pr, err := s.FindProject(ctx, p)
	require.NoError(t, err, "FindProject after the upgrade")
	assert.Equal(t, int64(0), pr.Revision, "an existing project starts at revision 0")
	es, total, err := s.FindAuditEntries(ctx, p, store.AuditQuery{Limit: 10})
	require.NoError(t, err, "FindAuditEntries after the upgrade")
	assert.Empty(t, es, "an empty log")
	assert.Zero(t, total)

	r, err := s.UpdateRecord(ctx, p, store.Write{MaxVersions: 10}, func(r *store.Record) error {
		r.Value = json.RawMessage("9090")
		return nil
	})
	require.NoError(t, err, "an update after the upgrade")
	assert.Equal(t, int64(3), r.Version)
	es, _, err = s.FindAuditEntries(ctx, p, store.AuditQuery{Limit: 10})
	require.NoError(t, err, "FindAuditEntries")
	if assert.Len(t, es, 1, "the update's entry") {
		e := es[0]
		assert.Equal(t, int64(1), e.Revision, "the first revision")
		assert.Equal(t, store.ActionRecordUpdate, e.Action)
		assert.Equal(t, "owner-1", e.Actor)
		assert.Equal(t, "req-9", e.RequestID)
		assert.Equal(t, rec, e.RecordID)
		assert.Equal(t, int64(3), e.Version)
	}
	require.NoError(t, s.DeleteProject(ctx, p), "DeleteProject")
	var left int
	require.NoError(t, db.Get(&left, `SELECT count(*) FROM hds_audit`), "count the entries")
	assert.Zero(t, left, "entries are deleted with their project")
}

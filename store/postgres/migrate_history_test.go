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

// TestMigrateHistory upgrades a database filled under the schema before
// migration 0003 (record history): every record is kept, credited to its
// project's owner, and gains a history from then on.
func TestMigrateHistory(t *testing.T) {
	db := emptyDatabase(t)
	ctx := context.Background()
	migrateBefore(t, db, "0003")
	proj, coll, clus := store.NewID(), store.NewID(), store.NewID()
	rec1, rec2 := store.NewID(), store.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES ($1, 'web', 'web', 'owner-1', now(), now())`, []any{proj}},
		{`INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'prod', 'prod', now(), now())`, []any{coll, proj}},
		{`INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'k', 'k', now(), now())`, []any{clus, coll}},
		{`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at)
			VALUES ($1, $2, 'port', 'port', 'INTEGER', '8080', 4, '8080', '8080', 0, 8080, NULL, now(), now())`, []any{rec1, clus}},
		{`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at)
			VALUES ($1, $2, 'host', 'host', 'STRING', '"db.local"', 1, 'db.local', 'db.local', 1, NULL, 'db.local', now(), now())`, []any{rec2, clus}},
	} {
		_, err := db.Exec(q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %s", q.sql)
	}

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	require.NoError(t, s.Migrate(ctx), "Migrate again changes nothing")

	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "owner-1"}, Project: "web", Collection: "prod", Cluster: "k", Record: "port"}
	recs, total, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: store.NewListQuery()})
	require.NoError(t, err, "FindRecords after the upgrade")
	assert.Equal(t, 2, total, "no record lost")
	if assert.Len(t, recs, 2) {
		assert.Equal(t, []string{"host", "port"}, []string{recs[0].Name, recs[1].Name}, "names")
	}
	r, err := s.FindRecord(ctx, p)
	require.NoError(t, err, "FindRecord")
	assert.Equal(t, rec1, r.ID, "id kept")
	assert.Equal(t, int64(4), r.Version, "version kept")
	assert.Equal(t, "8080", string(r.Value), "value kept")
	assert.Equal(t, "owner-1", r.UpdatedBy, "credited to the project's owner")
	vs, n, err := s.FindRecordVersions(ctx, p, store.NewListQuery())
	require.NoError(t, err, "FindRecordVersions")
	assert.Equal(t, 1, n, "only the current state")
	if assert.Len(t, vs, 1) {
		assert.Equal(t, int64(4), vs[0].Version)
		assert.Equal(t, "owner-1", vs[0].ChangedBy)
	}
	w := store.Write{IfMatch: []string{r.ETag()}, MaxVersions: 10}
	u, err := s.UpdateRecord(ctx, p, w, func(r *store.Record) error { r.Value = json.RawMessage("9090"); return nil })
	require.NoError(t, err, "a conditional update after the upgrade")
	assert.Equal(t, int64(5), u.Version)
	old, err := s.FindRecordVersion(ctx, p, 4)
	require.NoError(t, err, "the replaced state is kept")
	assert.Equal(t, "8080", string(old.Value))
}

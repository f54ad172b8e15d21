package sqlite_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// TestMigrateWebhooks upgrades a database made by the schema before
// migration 0004 (webhooks), with a project and its audit log in it: the
// data stays, and a webhook created after the upgrade receives the
// entries written after it.
func TestMigrateWebhooks(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "hds.db")
	db, err := sql.Open("sqlite", file+"?_pragma=foreign_keys(1)")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `CREATE TABLE hds_schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`)
	require.NoError(t, err)
	names, err := fs.Glob(sqlite.Migrations, "migrations/*.sql")
	require.NoError(t, err)
	slices.Sort(names)
	for _, name := range names {
		if path.Base(name) >= "0004" {
			break
		}
		body, err := sqlite.Migrations.ReadFile(name)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, string(body))
		require.NoError(t, err, name)
		_, err = db.ExecContext(ctx, `INSERT INTO hds_schema_migrations (name, applied_at) VALUES (?, 0)`, name)
		require.NoError(t, err)
	}
	proj := store.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at, revision) VALUES (?, 'web', 'web', 'alice', 0, 0, 1)`, []any{proj}},
		{`INSERT INTO hds_audit (project_id, revision, at, action, actor, project) VALUES (?, 1, 0, 'project.create', 'alice', 'web')`, []any{proj}},
	} {
		_, err := db.ExecContext(ctx, q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %.60s", q.sql)
	}
	require.NoError(t, db.Close())

	s, err := sqlite.Open(ctx, file)
	require.NoError(t, err, "Open upgrades the file")
	t.Cleanup(func() { s.Close() })
	p := store.Path{Caller: store.Caller{UserID: "alice"}, Project: "web", Need: store.RightAdmin}
	h, err := s.CreateWebhook(ctx, p, &store.Webhook{URL: "https://hooks.example", Secret: []byte("0123456789abcdef"), CreatedBy: "alice"})
	require.NoError(t, err, "CreateWebhook after the upgrade")
	_, err = s.CreateCollection(ctx, store.Path{Caller: p.Caller, Project: "web", Collection: "c"})
	require.NoError(t, err)
	entries, _, err := s.FindAuditEntries(ctx, p, store.AuditQuery{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, entries, 3, "the old entry is kept; webhook.create and collection.create follow")
	ds, _, err := s.FindDeliveries(ctx, p, h.ID, store.NewListQuery())
	require.NoError(t, err)
	if assert.Len(t, ds, 1) {
		assert.Equal(t, int64(3), ds[0].Revision)
		assert.Equal(t, store.ActionCollectionCreate, ds[0].Action)
	}
}

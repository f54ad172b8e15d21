package sqlite_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
	_, err = s.CreateCollection(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "web", Collection: "c"})
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

// TestMigrateWebhookBounds upgrades a database made by the schema before
// migration 0005 (bounds on outboxes, sealed secrets), with a webhook
// whose secret is in clear, a finished and a pending delivery: the
// webhook stays, marked not sealed; the finished delivery counts as
// finished at its creation, the pending one stays; the queue is bounded.
func TestMigrateWebhookBounds(t *testing.T) {
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
		if path.Base(name) >= "0005" {
			break
		}
		body, err := sqlite.Migrations.ReadFile(name)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, string(body))
		require.NoError(t, err, name)
		_, err = db.ExecContext(ctx, `INSERT INTO hds_schema_migrations (name, applied_at) VALUES (?, 0)`, name)
		require.NoError(t, err)
	}
	proj, hook := store.NewID(), store.NewID()
	old := time.Now().Add(-48 * time.Hour).UnixMicro()
	now := time.Now().UnixMicro()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at, revision) VALUES (?, 'web', 'web', 'alice', 0, 0, 2)`, []any{proj}},
		{`INSERT INTO hds_audit (project_id, revision, at, action, actor, project) VALUES (?, 1, 0, 'project.create', 'alice', 'web')`, []any{proj}},
		{`INSERT INTO hds_audit (project_id, revision, at, action, actor, project, target) VALUES (?, 2, 0, 'webhook.create', 'alice', 'web', ?)`, []any{proj, hook}},
		{`INSERT INTO hds_webhooks (id, project_id, url, actions, collection, cluster, secret, created_at, created_by, after_revision)
			VALUES (?, ?, 'https://hooks.example', '', '', '', ?, ?, 'alice', 2)`, []any{hook, proj, []byte("clear-secret-0123"), old}},
		{`INSERT INTO hds_webhook_deliveries (id, webhook_id, project_id, revision, action, status, attempts, last_status_code, created_at)
			VALUES (?, ?, ?, NULL, 'ping', 'succeeded', 1, 200, ?)`, []any{store.NewID(), hook, proj, old}},
		{`INSERT INTO hds_webhook_deliveries (id, webhook_id, project_id, revision, action, status, next_attempt_at, created_at)
			VALUES (?, ?, ?, NULL, 'ping', 'pending', ?, ?)`, []any{store.NewID(), hook, proj, now, now}},
	} {
		_, err := db.ExecContext(ctx, q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %.60s", q.sql)
	}
	require.NoError(t, db.Close())

	s, err := sqlite.Open(ctx, file)
	require.NoError(t, err, "Open upgrades the file")
	t.Cleanup(func() { s.Close() })
	p := store.Path{Caller: store.Caller{UserID: "alice"}, Project: "web", Need: store.RightAdmin}
	w, err := s.FindWebhook(ctx, p, hook)
	require.NoError(t, err)
	assert.Equal(t, []byte("clear-secret-0123"), w.Secret)
	assert.False(t, w.SecretSealed, "a secret of v1.2 is in clear")

	n, err := s.PruneDeliveries(ctx, time.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "finished two days ago (its creation)")
	ds, _, err := s.FindDeliveries(ctx, p, hook, store.NewListQuery())
	require.NoError(t, err)
	if assert.Len(t, ds, 1) {
		assert.Equal(t, store.DeliveryPending, ds[0].Status)
	}

	require.NoError(t, s.SetMaxPending(ctx, 1))
	_, err = s.CreateCollection(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "web", Collection: "c"})
	require.NoError(t, err)
	ds, _, err = s.FindDeliveries(ctx, p, hook, store.NewListQuery())
	require.NoError(t, err)
	if assert.Len(t, ds, 2) {
		assert.Equal(t, store.DeliveryPending, ds[0].Status, "the new event")
		assert.Equal(t, store.DeliveryFailed, ds[1].Status, "the old ping, past max_pending 1")
		assert.Equal(t, store.QueueFull, ds[1].LastError)
	}
}

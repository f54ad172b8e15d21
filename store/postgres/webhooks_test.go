package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/storetest"
)

// TestWebhooks runs the webhooks suite on two Stores on one database, as
// two instances: their claims never hand out one delivery twice.
func TestWebhooks(t *testing.T) {
	storetest.RunWebhooks(t, func(t *testing.T) (storetest.WebhookStore, storetest.WebhookStore) {
		return pgtest.Pair(t)
	})
}

// TestMigrateWebhooks upgrades a database filled under the schema before
// migration 0012 (webhooks): its projects and audit logs stay, a webhook
// created after the upgrade receives the entries written after it, and
// a delivery id is a version 7 UUID made by the database.
func TestMigrateWebhooks(t *testing.T) {
	db := emptyDatabase(t)
	ctx := context.Background()
	migrateBefore(t, db, "0012")
	proj := store.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_users (id, username, password_hash, active, created_at, updated_at) VALUES ('u-alice', 'alice', 'h', true, now(), now())`, nil},
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at, revision) VALUES ($1, 'web', 'web', 'u-alice', now(), now(), 1)`, []any{proj}},
		{`INSERT INTO hds_audit (project_id, revision, at, action, actor, project) VALUES ($1, 1, now(), 'project.create', 'u-alice', 'web')`, []any{proj}},
	} {
		_, err := db.Exec(q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %s", q.sql)
	}

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	require.NoError(t, s.Migrate(ctx), "Migrate again changes nothing")

	p := store.Path{Caller: store.Caller{UserID: "u-alice"}, Project: "web", Need: store.RightAdmin}
	h, err := s.CreateWebhook(ctx, p, &store.Webhook{URL: "https://hooks.example", Secret: []byte("0123456789abcdef"), CreatedBy: "u-alice"})
	require.NoError(t, err, "CreateWebhook after the upgrade")
	_, err = s.CreateCollection(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "web", Collection: "c"})
	require.NoError(t, err)
	entries, _, err := s.FindAuditEntries(ctx, p, store.AuditQuery{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, entries, 3, "the old entry is kept; webhook.create and collection.create follow")

	ds, total, err := s.FindDeliveries(ctx, p, h.ID, store.NewListQuery())
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	if assert.Len(t, ds, 1) {
		assert.Equal(t, int64(3), ds[0].Revision)
		assert.Equal(t, store.ActionCollectionCreate, ds[0].Action)
		id, ok := store.CanonicalUUID(ds[0].ID)
		assert.True(t, ok, "a UUID")
		assert.Equal(t, byte('7'), id[14], "version 7: %s", id)
		assert.Contains(t, "89ab", string(id[19]), "RFC 9562 variant: %s", id)
		ms, err := strconv.ParseInt(strings.ReplaceAll(id[:13], "-", ""), 16, 64)
		if assert.NoError(t, err) {
			assert.WithinDuration(t, time.Now(), time.UnixMilli(ms), time.Minute, "its time is the time it was made")
		}
	}
}

// TestMigrateWebhookBounds upgrades a database filled under the schema
// before migration 0013 (bounds on outboxes, sealed secrets): a webhook
// with a secret in clear, a finished and a pending delivery. The webhook
// stays, marked not sealed; the finished delivery counts as finished at
// its creation (PruneDeliveries deletes it), the pending one stays; the
// outbox then bounds the queue.
func TestMigrateWebhookBounds(t *testing.T) {
	db := emptyDatabase(t)
	ctx := context.Background()
	migrateBefore(t, db, "0013")
	proj, hook := store.NewID(), store.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_users (id, username, password_hash, active, created_at, updated_at) VALUES ('u-alice', 'alice', 'h', true, now(), now())`, nil},
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at, revision) VALUES ($1, 'web', 'web', 'u-alice', now(), now(), 2)`, []any{proj}},
		{`INSERT INTO hds_audit (project_id, revision, at, action, actor, project) VALUES ($1, 1, now(), 'project.create', 'u-alice', 'web')`, []any{proj}},
		{`INSERT INTO hds_audit (project_id, revision, at, action, actor, project, target) VALUES ($1, 2, now(), 'webhook.create', 'u-alice', 'web', $2)`, []any{proj, hook}},
		{`INSERT INTO hds_webhooks (id, project_id, url, actions, collection, cluster, secret, created_at, created_by, after_revision)
			VALUES ($1, $2, 'https://hooks.example', '{}', '', '', 'clear-secret-0123', now() - interval '2 days', 'u-alice', 2)`, []any{hook, proj}},
		{`INSERT INTO hds_webhook_deliveries (id, webhook_id, project_id, revision, action, status, attempts, last_status_code, created_at)
			VALUES ($1, $2, $3, NULL, 'ping', 'succeeded', 1, 200, now() - interval '2 days')`, []any{store.NewID(), hook, proj}},
		{`INSERT INTO hds_webhook_deliveries (id, webhook_id, project_id, revision, action, status, next_attempt_at, created_at)
			VALUES ($1, $2, $3, NULL, 'ping', 'pending', now(), now())`, []any{store.NewID(), hook, proj}},
	} {
		_, err := db.Exec(q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %.70s", q.sql)
	}

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	p := store.Path{Caller: store.Caller{UserID: "u-alice"}, Project: "web", Need: store.RightAdmin}
	w, err := s.FindWebhook(ctx, p, hook)
	require.NoError(t, err)
	assert.Equal(t, []byte("clear-secret-0123"), w.Secret)
	assert.False(t, w.SecretSealed, "a secret of v1.2 is in clear")
	ds, _, err := s.FindDeliveries(ctx, p, hook, store.NewListQuery())
	require.NoError(t, err)
	require.Len(t, ds, 2)

	n, err := s.PruneDeliveries(ctx, time.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "finished two days ago (its creation)")
	ds, _, err = s.FindDeliveries(ctx, p, hook, store.NewListQuery())
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

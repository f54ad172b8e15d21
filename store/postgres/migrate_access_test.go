package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateAccess upgrades a database filled under the schema before
// migration 0007 (members and API tokens): projects keep their owners,
// who keep every right; members and tokens can be added from then on.
func TestMigrateAccess(t *testing.T) {
	db := emptyDatabase(t)
	ctx := context.Background()
	migrateBefore(t, db, "0007")
	proj, coll := store.NewID(), store.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_users (id, username, password_hash, active, created_at, updated_at) VALUES ('u-alice', 'alice', 'h', true, now(), now())`, nil},
		{`INSERT INTO hds_users (id, username, password_hash, active, created_at, updated_at) VALUES ('u-bob', 'bob', 'h', true, now(), now())`, nil},
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES ($1, 'web', 'web', 'u-alice', now(), now())`, []any{proj}},
		{`INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'prod', 'prod', now(), now())`, []any{coll, proj}},
	} {
		_, err := db.Exec(q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %s", q.sql)
	}

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	require.NoError(t, s.Migrate(ctx), "Migrate again changes nothing")

	owner := store.Path{Caller: store.Caller{UserID: "u-alice"}, Need: store.RightOwn, Project: "web"}
	pr, err := s.FindProject(ctx, owner)
	require.NoError(t, err, "the owner keeps every right")
	assert.Equal(t, store.RoleOwner, pr.Role)
	bob := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u-bob"}, Project: "web", Collection: "prod"}
	_, err = s.FindCollection(ctx, bob)
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "no one else has any")

	owner.Need = store.RightAdmin
	_, err = s.PutMember(ctx, owner, store.Member{UserID: "u-bob", Username: "bob", Role: store.RoleViewer})
	require.NoError(t, err, "PutMember after the upgrade")
	c, err := s.FindCollection(ctx, bob)
	require.NoError(t, err, "a member reads")
	assert.Equal(t, coll, c.ID)
	members, total, err := s.FindMembers(ctx, owner, store.NewListQuery())
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	if assert.Len(t, members, 2) {
		assert.Equal(t, []string{"alice", "bob"}, []string{members[0].Username, members[1].Username})
	}
	tok, err := s.CreateToken(ctx, owner, &store.APIToken{Name: "ci", Role: store.RoleReader, Collection: "prod",
		Hash: []byte("0123456789abcdef0123456789abcdef"), CreatedBy: "u-alice"})
	require.NoError(t, err, "CreateToken after the upgrade")
	found, err := s.FindTokenByHash(ctx, []byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	assert.Equal(t, tok.ID, found.ID)
	assert.Equal(t, proj, found.ProjectID)
}

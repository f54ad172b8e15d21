package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateAdmins upgrades a database filled under the schema before
// migration 0010 (server administrators): every existing user becomes
// an administrator, so that the installation keeps someone to manage it,
// and the last-administrator rule holds from then on.
func TestMigrateAdmins(t *testing.T) {
	db := emptyDatabase(t)
	ctx := context.Background()
	migrateBefore(t, db, "0010")
	for _, q := range []string{
		`INSERT INTO hds_users (id, username, password_hash, active, session_generation, created_at, updated_at) VALUES ('u-alice', 'alice', 'h', true, 3, now(), now())`,
		`INSERT INTO hds_users (id, username, password_hash, active, created_at, updated_at) VALUES ('u-bob', 'bob', 'h', false, now(), now())`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, "fill the old schema: %s", q)
	}

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	require.NoError(t, s.Migrate(ctx), "Migrate again changes nothing")

	users, _, err := s.ListUsers(ctx, store.ListQuery{})
	require.NoError(t, err)
	require.Len(t, users, 2)
	for _, u := range users {
		assert.True(t, u.Admin, "%s is an administrator after the upgrade", u.Username)
	}
	assert.Equal(t, int64(3), users[0].SessionGeneration, "the session generation is kept")
	no := false
	_, err = s.UpdateUser(ctx, "alice", store.UserChange{Admin: &no})
	var ve *store.ValidationError
	if assert.ErrorAs(t, err, &ve, "alice is the one active administrator (bob is disabled)") {
		assert.Equal(t, store.LastAdminRule, ve.Message)
	}
	c, err := s.CreateUser(ctx, &store.User{Username: "carol", PasswordHash: []byte("h"), Active: true})
	require.NoError(t, err)
	assert.False(t, c.Admin, "a user created after the upgrade is no administrator unless asked")
}

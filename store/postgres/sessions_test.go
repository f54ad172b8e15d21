package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/storetest"
)

// TestSessions runs the sessions suite on two Stores, each with its own
// pool, on one database: two instances of the service.
func TestSessions(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T) (storetest.SessionStore, storetest.SessionStore) {
		return pgtest.Pair(t)
	})
}

// TestSessionChecks runs the deferred session check's suite: the store
// checks the sessions it keeps in the statement that resolves a path.
func TestSessionChecks(t *testing.T) {
	storetest.RunSessionChecks(t, func(t *testing.T) storetest.SessionCheckStore {
		return postgres.New(pgtest.New(t))
	})
}

// TestMigrateSessions upgrades a database filled under the schema before
// migration 0005 (sessions): every user is kept as it was, in session
// generation 0 (the generation of the tokens issued before), and sessions
// can end from then on.
func TestMigrateSessions(t *testing.T) {
	db := emptyDatabase(t)
	ctx := t.Context()
	migrateBefore(t, db, "0005")
	alice, bob := store.NewID(), store.NewID()
	_, err := db.Exec(`INSERT INTO hds_users (id, username, password_hash, active, created_at, updated_at)
		VALUES ($1, 'alice', 'hash-a', true, now(), now()), ($2, 'bob', 'hash-b', false, now(), now())`, alice, bob)
	require.NoError(t, err, "fill the old schema")

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	require.NoError(t, s.Migrate(ctx), "Migrate again changes nothing")

	users, _, err := s.ListUsers(ctx, store.ListQuery{})
	require.NoError(t, err)
	require.Len(t, users, 2, "no user lost")
	for i, want := range []struct {
		id, name, hash string
		active         bool
	}{{alice, "alice", "hash-a", true}, {bob, "bob", "hash-b", false}} {
		u := users[i]
		assert.Equal(t, want.id, u.ID, "id kept")
		assert.Equal(t, want.name, u.Username, "username kept")
		assert.Equal(t, want.hash, string(u.PasswordHash), "hash kept")
		assert.Equal(t, want.active, u.Active, "active kept")
		assert.Equal(t, int64(0), u.SessionGeneration, "generation 0, that of every token issued before")
	}
	su, err := s.FindSessionUser(ctx, alice, "old-jti")
	require.NoError(t, err, "FindSessionUser after the upgrade")
	assert.False(t, su.Ended, "no session has ended")
	require.NoError(t, s.EndSession(ctx, alice, "old-jti", time.Now().Add(time.Hour)), "EndSession after the upgrade")
	su, err = s.FindSessionUser(ctx, alice, "old-jti")
	require.NoError(t, err)
	assert.True(t, su.Ended, "a session ends")
	require.NoError(t, s.UseToken(ctx, alice, "old-jti", time.Now().Add(time.Hour)), "UseToken after the upgrade")
	u, err := s.SetPassword(ctx, bob, []byte("hash-b2"))
	require.NoError(t, err, "SetPassword after the upgrade")
	assert.Equal(t, int64(1), u.SessionGeneration)
}

func TestAccess(t *testing.T) {
	storetest.RunAccess(t, func(t *testing.T) (storetest.AccessStore, storetest.AccessStore) {
		return pgtest.Pair(t)
	})
}

// TestEvents runs the change feed suite on two Stores on one database,
// each listening on its own connection: a change made through one is
// heard through the other, as between two instances.
func TestEvents(t *testing.T) {
	storetest.RunEvents(t, func(t *testing.T) (storetest.EventStore, storetest.EventStore) {
		url := pgtest.NewURL(t)
		return pgtest.Open(t, url, postgres.WithListenURL(url)), pgtest.Open(t, url, postgres.WithListenURL(url))
	})
}

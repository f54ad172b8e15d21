package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestCreateProjectWaitsForDeleteUser holds a user's row as DeleteUser
// does (locked for update, then deleted) while the user creates a
// project: CreateProject waits for the lock and, the user gone when it is
// granted, is refused as a session of a deleted user is, leaving no
// project owned by nobody. The other order is storetest's: a project
// created first makes DeleteUser refuse (store.OwnsProjectsError).
func TestCreateProjectWaitsForDeleteUser(t *testing.T) {
	url := pgtest.NewURL(t)
	db, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	s := postgres.New(db)
	ctx := t.Context()
	u, err := s.CreateUser(ctx, &store.User{Username: "leaving", PasswordHash: []byte("h"), Active: true})
	require.NoError(t, err)

	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	_, err = tx.ExecContext(ctx, `SELECT 1 FROM hds_users WHERE id = $1 FOR UPDATE`, u.ID)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `DELETE FROM hds_users WHERE id = $1`, u.ID)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		_, err := s.CreateProject(context.WithoutCancel(ctx), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: u.ID, Name: "leaving"}, Project: "orphan"})
		done <- err
	}()
	// Until CreateProject waits for the row lock (it must: the delete is
	// not committed yet).
	for {
		var waiting bool
		require.NoError(t, db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%FOR SHARE%' AND datname = current_database())`).Scan(&waiting))
		if waiting {
			break
		}
		select {
		case err := <-done:
			require.Failf(t, "CreateProject did not wait for the user's row", "it returned %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	require.NoError(t, tx.Commit())
	assert.ErrorIs(t, <-done, store.ErrSessionInvalid, "the user was deleted while the create waited")
	_, err = s.FindProject(ctx, store.Path{Project: "orphan"})
	assert.ErrorIs(t, err, store.ErrNotFound, "no project owned by a deleted user")
}

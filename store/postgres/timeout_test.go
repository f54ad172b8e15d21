package postgres_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// lockTables holds ACCESS EXCLUSIVE locks on the tables from another
// connection, so that every statement on them waits, until the returned
// release is called (also when t ends).
func lockTables(t *testing.T, url string, tables ...string) (release func()) {
	t.Helper()
	db, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	tx, err := db.BeginTxx(t.Context(), nil)
	require.NoError(t, err)
	for _, table := range tables {
		_, err = tx.Exec(`LOCK TABLE ` + table + ` IN ACCESS EXCLUSIVE MODE`)
		require.NoError(t, err, "lock %s", table)
	}
	done := false
	release = func() {
		if !done {
			done = true
			require.NoError(t, tx.Rollback(), "release the table locks")
		}
	}
	t.Cleanup(release)
	return release
}

// lockWaiters counts the backends of the database waiting for a lock.
func lockWaiters(t *testing.T, db *sqlx.DB) int {
	t.Helper()
	var n int
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`))
	return n
}

// openStore returns a migrated database's URL, a Store on it with opts,
// and a separate pool for the test's own checks.
func openStore(t *testing.T, maxOpen int, opts ...postgres.Option) (string, *postgres.Store, *sqlx.DB) {
	t.Helper()
	url := pgtest.NewURL(t)
	db, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	db.SetMaxOpenConns(maxOpen)
	t.Cleanup(func() { db.Close() })
	check, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	t.Cleanup(func() { check.Close() })
	return url, postgres.New(db, opts...), check
}

func TestTimeoutOnHeldLock(t *testing.T) {
	url, s, check := openStore(t, 4, postgres.WithTimeout(300*time.Millisecond))
	ctx := t.Context()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "proj", Collection: "coll", Cluster: "clus", Record: "rec"}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateCollection(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateCluster(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
	require.NoError(t, err)

	release := lockTables(t, url, "hds_projects", "hds_records")
	late := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "late"}
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"FindProject", func() error { _, err := s.FindProject(ctx, p); return err }},
		{"FindProjects", func() error { _, _, err := s.FindProjects(ctx, "alice", store.NewListQuery()); return err }},
		{"CreateProject", func() error { _, err := s.CreateProject(ctx, late); return err }},
		{"RenameProject", func() error { _, err := s.RenameProject(ctx, p, "renamed"); return err }},
		{"FindRecords", func() error {
			_, _, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: store.NewListQuery()})
			return err
		}},
		{"UpdateRecord", func() error {
			_, err := s.UpdateRecord(ctx, p, store.Write{}, func(r *store.Record) error { r.Value = json.RawMessage("2"); return nil })
			return err
		}},
		{"DeleteRecord", func() error { return s.DeleteRecord(ctx, p, store.Write{}) }},
	} {
		err := op.do()
		assert.ErrorIs(t, err, store.ErrUnavailable, "%s while the tables are locked: the deadline makes it ErrUnavailable", op.name)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "%s while the tables are locked: the cause is the deadline", op.name)
		assert.Equal(t, 0, lockWaiters(t, check), "%s: its statement was canceled on the server when the deadline passed", op.name)
	}
	assert.NoError(t, s.Ping(ctx), "Ping needs no table")
	release()

	_, err = s.FindProject(ctx, late)
	assertNotFound(t, err, "the create that timed out was never applied")
	r, err := s.FindRecord(ctx, p)
	if assert.NoError(t, err, "the store serves again once the lock is gone") {
		assert.Equal(t, int64(1), r.Version, "the update that timed out was never applied")
	}
	_, err = s.FindProject(ctx, store.Path{Project: "renamed"})
	assertNotFound(t, err, "the rename that timed out was never applied")
}

func TestTimeoutWaitingForPoolConnection(t *testing.T) {
	_, s, _ := openStore(t, 1, postgres.WithTimeout(300*time.Millisecond))
	ctx := t.Context()
	_, err := s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "proj"})
	require.NoError(t, err)

	conn, err := s.DB().Connx(ctx) // the pool's only connection
	require.NoError(t, err)
	_, err = s.FindProject(ctx, store.Path{Project: "proj"})
	assert.ErrorIs(t, err, store.ErrUnavailable, "waiting for a pool connection counts against the deadline")
	assert.ErrorIs(t, s.Ping(ctx), store.ErrUnavailable, "Ping waits for a connection too")
	require.NoError(t, conn.Close())

	_, err = s.FindProject(ctx, store.Path{Project: "proj"})
	assert.NoError(t, err, "the store serves again once a connection is free")
}

func TestCallerCancelStopsStatement(t *testing.T) {
	url, s, check := openStore(t, 4, postgres.WithTimeout(time.Hour))
	ctx := t.Context()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "proj", Collection: "coll", Cluster: "clus", Record: "rec"}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateCollection(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateCluster(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
	require.NoError(t, err)

	release := lockTables(t, url, "hds_records")
	callCtx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := s.UpdateRecord(callCtx, p, store.Write{}, func(r *store.Record) error { r.Value = json.RawMessage("2"); return nil })
		errc <- err
	}()
	require.Eventually(t, func() bool { return lockWaiters(t, check) == 1 }, time.Minute, 10*time.Millisecond,
		"the update waits for the lock")
	cancel()
	err = <-errc
	assert.ErrorIs(t, err, context.Canceled, "the call of a caller who went away ends with context.Canceled")
	assert.NotErrorIs(t, err, store.ErrUnavailable, "a caller's cancellation is not an outage")
	assert.Equal(t, 0, lockWaiters(t, check), "the statement was canceled on the server")
	release()

	r, err := s.FindRecord(ctx, p)
	if assert.NoError(t, err) {
		assert.Equal(t, int64(1), r.Version, "the canceled update was never applied")
		assert.JSONEq(t, "1", string(r.Value), "the canceled update was never applied")
	}
}

func TestUnknownErrorsAreInternal(t *testing.T) {
	_, s, check := openStore(t, 4)
	_, err := check.Exec(`ALTER TABLE hds_projects RENAME COLUMN name_lower TO name_folded`)
	require.NoError(t, err)
	_, err = s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "proj"})
	require.Error(t, err, "CreateProject on a broken schema fails")
	assert.NotErrorIs(t, err, store.ErrUnavailable, "a broken statement is an internal error, not an outage")
}

func assertNotFound(t *testing.T, err error, msg string) {
	t.Helper()
	assert.ErrorIs(t, err, store.ErrNotFound, msg)
}

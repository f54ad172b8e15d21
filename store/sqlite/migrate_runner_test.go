package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/migrate"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// TestMigrateRefusesNewerSchema opens a database that a newer hds
// migrated (it recorded a migration this program does not know): Open
// refuses it naming both schema versions, and leaves it as it was.
func TestMigrateRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hds.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	_, err = s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p"})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	newest, err := migrate.Newest(sqlite.Migrations)
	require.NoError(t, err)
	require.Positive(t, newest)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	current, err := migrate.Current(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, newest, current, "a database this program migrated has its schema version")
	assert.NoError(t, sqlite.CheckSchema(ctx, db), "a database of this program's schema passes the check")
	future := newest + 90
	_, err = db.Exec(`INSERT INTO hds_schema_migrations (name, applied_at) VALUES (?, 0)`, fmt.Sprintf("migrations/%04d_future.sql", future))
	require.NoError(t, err)
	current, err = migrate.Current(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, future, current, "Current is the newest migration recorded")
	var checked *migrate.TooNewError
	if assert.True(t, errors.As(sqlite.CheckSchema(ctx, db), &checked), "the check refuses a newer schema") {
		assert.Equal(t, migrate.TooNewError{Engine: "SQLite", Current: future, Newest: newest}, *checked)
	}
	var before int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM hds_schema_migrations`).Scan(&before))
	require.NoError(t, db.Close())

	for range 2 {
		_, err = sqlite.Open(ctx, path)
		require.Error(t, err, "a newer schema is refused")
		var tooNew *migrate.TooNewError
		if assert.True(t, errors.As(err, &tooNew), "%v is a *migrate.TooNewError", err) {
			assert.Equal(t, migrate.TooNewError{Engine: "SQLite", Current: future, Newest: newest}, *tooNew)
		}
		assert.Equal(t, fmt.Sprintf("sqlite %s: the SQLite database's schema is version %d, newer than this program knows (version %d): run the hds release that wrote it, or a newer one",
			path, future, newest), err.Error())
	}

	db, err = sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var after, projects int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM hds_schema_migrations`).Scan(&after))
	assert.Equal(t, before, after, "the refused database is left as it was")
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM hds_projects WHERE name = 'p'`).Scan(&projects))
	assert.Equal(t, 1, projects, "its data stays")
}

// TestCurrentOfNoHDSDatabase: migrate.Current of a database without
// hds_schema_migrations (a restore of the wrong file) is an error, not
// version 0.
func TestCurrentOfNoHDSDatabase(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "other.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE notes (body TEXT)`)
	require.NoError(t, err)
	_, err = migrate.Current(context.Background(), db)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "migrate: read hds_schema_migrations: ")
	err = sqlite.CheckSchema(context.Background(), db)
	require.Error(t, err, "the check refuses a database without hds's schema")
	assert.Contains(t, err.Error(), "migrate: read hds_schema_migrations: ")
}

// TestMigrateConcurrentOpens opens one new file from several stores at
// once, as processes starting together would: every Open succeeds and
// each migration runs, and is recorded, once.
func TestMigrateConcurrentOpens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hds.db")
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			s, err := sqlite.Open(ctx, path)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "Open %d", i)
	}
	names, err := fs.Glob(sqlite.Migrations, migrate.Pattern)
	require.NoError(t, err)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM hds_schema_migrations ORDER BY name`)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		got = append(got, name)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, names, got, "each migration recorded once, by its path")
}

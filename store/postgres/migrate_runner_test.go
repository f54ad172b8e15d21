package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/migrate"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateRefusesNewerSchema migrates a database that a newer hds
// migrated (it recorded a migration this program does not know):
// Migrate refuses it naming both schema versions, and changes nothing.
func TestMigrateRefusesNewerSchema(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	newest, err := migrate.Newest(postgres.Migrations)
	require.NoError(t, err)
	current, err := migrate.Current(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, newest, current, "a database this program migrated has its schema version")

	future := newest + 90
	_, err = db.ExecContext(ctx, `INSERT INTO hds_schema_migrations (name) VALUES ($1)`, fmt.Sprintf("migrations/%04d_future.sql", future))
	require.NoError(t, err)
	current, err = migrate.Current(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, future, current, "Current is the newest migration recorded")

	// A later migration of this program would run if the database were
	// not refused: it must not.
	later := withMigration(t, fmt.Sprintf("migrations/%04d_label.sql", newest+1),
		`ALTER TABLE hds_projects ADD COLUMN label text NOT NULL DEFAULT ''`)
	for _, run := range []struct {
		knows int
		run   func() error
	}{
		{newest, func() error { return postgres.New(db).Migrate(ctx) }},
		{newest + 1, func() error { return postgres.New(db).MigrateFrom(ctx, later) }},
	} {
		err = run.run()
		require.Error(t, err, "a newer schema is refused")
		var tooNew *migrate.TooNewError
		if assert.True(t, errors.As(err, &tooNew), "%v is a *migrate.TooNewError", err) {
			assert.Equal(t, migrate.TooNewError{Engine: "PostgreSQL", Current: future, Newest: run.knows}, *tooNew)
		}
		assert.Equal(t, fmt.Sprintf("the PostgreSQL database's schema is version %d, newer than this program knows (version %d): run the hds release that wrote it, or a newer one", future, run.knows), err.Error())
	}
	var n int
	require.NoError(t, db.GetContext(ctx, &n, `SELECT count(*) FROM hds_schema_migrations`))
	assert.Equal(t, newest+1, n, "nothing recorded")
	_, err = db.ExecContext(ctx, `SELECT label FROM hds_projects`)
	assert.Error(t, err, "the later migration did not run")
}

// TestMigrationRunnerUpgrade runs a later migration over a database
// built by the current ones with data in it: the new file is picked up
// with no code change, sees the rows and is recorded; one that fails
// changes nothing and is not recorded, so the next start runs it again.
func TestMigrationRunnerUpgrade(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	s := postgres.New(db)
	_, err := s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p"})
	require.NoError(t, err)

	broken := withMigration(t, "migrations/9998_broken.sql",
		`ALTER TABLE hds_projects ADD COLUMN half text; UPDATE hds_projects SET half = 'x'; SELECT no_such_function();`)
	err = s.MigrateFrom(ctx, broken)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "migrate migrations/9998_broken.sql: ")
	_, err = db.ExecContext(ctx, `SELECT half FROM hds_projects`)
	require.Error(t, err, "the failed migration left no column")

	later := withMigration(t, "migrations/9999_label.sql",
		`ALTER TABLE hds_projects ADD COLUMN label text NOT NULL DEFAULT ''; UPDATE hds_projects SET label = upper(name);`)
	require.NoError(t, s.MigrateFrom(ctx, later))
	require.NoError(t, s.MigrateFrom(ctx, later), "a second run finds the work done")
	var label string
	require.NoError(t, db.GetContext(ctx, &label, `SELECT label FROM hds_projects WHERE name = 'p'`))
	assert.Equal(t, "P", label, "the migration saw the existing row")
	var n int
	require.NoError(t, db.GetContext(ctx, &n, `SELECT count(*) FROM hds_schema_migrations WHERE name = 'migrations/9999_label.sql'`))
	assert.Equal(t, 1, n)
	current, err := migrate.Current(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, 9999, current)
}

// TestMigrateConcurrentStarts migrates one empty database from several
// pools at once, as replicas starting together do: every Migrate
// succeeds (the advisory lock orders them) and each migration runs, and
// is recorded, once.
func TestMigrateConcurrentStarts(t *testing.T) {
	url := pgtest.NewEmptyURL(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			db, err := sqlx.Open("postgres", url)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			errs[i] = postgres.New(db).Migrate(context.Background())
		})
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "Migrate %d", i)
	}
	db, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	defer db.Close()
	var got []string
	require.NoError(t, db.Select(&got, `SELECT name FROM hds_schema_migrations ORDER BY name`))
	names, err := fs.Glob(postgres.Migrations, migrate.Pattern)
	require.NoError(t, err)
	assert.Equal(t, names, got, "each migration recorded once, by its path")
}

// withMigration is the embedded migrations and one more, name.
func withMigration(t *testing.T, name, body string) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	names, err := fs.Glob(postgres.Migrations, migrate.Pattern)
	require.NoError(t, err)
	for _, n := range names {
		data, err := fs.ReadFile(postgres.Migrations, n)
		require.NoError(t, err)
		fsys[n] = &fstest.MapFile{Data: data}
	}
	fsys[name] = &fstest.MapFile{Data: []byte(body)}
	return fsys
}

package sqlite

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"time"

	"github.com/hds-go/hds/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// errForeign refuses an SQLite database that holds tables but not hds's
// schema: another application's file.
var errForeign = errors.New("the file is an SQLite database of another application (it has tables but no hds schema)")

// dialect is what the migration runner needs of SQLite but a way to run
// a transaction (Store.migrationDialect adds the store's).
var dialect = migrate.Dialect{
	Engine:      "SQLite",
	Placeholder: func(int) string { return "?" },
	HasTable:    `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'hds_schema_migrations'`,
	CreateTable: `CREATE TABLE hds_schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`,
	AppliedAt:   func(now time.Time) any { return micros(now) },
	Tables:      `SELECT count(*) FROM sqlite_master WHERE type = 'table'`,
	Foreign:     errForeign,
}

// migrate brings the schema up to date (internal/migrate): every embedded
// migration not yet recorded in hds_schema_migrations runs, in name
// order, each in its own write transaction (BEGIN IMMEDIATE: a second
// process migrating at the same time waits, then finds the work done),
// bounded by ctx rather than the store's per-call timeout. It stops
// after the migration named last when last is not empty; tests use it to
// build an older schema. A database of a newer schema than the embedded
// migrations know is refused (*migrate.TooNewError).
func (s *Store) migrate(ctx context.Context, last string) error {
	return s.migrateFrom(ctx, migrations, last)
}

// migrateFrom runs the migrations of fsys (migrations/*.sql); tests give
// it files of their own.
func (s *Store) migrateFrom(ctx context.Context, fsys fs.FS, last string) error {
	d := dialect
	d.Transact = func(ctx context.Context, f func(context.Context, migrate.Tx) error) error {
		return s.writeNoDeadline(ctx, func(t *tx) error { return f(t.ctx, t) })
	}
	return migrate.Run(ctx, d, fsys, last)
}

// checkSchema refuses the database q reads when a newer release migrated
// it (a *migrate.TooNewError naming both versions) or when it has no hds
// schema; a restore checks the file it is given so before it takes the
// place of the store's.
func checkSchema(ctx context.Context, q migrate.Querier) error {
	current, err := migrate.Current(ctx, q)
	if err != nil {
		return err
	}
	newest, err := migrate.Newest(migrations)
	if err != nil {
		return err
	}
	if current > newest {
		return &migrate.TooNewError{Engine: dialect.Engine, Current: current, Newest: newest}
	}
	return nil
}

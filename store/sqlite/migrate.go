package sqlite

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
)

//go:embed migrations/*.sql
var migrations embed.FS

// errForeign refuses an SQLite database that holds tables but not hds's
// schema: another application's file.
var errForeign = errors.New("the file is an SQLite database of another application (it has tables but no hds schema)")

// migrate brings the schema up to date: every embedded migration not yet
// recorded in hds_schema_migrations runs, in name order, each in its own
// write transaction (BEGIN IMMEDIATE: a second process migrating at the
// same time waits, then finds the work done), bounded by ctx rather than
// the store's per-call timeout. It stops after the
// migration named last when last is not empty; tests use it to build an
// older schema.
func (s *Store) migrate(ctx context.Context, last string) error {
	return s.migrateFrom(ctx, migrations, last)
}

// migrateFrom runs the migrations of fsys (migrations/*.sql); tests give
// it files of their own.
func (s *Store) migrateFrom(ctx context.Context, fsys fs.FS, last string) error {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		if last != "" && name > last {
			break
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		err = s.writeNoDeadline(ctx, func(t *tx) error {
			var hds, tables int
			if err := t.row(`SELECT count(*) FILTER (WHERE name = 'hds_schema_migrations'), count(*)
				FROM sqlite_master WHERE type = 'table'`).Scan(&hds, &tables); err != nil {
				return err
			}
			if hds == 0 {
				if tables > 0 {
					return errForeign
				}
				if _, err := t.exec(`CREATE TABLE hds_schema_migrations (
					name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
					return err
				}
			}
			var done int
			if err := t.row(`SELECT count(*) FROM hds_schema_migrations WHERE name = ?`, name).Scan(&done); err != nil {
				return err
			}
			if done > 0 {
				return nil
			}
			if _, err := t.ExecContext(t.ctx, string(body)); err != nil { // several statements: never prepared
				return fmt.Errorf("migrate %s: %w", name, err)
			}
			_, err := t.exec(`INSERT INTO hds_schema_migrations (name, applied_at) VALUES (?, ?)`, name, micros(t.now))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the pg_advisory_lock key that serialises migrations
// across replicas starting together.
const migrationLock = 0x68647331 // "hds1"

// Migrate brings the schema up to date: every embedded migration not yet
// recorded in hds_schema_migrations runs, in name order, each in its own
// transaction, under a session advisory lock so that replicas starting
// together do not race. The library never migrates by itself; call it at
// start-up (the example does).
func (s *Store) Migrate(ctx context.Context) error {
	return s.migrate(ctx, "")
}

// migrate runs the migrations up to the one named last (every one when
// last is empty); tests use it to build an older schema.
func (s *Store) migrate(ctx context.Context, last string) error {
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return classify(fmt.Errorf("migrate: %w", err))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return classify(fmt.Errorf("migrate: lock: %w", err))
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock) //nolint:errcheck // the session ends anyway

	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS hds_schema_migrations (
		name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return classify(fmt.Errorf("migrate: %w", err))
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		if last != "" && name > last {
			break
		}
		var done bool
		if err := conn.GetContext(ctx, &done, `SELECT EXISTS (SELECT 1 FROM hds_schema_migrations WHERE name = $1)`, name); err != nil {
			return classify(fmt.Errorf("migrate: %w", err))
		}
		if done {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return classify(fmt.Errorf("migrate %s: %w", name, err))
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO hds_schema_migrations (name) VALUES ($1)`, name); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		if err := tx.Commit(); err != nil {
			return classify(fmt.Errorf("migrate %s: %w", name, err))
		}
	}
	return nil
}

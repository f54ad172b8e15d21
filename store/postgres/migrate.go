package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hds-go/hds/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the pg_advisory_lock key that serialises migrations
// across replicas starting together.
const migrationLock = 0x68647331 // "hds1"

// dialect is what the migration runner needs of PostgreSQL but the lock
// and the transactions, which run on one connection (Store.migrate adds
// them).
var dialect = migrate.Dialect{
	Engine:      "PostgreSQL",
	Placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
	HasTable:    `SELECT count(*) FROM (SELECT to_regclass('hds_schema_migrations') AS t) AS r WHERE t IS NOT NULL`,
	CreateTable: `CREATE TABLE IF NOT EXISTS hds_schema_migrations (
		name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
	AppliedAt: func(now time.Time) any { return now.UTC() },
}

// Migrate brings the schema up to date (internal/migrate): every
// embedded migration not yet recorded in hds_schema_migrations runs, in
// name order, each in its own transaction, under a session advisory lock
// so that replicas starting together do not race. A database of a newer
// schema than the embedded migrations know is refused
// (*migrate.TooNewError, naming both versions) and left as it is. The
// library never migrates by itself; call it at start-up (the example
// does).
func (s *Store) Migrate(ctx context.Context) error {
	return s.migrate(ctx, "")
}

// migrate runs the migrations up to the one named last (every one when
// last is empty); tests use it to build an older schema.
func (s *Store) migrate(ctx context.Context, last string) error {
	return s.migrateFrom(ctx, migrations, last)
}

// migrateFrom runs the migrations of fsys (migrations/*.sql); tests give
// it files of their own.
func (s *Store) migrateFrom(ctx context.Context, fsys fs.FS, last string) error {
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return classify(fmt.Errorf("migrate: %w", err))
	}
	defer conn.Close()
	d := dialect
	d.Lock = func(ctx context.Context) (func(), error) {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
			return nil, classify(fmt.Errorf("migrate: lock: %w", err))
		}
		return func() {
			conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock) //nolint:errcheck // the session ends anyway
		}, nil
	}
	d.Transact = func(ctx context.Context, f func(context.Context, migrate.Tx) error) error {
		return transactOn(ctx, conn, f)
	}
	return migrate.Run(ctx, d, fsys, last)
}

// transactOn runs f in one transaction of conn.
func transactOn(ctx context.Context, conn *sqlx.Conn, f func(context.Context, migrate.Tx) error) error {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return classify(fmt.Errorf("migrate: %w", err))
	}
	if err := f(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return classify(fmt.Errorf("migrate: %w", err))
	}
	return nil
}

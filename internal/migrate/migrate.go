// Package migrate runs the schema migrations of the SQL stores: the files
// migrations/NNNN_name.sql of a store's embedded file system, in name
// order, each in its own transaction, recorded by name in the table
// hds_schema_migrations. A store gives only its Dialect: placeholders, how
// it runs a transaction, how it keeps two processes from migrating at
// once, and the shape of its version table.
//
// A database's schema version is the number of the newest migration it
// recorded (Current); the program's is the number of its newest file
// (Newest). Run refuses a database whose version is newer than the
// program's, with a *TooNewError naming both.
package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Table is the table that records the migrations a database has run, one
// row per migration named by its path in the file system
// ("migrations/0001_schema.sql").
const Table = "hds_schema_migrations"

// Pattern is the path pattern of the migration files in a store's file
// system.
const Pattern = "migrations/*.sql"

// Querier is what Current reads with: a database, a connection or a
// transaction (*sql.DB, *sql.Conn, *sql.Tx and their sqlx forms).
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Tx is what the statements of one migration run on: a transaction of
// the store's database (*sql.Tx and *sqlx.Tx are Tx).
type Tx interface {
	Querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Dialect is what one SQL engine gives the runner.
type Dialect struct {
	// Engine names the engine in errors: "PostgreSQL", "SQLite".
	Engine string
	// Placeholder is the n-th bind parameter of a statement (n from 1):
	// "$1" for PostgreSQL, "?" for SQLite.
	Placeholder func(n int) string
	// HasTable is a query that returns one row and column: the number of
	// tables named hds_schema_migrations the database has (0 or 1).
	HasTable string
	// CreateTable creates hds_schema_migrations, in the shape the
	// engine's existing databases have.
	CreateTable string
	// AppliedAt is the value of the column applied_at for a migration run
	// at now.
	AppliedAt func(now time.Time) any
	// Tables, when not empty, is a query that returns the number of
	// tables of the database; a database without hds_schema_migrations
	// but with tables is then refused with Foreign (another application's
	// database). Empty: no such check.
	Tables  string
	Foreign error
	// Lock, when not nil, keeps other processes from migrating the same
	// database until release is called; Run holds it for the whole run.
	Lock func(ctx context.Context) (release func(), err error)
	// Transact runs f in one write transaction, committed when f returns
	// nil and rolled back otherwise; a second process migrating at the
	// same time waits for it. f's statements run under the context it is
	// given.
	Transact func(ctx context.Context, f func(ctx context.Context, tx Tx) error) error
}

// TooNewError refuses a database whose schema is newer than the program
// knows: a newer hds migrated it, and this one would misread it.
type TooNewError struct {
	// Engine is the Dialect's.
	Engine string
	// Current is the database's schema version, Newest the program's.
	Current, Newest int
}

// Error names both versions and what to do.
func (e *TooNewError) Error() string {
	return fmt.Sprintf("the %s database's schema is version %d, newer than this program knows (version %d): run the hds release that wrote it, or a newer one",
		e.Engine, e.Current, e.Newest)
}

// migration is one file of the file system.
type migration struct {
	name    string // path in the file system, as recorded
	version int
}

// Version is the schema version a migration's name gives: the number
// its file name starts with (migrations/0012_webhooks.sql: 12).
func Version(name string) (int, error) {
	base := path.Base(name)
	digits := base[:len(base)-len(strings.TrimLeft(base, "0123456789"))]
	n, err := strconv.Atoi(digits)
	if err != nil || n <= 0 || !strings.HasPrefix(base[len(digits):], "_") {
		return 0, fmt.Errorf("migration %s: the file name does not start with its number (NNNN_name.sql)", name)
	}
	return n, nil
}

// list returns the migrations of fsys in name order, refusing two of one
// number.
func list(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, Pattern)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	ms := make([]migration, 0, len(names))
	seen := map[int]string{}
	for _, name := range names {
		v, err := Version(name)
		if err != nil {
			return nil, err
		}
		if other, ok := seen[v]; ok {
			return nil, fmt.Errorf("migrations %s and %s have one number (%d): renumber one", other, name, v)
		}
		seen[v] = name
		ms = append(ms, migration{name: name, version: v})
	}
	return ms, nil
}

// Newest returns the schema version of the newest migration of fsys (0
// when it has none): what the program knows.
func Newest(fsys fs.FS) (int, error) {
	ms, err := list(fsys)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	newest := 0
	for _, m := range ms {
		newest = max(newest, m.version)
	}
	return newest, nil
}

// Current returns the schema version of the database q reads: the
// number of the newest migration recorded in hds_schema_migrations (0
// when it recorded none). A database without that table (not an hds
// database, or one never migrated) is an error, as is one that cannot be
// read. Compare it with Newest before using a database another program
// wrote (a restore): a newer one is a *TooNewError.
func Current(ctx context.Context, q Querier) (int, error) {
	_, current, err := recorded(ctx, q, nil)
	return current, err
}

// recorded returns the names hds_schema_migrations holds and the newest
// version among them. A name that gives no version (not written by this
// runner) is kept but gives none. When into is not nil, the names go
// there.
func recorded(ctx context.Context, q Querier, into map[string]bool) (map[string]bool, int, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM `+Table)
	if err != nil {
		return nil, 0, fmt.Errorf("migrate: read %s: %w", Table, err)
	}
	defer rows.Close()
	if into == nil {
		into = map[string]bool{}
	}
	current := 0
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, 0, fmt.Errorf("migrate: read %s: %w", Table, err)
		}
		into[name] = true
		if v, err := Version(name); err == nil {
			current = max(current, v)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("migrate: read %s: %w", Table, err)
	}
	return into, current, nil
}

// errStop ends a transaction that found nothing to do.
var errStop = errors.New("migrate: nothing to do")

// Run brings the database up to date: every migration of fsys
// (migrations/NNNN_name.sql) not yet recorded in hds_schema_migrations
// runs, in name order, each in its own transaction together with its
// record, under d.Lock when the dialect has one. It stops after the
// migration named last when last is not empty (upgrade tests build an
// older schema so). A database whose schema is newer than the newest
// migration of fsys is refused with a *TooNewError and left as it is.
func Run(ctx context.Context, d Dialect, fsys fs.FS, last string) error {
	ms, err := list(fsys)
	if err != nil {
		return err
	}
	newest := 0
	for _, m := range ms {
		newest = max(newest, m.version)
	}
	if d.Lock != nil {
		release, err := d.Lock(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	done := map[string]bool{}
	err = d.Transact(ctx, func(ctx context.Context, tx Tx) error {
		return prepare(ctx, d, tx, newest, done)
	})
	if err != nil {
		return err
	}
	insert := fmt.Sprintf(`INSERT INTO %s (name, applied_at) VALUES (%s, %s)`, Table, d.Placeholder(1), d.Placeholder(2))
	exists := fmt.Sprintf(`SELECT count(*) FROM %s WHERE name = %s`, Table, d.Placeholder(1))
	for _, m := range ms {
		if last != "" && m.name > last {
			break
		}
		if done[m.name] {
			continue
		}
		body, err := fs.ReadFile(fsys, m.name)
		if err != nil {
			return err
		}
		err = d.Transact(ctx, func(ctx context.Context, tx Tx) error {
			// Without a lock, another process may have run it meanwhile.
			var n int
			if err := tx.QueryRowContext(ctx, exists, m.name).Scan(&n); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
			if n > 0 {
				return errStop
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
			if _, err := tx.ExecContext(ctx, insert, m.name, d.AppliedAt(time.Now())); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			return err
		}
	}
	return nil
}

// prepare makes hds_schema_migrations when the database has none (or
// refuses another application's database), reads what it recorded into
// done, and refuses a schema newer than newest.
func prepare(ctx context.Context, d Dialect, tx Tx, newest int, done map[string]bool) error {
	var has int
	if err := tx.QueryRowContext(ctx, d.HasTable).Scan(&has); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if has == 0 {
		if d.Tables != "" {
			var tables int
			if err := tx.QueryRowContext(ctx, d.Tables).Scan(&tables); err != nil {
				return fmt.Errorf("migrate: %w", err)
			}
			if tables > 0 {
				return d.Foreign
			}
		}
		if _, err := tx.ExecContext(ctx, d.CreateTable); err != nil {
			return fmt.Errorf("migrate: create %s: %w", Table, err)
		}
		return nil
	}
	_, current, err := recorded(ctx, tx, done)
	if err != nil {
		return err
	}
	if current > newest {
		return &TooNewError{Engine: d.Engine, Current: current, Newest: newest}
	}
	return nil
}

// Package postgres is the PostgreSQL implementation of store.Store and
// store.UserDirectory, on github.com/jmoiron/sqlx and github.com/lib/pq.
// Several hds instances can share one database: uniqueness is enforced by
// constraints, multi-step changes run in one transaction, and nothing is
// cached across requests.
//
// The schema is created by Migrate, which the caller runs at start-up;
// the library never migrates silently. Hot statements are prepared once
// per connection and reused. lib/pq stays inside this package, so that a
// driver change touches nothing else.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hds-go/hds/store"
)

// Store is a store.Store and store.UserDirectory on PostgreSQL. It is safe
// for concurrent use.
type Store struct {
	// Now returns the current time; timestamps are truncated to
	// microseconds in UTC. Tests may replace it before first use.
	Now func() time.Time

	db    *sqlx.DB
	stmts sync.Map // query text -> *sqlx.Stmt
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.UserDirectory = (*Store)(nil)
)

// New returns a Store on db, which must use the "postgres" driver of
// lib/pq. Run Migrate before serving.
func New(db *sqlx.DB) *Store {
	return &Store{Now: time.Now, db: db}
}

// Open connects to the database at url (postgres://...) with a pool of at
// most maxOpenConns connections and returns the Store. A small pool (2 to
// 4) keeps latency low when the database shares the machine.
func Open(ctx context.Context, url string, maxOpenConns int) (*Store, error) {
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db.SetMaxOpenConns(maxOpenConns)
	db.SetMaxIdleConns(maxOpenConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, classify(fmt.Errorf("connect to database: %w", err))
	}
	return New(db), nil
}

// DB returns the underlying database handle.
func (s *Store) DB() *sqlx.DB { return s.db }

// Close closes the database handle.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error {
	return classify(s.db.PingContext(ctx))
}

// stmt returns the prepared statement for query, preparing it on first
// use. database/sql re-prepares it on each new connection by itself.
func (s *Store) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sqlx.Stmt), nil
	}
	st, err := s.db.PreparexContext(ctx, query)
	if err != nil {
		return nil, classify(err)
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sqlx.Stmt), nil
	}
	return st, nil
}

// queryer runs prepared statements, on the pool or inside a transaction.
type queryer struct {
	s  *Store
	tx *sqlx.Tx
}

func (s *Store) q() queryer { return queryer{s: s} }

// prepared returns the statement for query. Inside a transaction it uses
// the pool's prepared statement when there is one and otherwise returns
// nil (run the query on the transaction as it is): preparing on the pool
// would need a second connection while the transaction holds one.
func (q queryer) prepared(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if q.tx == nil {
		return q.s.stmt(ctx, query)
	}
	if st, ok := q.s.stmts.Load(query); ok {
		return q.tx.StmtxContext(ctx, st.(*sqlx.Stmt)), nil
	}
	return nil, nil
}

func (q queryer) row(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	st, err := q.prepared(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case st == nil:
		return q.tx.QueryRowContext(ctx, query, args...), nil
	}
	return st.QueryRowContext(ctx, args...), nil
}

func (q queryer) rows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := q.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	var rows *sql.Rows
	if st == nil {
		rows, err = q.tx.QueryContext(ctx, query, args...)
	} else {
		rows, err = st.QueryContext(ctx, args...)
	}
	return rows, classify(err)
}

func (q queryer) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := q.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	var res sql.Result
	if st == nil {
		res, err = q.tx.ExecContext(ctx, query, args...)
	} else {
		res, err = st.ExecContext(ctx, args...)
	}
	return res, classify(err)
}

// inTx runs f in one transaction, committed when f returns nil.
func (s *Store) inTx(ctx context.Context, f func(q queryer) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	if err := f(queryer{s: s, tx: tx}); err != nil {
		_ = tx.Rollback()
		return err
	}
	return classify(tx.Commit())
}

// classify maps driver errors: lost connections and a database that is
// down or shutting down become store.ErrUnavailable (with no SQL text);
// everything else is returned as it is (a 500, logged, never shown).
func classify(err error) error {
	if err == nil {
		return nil
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch pqErr.Code.Class() {
		case "08", "53", "57": // connection exception, insufficient resources, operator intervention
			return fmt.Errorf("%w: %s", store.ErrUnavailable, pqErr.Code.Name())
		}
		return err
	}
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, sql.ErrTxDone) || errors.Is(err, context.Canceled) {
		return err
	}
	// Anything else from the driver is the network: refused, reset,
	// timed out, or a bad connection.
	return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
}

// isUniqueViolation reports a unique constraint violation (23505).
func isUniqueViolation(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "23505"
}

// isForeignKeyViolation reports a foreign key violation (23503): the
// parent was deleted concurrently.
func isForeignKeyViolation(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "23503"
}

// storable reports whether PostgreSQL can hold s as text: valid UTF-8
// without U+0000. Names that are not can never exist, so looking them up
// is ErrNotFound rather than a driver error.
func storable(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// lookupName is name if it can exist, else a name no row has.
func lookupName(name string) string {
	if storable(name) {
		return name
	}
	return ""
}

// likePattern turns a case-insensitive substring filter into a LIKE
// pattern: lower-cased as strings.ToLower does, with %, _ and \ literal.
func likePattern(s string) any {
	if s == "" {
		return nil
	}
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

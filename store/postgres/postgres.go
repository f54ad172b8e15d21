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
//
// The Store is a store.SessionChecker of its own sessions: a Caller's
// deferred session check is made in the statement that resolves the
// path, so that hds serves a single-record GET in one round trip.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/hds-go/hds/internal/progress"
	"github.com/hds-go/hds/internal/readahead"
	"github.com/hds-go/hds/store"
)

// Store is a store.Store and store.UserDirectory on PostgreSQL. It is safe
// for concurrent use.
type Store struct {
	// Now returns the current time; timestamps are truncated to
	// microseconds in UTC. Tests may replace it before first use.
	Now func() time.Time

	db      *sqlx.DB
	timeout time.Duration
	stmts   sync.Map // query text -> *sqlx.Stmt
	quotas  atomic.Pointer[store.Quotas]
	logger  atomic.Pointer[slog.Logger]
	feed    feed
	// longReads bounds the snapshots of exports and comparisons
	// (longread.go).
	longReads *readahead.Gate
	// storage remembers writes that failed for a full disk (StorageFull).
	storage store.StorageWatch
	// idleConns is how many idle connections the pool keeps, when the
	// Store made the pool (Open): 0 when the host did. dropping is set
	// while dropIdle runs.
	idleConns int
	dropping  atomic.Bool
}

// DefaultTimeout is how long a store call may take when WithTimeout is
// not given (API.md's database.timeout).
const DefaultTimeout = 5 * time.Second

// Option configures a Store.
type Option func(*Store)

// WithTimeout sets the deadline of every call of the Store (default
// DefaultTimeout; 0 or less means none). The time spent waiting for a
// connection of the pool counts. A call that runs out of it fails with an
// error matching store.ErrUnavailable, and its statement is canceled on
// the server, as it is when the caller's context is canceled.
func WithTimeout(d time.Duration) Option {
	return func(s *Store) { s.timeout = d }
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.UserDirectory = (*Store)(nil)
)

// New returns a Store on db, which must use the "postgres" driver of
// lib/pq. Run Migrate before serving.
func New(db *sqlx.DB, opts ...Option) *Store {
	s := &Store{Now: time.Now, db: db, timeout: DefaultTimeout}
	s.longReads = readahead.NewGate(s.poolSize)
	for _, o := range opts {
		o(s)
	}
	return s
}

// Open connects to the database at url (postgres://...) with a pool of at
// most maxOpenConns connections and returns the Store. A small pool (2 to
// 4) keeps latency low when the database shares the machine. Its
// connections give up on a database that stops answering (see conn.go):
// connecting ends after the Store's timeout unless url sets
// connect_timeout, and a call ends at its timeout (plus answerGrace)
// even when the database never answers.
func Open(ctx context.Context, url string, maxOpenConns int, opts ...Option) (*Store, error) {
	probe := New(nil, opts...) // the options, for the timeout
	cfg, err := pq.NewConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout(probe.timeout)
	}
	connector, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	connector.Dialer(&idleDialer{idle: poolIdle(probe.timeout)})
	db := sqlx.NewDb(sql.OpenDB(connector), "postgres")
	db.SetMaxOpenConns(maxOpenConns)
	db.SetMaxIdleConns(maxOpenConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := New(db, append([]Option{WithListenURL(url)}, opts...)...)
	s.idleConns = maxOpenConns
	if err := s.Ping(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return s, nil
}

// DB returns the underlying database handle.
func (s *Store) DB() *sqlx.DB { return s.db }

// Close stops listening for changes (store.EventSource) and closes the
// database handle.
func (s *Store) Close() error {
	s.closeFeed()
	return s.db.Close()
}

func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// StorageFull implements store.StorageChecker: a write failed for a full
// disk (disk_full, 53100) lately, and none succeeded since.
func (s *Store) StorageFull() bool { return s.storage.Full() }

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
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
	// written collects the audit entries the transaction wrote, logged
	// once it commits.
	written *[]*store.AuditEntry
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

// execOne runs query, which changes at most one row; no row changed is a
// NotFoundError of kind and name.
func (q queryer) execOne(ctx context.Context, kind, name, query string, args ...any) error {
	res, err := q.exec(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return classify(err)
	} else if n == 0 {
		return &store.NotFoundError{Kind: kind, Name: name}
	}
	return nil
}

// inTx runs f in one transaction, committed when f returns nil.
//
// A transaction that PostgreSQL aborts as a deadlock victim (40P01) or a
// serialization failure (40001) is run again, f included, up to
// txAttempts times in all. The writes in a project take their locks in
// one order (the project's row first, see quotas.go), so that they cannot
// deadlock with each other; the retry is for what that order does not
// cover. A transaction that still loses after the last attempt is
// store.ErrUnavailable (classify), never an internal error.
func (s *Store) inTx(ctx context.Context, f func(q queryer) error) error {
	for attempt := 1; ; attempt++ {
		err := s.tryTx(ctx, f)
		if attempt < txAttempts && pq.As(err, pqerror.TRDeadlockDetected, pqerror.TRSerializationFailure) != nil && ctx.Err() == nil {
			continue
		}
		return err
	}
}

// txAttempts is how many times inTx runs a transaction that lost a
// deadlock or a serialization conflict.
const txAttempts = 3

// tryTx runs f in one transaction, committed when f returns nil.
func (s *Store) tryTx(ctx context.Context, f func(q queryer) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	var written []*store.AuditEntry
	if err := f(queryer{s: s, tx: tx, written: &written}); err != nil {
		_ = tx.Rollback()
		s.storage.Failed(err)
		return err
	}
	if err := tx.Commit(); err != nil {
		err = classify(err)
		s.storage.Failed(err)
		return err
	}
	s.storage.Succeeded()
	store.LogAudit(ctx, s.logger.Load(), written...)
	return nil
}

// call starts a call of the Store: ctx gets the store's deadline. The
// returned end, deferred with the address of the call's error, settles
// that error (see settle) and releases the deadline.
func (s *Store) call(ctx context.Context) (context.Context, func(*error)) {
	return s.callWithin(ctx, s.timeout)
}

// opTime is the time a call whose work grows with its items is given for
// each item, over the store's timeout, whatever its progress (callFor).
const opTime = time.Millisecond

// callFor is call for a call whose work grows with n items (the ops of a
// batch or an import): its deadline follows the work done
// (progress.WithStall), so that a body within limits.max_import_bytes
// has the time it needs however loaded the machine: it fails when no
// item (an op, a set-based run's load or flush) has been done within the
// store's timeout, but not before the timeout plus opTime per item (the
// fixed allowance it had before: a set-based run may take longer than
// the timeout), and each of its statements still ends within it
// (they write at most writeChunk rows, and conn.go bounds every wait for
// the server). Apply records its progress with progress.Advance.
func (s *Store) callFor(ctx context.Context, n int) (context.Context, func(*error)) {
	if s.timeout <= 0 {
		return s.callWithin(ctx, 0)
	}
	pctx, cancel := progress.WithStall(ctx, s.timeout, s.timeout+time.Duration(n)*opTime)
	return pctx, func(errp *error) {
		*errp = settle(pctx, *errp)
		cancel()
	}
}

// callWithin is call with the deadline timeout (none when 0 or less).
func (s *Store) callWithin(ctx context.Context, timeout time.Duration) (context.Context, func(*error)) {
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	return ctx, func(errp *error) {
		*errp = settle(ctx, *errp)
		s.storage.Failed(*errp)
		if errors.Is(*errp, store.ErrUnavailable) {
			s.dropIdle()
		}
		cancel()
	}
}

// dropIdle closes the idle connections of the pool, after a call found
// the database unreachable or silent: connections that sat idle through
// an outage may be dead without knowing it (a database that stalled or
// swallowed their bytes), and a call handed one would wait its whole
// timeout after the database is back. New connections are made as calls
// need them, so that the Store answers as soon as the database does. It
// does so only for a pool the Store made (Open), whose idle size it
// knows.
func (s *Store) dropIdle() {
	if s.idleConns <= 0 || !s.dropping.CompareAndSwap(false, true) {
		return
	}
	defer s.dropping.Store(false)
	s.db.SetMaxIdleConns(0) // closes the idle ones
	s.db.SetMaxIdleConns(s.idleConns)
}

// callerError carries an error of a function the caller gave (the update
// of UpdateRecord), which the Store returns unchanged.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }
func (e callerError) Unwrap() error { return e.err }

// settle gives the error of a call its final form: the caller's own
// errors and the domain errors as they are; when the call's context is
// done, a deadline (the store's or the caller's) is store.ErrUnavailable
// and a cancellation is context.Canceled, whatever the driver made of
// them; anything else as classify left it.
func settle(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ce callerError
	if errors.As(err, &ce) {
		return ce.err
	}
	var ve *store.ValidationError
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAlreadyExists) ||
		errors.Is(err, store.ErrPermissionDenied) || errors.Is(err, store.ErrPreconditionFailed) || errors.As(err, &ve) ||
		errors.Is(err, store.ErrSessionInvalid) {
		return err
	}
	switch ctxErr := ctx.Err(); {
	case errors.Is(ctxErr, context.DeadlineExceeded):
		if errors.Is(err, store.ErrUnavailable) && errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("%w: %w (%v)", store.ErrUnavailable, ctxErr, err)
	case ctxErr != nil:
		return fmt.Errorf("%w (%v)", ctxErr, err)
	}
	return err
}

// unavailableCodes are the SQLSTATEs, beside class 08 (connection
// exception), that mean the server cannot serve now rather than that the
// statement is wrong.
var unavailableCodes = []pqerror.Code{
	pqerror.TooManyConnections,
	pqerror.QueryCanceled, // a statement_timeout of the server, or a cancel request
	pqerror.AdminShutdown,
	pqerror.CrashShutdown,
	pqerror.CannotConnectNow,
	pqerror.IdleSessionTimeout,
	pqerror.DiskFull,               // store.ErrStorageFull
	pqerror.TRDeadlockDetected,     // after inTx's last attempt
	pqerror.TRSerializationFailure, // after inTx's last attempt
}

// classify marks the errors that say the database cannot be reached or
// did not answer in time (the network, a lost or bad connection, the
// server shutting down or refusing connections, a deadline) as
// store.ErrUnavailable, wrapping the cause. Every other error is returned
// as it is: an internal error (a 500, logged, never shown).
func classify(err error) error {
	if err == nil || !unavailable(err) {
		return err
	}
	if pq.As(err, pqerror.DiskFull) != nil {
		return fmt.Errorf("%w: %w", store.ErrStorageFull, err)
	}
	return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
}

// unavailable reports whether err is one of the errors classify marks.
func unavailable(err error) bool {
	if errors.Is(err, store.ErrUnavailable) {
		return false // already marked
	}
	if pqErr := pq.As(err); pqErr != nil {
		return pqErr.Code.Class() == pqerror.ClassConnectionException || slices.Contains(unavailableCodes, pqErr.Code)
	}
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// isUniqueViolation reports a unique constraint violation (23505).
func isUniqueViolation(err error) bool {
	return pq.As(err, pqerror.UniqueViolation) != nil
}

// isForeignKeyViolation reports a foreign key violation (23503): the
// parent was deleted concurrently.
func isForeignKeyViolation(err error) bool {
	return pq.As(err, pqerror.ForeignKeyViolation) != nil
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

// Package sqlite is the SQLite implementation of store.Store,
// store.UserDirectory and every optional store interface the in-memory
// and PostgreSQL stores implement (Access, Sessions, AuditLog,
// EventSource, QuotaSetter, AuditLogSetter), on modernc.org/sqlite, a
// pure Go driver (no C compiler), through database/sql. It is the store
// of one box: one server process owns the database file (Lock), while
// administrative commands may open it beside that server.
//
// The database runs in WAL mode with synchronous=FULL: a write is on disk
// when its call returns, so it survives the process being killed (and a
// power loss). Writes go through one connection, owned by one goroutine
// that commits the writes waiting in groups (writer.go), in BEGIN
// IMMEDIATE transactions, so that writers queue in the process instead of
// retrying on SQLITE_BUSY; reads use a pool of read-only connections
// (ReadConns), taken in arrival order, and run beside the writer (WAL):
// a read of several statements is one read transaction, a read of one
// statement (a record's GET: the path and the record resolved together,
// resolve.go) runs alone.
// Another process writing the same file (an administrative command)
// waits up to the busy timeout.
//
// The schema is created by numbered, embedded migrations (migrations/),
// which Open runs. Every column a list filters or sorts by is computed in
// Go when a row is written, so that lists read index ranges.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hds-go/hds/internal/fanout"
	"github.com/hds-go/hds/internal/progress"
	"github.com/hds-go/hds/internal/readahead"
	"github.com/hds-go/hds/store"
)

// Store is a store.Store and store.UserDirectory on one SQLite database
// file. It is safe for concurrent use.
type Store struct {
	// Now returns the current time; timestamps are truncated to
	// microseconds in UTC. Tests may replace it before first use.
	Now func() time.Time

	path string
	w    *sql.DB // one connection: every write
	r    *sql.DB // read-only connections: ReadConns
	// readConns is WithReadConns's; readSlots holds a token per read
	// running, so that reads beyond ReadConns queue in arrival order
	// (database/sql hands a free connection to a random waiter).
	readConns   int
	readSlots   chan struct{}
	readsQueued atomic.Int64
	timeout     time.Duration
	sync        string
	// lastMigration, when not empty, is the migration Open stops after
	// (upgrade tests build older schemas with it).
	lastMigration string
	quotas        atomic.Pointer[store.Quotas]
	// maxPending bounds each webhook's pending deliveries
	// (store.Webhooks.SetMaxPending); 0 or less: none.
	maxPending atomic.Int64
	logger     atomic.Pointer[slog.Logger]

	// pubMu orders commits and the publication of their audit entries,
	// and a subscription's start, so that subscribers see every entry
	// committed after they subscribed, in revision order.
	pubMu sync.Mutex
	hub   fanout.Hub

	// stmts holds the statements prepared on each pool, by pool and
	// text (stmtKey): a statement is parsed once per connection, not once
	// per call. nstmts counts them, up to maxStmts.
	stmts  sync.Map
	nstmts atomic.Int32

	// longReads bounds the snapshots of exports and comparisons
	// (longread.go).
	longReads *readahead.Gate
	// storage remembers writes that failed for a full disk (StorageFull).
	storage store.StorageWatch
	// The writer (writer.go): reqs hands it the writes, quit stops it,
	// stopped is closed once it has; commits counts the transactions it
	// committed, queued the writes waiting for it to take them; a group
	// takes requests for groupTime at most.
	groupTime time.Duration
	queued    atomic.Int64
	reqs      chan *writeReq
	quit      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	commits   atomic.Int64
	// replays counts the groups rolled back to drop a member that failed
	// having written without a savepoint (writeGroup.runLean).
	replays atomic.Int64
}

// stmtKey names a statement of a pool in Store.stmts.
type stmtKey struct {
	db    *sql.DB
	query string
}

// maxStmts bounds the prepared statements kept (the list statements vary
// with the filters a query combines).
const maxStmts = 1000

var (
	_ store.Store          = (*Store)(nil)
	_ store.UserDirectory  = (*Store)(nil)
	_ store.QuotaSetter    = (*Store)(nil)
	_ store.AuditLogSetter = (*Store)(nil)
)

// DefaultTimeout is how long a store call may take when WithTimeout is
// not given (API.md's database.timeout).
const DefaultTimeout = 5 * time.Second

// walLimit is the size, in bytes, the WAL file is cut back to when it
// starts over after a checkpoint (journal_size_limit): about what the
// automatic checkpoint, every 1,000 pages, lets it grow to.
const walLimit = 4 << 20

// busyTimeout is how long a statement waits for a lock another process
// holds (an administrative command writing beside the server).
const busyTimeout = 5 * time.Second

// Option configures a Store.
type Option func(*Store)

// WithTimeout sets the deadline of every call of the Store (default
// DefaultTimeout; 0 or less means none). A call that runs out of it fails
// with an error matching store.ErrUnavailable, and nothing of it is
// written.
func WithTimeout(d time.Duration) Option { return func(s *Store) { s.timeout = d } }

// WithQuotas sets the quotas the store enforces, q.Effective() (default
// store.DefaultQuotas; a field left 0 keeps its default, store.Unlimited
// means no bound).
func WithQuotas(q store.Quotas) Option { return func(s *Store) { s.SetQuotas(q) } }

// WithReadConns sets the number of read-only connections, which bounds
// the reads that run at once (default DefaultReadConns; 0 or less keeps
// the default).
func WithReadConns(n int) Option { return func(s *Store) { s.readConns = n } }

// DefaultReadConns is the number of read-only connections of a Store
// opened without WithReadConns: twice the CPUs Go uses
// (runtime.GOMAXPROCS), and at least 4. A read of SQLite is work of the
// CPU in the process (the driver is pure Go), so more connections than
// that add no speed; a read beyond them waits, first come first served.
func DefaultReadConns() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// ReadConns returns the number of read-only connections of the Store:
// the reads that run at once, the others waiting their turn in arrival
// order. It is the one place the read pool is sized.
func (s *Store) ReadConns() int {
	if s.readConns > 0 {
		return s.readConns
	}
	return DefaultReadConns()
}

// WithSynchronousNormal trades durability on power loss for speed
// (PRAGMA synchronous=NORMAL): a write answered survives the process
// being killed, but the last ones may be lost when the machine stops.
// The default, FULL, keeps them both ways. For tests and benchmarks.
func WithSynchronousNormal() Option { return func(s *Store) { s.sync = "NORMAL" } }

// Open opens (creating it when missing, with its directory) the database
// file at path, brings its schema up to date and returns the Store. A new
// directory is made 0700 and a new file 0600. A file that is not an SQLite
// database, or an SQLite database that is not hds's, is refused, and so is
// a file that cannot be written. Open does not take the file's server
// lock: a server calls Lock first.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: no database path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite %s: the path may not hold '?' or '#'", path)
	}
	if err := prepareFile(path); err != nil {
		return nil, err
	}
	s := &Store{Now: time.Now, path: path, timeout: DefaultTimeout, sync: "FULL", groupTime: groupTime}
	s.longReads = readahead.NewGate(s.ReadConns)
	q := store.DefaultQuotas
	s.quotas.Store(&q)
	s.maxPending.Store(store.DefaultMaxPending)
	for _, o := range opts {
		o(s)
	}
	common := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", busyTimeout.Milliseconds())
	w, err := sql.Open("sqlite", path+"?"+common+"&_pragma=journal_mode(WAL)&_pragma=synchronous("+s.sync+")&_pragma=temp_store(MEMORY)&_pragma=cache_size(-16000)&_pragma=journal_size_limit("+strconv.Itoa(walLimit)+")&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	s.w = w
	s.startWriter()
	if err := s.migrate(ctx, s.lastMigration); err != nil {
		s.stopWriter()
		w.Close()
		return nil, describeOpen(path, err)
	}
	r, err := sql.Open("sqlite", path+"?"+common+"&_pragma=query_only(1)")
	if err != nil {
		s.stopWriter()
		w.Close()
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	s.readSlots = make(chan struct{}, s.ReadConns())
	r.SetMaxOpenConns(s.ReadConns())
	r.SetMaxIdleConns(s.ReadConns())
	s.r = r
	// The first read, which opens a read connection, is bounded by ctx
	// alone, as the migrations are: the store's timeout bounds its calls,
	// and a short one must not fail Open on a loaded machine.
	if err := s.readNoDeadline(ctx, func(t *tx) error {
		var n int
		return t.row(`SELECT count(*) FROM hds_schema_migrations`).Scan(&n)
	}); err != nil {
		s.Close()
		return nil, describeOpen(path, err)
	}
	return s, nil
}

// prepareFile makes the file's directory (0700) and the file (0600) when
// missing, and checks that an existing file can be read and written, so
// that Open says so in one line rather than failing on the first write.
func prepareFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("sqlite %s: cannot make its directory: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("sqlite %s: the file cannot be written (permission denied)", path)
		}
		return fmt.Errorf("sqlite %s: %w", path, err)
	}
	return f.Close()
}

// describeOpen turns an error of opening the database into one line that
// says what is wrong with the file.
func describeOpen(path string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("sqlite %s: the file is not an SQLite database", path)
		case sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("sqlite %s: the database file is corrupt", path)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("sqlite %s: the database is locked by another process", path)
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN:
			return fmt.Errorf("sqlite %s: the database cannot be written (check the permissions of the file and its directory)", path)
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("sqlite %s: the disk is full", path)
		}
	}
	if errors.Is(err, errForeign) {
		return fmt.Errorf("sqlite %s: %w", path, err)
	}
	return fmt.Errorf("sqlite %s: %w", path, err)
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database, once the writes being committed are.
func (s *Store) Close() error {
	s.stopWriter()
	var err error
	if s.r != nil {
		err = s.r.Close()
	}
	if s.w != nil {
		err = errors.Join(err, s.w.Close())
	}
	return err
}

// SetQuotas implements store.QuotaSetter: the store enforces q.Effective().
func (s *Store) SetQuotas(q store.Quotas) {
	q = q.Effective()
	s.quotas.Store(&q)
}

// StorageFull implements store.StorageChecker: a write failed for a full
// disk (SQLITE_FULL) lately, and none succeeded since.
func (s *Store) StorageFull() bool { return s.storage.Full() }

// SetAuditLogger implements store.AuditLogSetter.
func (s *Store) SetAuditLogger(logger *slog.Logger) { s.logger.Store(logger) }

func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// Ping implements store.Store: it reads the schema's version.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM hds_schema_migrations`).Scan(&n)
	return classify(ctx, err)
}

// deadline applies the store's timeout to ctx.
func (s *Store) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.timeout)
}

// classify returns err as it is when it is a domain error (or nil), and
// wraps it with store.ErrUnavailable when the database could not serve
// the call: a lock not obtained in time, a full disk, an I/O error, a
// deadline or cancellation. Any other error is an internal failure.
func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	switch {
	case errors.Is(err, store.ErrUnavailable):
		return err
	case errors.As(err, &se):
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("%w: %w", store.ErrStorageFull, err)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_READONLY,
			sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_CANTOPEN,
			sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_INTERRUPT:
			return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
		return err
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.Is(err, sql.ErrConnDone):
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	case ctx != nil && ctx.Err() != nil:
		return fmt.Errorf("%w: %w (%v)", store.ErrUnavailable, ctx.Err(), err)
	}
	return err
}

// tx is a transaction of the Store: a write (a savepoint of a group's
// BEGIN IMMEDIATE transaction on the one writing connection, writer.go)
// or a read (a snapshot on a read-only connection).
type tx struct {
	*sql.Tx
	// ctx is the context of the statements: the call's for a read, the
	// writer's for a write, whose call is the call's context, checked
	// before each statement (stmtContext).
	ctx  context.Context
	call context.Context
	s    *Store
	db   *sql.DB // the pool
	now  time.Time
	// missed are the statements the pool had not prepared, prepared on
	// it once the transaction ends; prepared the statements of the
	// transaction by query.
	missed   []string
	prepared map[string]*sql.Stmt
	// written holds the audit entries the transaction wrote, published
	// once it commits; ended the projects it deleted.
	written []*store.AuditEntry
	ended   []string
	// wrote is set once t has run a statement that may write: any of
	// exec, and of row and rows any but a SELECT (writeGroup.runLean).
	wrote bool
	// progress, when not nil, is the deadline of a call of many items
	// (writeFor), which advance moves.
	progress *progress.Context
	// clusters and hooks, when not nil, keep what the ops of a batch
	// found (Apply): its clusters by collection and name (forgotten when
	// an op deletes a collection or cluster), and the webhooks of its
	// project (no op of a batch changes them).
	clusters map[[2]string]*clus
	hooks    map[string][]hookRow
	// deferProject, set by a batch, keeps the revision and byte count of
	// its project in memory (audit, addBytes) until flushProject writes
	// them once; dirty is the project they changed.
	deferProject bool
	dirty        *proj
}

// advance records that an item of a call of many items is done (see
// writeFor); it does nothing for other calls.
func (t *tx) advance() {
	if t.progress != nil {
		t.progress.Advance()
	}
}

// stmtContext is the context a statement of t runs under: t.ctx, or the
// call's once it has ended, so that the statement fails at once with the
// call's error rather than run.
func (t *tx) stmtContext() context.Context {
	if t.call != nil && t.call.Err() != nil {
		return t.call
	}
	return t.ctx
}

// stmt returns the prepared statement of query for t: the pool's, bound
// to t, or one prepared on t when the pool has none yet (the pool's is
// then prepared once t ends); nil when it does not prepare. t keeps it
// for the next run of query, so that a transaction of many writes (a
// batch) binds or prepares each statement once, not once a run (each
// tx-bound statement stays in memory until the transaction ends).
func (t *tx) stmt(query string) *sql.Stmt {
	if t.Tx == nil {
		// One statement, outside a transaction (readOne): the pool's
		// statement as it is.
		if v, ok := t.s.stmts.Load(stmtKey{t.db, query}); ok {
			return v.(*sql.Stmt)
		}
		t.missed = append(t.missed, query)
		return nil
	}
	if st, ok := t.prepared[query]; ok {
		return st
	}
	var st *sql.Stmt
	if v, ok := t.s.stmts.Load(stmtKey{t.db, query}); ok {
		st = t.StmtContext(t.ctx, v.(*sql.Stmt))
	} else {
		t.missed = append(t.missed, query)
		if p, err := t.PrepareContext(t.stmtContext(), query); err == nil {
			st = p
		}
	}
	if t.prepared == nil {
		t.prepared = map[string]*sql.Stmt{}
	}
	t.prepared[query] = st
	return st
}

// exec runs a statement of t.
func (t *tx) exec(query string, args ...any) (sql.Result, error) {
	t.wrote = true
	ctx := t.stmtContext()
	if st := t.stmt(query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	if t.Tx == nil {
		return t.db.ExecContext(ctx, query, args...)
	}
	return t.ExecContext(ctx, query, args...)
}

// row runs a query of t that returns one row.
func (t *tx) row(query string, args ...any) *sql.Row {
	t.noteWrite(query)
	ctx := t.stmtContext()
	if st := t.stmt(query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	if t.Tx == nil {
		return t.db.QueryRowContext(ctx, query, args...)
	}
	return t.QueryRowContext(ctx, query, args...)
}

// rows runs a query of t.
func (t *tx) rows(query string, args ...any) (*sql.Rows, error) {
	t.noteWrite(query)
	ctx := t.stmtContext()
	if st := t.stmt(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	if t.Tx == nil {
		return t.db.QueryContext(ctx, query, args...)
	}
	return t.QueryContext(ctx, query, args...)
}

// noteWrite sets t.wrote unless query is a SELECT.
func (t *tx) noteWrite(query string) {
	if !t.wrote && !strings.HasPrefix(strings.TrimLeft(query, " \t\n"), "SELECT") {
		t.wrote = true
	}
}

// prepare prepares on db the statements a transaction ran unprepared,
// once it has ended and given its connection back (the writing pool has
// only one). A statement that fails to prepare is simply run unprepared
// again.
func (s *Store) prepare(ctx context.Context, db *sql.DB, queries []string) {
	for _, q := range queries {
		key := stmtKey{db, q}
		if _, ok := s.stmts.Load(key); ok || s.nstmts.Load() >= maxStmts {
			continue
		}
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		if _, loaded := s.stmts.LoadOrStore(key, st); loaded {
			st.Close()
		} else {
			s.nstmts.Add(1)
		}
	}
}

// write runs f in one write transaction and commits it when f returns
// nil; any error rolls everything f did back. The audit entries f wrote
// are published and logged once committed.
func (s *Store) write(ctx context.Context, f func(t *tx) error) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	return s.writeNoDeadline(ctx, f)
}

// opTime is the time a call whose work grows with its items is given for
// each item, over the timeout, whatever its progress (writeFor).
const opTime = time.Millisecond

// writeFor is write for a call of n items (the ops of a batch or an
// import): its deadline follows the work done (progress.WithStall). It
// fails when no item has been done within the timeout, however long the
// call takes in all, but not before the timeout plus opTime per item (the
// fixed allowance it had before), so that a body within
// limits.max_import_bytes is not cut off because the machine is loaded;
// f calls t.advance after each item.
func (s *Store) writeFor(ctx context.Context, n int, f func(t *tx) error) error {
	if s.timeout <= 0 {
		return s.write(ctx, f)
	}
	pctx, cancel := progress.WithStall(ctx, s.timeout, s.timeout+time.Duration(n)*opTime)
	defer cancel()
	return s.submit(pctx, f, pctx)
}

// writeNoDeadline is write bounded by ctx alone (migrations, which may
// take longer than one call).
func (s *Store) writeNoDeadline(ctx context.Context, f func(t *tx) error) error {
	return s.submit(ctx, f, nil)
}

// read runs f in one read transaction: every statement of f sees the same
// snapshot, and no writer waits for it.
func (s *Store) read(ctx context.Context, f func(t *tx) error) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	return s.readNoDeadline(ctx, f)
}

func (s *Store) readNoDeadline(ctx context.Context, f func(t *tx) error) error {
	if err := s.takeReadSlot(ctx); err != nil {
		return err
	}
	defer func() { <-s.readSlots }()
	sqlTx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return classify(ctx, err)
	}
	t := &tx{Tx: sqlTx, ctx: ctx, s: s, db: s.r, now: s.now()}
	err = f(t)
	_ = sqlTx.Rollback() // read only
	s.prepare(ctx, s.r, t.missed)
	return classify(ctx, err)
}

// takeReadSlot waits for a read's turn (readSlots), in arrival order.
func (s *Store) takeReadSlot(ctx context.Context) error {
	s.readsQueued.Add(1)
	select {
	case s.readSlots <- struct{}{}:
		s.readsQueued.Add(-1)
		return nil
	case <-ctx.Done():
		s.readsQueued.Add(-1)
		return classify(ctx, ctx.Err())
	}
}

// readOne is read for f that runs one statement: it runs outside a
// transaction (a statement alone sees one snapshot), which spares the
// BEGIN and ROLLBACK of a read and binding the statement to one.
func (s *Store) readOne(ctx context.Context, f func(t *tx) error) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	if err := s.takeReadSlot(ctx); err != nil {
		return err
	}
	defer func() { <-s.readSlots }()
	t := &tx{ctx: ctx, s: s, db: s.r, now: s.now()}
	err := f(t)
	s.prepare(ctx, s.r, t.missed)
	return classify(ctx, err)
}

// micros is t as stored: microseconds since 1970 UTC.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros is the time a stored microsecond count denotes, in UTC.
func fromMicros(n int64) time.Time { return time.UnixMicro(n).UTC() }

// nullMicros is t as stored, or NULL for nil.
func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

// timePtr is the time a nullable stored microsecond count denotes.
func timePtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

// nullString is s, or NULL when empty.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

package sqlite

import (
	"context"
	"encoding/json"
	"io/fs"
	"sync"
	"time"

	"github.com/hds-go/hds/internal/migrate"
	"github.com/hds-go/hds/store"
)

// MigrateTo runs the migrations up to the one named last (a file name
// under migrations/), for upgrade tests.
func (s *Store) MigrateTo(ctx context.Context, last string) error { return s.migrate(ctx, last) }

// WithMigrationsTo makes Open stop after the migration named last (a file
// name under migrations/), for upgrade tests: the store then has an
// older schema.
func WithMigrationsTo(last string) Option { return func(s *Store) { s.lastMigration = last } }

// Exec runs a statement on the writing connection, for tests.
func (s *Store) Exec(ctx context.Context, query string, args ...any) error {
	_, err := s.w.ExecContext(ctx, query, args...)
	return err
}

// MigrateFrom runs the migrations of fsys (migrations/*.sql), for tests
// of the runner.
func (s *Store) MigrateFrom(ctx context.Context, fsys fs.FS) error {
	return s.migrateFrom(ctx, fsys, "")
}

// Migrations are the embedded migrations.
var Migrations = migrations

// CheckSchema is checkSchema, for tests.
func CheckSchema(ctx context.Context, q migrate.Querier) error { return checkSchema(ctx, q) }

// QueryString reads one text value, for tests.
func (s *Store) QueryString(ctx context.Context, query string, args ...any) (string, error) {
	var v string
	err := s.w.QueryRowContext(ctx, query, args...).Scan(&v)
	return v, err
}

// RecordKeys is recordKeys, for tests that write rows by hand.
func RecordKeys(t store.DataType, v json.RawMessage) (vk []byte, rk, vtext, vlower any) {
	return recordKeys(t, v)
}

// WithGroupTime sets the time a group of writes takes requests before
// it commits, for tests that make one group of every write waiting.
func WithGroupTime(d time.Duration) Option { return func(s *Store) { s.groupTime = d } }

// Commits is the number of transactions the writer committed.
func (s *Store) Commits() int64 { return s.commits.Load() }

// Queued is the number of writes waiting for the writer to take them.
func (s *Store) Queued() int64 { return s.queued.Load() }

// HoldWriter makes the writer wait, inside the transaction of a group
// (of which the hold is the first write), until release is called: the
// writes made meanwhile queue.
func (s *Store) HoldWriter() (release func()) {
	held, rel := make(chan struct{}), make(chan struct{})
	go s.writeNoDeadline(context.Background(), func(*tx) error {
		close(held)
		<-rel
		return nil
	})
	<-held
	return func() { close(rel) }
}

// WriteFunc runs f as the function of a write, for tests of what the
// writer does with its outcome.
func (s *Store) WriteFunc(ctx context.Context, f func() error) error {
	return s.write(ctx, func(*tx) error { return f() })
}

// ReadsQueued is the number of reads waiting for a read connection.
func (s *Store) ReadsQueued() int64 { return s.readsQueued.Load() }

// HoldReader takes a read connection until release is called.
func (s *Store) HoldReader() (release func()) {
	held, rel := make(chan struct{}), make(chan struct{})
	go s.readNoDeadline(context.Background(), func(*tx) error {
		close(held)
		<-rel
		return nil
	})
	<-held
	return func() { close(rel) }
}

// ReadFunc runs f inside a read transaction, holding a read connection.
func (s *Store) ReadFunc(ctx context.Context, f func()) error {
	return s.read(ctx, func(*tx) error {
		f()
		return nil
	})
}

// HoldWriterReplay is HoldWriter with a hold that may be run again (a
// write that writes nothing, run without a savepoint): the group it
// begins is lean (writer.go).
func (s *Store) HoldWriterReplay() (release func()) {
	held, rel := make(chan struct{}), make(chan struct{})
	var once sync.Once
	go s.writeReplay(context.Background(), func(*tx) error {
		once.Do(func() { close(held) })
		<-rel
		return nil
	})
	<-held
	return func() { close(rel) }
}

// Replays is the number of groups the writer rolled back to drop a
// member that failed having written without a savepoint.
func (s *Store) Replays() int64 { return s.replays.Load() }

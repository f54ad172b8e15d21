package postgres

import (
	"context"
	"database/sql"
	"io/fs"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/hds-go/hds/store"
)

// The tests of this package run set-based runs of at most 500 ops, so
// that the conformance suite's big batches (storetest's BatchSource)
// span several.
func init() { setChunk = 500 }

// Exported for the tests of package postgres_test.
const SortTextPrefix = sortTextPrefix

// MigrateTo runs the migrations up to the one named last.
func (s *Store) MigrateTo(ctx context.Context, last string) error { return s.migrate(ctx, last) }

// MigrateFrom runs the migrations of fsys (migrations/*.sql), for tests
// of the runner.
func (s *Store) MigrateFrom(ctx context.Context, fsys fs.FS) error {
	return s.migrateFrom(ctx, fsys, "")
}

// Migrations are the embedded migrations.
var Migrations = migrations

// InsertRecordV1 writes a record as schema version 1 held it: the whole
// canonical text in sort_text, no column a later migration added. It
// lets the upgrade tests fill a version 1 database without the Store,
// whose statements are written for the current schema.
func InsertRecordV1(ctx context.Context, db execer, clusterID string, r *store.Record) error {
	c := valueColumnsOf(r.Type, r.Value)
	sortText := c.sortText
	if c.vtext != nil {
		sortText = c.vtext
	}
	_, err := db.ExecContext(ctx, `INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version,
		vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
		r.ID, clusterID, r.Name, strings.ToLower(r.Name), string(r.Type), string(r.Value), r.Version,
		c.vtext, c.vtextLower, c.sortGroup, c.sortNum, sortText, r.CreatedAt)
	return err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// InTx runs f in a transaction as the Store's writes run theirs (inTx:
// run again after a deadlock or a serialization failure), f getting the
// transaction.
func (s *Store) InTx(ctx context.Context, f func(tx *sqlx.Tx) error) error {
	return s.inTx(ctx, func(q queryer) error { return f(q.tx) })
}

// TxAttempts is how many times InTx runs a transaction at most.
const TxAttempts = txAttempts

// ApplyPerOp is Apply on the per-op path (pgTx) whatever the batch, so
// that benchmarks compare it with the set-based one.
func (s *Store) ApplyPerOp(ctx context.Context, p store.Path, b store.Batch) ([]store.OpResult, error) {
	return s.apply(ctx, p, b, false)
}

package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hds-go/hds/store"
)

// compareSide is the statement part that reads one side of a comparison,
// whose collection's or cluster's id is the parameter arg: its records
// with their cluster's name (an empty one for a cluster, whose name the
// merge does not compare).
func compareSide(side store.Side, arg string) string {
	if side.Cluster != "" {
		return `SELECT ''::text COLLATE "C" AS cluster, r.id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at, r.updated_by
	FROM hds_records r WHERE r.cluster_id = ` + arg
	}
	return `SELECT k.name AS cluster, r.id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at, r.updated_by
	FROM hds_clusters k JOIN hds_records r ON r.cluster_id = k.id WHERE k.collection_id = ` + arg
}

// compareSQL is the one statement that compares two sides: the database
// merges the two ordered sides (a full join on cluster and name) and
// sends the pairs in cluster and name order, byte-wise, as they are
// produced.
func compareSQL(from, to store.Side) string {
	a := compareSide(from, "$1")
	if from.Snapshot != "" {
		a = snapshotCompareSide(from, "$1")
	}
	return `WITH a AS (` + a + `), b AS (` + compareSide(to, "$2") + `)
SELECT coalesce(a.cluster, b.cluster), coalesce(a.name, b.name),
	a.id, a.type, a.value, a.version, a.created_at, a.updated_at, a.updated_by,
	b.id, b.type, b.value, b.version, b.created_at, b.updated_at, b.updated_by
FROM a FULL JOIN b ON a.cluster = b.cluster AND a.name = b.name
ORDER BY coalesce(a.cluster, b.cluster) COLLATE "C", coalesce(a.name, b.name) COLLATE "C"`
}

// compareRecords is CompareRecords: once the read has a place among the
// long reads (longread.go), one read-only REPEATABLE READ
// transaction is the snapshot, and it runs a fixed number of statements
// whatever the sides hold: two that resolve the sides, one that reads the
// revision, and compareSQL, whose rows are visited as they arrive. The
// store's timeout applies until the first pair has arrived, as for
// ExportProject.
func (s *Store) compareRecords(ctx context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	if s.timeout > 0 {
		timer := time.AfterFunc(s.timeout, func() { timedOut.Store(true); cancel() })
		defer timer.Stop()
		next, started := visit, false
		visit = func(pr store.Pair) error {
			if !started {
				started = true
				if !timer.Stop() {
					return fmt.Errorf("%w: %w", store.ErrUnavailable, context.DeadlineExceeded)
				}
			}
			return next(pr)
		}
	}
	defer func() {
		var ce callerError
		switch {
		case errors.As(err, &ce):
			err = ce.err
		case err != nil && timedOut.Load() && !errors.Is(err, store.ErrUnavailable):
			err = fmt.Errorf("%w: %w (%v)", store.ErrUnavailable, context.DeadlineExceeded, err)
		}
	}()
	release, err := s.longReads.Enter(ctx)
	if err != nil {
		return classify(err)
	}
	defer release()
	tx, err := s.db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return classify(err)
	}
	defer func() { _ = tx.Rollback() }()
	q := queryer{s: s, tx: tx}
	var ids [2]string
	var project string
	for i, side := range []store.Side{from, to} {
		if side.Snapshot != "" { // docs/api.md#snapshots-and-rollback-v13
			res, err := q.resolve(ctx, p, levelProject)
			if err != nil {
				return err
			}
			sn, err := q.findSnapshot(ctx, res.project, side.Snapshot)
			if err != nil {
				return err
			}
			from, project, ids[i] = sn.Side(), res.project, sn.id
			continue
		}
		sp, depth := p, levelCollection
		sp.Collection, sp.Cluster = side.Collection, side.Cluster
		if side.Cluster != "" {
			depth = levelCluster
		}
		res, err := q.resolve(ctx, sp, depth)
		if err != nil {
			return err
		}
		project, ids[i] = res.project, res.collection.String
		if side.Cluster != "" {
			ids[i] = res.cluster.String
		}
	}
	revision, err := q.changeRevision(ctx, project)
	if err != nil {
		return err
	}
	if err := visit(store.Pair{Revision: revision}); err != nil {
		return callerError{err}
	}
	rows, err := tx.QueryContext(ctx, compareSQL(from, to), ids[0], ids[1])
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var a, b compareRow
		pr := store.Pair{}
		if err := rows.Scan(append([]any{&pr.Cluster, &pr.Name}, append(a.dest(), b.dest()...)...)...); err != nil {
			return classify(err)
		}
		if from.Cluster != "" {
			pr.Cluster = from.Cluster
		}
		pr.From, pr.To = a.record(pr.Name), b.record(pr.Name)
		if err := visit(pr); err != nil {
			return callerError{err}
		}
	}
	if err := rows.Err(); err != nil {
		return classify(err)
	}
	return classify(tx.Commit())
}

// compareRow is one side's columns of a row of compareSQL.
type compareRow struct {
	id, typ, value, updatedBy sql.NullString
	version                   sql.NullInt64
	created, updated          sql.NullTime
}

func (c *compareRow) dest() []any {
	return []any{&c.id, &c.typ, &c.value, &c.version, &c.created, &c.updated, &c.updatedBy}
}

// record is the side's record, or nil when the side has none.
func (c *compareRow) record(name string) *store.Record {
	if !c.id.Valid {
		return nil
	}
	return &store.Record{ID: c.id.String, Name: name, Type: store.DataType(c.typ.String), Value: []byte(c.value.String),
		Version: c.version.Int64, CreatedAt: c.created.Time.UTC(), UpdatedAt: c.updated.Time.UTC(), UpdatedBy: c.updatedBy.String}
}

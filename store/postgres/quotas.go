package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/hds-go/hds/store"
)

// Quotas (store.Quotas, docs/api.md#limits-rate-limits-and-quotas) and
// the order of locks. Every write in a project runs in one transaction
// whose first statement locks the project's row (lockProject, FOR NO KEY
// UPDATE), and only then the rows below it, parents before children:
// collection, clusters (by id), records (by id). Batches and imports lock
// the project first too, as do the project's rename and delete. So the
// writes of one project run one after the other from their first statement
// to their commit: they cannot deadlock, and every count a write makes
// after its lock sees everything committed before it (READ COMMITTED takes
// a new snapshot per statement), so that hds_projects.bytes (migration
// 0004) stays equal to a recount whatever the interleaving. Migration 0009
// recounted the installations whose count had drifted before this order.
// Projects per owner are counted under a transaction-scoped advisory lock
// on the owner.

// WithQuotas sets the quotas the store enforces, q.Effective() (default
// store.DefaultQuotas; a field left 0 keeps its default, store.Unlimited
// means no bound).
func WithQuotas(q store.Quotas) Option {
	return func(s *Store) { s.SetQuotas(q) }
}

// SetQuotas implements store.QuotaSetter: the store enforces q.Effective().
func (s *Store) SetQuotas(q store.Quotas) {
	q = q.Effective()
	s.quotas.Store(&q)
}

var _ store.QuotaSetter = (*Store)(nil)

// currentQuotas returns the quotas in force.
func (s *Store) currentQuotas() store.Quotas {
	if q := s.quotas.Load(); q != nil {
		return *q
	}
	return store.DefaultQuotas
}

// addBytes adds delta to the byte count of the project with id, in q's
// transaction, and returns the *QuotaError of growing it past quotas (the
// caller then rolls back). A project gone meanwhile is ErrNotFound.
func (q queryer) addBytes(ctx context.Context, projectID string, delta int64, quotas store.Quotas, name string) error {
	return q.addBytesWhere(ctx, `id = $1`, projectID, delta, quotas, name)
}

// addBytesOfCluster is addBytes for the project of the cluster with id.
func (q queryer) addBytesOfCluster(ctx context.Context, clusterID string, delta int64, quotas store.Quotas, name string) error {
	return q.addBytesWhere(ctx, `id = (SELECT c.project_id FROM hds_clusters k
		JOIN hds_collections c ON c.id = k.collection_id WHERE k.id = $1)`, clusterID, delta, quotas, name)
}

func (q queryer) addBytesWhere(ctx context.Context, where, id string, delta int64, quotas store.Quotas, name string) error {
	if delta == 0 {
		return nil
	}
	row, err := q.row(ctx, `UPDATE hds_projects SET bytes = bytes + $2 WHERE `+where+` RETURNING bytes`, id, delta)
	if err != nil {
		return err
	}
	var after int64
	switch err := row.Scan(&after); {
	case errors.Is(err, sql.ErrNoRows):
		return &store.NotFoundError{Kind: "project", Name: name}
	case err != nil:
		return classify(err)
	}
	return quotas.CheckBytes(after-delta, delta)
}

// lockProject locks the row of the project with id until the
// transaction ends: the first statement of every write in a project. A
// project gone meanwhile is left to the statements that follow to report.
func (q queryer) lockProject(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `SELECT 1 FROM hds_projects WHERE id = $1 FOR NO KEY UPDATE`, id)
	return err
}

// lockProjectNamed is lockProject for the project named name, for the
// writes that resolve their path inside their transaction.
func (q queryer) lockProjectNamed(ctx context.Context, name string) error {
	_, err := q.exec(ctx, `SELECT 1 FROM hds_projects WHERE name = $1 FOR NO KEY UPDATE`, lookupName(name))
	return err
}

// lockCluster locks the cluster's row until the transaction ends, so that
// no record is added to or removed from it meanwhile.
func (q queryer) lockCluster(ctx context.Context, id, name string) error {
	row, err := q.row(ctx, `SELECT 1 FROM hds_clusters WHERE id = $1 FOR UPDATE`, id)
	if err != nil {
		return err
	}
	var one int
	if err := row.Scan(&one); err != nil {
		return notFoundOr(err, "cluster", name)
	}
	return nil
}

// bytesSQL sums what records (and their versions) matching a condition on
// r count; the records are locked first by the caller.
const bytesSQL = `SELECT coalesce(sum(octet_length(r.name) + octet_length(r.value)), 0)
	+ coalesce((SELECT sum(octet_length(v.name) + octet_length(v.value)) FROM hds_record_versions v
		WHERE v.record_id IN (SELECT r.id FROM hds_records r WHERE %s)), 0)
FROM hds_records r WHERE %s`

// sum runs a query returning one bigint.
func (q queryer) sum(ctx context.Context, query string, args ...any) (int64, error) {
	row, err := q.row(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	var n int64
	return n, classify(row.Scan(&n))
}

// nameTaken returns the *ExistsError of kind and name when query (SELECT
// EXISTS ...) finds the name taken.
func (q queryer) nameTaken(ctx context.Context, query, kind, name string, args ...any) error {
	row, err := q.row(ctx, query, args...)
	if err != nil {
		return err
	}
	var taken bool
	if err := row.Scan(&taken); err != nil {
		return classify(err)
	}
	if taken {
		return &store.ExistsError{Kind: kind, Name: name}
	}
	return nil
}

package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hds-go/hds/internal/progress"
	"github.com/hds-go/hds/store"
)

// setChunk is how many ops one set-based run holds at most (a variable
// so that the tests cross its bounds with small batches).
var setChunk = 2000

// errDryRun rolls back the transaction of a dry-run batch.
var errDryRun = errors.New("dry run")

// Apply implements store.Store, in one transaction. The project row is
// locked first (FOR NO KEY UPDATE), as every write in a project does
// (quotas.go), so that writes on one project run one after another and
// never deadlock on each other's locks. Its deadline follows the ops
// done (callFor); each statement writes at most writeChunk rows. The ops run set-based (setTx: a few
// statements for a run of at most setChunk ops), but for the deletes
// of containers, which run per op (pgTx: each op locks what it changes,
// as the single writes do). A batch whose set-based writes met a
// concurrent write they could not account for (errPerOp) runs again,
// every op per op.
func (s *Store) Apply(ctx context.Context, p store.Path, b store.Batch) (_ []store.OpResult, err error) {
	ctx, end := s.callFor(ctx, b.Len())
	defer end(&err)
	results, err := s.apply(ctx, p, b, true)
	if errors.Is(err, errPerOp) {
		results, err = s.apply(ctx, p, b, false)
	}
	if err != nil {
		return nil, err
	}
	return results, nil
}

// apply runs Apply's transaction, set-based where it can (set) or every
// op per op.
func (s *Store) apply(ctx context.Context, p store.Path, b store.Batch, set bool) ([]store.OpResult, error) {
	n := b.Len()
	results := make([]store.OpResult, n)
	err := s.inTx(ctx, func(q queryer) error {
		row, err := q.row(ctx, `SELECT p.id, p.owner_id, p.bytes, p.revision, `+memberRoleSQL("2")+` FROM hds_projects p WHERE p.name = $1 FOR NO KEY UPDATE`,
			lookupName(p.Project), p.Caller.UserID)
		if err != nil {
			return err
		}
		var projectID string
		var bytes, revision int64
		var st store.Standing
		var role sql.NullString
		switch err := row.Scan(&projectID, &st.OwnerID, &bytes, &revision, &role); {
		case errors.Is(err, sql.ErrNoRows):
			return p.Check(false, st)
		case err != nil:
			return classify(err)
		}
		st.ProjectID, st.Member = projectID, store.Role(role.String)
		if err := p.Check(true, st); err != nil {
			return err
		}
		if b.IfRevision != 0 {
			changed, err := q.changeRevision(ctx, projectID)
			if err != nil {
				return err
			}
			if err := b.CheckRevision(changed); err != nil {
				return err
			}
		}
		var taken string
		if b.Snapshot != nil && !b.DryRun {
			if taken, err = q.autoSnapshot(ctx, p, projectID, revision, b.Snapshot); err != nil {
				return err
			}
		}
		now, quotas := s.now(), s.currentQuotas()
		run := func(i int, op store.Op, apply func(ctx context.Context, op store.Op) (store.OpResult, error)) error {
			res, err := apply(ctx, op)
			if err != nil {
				var ce callerError
				if errors.As(err, &ce) {
					err = ce.err
				}
				if errors.Is(err, errPerOp) {
					return err
				}
				return &store.OpError{Index: i, Err: err}
			}
			results[i] = b.Result(res)
			progress.Advance(ctx)
			return nil
		}
		each := &pgTx{q: q, b: b, c: p.Caller, now: now, project: p.Project, projectID: projectID, quotas: quotas}
		var grown int64 // by how many bytes the set-based runs grew the project
		for start := 0; start < n; {
			first := b.Op(start)
			if !set || !setBased(first.Kind) {
				if err := run(start, first, each.apply); err != nil {
					return err
				}
				start++
				continue
			}
			// A run is at most setChunk ops, so that what it holds (the
			// ops, the copy of what they touch, the rows and audit
			// entries it writes) stays bounded however big the batch:
			// the next run reads what this one wrote, in the same
			// transaction.
			ops := []store.Op{first}
			for end := start + 1; end < n && len(ops) < setChunk; end++ {
				op := b.Op(end)
				if !setBased(op.Kind) {
					break
				}
				ops = append(ops, op)
				progress.Advance(ctx)
			}
			end := start + len(ops)
			// The project's bytes now: the project row is locked, so only
			// this batch changed them, by the deltas of the runs before and
			// what the container deletes (the ops between runs) freed.
			tx := &setTx{q: q, b: b, c: p.Caller, ops: ops, now: now, project: p.Project, projectID: projectID,
				quotas: quotas, bytes: bytes + grown - each.freed}
			if err := tx.load(ctx); err != nil {
				return err
			}
			progress.Advance(ctx)
			for i := start; i < end; i++ {
				if err := run(i, ops[i-start], tx.apply); err != nil {
					return err
				}
			}
			// A dry run writes back only what ops after the run must see.
			if !b.DryRun || end < n {
				if err := tx.flush(ctx); err != nil {
					return err
				}
				progress.Advance(ctx)
			}
			grown += tx.delta
			start = end
		}
		if b.DryRun {
			return errDryRun
		}
		revision, err = q.sum(ctx, `SELECT revision FROM hds_projects WHERE id = $1`, projectID)
		if err != nil {
			return err
		}
		for i := range results {
			results[i].Revision, results[i].Snapshot = revision, taken
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return results, nil
}

// pgTx is a batch being applied in a transaction.
type pgTx struct {
	q         queryer
	b         store.Batch
	c         store.Caller
	now       time.Time
	project   string
	projectID string
	quotas    store.Quotas
	// freed is what the container deletes took off the project's bytes
	// so far.
	freed int64
}

// path is the Path of op, without a caller (the batch checked it; the
// sites of the records it finds take the batch's caller).
func (tx *pgTx) path(op store.Op) store.Path {
	return store.Path{Project: tx.project, Collection: op.Collection, Cluster: op.Cluster, Record: op.Record}
}

// site is the site of op's record, in the cluster with clusterID.
func (tx *pgTx) site(op store.Op, clusterID string) site {
	return site{caller: tx.c, projectID: tx.projectID, project: tx.project,
		collection: op.Collection, cluster: op.Cluster, clusterID: clusterID}
}

// lookup returns the ids of the collection and (when it exists) the
// cluster of op, or the NotFoundError of the first missing level down to
// depth.
func (tx *pgTx) lookup(ctx context.Context, op store.Op, depth int) (string, string, error) {
	row, err := tx.q.row(ctx, `SELECT c.id, k.id FROM hds_collections c
		LEFT JOIN hds_clusters k ON k.collection_id = c.id AND k.name = $3
		WHERE c.project_id = $1 AND c.name = $2`, tx.projectID, lookupName(op.Collection), lookupName(op.Cluster))
	if err != nil {
		return "", "", err
	}
	var collectionID string
	var clusterID sql.NullString
	if err := row.Scan(&collectionID, &clusterID); err != nil {
		return "", "", notFoundOr(err, "collection", op.Collection)
	}
	if depth >= levelCluster && !clusterID.Valid {
		return "", "", &store.NotFoundError{Kind: "cluster", Name: op.Cluster}
	}
	return collectionID, clusterID.String, nil
}

// ensureCollection returns the id of the collection name, creating it
// when missing.
func (tx *pgTx) ensureCollection(ctx context.Context, name string) (string, bool, error) {
	id, _, err := tx.lookup(ctx, store.Op{Collection: name}, levelCollection)
	if !errors.Is(err, store.ErrNotFound) {
		return id, false, err
	}
	if err := store.ValidateName(name); err != nil {
		return "", false, err
	}
	id = store.NewID()
	err = tx.q.insert(ctx, "collection", name, "project", tx.project, `INSERT INTO hds_collections
		(id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (project_id, name) DO NOTHING RETURNING 1`,
		id, tx.projectID, name, strings.ToLower(name), tx.now)
	if err == nil {
		err = tx.q.addBytes(ctx, tx.projectID, int64(len(name)), tx.quotas, tx.project)
	}
	if err == nil {
		_, err = tx.q.audit(ctx, tx.projectID, tx.c, store.AuditEntry{Action: store.ActionCollectionCreate, Collection: name})
	}
	return id, err == nil, err
}

// ensureCluster returns the id of the cluster of op, creating it and its
// collection when missing.
func (tx *pgTx) ensureCluster(ctx context.Context, op store.Op) (string, bool, error) {
	collectionID, clusterID, err := tx.lookup(ctx, op, levelCollection)
	created := false
	switch {
	case errors.Is(err, store.ErrNotFound):
		if collectionID, created, err = tx.ensureCollection(ctx, op.Collection); err != nil {
			return "", false, err
		}
	case err != nil:
		return "", false, err
	case clusterID != "":
		return clusterID, false, nil
	}
	if err := store.ValidateName(op.Cluster); err != nil {
		return "", false, err
	}
	clusterID = store.NewID()
	err = tx.q.insert(ctx, "cluster", op.Cluster, "collection", op.Collection, `INSERT INTO hds_clusters
		(id, collection_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (collection_id, name) DO NOTHING RETURNING 1`,
		clusterID, collectionID, op.Cluster, strings.ToLower(op.Cluster), tx.now)
	if err == nil {
		err = tx.q.addBytes(ctx, tx.projectID, int64(len(op.Cluster)), tx.quotas, tx.project)
	}
	if err == nil {
		_, err = tx.q.audit(ctx, tx.projectID, tx.c, store.AuditEntry{Action: store.ActionClusterCreate,
			Collection: op.Collection, Cluster: op.Cluster})
	}
	return clusterID, err == nil || created, err
}

func (tx *pgTx) apply(ctx context.Context, op store.Op) (store.OpResult, error) {
	w := tx.b.Write
	w.IfMatch = op.IfMatch
	switch op.Kind {
	case store.OpEnsureCollection:
		_, created, err := tx.ensureCollection(ctx, op.Collection)
		return store.OpResult{Created: created}, err
	case store.OpEnsureCluster:
		_, created, err := tx.ensureCluster(ctx, op)
		return store.OpResult{Created: created}, err
	case store.OpDeleteCollection:
		id, _, err := tx.lookup(ctx, op, levelCollection)
		if err == nil {
			var n int64
			n, err = tx.q.deleteCollection(ctx, tx.c, id, op.Collection, tx.projectID, tx.project)
			tx.freed += n
		}
		return store.OpResult{}, err
	case store.OpDeleteCluster:
		_, id, err := tx.lookup(ctx, op, levelCluster)
		if err == nil {
			var n int64
			n, err = tx.q.deleteCluster(ctx, tx.c, id, op.Collection, op.Cluster, tx.projectID, tx.project)
			tx.freed += n
		}
		return store.OpResult{}, err
	case store.OpCreate, store.OpUpdate, store.OpUpsert, store.OpDelete:
	default:
		return store.OpResult{}, &store.ValidationError{Message: "unknown operation " + string(op.Kind)}
	}
	creates := op.Kind == store.OpCreate || op.Kind == store.OpUpsert
	var cur *store.Record
	var at site
	if op.Kind != store.OpCreate {
		var err error
		cur, at, err = tx.q.findRecord(ctx, tx.path(op), lockRecordQuery)
		at.caller = tx.c
		var nf *store.NotFoundError
		switch {
		case err == nil:
		case op.Kind == store.OpUpsert && errors.As(err, &nf) && (nf.Kind == "record" || tx.b.CreateParents):
			cur = nil
		default:
			return store.OpResult{}, err
		}
	}
	if cur == nil && creates {
		if op.Kind == store.OpUpsert && op.IfMatch != nil {
			return store.OpResult{}, &store.PreconditionError{}
		}
		if op.New == nil {
			return store.OpResult{}, errors.New("postgres: a create without a record")
		}
		var err error
		var clusterID string
		if tx.b.CreateParents {
			clusterID, _, err = tx.ensureCluster(ctx, op)
		} else {
			_, clusterID, err = tx.lookup(ctx, op, levelCluster)
		}
		if err != nil {
			return store.OpResult{}, err
		}
		r, err := tx.q.createRecord(ctx, tx.site(op, clusterID), op.Record, op.New, tx.now, tx.quotas)
		if err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{Record: r, Created: true}, nil
	}
	if op.Kind == store.OpDelete {
		if err := w.Check(cur); err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{}, tx.q.deleteRecord(ctx, at, cur, op.Record)
	}
	if op.Update == nil {
		return store.OpResult{}, errors.New("postgres: an update without a function")
	}
	r, err := tx.q.updateLocked(ctx, at, cur, w, op.Update, tx.now, tx.quotas)
	if errors.Is(err, store.ErrUnchanged) {
		if err := w.Check(cur); err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{Record: cur, Unchanged: true}, nil
	}
	if err != nil {
		return store.OpResult{}, err
	}
	return store.OpResult{Record: r}, nil
}

// exportSQL reads a project's tree, every collection with its clusters
// and every cluster with its records, in name order: a collection without
// clusters is one row with a NULL cluster, a cluster without records one
// row with a NULL record.
const exportSQL = `SELECT c.name, k.name, r.id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at, r.updated_by
FROM hds_collections c
LEFT JOIN hds_clusters k ON k.collection_id = c.id
LEFT JOIN hds_records r ON r.cluster_id = k.id
WHERE c.project_id = $1
ORDER BY c.name, k.name, r.name`

// exportProject is ExportProject: one read-only REPEATABLE READ
// transaction, whose rows are visited as they arrive, once the read has
// a place among the long reads (longread.go). The store's timeout applies
// until the first row has arrived (the wait for a place included), not to
// the visits: an export to a slow client takes as long as it takes (it
// holds a snapshot and a connection, no lock that blocks writers).
func (s *Store) exportProject(ctx context.Context, p store.Path, visit func(store.ExportItem) error) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	if s.timeout > 0 {
		timer := time.AfterFunc(s.timeout, func() { timedOut.Store(true); cancel() })
		defer timer.Stop()
		visit = stopOnFirst(visit, timer)
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
	res, err := q.resolve(ctx, p, levelProject)
	if err != nil {
		return err
	}
	// The project's revision, in the snapshot the tree is read in.
	var revision int64
	if err := tx.QueryRowContext(ctx, `SELECT revision FROM hds_projects WHERE id = $1`, res.project).Scan(&revision); err != nil {
		return notFoundOr(err, "project", p.Project)
	}
	changed, err := q.changeRevision(ctx, res.project)
	if err != nil {
		return err
	}
	if err := visit(store.ExportItem{Revision: revision, ChangeRevision: changed}); err != nil {
		return callerError{err}
	}
	rows, err := tx.QueryContext(ctx, exportSQL, res.project)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	var coll, clus string
	first := true
	for rows.Next() {
		var c string
		var k, rid, name, typ, value, updatedBy sql.NullString
		var version sql.NullInt64
		var created, updated sql.NullTime
		if err := rows.Scan(&c, &k, &rid, &name, &typ, &value, &version, &created, &updated, &updatedBy); err != nil {
			return classify(err)
		}
		if first || c != coll {
			coll, clus = c, ""
			if err := visit(store.ExportItem{Collection: c}); err != nil {
				return callerError{err}
			}
			if !k.Valid {
				first = false
				continue
			}
			clus = k.String
			if err := visit(store.ExportItem{Collection: c, Cluster: clus}); err != nil {
				return callerError{err}
			}
		} else if k.String != clus {
			clus = k.String
			if err := visit(store.ExportItem{Collection: c, Cluster: clus}); err != nil {
				return callerError{err}
			}
		}
		first = false
		if !rid.Valid {
			continue
		}
		r := &store.Record{ID: rid.String, Name: name.String, Type: store.DataType(typ.String),
			Value: []byte(value.String), Version: version.Int64, CreatedAt: created.Time.UTC(),
			UpdatedAt: updated.Time.UTC(), UpdatedBy: updatedBy.String}
		if err := visit(store.ExportItem{Collection: c, Cluster: clus, Record: r}); err != nil {
			return callerError{err}
		}
	}
	if err := rows.Err(); err != nil {
		return classify(err)
	}
	return classify(tx.Commit())
}

// stopOnFirst returns visit that stops timer before its first call, or
// fails when it has fired.
func stopOnFirst(visit func(store.ExportItem) error, timer *time.Timer) func(store.ExportItem) error {
	started := false
	return func(it store.ExportItem) error {
		if !started {
			started = true
			if !timer.Stop() {
				return fmt.Errorf("%w: %w", store.ErrUnavailable, context.DeadlineExceeded)
			}
		}
		return visit(it)
	}
}

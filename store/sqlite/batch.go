package sqlite

import (
	"context"
	"errors"

	"github.com/hds-go/hds/store"
)

// errRollback ends the transaction of a dry run, whose results stand.
var errRollback = errors.New("dry run")

// Apply implements store.Store: every op runs in one write transaction,
// which a failure (or a dry run) rolls back whole. Its deadline follows
// the ops done (writeFor).
func (s *Store) Apply(ctx context.Context, p store.Path, b store.Batch) ([]store.OpResult, error) {
	var results []store.OpResult
	err := s.writeFor(ctx, b.Len(), func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if b.IfRevision != 0 {
			revision, err := t.changeRevision(pr)
			if err != nil {
				return err
			}
			if err := b.CheckRevision(revision); err != nil {
				return err
			}
		}
		var taken string
		if b.Snapshot != nil && !b.DryRun {
			if taken, err = t.autoSnapshot(pr, p.Caller, b.Snapshot); err != nil {
				return err
			}
		}
		results = make([]store.OpResult, b.Len())
		t.clusters = map[[2]string]*clus{}
		t.hooks = map[string][]hookRow{}
		t.deferProject = true
		for i := range results {
			res, err := t.apply(pr, p.Caller, b, b.Op(i))
			if err != nil {
				return &store.OpError{Index: i, Err: err}
			}
			results[i] = b.Result(res)
			t.advance()
		}
		if b.DryRun {
			t.written = nil
			return errRollback
		}
		if err := t.flushProject(); err != nil {
			return err
		}
		for i := range results {
			results[i].Revision, results[i].Snapshot = pr.Revision, taken
		}
		return nil
	})
	if errors.Is(err, errRollback) {
		return results, nil
	}
	if err != nil {
		return nil, err
	}
	return results, nil
}

// opCluster returns the cluster of op: created, with its collection, when
// missing and create says so.
func (t *tx) opCluster(pr *proj, c store.Caller, op store.Op, create bool) (*clus, bool, error) {
	key := [2]string{op.Collection, op.Cluster}
	if k, ok := t.clusters[key]; ok {
		return k, false, nil
	}
	k, created, err := t.findOpCluster(pr, c, op, create)
	if err == nil && t.clusters != nil {
		t.clusters[key] = k
	}
	return k, created, err
}

// findOpCluster is opCluster without the batch's clusters.
func (t *tx) findOpCluster(pr *proj, c store.Caller, op store.Op, create bool) (*clus, bool, error) {
	var col *coll
	var created bool
	var err error
	if create {
		col, created, err = t.ensureCollection(pr, c, op.Collection, true)
	} else {
		col, err = t.collectionIn(pr, op.Collection)
	}
	if err != nil {
		return nil, false, err
	}
	if create {
		k, kc, err := t.ensureCluster(col, c, op.Cluster, true)
		return k, created || kc, err
	}
	k, err := t.clusterIn(col, op.Cluster)
	return k, false, err
}

func (t *tx) apply(pr *proj, c store.Caller, b store.Batch, op store.Op) (store.OpResult, error) {
	w := b.Write
	w.IfMatch = op.IfMatch
	switch op.Kind {
	case store.OpEnsureCollection:
		_, created, err := t.ensureCollection(pr, c, op.Collection, true)
		return store.OpResult{Created: created}, err
	case store.OpEnsureCluster:
		_, created, err := t.opCluster(pr, c, op, true)
		return store.OpResult{Created: created}, err
	case store.OpDeleteCollection:
		clear(t.clusters)
		col, err := t.collectionIn(pr, op.Collection)
		if err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{}, t.deleteCollection(col, c)
	case store.OpDeleteCluster:
		k, _, err := t.opCluster(pr, c, op, false)
		clear(t.clusters)
		if err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{}, t.deleteCluster(k, c)
	case store.OpCreate, store.OpUpdate, store.OpUpsert, store.OpDelete:
	default:
		return store.OpResult{}, &store.ValidationError{Message: "unknown operation " + string(op.Kind)}
	}
	create := b.CreateParents && (op.Kind == store.OpCreate || op.Kind == store.OpUpsert)
	k, _, err := t.opCluster(pr, c, op, create)
	if err != nil {
		return store.OpResult{}, err
	}
	var r *store.Record
	if op.Kind != store.OpCreate {
		if r, err = t.recordIn(k, op.Record); err != nil {
			return store.OpResult{}, err
		}
	}
	switch {
	case op.Kind == store.OpCreate, op.Kind == store.OpUpsert && r == nil:
		if op.Kind == store.OpUpsert && op.IfMatch != nil {
			return store.OpResult{}, &store.PreconditionError{}
		}
		if op.New == nil {
			return store.OpResult{}, errors.New("sqlite: a create without a record")
		}
		created, err := t.createRecord(k, op.Record, op.New, c)
		if err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{Record: created, Created: true}, nil
	case r == nil:
		return store.OpResult{}, &store.NotFoundError{Kind: "record", Name: op.Record}
	case op.Kind == store.OpDelete:
		if err := w.Check(r); err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{}, t.deleteRecord(k, r, c)
	}
	if op.Update == nil {
		return store.OpResult{}, errors.New("sqlite: an update without a function")
	}
	out, err := t.updateRecord(k, r, c, w, op.Update)
	if errors.Is(err, store.ErrUnchanged) {
		if err := w.Check(r); err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{Record: r, Unchanged: true}, nil
	}
	if err != nil {
		return store.OpResult{}, err
	}
	return store.OpResult{Record: out}, nil
}

// exportProject is ExportProject: one read transaction is the snapshot
// (WAL: writers go on while visit runs), a long read (longread.go).
func (s *Store) exportProject(ctx context.Context, p store.Path, visit func(store.ExportItem) error) error {
	return s.longRead(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		changed, err := t.changeRevision(pr)
		if err != nil {
			return err
		}
		if err := visit(store.ExportItem{Revision: pr.Revision, ChangeRevision: changed}); err != nil {
			return err
		}
		type container struct{ id, collection, cluster string }
		var items []container
		rows, err := t.rows(`SELECT c.id, c.name, coalesce(k.id, ''), coalesce(k.name, '') FROM hds_collections c
			LEFT JOIN hds_clusters k ON k.collection_id = c.id WHERE c.project_id = ? ORDER BY c.name, k.name`, pr.ID)
		if err != nil {
			return err
		}
		last := ""
		for rows.Next() {
			var cid, cn, kid, kn string
			if err := rows.Scan(&cid, &cn, &kid, &kn); err != nil {
				rows.Close()
				return err
			}
			if cid != last {
				items = append(items, container{collection: cn})
				last = cid
			}
			if kid != "" {
				items = append(items, container{id: kid, collection: cn, cluster: kn})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, it := range items {
			if err := visit(store.ExportItem{Collection: it.collection, Cluster: it.cluster}); err != nil {
				return err
			}
			if it.id == "" {
				continue
			}
			err := t.eachRecord(`SELECT `+recordCols+` FROM hds_records r WHERE r.cluster_id = ? ORDER BY r.name`, []any{it.id},
				func(r *store.Record) error {
					return visit(store.ExportItem{Collection: it.collection, Cluster: it.cluster, Record: r})
				})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

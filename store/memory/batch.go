package memory

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/hds-go/hds/store"
)

// Apply implements store.Store: every op runs under the write lock, each
// change noting how to undo it, and a failure (or a dry run) undoes them
// all, newest first, before the lock is released.
func (s *Store) Apply(_ context.Context, p store.Path, b store.Batch) ([]store.OpResult, error) {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	if err := b.CheckRevision(pr.changeRevision()); err != nil {
		return nil, err
	}
	tx := &memTx{s: s, pr: pr, b: b, c: p.Caller, now: s.now(), bytes: pr.bytes, revision: pr.Revision}
	var taken string
	if b.Snapshot != nil && !b.DryRun {
		if taken, err = tx.autoSnapshot(b.Snapshot); err != nil {
			tx.rollback()
			return nil, err
		}
	}
	results := make([]store.OpResult, b.Len())
	for i := range results {
		res, err := tx.apply(b.Op(i))
		if err != nil {
			tx.rollback()
			return nil, &store.OpError{Index: i, Err: err}
		}
		results[i] = b.Result(res)
	}
	if b.DryRun {
		tx.rollback()
		return results, nil
	}
	for i := range results {
		results[i].Revision, results[i].Snapshot = pr.Revision, taken
	}
	return results, nil
}

// memTx is a batch being applied, with the undo of every change so far.
type memTx struct {
	s    *Store
	pr   *project
	b    store.Batch
	c    store.Caller
	now  time.Time
	undo []func()
	// bytes is the project's byte count before the batch, restored by a
	// rollback (store.Quotas).
	bytes int64
	// revision is the project's revision before the batch: a rollback
	// drops the audit entries after it.
	revision int64
}

// rollback undoes every change of the batch, newest first.
func (tx *memTx) rollback() {
	for _, u := range slices.Backward(tx.undo) {
		u()
	}
	tx.undo = nil
	tx.pr.bytes = tx.bytes
	tx.s.unaudit(tx.pr, tx.revision)
}

func (tx *memTx) collection(name string) (*collection, error) {
	if c, ok := tx.pr.collections[name]; ok {
		return c, nil
	}
	return nil, &store.NotFoundError{Kind: "collection", Name: name}
}

func (tx *memTx) cluster(op store.Op) (*cluster, error) {
	c, err := tx.collection(op.Collection)
	if err != nil {
		return nil, err
	}
	if k, ok := c.clusters[op.Cluster]; ok {
		return k, nil
	}
	return nil, &store.NotFoundError{Kind: "cluster", Name: op.Cluster}
}

// ensureCollection returns the collection name, creating it when missing.
func (tx *memTx) ensureCollection(name string) (*collection, bool, error) {
	if c, ok := tx.pr.collections[name]; ok {
		return c, false, nil
	}
	if err := store.ValidateName(name); err != nil {
		return nil, false, err
	}
	if err := tx.s.grow(tx.pr, int64(len(name))); err != nil {
		return nil, false, err
	}
	c := &collection{
		Collection: store.Collection{ID: store.NewID(), Name: name, CreatedAt: tx.now, UpdatedAt: tx.now},
		parent:     tx.pr,
		clusters:   make(map[string]*cluster),
	}
	tx.pr.collections[name] = c
	tx.undo = append(tx.undo, func() { delete(tx.pr.collections, name) })
	tx.s.audit(tx.pr, tx.c, store.AuditEntry{Action: store.ActionCollectionCreate, Collection: name})
	return c, true, nil
}

// ensureCluster returns the cluster of op, creating it and its collection
// when missing.
func (tx *memTx) ensureCluster(op store.Op) (*cluster, bool, error) {
	c, created, err := tx.ensureCollection(op.Collection)
	if err != nil {
		return nil, false, err
	}
	if k, ok := c.clusters[op.Cluster]; ok {
		return k, created, nil
	}
	if err := store.ValidateName(op.Cluster); err != nil {
		return nil, false, err
	}
	if err := tx.s.grow(tx.pr, int64(len(op.Cluster))); err != nil {
		return nil, false, err
	}
	k := &cluster{
		Cluster: store.Cluster{ID: store.NewID(), Name: op.Cluster, CreatedAt: tx.now, UpdatedAt: tx.now},
		parent:  c,
		records: newRecords(),
	}
	c.clusters[k.Name] = k
	tx.undo = append(tx.undo, func() { delete(c.clusters, k.Name) })
	tx.s.audit(tx.pr, tx.c, store.AuditEntry{Action: store.ActionClusterCreate, Collection: c.Name, Cluster: k.Name})
	return k, true, nil
}

// recordCluster returns the cluster of a record op: created when missing
// if the op creates and the batch creates parents.
func (tx *memTx) recordCluster(op store.Op) (*cluster, error) {
	if tx.b.CreateParents && (op.Kind == store.OpCreate || op.Kind == store.OpUpsert) {
		k, _, err := tx.ensureCluster(op)
		return k, err
	}
	return tx.cluster(op)
}

// find returns the record op names in k, or nil.
func find(k *cluster, name string) *record {
	if id, ok := parseID(name); ok {
		if r := k.records.getID(id); r != nil {
			return r
		}
	}
	return k.records.get(name)
}

func (tx *memTx) apply(op store.Op) (store.OpResult, error) {
	w := tx.b.Write
	w.IfMatch = op.IfMatch
	switch op.Kind {
	case store.OpEnsureCollection:
		_, created, err := tx.ensureCollection(op.Collection)
		return store.OpResult{Created: created}, err
	case store.OpEnsureCluster:
		_, created, err := tx.ensureCluster(op)
		return store.OpResult{Created: created}, err
	case store.OpDeleteCollection:
		c, err := tx.collection(op.Collection)
		if err != nil {
			return store.OpResult{}, err
		}
		delete(tx.pr.collections, c.Name)
		tx.pr.bytes -= c.bytes()
		tx.undo = append(tx.undo, func() { tx.pr.collections[c.Name] = c })
		tx.s.audit(tx.pr, tx.c, store.AuditEntry{Action: store.ActionCollectionDelete, Collection: c.Name})
		return store.OpResult{}, nil
	case store.OpDeleteCluster:
		k, err := tx.cluster(op)
		if err != nil {
			return store.OpResult{}, err
		}
		delete(k.parent.clusters, k.Name)
		tx.pr.bytes -= k.bytes()
		tx.undo = append(tx.undo, func() { k.parent.clusters[k.Name] = k })
		tx.s.audit(tx.pr, tx.c, store.AuditEntry{Action: store.ActionClusterDelete, Collection: k.parent.Name, Cluster: k.Name})
		return store.OpResult{}, nil
	case store.OpCreate, store.OpUpdate, store.OpUpsert, store.OpDelete:
	default:
		return store.OpResult{}, &store.ValidationError{Message: "unknown operation " + string(op.Kind)}
	}
	k, err := tx.recordCluster(op)
	if err != nil {
		return store.OpResult{}, err
	}
	// Undone after the op's own undo, which may move the state again.
	state := k.records.state
	tx.undo = append(tx.undo, func() { k.records.state = state })
	r := find(k, op.Record)
	switch {
	case op.Kind == store.OpCreate, op.Kind == store.OpUpsert && r == nil:
		if op.Kind == store.OpUpsert && op.IfMatch != nil {
			return store.OpResult{}, &store.PreconditionError{}
		}
		if op.New == nil {
			return store.OpResult{}, errors.New("memory: a create without a record")
		}
		created, err := tx.s.createRecord(k, op.Record, op.New, tx.c, tx.now)
		if err != nil {
			return store.OpResult{}, err
		}
		tx.undo = append(tx.undo, func() { k.remove(created) })
		return store.OpResult{Record: created.Clone(), Created: true}, nil
	case r == nil:
		return store.OpResult{}, &store.NotFoundError{Kind: "record", Name: op.Record}
	case op.Kind == store.OpDelete:
		if err := w.Check(r.state()); err != nil {
			return store.OpResult{}, err
		}
		k.remove(r)
		tx.undo = append(tx.undo, func() { k.add(r) })
		tx.s.auditRecord(k, r, tx.c, store.ActionRecordDelete)
		return store.OpResult{}, nil
	}
	if op.Update == nil {
		return store.OpResult{}, errors.New("memory: an update without a function")
	}
	saved := *r
	err = tx.s.updateRecord(k, r, tx.c, w, op.Update)
	if errors.Is(err, store.ErrUnchanged) {
		if err := w.Check(r.state()); err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{Record: r.Clone(), Unchanged: true}, nil
	}
	if err != nil {
		return store.OpResult{}, err
	}
	tx.undo = append(tx.undo, func() {
		k.records.detach(r)
		*r = saved
		k.records.attach(r)
	})
	return store.OpResult{Record: r.Clone()}, nil
}

// ExportProject implements store.Store. The project is copied under the
// read lock (names, and each record's compact state, whose value bytes are
// immutable and so shared), and visited after the lock is released, so
// that a slow visit blocks no writer. The copy is one slice of compact
// records per cluster, of exact size.
func (s *Store) ExportProject(_ context.Context, p store.Path, visit func(store.ExportItem) error) error {
	snap, revision, changed, err := s.snapshot(p)
	if err != nil {
		return err
	}
	if err := visit(store.ExportItem{Revision: revision, ChangeRevision: changed}); err != nil {
		return err
	}
	for _, k := range snap {
		if err := visit(store.ExportItem{Collection: k.collection, Cluster: k.cluster}); err != nil {
			return err
		}
		for i := range k.records {
			r := k.records[i].Clone() // the visitor may keep or change it
			k.records[i] = record{}   // visited: the snapshot no longer holds its value
			if err := visit(store.ExportItem{Collection: k.collection, Cluster: k.cluster, Record: r}); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapCluster is a collection (cluster empty) or a cluster with its
// records in name order, as a snapshot holds them.
type snapCluster struct {
	collection, cluster string
	records             []record
}

// snapshot copies the project's tree under the read lock, in name order,
// and returns it with the project's revision and its newest revision that
// changes something (changeRevision).
func (s *Store) snapshot(p store.Path) ([]snapCluster, int64, int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, 0, 0, err
	}
	var snap []snapCluster
	for _, cn := range slices.Sorted(maps.Keys(pr.collections)) {
		c := pr.collections[cn]
		snap = append(snap, snapCluster{collection: cn})
		for _, kn := range slices.Sorted(maps.Keys(c.clusters)) {
			recs := c.clusters[kn].records.all()
			k := snapCluster{collection: cn, cluster: kn, records: make([]record, len(recs))}
			for i, r := range recs {
				k.records[i] = *r
			}
			snap = append(snap, k)
		}
	}
	return snap, pr.Revision, pr.changeRevision(), nil
}

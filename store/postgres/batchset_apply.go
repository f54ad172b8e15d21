package postgres

import (
	"context"
	"errors"

	"github.com/hds-go/hds/store"
)

// A set-based run's ops, applied to what load read, in memory: the
// checks and quotas of each op, its result and its audit entry.

// grow adds delta to the project's bytes, as addBytes does.
func (tx *setTx) grow(delta int64, quotas store.Quotas) error {
	if delta == 0 {
		return nil
	}
	used := tx.bytes + tx.delta
	tx.delta += delta
	return quotas.CheckBytes(used, delta)
}

// cluster returns the existing cluster of op, or the NotFoundError of its
// first missing level.
func (tx *setTx) cluster(op store.Op) (*setCluster, error) {
	k := tx.clusters[tx.pathKey(op)]
	switch {
	case !k.coll.exists:
		return nil, &store.NotFoundError{Kind: "collection", Name: op.Collection}
	case !k.exists:
		return nil, &store.NotFoundError{Kind: "cluster", Name: op.Cluster}
	}
	return k, nil
}

// ensureCollection makes the collection name exist, as pgTx's does.
func (tx *setTx) ensureCollection(name string) (bool, error) {
	c := tx.colls[name]
	if c.exists {
		return false, nil
	}
	if err := store.ValidateName(name); err != nil {
		return false, err
	}
	c.id, c.exists = store.NewID(), true
	tx.newColls = append(tx.newColls, c)
	tx.entries = append(tx.entries, store.AuditEntry{Action: store.ActionCollectionCreate, Collection: name})
	return true, tx.grow(int64(len(name)), tx.quotas)
}

// ensureCluster makes the cluster of op and its collection exist, as
// pgTx's does.
func (tx *setTx) ensureCluster(op store.Op) (*setCluster, bool, error) {
	k := tx.clusters[tx.pathKey(op)]
	if !k.coll.exists {
		if _, err := tx.ensureCollection(op.Collection); err != nil {
			return nil, false, err
		}
	} else if k.exists {
		return k, false, nil
	}
	if err := store.ValidateName(op.Cluster); err != nil {
		return nil, false, err
	}
	k.id, k.exists, k.fresh, k.locked, k.count = store.NewID(), true, true, true, 0
	tx.newClusters = append(tx.newClusters, k)
	tx.entries = append(tx.entries, store.AuditEntry{Action: store.ActionClusterCreate, Collection: op.Collection, Cluster: op.Cluster})
	return k, true, tx.grow(int64(len(op.Cluster)), tx.quotas)
}

// apply runs op on the copy, as pgTx.apply runs it on the tables.
func (tx *setTx) apply(ctx context.Context, op store.Op) (store.OpResult, error) {
	w := tx.b.Write
	w.IfMatch = op.IfMatch
	switch op.Kind {
	case store.OpEnsureCollection:
		created, err := tx.ensureCollection(op.Collection)
		return store.OpResult{Created: created}, err
	case store.OpEnsureCluster:
		_, created, err := tx.ensureCluster(op)
		return store.OpResult{Created: created}, err
	case store.OpCreate, store.OpUpdate, store.OpUpsert, store.OpDelete:
	default:
		return store.OpResult{}, &store.ValidationError{Message: "unknown operation " + string(op.Kind)}
	}
	creates := op.Kind == store.OpCreate || op.Kind == store.OpUpsert
	var cur *setRec
	if op.Kind != store.OpCreate {
		k, err := tx.cluster(op)
		if err == nil {
			cur, err = tx.find(ctx, k, op.Record)
			if err == nil && cur == nil {
				err = &store.NotFoundError{Kind: "record", Name: op.Record}
			}
		}
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
		var k *setCluster
		var err error
		if tx.b.CreateParents {
			k, _, err = tx.ensureCluster(op)
		} else {
			k, err = tx.cluster(op)
		}
		if err != nil {
			return store.OpResult{}, err
		}
		r, err := tx.create(ctx, k, op.Record, op.New, w)
		if err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{Record: r, Created: true}, nil
	}
	if op.Kind == store.OpDelete {
		if err := w.Check(cur.cur); err != nil {
			return store.OpResult{}, err
		}
		tx.delete(cur)
		return store.OpResult{}, nil
	}
	if op.Update == nil {
		return store.OpResult{}, errors.New("postgres: an update without a function")
	}
	r, err := tx.update(ctx, cur, w, op.Update)
	if errors.Is(err, store.ErrUnchanged) {
		if err := w.Check(cur.cur); err != nil {
			return store.OpResult{}, err
		}
		return store.OpResult{Record: cur.cur.Clone(), Unchanged: true}, nil
	}
	if err != nil {
		return store.OpResult{}, err
	}
	return store.OpResult{Record: r}, nil
}

// nameIsNoID is queryer.nameIsNoID on the copy.
func (tx *setTx) nameIsNoID(ctx context.Context, k *setCluster, name, self string) error {
	id, ok := store.CanonicalUUID(name)
	if !ok || id == self {
		return nil
	}
	rec, err := tx.find(ctx, k, id)
	if err != nil {
		return err
	}
	if rec != nil && rec.cur.ID == id {
		return &store.ExistsError{Kind: "record", Name: name}
	}
	return nil
}

// taken returns the ExistsError of a name of k that a record other than
// self holds.
func (tx *setTx) taken(ctx context.Context, k *setCluster, name string, self *setRec) error {
	if !k.fresh && !k.knownNames[name] {
		if _, err := tx.find(ctx, k, name); err != nil {
			return err
		}
	}
	if rec := k.byName[name]; rec != nil && rec != self {
		return &store.ExistsError{Kind: "record", Name: name}
	}
	return nil
}

// create is queryer.createRecord on the copy.
func (tx *setTx) create(ctx context.Context, k *setCluster, name string, in *store.Record, w store.Write) (*store.Record, error) {
	if err := store.ValidateName(name); err != nil {
		return nil, err
	}
	if !k.locked {
		return nil, errPerOp // never: load locks every cluster a create may use
	}
	if err := tx.quotas.CheckRecords(k.count); tx.quotas.MaxRecordsPerCluster > 0 && err != nil {
		if err := tx.taken(ctx, k, name, nil); err != nil {
			return nil, err
		}
		if err := tx.nameIsNoID(ctx, k, name, ""); err != nil {
			return nil, err
		}
		return nil, err
	}
	if err := tx.nameIsNoID(ctx, k, name, ""); err != nil {
		return nil, err
	}
	if err := tx.taken(ctx, k, name, nil); err != nil {
		return nil, err
	}
	r := in.Clone()
	r.Name, r.Version, r.CreatedAt, r.UpdatedAt, r.UpdatedBy = name, 1, tx.now, tx.now, tx.c.ID()
	if r.ID == "" {
		r.ID = store.NewID()
	}
	if err := tx.grow(size(r.Name, r.Value), tx.quotas); err != nil {
		return nil, err
	}
	rec := &setRec{k: k, cur: r}
	tx.auditRecord(k, r, store.ActionRecordCreate)
	k.add(rec)
	k.count++
	tx.recs = append(tx.recs, rec)
	return r, nil
}

// historyBytes is queryer.historyBytes on the copy.
func (tx *setTx) historyBytes(rec *setRec, through int64) int64 {
	var n int64
	for _, v := range rec.hist {
		if v.version <= through {
			n += v.size
		}
	}
	return n
}

// update is queryer.updateLocked on the copy.
func (tx *setTx) update(ctx context.Context, rec *setRec, w store.Write, update func(*store.Record) error) (*store.Record, error) {
	cur := rec.cur
	next := cur.Clone()
	if err := update(next); err != nil {
		return nil, callerError{err}
	}
	if next.Name != cur.Name {
		if err := store.ValidateName(next.Name); err != nil {
			return nil, err
		}
		if err := tx.nameIsNoID(ctx, rec.k, next.Name, cur.ID); err != nil {
			return nil, err
		}
		if err := tx.taken(ctx, rec.k, next.Name, rec); err != nil {
			return nil, err
		}
	}
	keep := int64(max(w.MaxVersions, 0))
	cut := cur.Version - keep
	delta := size(next.Name, next.Value) - size(cur.Name, cur.Value) - tx.historyBytes(rec, cut)
	if keep > 0 {
		delta += size(cur.Name, cur.Value)
	}
	if err := w.Check(cur); err != nil {
		return nil, err
	}
	if err := tx.grow(delta, tx.quotas); err != nil {
		return nil, err
	}
	hist := rec.hist[:0:0]
	for _, v := range rec.hist {
		if v.version > cut {
			hist = append(hist, v)
		}
	}
	if keep > 0 {
		hist = append(hist, setVersion{version: cur.Version, size: size(cur.Name, cur.Value), v: cur})
	}
	rec.hist, rec.cut = hist, max(rec.cut, cut)
	out := &store.Record{ID: cur.ID, Name: next.Name, Type: next.Type, Value: append([]byte(nil), next.Value...),
		Version: cur.Version + 1, CreatedAt: cur.CreatedAt, UpdatedAt: tx.now, UpdatedBy: tx.c.ID()}
	if k := rec.k; out.Name != cur.Name {
		delete(k.byName, cur.Name)
		k.byName[out.Name], k.knownNames[out.Name] = rec, true
	}
	tx.auditRecord(rec.k, out, store.UpdateAction(cur, next))
	rec.cur = out
	return out, nil
}

// delete is queryer.deleteRecord on the copy.
func (tx *setTx) delete(rec *setRec) {
	_ = tx.grow(-size(rec.cur.Name, rec.cur.Value)-tx.historyBytes(rec, rec.cur.Version), store.Quotas{})
	tx.auditRecord(rec.k, rec.cur, store.ActionRecordDelete)
	k := rec.k
	delete(k.byName, rec.cur.Name)
	delete(k.byID, rec.cur.ID)
	k.count--
	rec.cur, rec.hist = nil, nil
}

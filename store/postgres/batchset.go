package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/hds-go/hds/store"
)

// The set-based batch. A run of record ops (and ensure-collection,
// ensure-cluster) of a batch runs in Go on a copy of what it touches, read in a few
// statements (load): the collections and clusters its ops name, the
// clusters it creates records in locked (FOR UPDATE) and counted, the
// records its ops name locked (FOR UPDATE) with the sizes of their kept
// versions. The ops then run in order on that copy (apply), with every
// check of the per-op path (pgTx) in the same order, so that the first
// failing op fails with the same error; a record named later (a rename's
// new name) is read when needed. At the end the changes are written back
// set-based (flush): one statement each for the new collections, the new
// clusters, the deleted, updated and created records, the versions
// pruned and kept, and the project's byte count. A delete of a container
// between two runs is applied per op (pgTx) after the first run is
// written back, and the second run reads its own copy.
//
// Whatever the copy cannot know for sure (a constraint of the flush
// violated because of a concurrent write, a locked cluster gone) makes
// the batch run again on the per-op path (errPerOp), which sees and
// reports such races as the single writes do.

// errPerOp makes Apply run the batch again, on the per-op path.
var errPerOp = errors.New("postgres: batch needs the per-op path")

// setBased reports whether an op of kind runs on the set-based path:
// every kind but the deletes of containers, which run per op between
// the set-based runs of the ops around them.
func setBased(kind store.OpKind) bool {
	return kind != store.OpDeleteCollection && kind != store.OpDeleteCluster
}

// setTx is a batch applied on a copy of what it touches.
type setTx struct {
	q queryer
	b store.Batch
	c store.Caller
	// ops are the ops of b it runs: a run of set-based ones.
	ops       []store.Op
	now       time.Time
	project   string
	projectID string
	quotas    store.Quotas
	// delta is by how many bytes the batch grows the project so far;
	// bytes is the project's byte count before the batch.
	bytes, delta int64

	colls    map[string]*setColl
	clusters map[[2]string]*setCluster
	// recs are the records the batch touched, in the order they were
	// first read or created; newColls and newClusters the containers it
	// created, in order.
	recs        []*setRec
	newColls    []*setColl
	newClusters []*setCluster
	// entries are the audit entries of the run's changes, in the order
	// of the ops that made them (a collection or cluster created, a
	// record created, updated, renamed or deleted; none for an unchanged
	// record): written by flush, in one INSERT.
	entries []store.AuditEntry
}

// auditRecord notes the audit entry of action on r, in cluster k.
func (tx *setTx) auditRecord(k *setCluster, r *store.Record, action store.Action) {
	tx.entries = append(tx.entries, store.AuditEntry{Action: action, Collection: k.coll.name, Cluster: k.name,
		Record: r.Name, RecordID: r.ID, Version: r.Version})
}

// setColl is a collection an op names.
type setColl struct {
	name   string
	id     string // empty when it does not exist
	exists bool
}

// setCluster is a cluster an op names, with the records of it the batch
// knows about.
type setCluster struct {
	coll   *setColl
	name   string
	id     string
	exists bool
	// fresh: created by the batch, so empty before it (every name and id
	// is known).
	fresh bool
	// locked: its row is locked and count is its number of records.
	locked bool
	count  int
	byName map[string]*setRec
	byID   map[string]*setRec
	// knownNames and knownIDs are the names and ids whose record (or
	// absence) byName and byID hold.
	knownNames map[string]bool
	knownIDs   map[string]bool
}

// setRec is a record the batch touched.
type setRec struct {
	k *setCluster
	// pre is the record as read (nil when the batch created it), cur its
	// current state (nil once deleted).
	pre, cur *store.Record
	// hist are its kept versions, oldest first; those with v set were
	// kept by the batch and are written by flush.
	hist []setVersion
	// cut: the stored versions up to cut are dropped by flush.
	cut int64
}

// setVersion is a kept version of a record: its number, what it counts
// against the quota and, when the batch kept it, the state.
type setVersion struct {
	version int64
	size    int64
	v       *store.Record
}

func (tx *setTx) pathKey(op store.Op) [2]string { return [2]string{op.Collection, op.Cluster} }

// load reads the collections and clusters the ops name, locks and counts
// the clusters they may create records in, and reads and locks the
// records they name.
func (tx *setTx) load(ctx context.Context) error {
	tx.colls = map[string]*setColl{}
	tx.clusters = map[[2]string]*setCluster{}
	var colls, clusters []string
	var keys [][2]string
	for _, op := range tx.ops {
		key := tx.pathKey(op)
		if op.Kind == store.OpEnsureCollection {
			key[1] = ""
		}
		if _, ok := tx.colls[key[0]]; !ok {
			tx.colls[key[0]] = &setColl{name: key[0]}
		}
		if _, ok := tx.clusters[key]; !ok {
			tx.clusters[key] = &setCluster{coll: tx.colls[key[0]], name: key[1]}
			keys = append(keys, key)
			colls, clusters = append(colls, lookupName(key[0])), append(clusters, lookupName(key[1]))
		}
	}
	rows, err := tx.q.rows(ctx, `SELECT n.i, c.id, k.id FROM unnest($2::text[], $3::text[]) WITH ORDINALITY n(coll, clus, i)
		LEFT JOIN hds_collections c ON c.project_id = $1 AND c.name = n.coll
		LEFT JOIN hds_clusters k ON k.collection_id = c.id AND k.name = n.clus`,
		tx.projectID, pq.Array(colls), pq.Array(clusters))
	if err != nil {
		return err
	}
	err = scanAll(rows, func(rows *sql.Rows) error {
		var i int
		var coll, clus sql.NullString
		if err := rows.Scan(&i, &coll, &clus); err != nil {
			return err
		}
		k := tx.clusters[keys[i-1]]
		if coll.Valid {
			k.coll.id, k.coll.exists = coll.String, true
		}
		if clus.Valid && k.name != "" {
			k.id, k.exists = clus.String, true
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The clusters records may be created in are locked, and counted, as
	// createRecord does.
	var lock []string
	for _, op := range tx.ops {
		if k := tx.clusters[tx.pathKey(op)]; (op.Kind == store.OpCreate || op.Kind == store.OpUpsert) && k != nil && k.exists && !k.locked {
			k.locked = true
			lock = append(lock, k.id)
		}
	}
	if len(lock) > 0 {
		n, err := tx.q.count(ctx, `WITH locked AS (SELECT id FROM hds_clusters WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE)
			SELECT count(*) FROM locked`, pq.Array(lock))
		if err != nil {
			return err
		}
		if n != len(lock) {
			return errPerOp // a cluster deleted meanwhile
		}
		if tx.quotas.MaxRecordsPerCluster > 0 {
			rows, err := tx.q.rows(ctx, `SELECT cluster_id, count(*) FROM hds_records WHERE cluster_id = ANY($1::uuid[]) GROUP BY cluster_id`, pq.Array(lock))
			if err != nil {
				return err
			}
			counts := map[string]int{}
			err = scanAll(rows, func(rows *sql.Rows) error {
				var id string
				var n int
				err := rows.Scan(&id, &n)
				counts[id] = n
				return err
			})
			if err != nil {
				return err
			}
			for _, k := range tx.clusters {
				if k.locked {
					k.count = counts[k.id]
				}
			}
		}
	}
	var ks, names, idKs, ids []string
	for _, op := range tx.ops {
		k := tx.clusters[tx.pathKey(op)]
		if !isRecordOp(op.Kind) || !k.exists {
			continue
		}
		ks, names = append(ks, k.id), append(names, lookupName(op.Record))
		if id, ok := store.CanonicalUUID(op.Record); ok {
			idKs, ids = append(idKs, k.id), append(ids, id)
		}
	}
	if len(ks) == 0 {
		return nil
	}
	return tx.read(ctx, `SELECT r.cluster_id, `+recordColumns+` FROM hds_records r WHERE r.id IN (
		SELECT r2.id FROM unnest($1::uuid[], $2::text[]) n(k, name) JOIN hds_records r2 ON r2.cluster_id = n.k AND r2.name = n.name
		UNION ALL
		SELECT r2.id FROM unnest($3::uuid[], $4::uuid[]) n(k, id) JOIN hds_records r2 ON r2.id = n.id AND r2.cluster_id = n.k)
		ORDER BY r.id FOR UPDATE`, func() {
		for _, op := range tx.ops {
			if k := tx.clusters[tx.pathKey(op)]; isRecordOp(op.Kind) && k.exists {
				k.know(op.Record)
			}
		}
	}, pq.Array(ks), pq.Array(names), pq.Array(idKs), pq.Array(ids))
}

// isRecordOp reports whether kind is one of the record kinds.
func isRecordOp(kind store.OpKind) bool {
	switch kind {
	case store.OpCreate, store.OpUpdate, store.OpUpsert, store.OpDelete:
		return true
	}
	return false
}

// read runs query, which returns a cluster id and the record columns of
// records it locks, adds the records to their clusters with the sizes
// of their kept versions, and then calls known, which marks what the
// query looked for as known.
func (tx *setTx) read(ctx context.Context, query string, known func(), args ...any) error {
	byID := map[string]*setCluster{}
	for _, k := range tx.clusters {
		if k.exists {
			byID[k.id] = k
		}
	}
	rows, err := tx.q.rows(ctx, query, args...)
	if err != nil {
		return err
	}
	var read []*setRec
	err = scanAll(rows, func(rows *sql.Rows) error {
		var clusterID string
		r, err := scanRecordWith(rows, &clusterID)
		if err != nil {
			return err
		}
		k := byID[clusterID]
		if k == nil || k.byID[r.ID] != nil || k.knownIDs[r.ID] || k.knownNames[r.Name] {
			return nil // already known (the batch may have changed it)
		}
		rec := &setRec{k: k, pre: r, cur: r}
		read = append(read, rec)
		return nil
	})
	if err != nil {
		return err
	}
	index := map[string]*setRec{}
	ids := make([]string, len(read))
	for i, rec := range read {
		rec.k.add(rec)
		tx.recs = append(tx.recs, rec)
		index[rec.cur.ID] = rec
		ids[i] = rec.cur.ID
	}
	known()
	if len(ids) == 0 {
		return nil
	}
	rows, err = tx.q.rows(ctx, `SELECT record_id, version, octet_length(name) + octet_length(value)
		FROM hds_record_versions WHERE record_id = ANY($1::uuid[]) ORDER BY record_id, version`, pq.Array(ids))
	if err != nil {
		return err
	}
	return scanAll(rows, func(rows *sql.Rows) error {
		var id string
		var v setVersion
		if err := rows.Scan(&id, &v.version, &v.size); err != nil {
			return err
		}
		rec := index[id]
		rec.hist = append(rec.hist, v)
		return nil
	})
}

// scanAll calls scan for each row of rows, and closes them.
func scanAll(rows *sql.Rows, scan func(*sql.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return classify(err)
		}
	}
	return classify(rows.Err())
}

// add makes rec a current record of k.
func (k *setCluster) add(rec *setRec) {
	if k.byName == nil {
		k.byName, k.byID = map[string]*setRec{}, map[string]*setRec{}
		k.knownNames, k.knownIDs = map[string]bool{}, map[string]bool{}
	}
	k.byName[rec.cur.Name], k.byID[rec.cur.ID] = rec, rec
	k.knownNames[rec.cur.Name], k.knownIDs[rec.cur.ID] = true, true
}

// know marks the record named key (a name, or an id) as known.
func (k *setCluster) know(key string) {
	if k.byName == nil {
		k.byName, k.byID = map[string]*setRec{}, map[string]*setRec{}
		k.knownNames, k.knownIDs = map[string]bool{}, map[string]bool{}
	}
	k.knownNames[key] = true
	if id, ok := store.CanonicalUUID(key); ok {
		k.knownIDs[id] = true
	}
}

// known reports whether the record named key (by name, and by id when it
// is one) is known.
func (k *setCluster) known(key string) bool {
	if k.fresh {
		return true
	}
	if !k.knownNames[key] {
		return false
	}
	id, ok := store.CanonicalUUID(key)
	return !ok || k.knownIDs[id]
}

// find returns the current record of k that key names (by id first, then
// by name), reading it when it is not known yet; nil when there is none.
func (tx *setTx) find(ctx context.Context, k *setCluster, key string) (*setRec, error) {
	if !k.known(key) {
		var id any
		if u, ok := store.CanonicalUUID(key); ok {
			id = u
		}
		err := tx.read(ctx, `SELECT r.cluster_id, `+recordColumns+` FROM hds_records r
			WHERE r.cluster_id = $1 AND (r.name = $2 OR r.id = $3::uuid) ORDER BY r.id FOR UPDATE`,
			func() { k.know(key) }, k.id, lookupName(key), id)
		if err != nil {
			return nil, err
		}
	}
	if id, ok := store.CanonicalUUID(key); ok {
		if rec := k.byID[id]; rec != nil {
			return rec, nil
		}
	}
	return k.byName[key], nil
}

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

// flush writes the changes of the batch back, set-based. A constraint
// violated (a concurrent write the copy did not see) is errPerOp.
func (tx *setTx) flush(ctx context.Context) error {
	err := tx.write(ctx)
	if isUniqueViolation(err) || isForeignKeyViolation(err) {
		return errPerOp
	}
	return err
}

func (tx *setTx) write(ctx context.Context) error {
	if len(tx.newColls) > 0 {
		var ids, names, lower []string
		for _, c := range tx.newColls {
			ids, names, lower = append(ids, c.id), append(names, c.name), append(lower, strings.ToLower(c.name))
		}
		if _, err := tx.q.exec(ctx, `INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at)
			SELECT u.id, $1, u.name, u.lower, $2, $2 FROM unnest($3::uuid[], $4::text[], $5::text[]) u(id, name, lower)`,
			tx.projectID, tx.now, pq.Array(ids), pq.Array(names), pq.Array(lower)); err != nil {
			return err
		}
	}
	if len(tx.newClusters) > 0 {
		var ids, parents, names, lower []string
		for _, k := range tx.newClusters {
			ids, parents = append(ids, k.id), append(parents, k.coll.id)
			names, lower = append(names, k.name), append(lower, strings.ToLower(k.name))
		}
		if _, err := tx.q.exec(ctx, `INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at)
			SELECT u.id, u.parent, u.name, u.lower, $1, $1 FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[]) u(id, parent, name, lower)`,
			tx.now, pq.Array(ids), pq.Array(parents), pq.Array(names), pq.Array(lower)); err != nil {
			return err
		}
	}
	var deleted []string
	var updated, created recordRows
	var cutIDs []string
	var cuts []int64
	var kept versionRows
	for _, rec := range tx.recs {
		switch {
		case rec.cur == nil && rec.pre != nil:
			deleted = append(deleted, rec.pre.ID)
		case rec.cur == nil:
		case rec.pre == nil:
			created.add(rec.k.id, rec.cur)
		case rec.cur != rec.pre:
			updated.add(rec.k.id, rec.cur)
			if rec.cut > 0 {
				cutIDs, cuts = append(cutIDs, rec.cur.ID), append(cuts, rec.cut)
			}
		}
		if rec.cur != nil {
			for _, v := range rec.hist {
				if v.v != nil {
					kept.add(v.v)
				}
			}
		}
	}
	if len(deleted) > 0 {
		if _, err := tx.q.exec(ctx, `DELETE FROM hds_records WHERE id = ANY($1::uuid[])`, pq.Array(deleted)); err != nil {
			return err
		}
	}
	if len(updated.ids) > 0 {
		if _, err := tx.q.exec(ctx, `UPDATE hds_records r SET name = u.name, name_lower = u.name_lower, type = u.type,
			value = u.value, version = u.version, vtext = u.vtext, vtext_lower = u.vtext_lower, sort_group = u.sort_group,
			sort_num = u.sort_num, sort_text = u.sort_text, updated_at = $1, updated_by = $2
			FROM `+recordsUnnest+` WHERE r.id = u.id`, append([]any{tx.now, tx.c.ID()}, updated.args()...)...); err != nil {
			return err
		}
	}
	if len(created.ids) > 0 {
		if _, err := tx.q.exec(ctx, `INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version,
			vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at, updated_by)
			SELECT u.id, u.cluster_id, u.name, u.name_lower, u.type, u.value, u.version,
			u.vtext, u.vtext_lower, u.sort_group, u.sort_num, u.sort_text, $1, $1, $2 FROM `+recordsUnnest,
			append([]any{tx.now, tx.c.ID()}, created.args()...)...); err != nil {
			return err
		}
	}
	if len(cutIDs) > 0 {
		if _, err := tx.q.exec(ctx, `DELETE FROM hds_record_versions v USING unnest($1::uuid[], $2::bigint[]) u(id, cut)
			WHERE v.record_id = u.id AND v.version <= u.cut`, pq.Array(cutIDs), pq.Array(cuts)); err != nil {
			return err
		}
	}
	if len(kept.ids) > 0 {
		if _, err := tx.q.exec(ctx, `INSERT INTO hds_record_versions (record_id, version, name, type, value, changed_at, changed_by)
			SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[])`,
			pq.Array(kept.ids), pq.Array(kept.versions), pq.Array(kept.names), pq.Array(kept.types),
			pq.Array(kept.values), pq.Array(kept.at), pq.Array(kept.by)); err != nil {
			return err
		}
	}
	if tx.delta != 0 {
		if _, err := tx.q.exec(ctx, `UPDATE hds_projects SET bytes = bytes + $2 WHERE id = $1`, tx.projectID, tx.delta); err != nil {
			return err
		}
	}
	return tx.q.auditAll(ctx, tx.projectID, tx.c, tx.entries)
}

// recordsUnnest is the table u of recordRows' args, from $3 on.
const recordsUnnest = `unnest($3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[],
	$10::text[], $11::text[], $12::smallint[], $13::numeric[], $14::text[])
	u(id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text)`

// recordRows are the columns of records written by one statement.
type recordRows struct {
	ids, clusters, names, lower, types, values []string
	versions                                   []int64
	vtext, vtextLower, sortNum, sortText       []sql.NullString
	sortGroups                                 []int64
}

func (rr *recordRows) add(clusterID string, r *store.Record) {
	vc := valueColumnsOf(r.Type, r.Value)
	rr.ids, rr.clusters = append(rr.ids, r.ID), append(rr.clusters, clusterID)
	rr.names, rr.lower = append(rr.names, r.Name), append(rr.lower, strings.ToLower(r.Name))
	rr.types, rr.values = append(rr.types, string(r.Type)), append(rr.values, string(r.Value))
	rr.versions = append(rr.versions, r.Version)
	rr.vtext, rr.vtextLower = append(rr.vtext, nullString(vc.vtext)), append(rr.vtextLower, nullString(vc.vtextLower))
	rr.sortGroups = append(rr.sortGroups, int64(vc.sortGroup))
	rr.sortNum, rr.sortText = append(rr.sortNum, nullString(vc.sortNum)), append(rr.sortText, nullString(vc.sortText))
}

func (rr *recordRows) args() []any {
	return []any{pq.Array(rr.ids), pq.Array(rr.clusters), pq.Array(rr.names), pq.Array(rr.lower), pq.Array(rr.types),
		pq.Array(rr.values), pq.Array(rr.versions), pq.Array(rr.vtext), pq.Array(rr.vtextLower), pq.Array(rr.sortGroups),
		pq.Array(rr.sortNum), pq.Array(rr.sortText)}
}

// nullString is v (a string or nil, as valueColumns hold) as a
// sql.NullString.
func nullString(v any) sql.NullString {
	s, ok := v.(string)
	return sql.NullString{String: s, Valid: ok}
}

// versionRows are the columns of the versions flush keeps.
type versionRows struct {
	ids, names, types, values, at, by []string
	versions                          []int64
}

func (vr *versionRows) add(r *store.Record) {
	vr.ids, vr.versions = append(vr.ids, r.ID), append(vr.versions, r.Version)
	vr.names, vr.types, vr.values = append(vr.names, r.Name), append(vr.types, string(r.Type)), append(vr.values, string(r.Value))
	vr.at, vr.by = append(vr.at, r.UpdatedAt.Format(time.RFC3339Nano)), append(vr.by, r.UpdatedBy)
}

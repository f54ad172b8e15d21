package postgres

import (
	"context"
	"database/sql"
	"errors"
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

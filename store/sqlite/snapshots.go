package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"iter"
	"strings"

	"github.com/hds-go/hds/internal/readahead"
	"github.com/hds-go/hds/store"
)

var _ store.Snapshots = (*Store)(nil)

// snapshotCols are the columns of hds_snapshots that make a store.Snapshot.
const snapshotCols = `s.id, s.name, s.collection, s.cluster, s.description, s.revision, s.records, s.bytes, s.automatic, s.created_at, s.created_by`

// snapRow is a snapshot row with its id and bytes.
type snapRow struct {
	store.Snapshot
	id    string
	bytes int64
}

func scanSnapshot(row scanner) (*snapRow, error) {
	var s snapRow
	var created int64
	err := row.Scan(&s.id, &s.Name, &s.Collection, &s.Cluster, &s.Description, &s.Revision, &s.Records, &s.bytes,
		&s.Automatic, &created, &s.CreatedBy)
	s.CreatedAt = fromMicros(created)
	return &s, err
}

// findSnapshot returns the snapshot name of pr, or ErrNotFound.
func (t *tx) findSnapshot(pr *proj, name string) (*snapRow, error) {
	s, err := scanSnapshot(t.row(`SELECT `+snapshotCols+` FROM hds_snapshots s WHERE s.project_id = ? AND s.name = ?`, pr.ID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &store.NotFoundError{Kind: "snapshot", Name: name}
	}
	return s, err
}

// takeSnapshot copies side of pr as the snapshot name in the write
// transaction t (one writer: at the project's revision) and writes its
// snapshot.create entry.
func (t *tx) takeSnapshot(pr *proj, c store.Caller, side store.Side, name, description string, automatic bool) (*store.Snapshot, error) {
	col, err := t.collectionIn(pr, side.Collection)
	if err != nil {
		return nil, err
	}
	var k *clus
	if side.Cluster != "" {
		if k, err = t.clusterIn(col, side.Cluster); err != nil {
			return nil, err
		}
	}
	var taken int
	if err := t.row(`SELECT count(*) FROM hds_snapshots WHERE project_id = ? AND name = ?`, pr.ID, name).Scan(&taken); err != nil {
		return nil, err
	}
	if taken > 0 {
		return nil, &store.ExistsError{Kind: "snapshot", Name: name}
	}
	if !automatic {
		var n int
		if err := t.row(`SELECT count(*) FROM hds_snapshots WHERE project_id = ? AND automatic = 0`, pr.ID).Scan(&n); err != nil {
			return nil, err
		}
		if err := t.s.quotas.Load().CheckSnapshots(n); err != nil {
			return nil, err
		}
	}
	sn := store.Snapshot{Name: name, Collection: side.Collection, Cluster: side.Cluster, Description: description,
		Revision: pr.Revision, Automatic: automatic, CreatedAt: t.now, CreatedBy: c.ActorName()}
	id := store.NewID()
	if _, err := t.exec(`INSERT INTO hds_snapshots (id, project_id, name, name_lower, collection, cluster, description,
		revision, records, bytes, automatic, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?)`,
		id, pr.ID, name, strings.ToLower(name), sn.Collection, sn.Cluster, description, sn.Revision, automatic,
		micros(t.now), sn.CreatedBy); err != nil {
		return nil, err
	}
	if k != nil {
		if _, err := t.exec(`INSERT INTO hds_snapshot_clusters (snapshot_id, name) VALUES (?, ?)`, id, k.Name); err != nil {
			return nil, err
		}
		_, err = t.exec(`INSERT INTO hds_snapshot_records (snapshot_id, cluster, name, record_id, type, value, version,
			created_at, updated_at, updated_by) SELECT ?, ?, r.name, r.id, r.type, r.value, r.version, r.created_at,
			r.updated_at, r.updated_by FROM hds_records r WHERE r.cluster_id = ?`, id, k.Name, k.ID)
	} else {
		if _, err := t.exec(`INSERT INTO hds_snapshot_clusters (snapshot_id, name)
			SELECT ?, k.name FROM hds_clusters k WHERE k.collection_id = ?`, id, col.ID); err != nil {
			return nil, err
		}
		_, err = t.exec(`INSERT INTO hds_snapshot_records (snapshot_id, cluster, name, record_id, type, value, version,
			created_at, updated_at, updated_by) SELECT ?, k.name, r.name, r.id, r.type, r.value, r.version, r.created_at,
			r.updated_at, r.updated_by FROM hds_clusters k JOIN hds_records r ON r.cluster_id = k.id WHERE k.collection_id = ?`,
			id, col.ID)
	}
	if err != nil {
		return nil, err
	}
	var bytes int64
	if err := t.row(`SELECT count(*), coalesce(sum(length(CAST(name AS BLOB)) + length(CAST(value AS BLOB))), 0)
		FROM hds_snapshot_records WHERE snapshot_id = ?`, id).Scan(&sn.Records, &bytes); err != nil {
		return nil, err
	}
	if automatic {
		bytes = 0
	} else if err := t.grow(pr, bytes); err != nil {
		return nil, err
	}
	if _, err := t.exec(`UPDATE hds_snapshots SET records = ?, bytes = ? WHERE id = ?`, sn.Records, bytes, id); err != nil {
		return nil, err
	}
	err = t.audit(pr, c, store.AuditEntry{Action: store.ActionSnapshotCreate, Collection: sn.Collection, Cluster: sn.Cluster, Target: name})
	return &sn, err
}

// dropSnapshot deletes the snapshot and writes its snapshot.delete entry.
func (t *tx) dropSnapshot(pr *proj, c store.Caller, s *snapRow) error {
	if _, err := t.exec(`DELETE FROM hds_snapshots WHERE id = ?`, s.id); err != nil {
		return err
	}
	if err := t.addBytes(pr, -s.bytes); err != nil {
		return err
	}
	return t.audit(pr, c, store.AuditEntry{Action: store.ActionSnapshotDelete, Collection: s.Collection, Cluster: s.Cluster, Target: s.Name})
}

// autoSnapshot takes a batch's automatic snapshot (store.AutoSnapshot) and
// deletes the automatic ones beyond a.Keep, oldest first.
func (t *tx) autoSnapshot(pr *proj, c store.Caller, a *store.AutoSnapshot) (string, error) {
	sn, err := t.takeSnapshot(pr, c, a.Side, store.AutomaticName(pr.Revision), "", true)
	if err != nil {
		return "", err
	}
	rows, err := t.rows(`SELECT `+snapshotCols+` FROM hds_snapshots s WHERE s.project_id = ? AND s.automatic = 1
		ORDER BY s.revision DESC, s.created_at DESC, s.name LIMIT -1 OFFSET ?`, pr.ID, max(a.Keep, 1))
	if err != nil {
		return "", err
	}
	var old []*snapRow
	for rows.Next() {
		s, err := scanSnapshot(rows)
		if err != nil {
			rows.Close()
			return "", err
		}
		old = append(old, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	for i := len(old) - 1; i >= 0; i-- { // oldest first
		if err := t.dropSnapshot(pr, c, old[i]); err != nil {
			return "", err
		}
	}
	return sn.Name, nil
}

// CreateSnapshot implements store.Snapshots: one write transaction, at
// the project's revision (SQLite has one writer).
func (s *Store) CreateSnapshot(ctx context.Context, p store.Path, name, description string) (*store.Snapshot, error) {
	if err := store.ValidateSnapshotName(name); err != nil {
		return nil, err
	}
	var out *store.Snapshot
	err := s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		out, err = t.takeSnapshot(pr, p.Caller, store.Side{Collection: p.Collection, Cluster: p.Cluster}, name, description, false)
		return err
	})
	return out, err
}

// FindSnapshots implements store.Snapshots.
func (s *Store) FindSnapshots(ctx context.Context, p store.Path, q store.SnapshotQuery) ([]*store.Snapshot, int, error) {
	out := []*store.Snapshot{}
	total := 0
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		var l list
		l.cond("s.project_id = ?", pr.ID)
		l.search("s.name_lower", q.Search)
		if q.Collection != "" {
			l.cond("s.collection = ?", q.Collection)
		}
		if err := t.row(`SELECT count(*) FROM hds_snapshots s`+l.whereClause(), l.args...).Scan(&total); err != nil {
			return err
		}
		limit := q.Limit
		if limit <= 0 {
			limit = -1
		}
		rows, err := t.rows(`SELECT `+snapshotCols+` FROM hds_snapshots s`+l.whereClause()+
			` ORDER BY s.revision DESC, s.created_at DESC, s.name LIMIT ? OFFSET ?`, append(l.args, limit, q.Offset)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			sn, err := scanSnapshot(rows)
			if err != nil {
				return err
			}
			out = append(out, &sn.Snapshot)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// FindSnapshot implements store.Snapshots.
func (s *Store) FindSnapshot(ctx context.Context, p store.Path, name string) (*store.Snapshot, error) {
	var out *store.Snapshot
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		sn, err := t.findSnapshot(pr, name)
		if err == nil {
			out = &sn.Snapshot
		}
		return err
	})
	return out, err
}

// snapshotRecordCols are the columns of hds_snapshot_records that make a
// store.Record, as recordCols.
const snapshotRecordCols = `r.record_id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at, r.updated_by`

// SnapshotRecords implements store.Snapshots: one long read.
func (s *Store) SnapshotRecords(ctx context.Context, p store.Path, name string, visit func(string, *store.Record) error) error {
	return s.longRead(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		sn, err := t.findSnapshot(pr, name)
		if err != nil {
			return err
		}
		var clusters []string
		rows, err := t.rows(`SELECT name FROM hds_snapshot_clusters WHERE snapshot_id = ? ORDER BY name`, sn.id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return err
			}
			clusters = append(clusters, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, k := range clusters {
			if err := visit(k, nil); err != nil {
				return err
			}
			if err := t.eachRecord(`SELECT `+snapshotRecordCols+` FROM hds_snapshot_records r
				WHERE r.snapshot_id = ? AND r.cluster = ? ORDER BY r.name`, []any{sn.id, k}, func(r *store.Record) error {
				return visit(k, r)
			}); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteSnapshot implements store.Snapshots.
func (s *Store) DeleteSnapshot(ctx context.Context, p store.Path, name string) error {
	return s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		sn, err := t.findSnapshot(pr, name)
		if err != nil {
			return err
		}
		return t.dropSnapshot(pr, p.Caller, sn)
	})
}

// RecordSnapshotReveal implements store.Snapshots.
func (s *Store) RecordSnapshotReveal(ctx context.Context, p store.Path, name string) error {
	return s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		sn, err := t.findSnapshot(pr, name)
		if err != nil {
			return err
		}
		return t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionCredentialReveal, Collection: sn.Collection,
			Cluster: sn.Cluster, Target: name})
	})
}

// CompareSnapshot implements store.Snapshots: as CompareRecords, one long
// read, read ahead, the snapshot's records being the From side.
func (s *Store) CompareSnapshot(ctx context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
	return readahead.Visit(ctx, readAheadBytes, store.Pair.Size,
		func(ctx context.Context, push func(store.Pair) error) error {
			return s.longRead(ctx, func(t *tx) error {
				pr, err := t.project(p)
				if err != nil {
					return err
				}
				sn, err := t.findSnapshot(pr, from.Snapshot)
				if err != nil {
					return err
				}
				c, err := t.collectionIn(pr, to.Collection)
				if err != nil {
					return err
				}
				id := c.ID
				if to.Cluster != "" {
					k, err := t.clusterIn(c, to.Cluster)
					if err != nil {
						return err
					}
					id = k.ID
				}
				revision, err := t.changeRevision(pr)
				if err != nil {
					return err
				}
				if err := push(store.Pair{Revision: revision}); err != nil {
					return err
				}
				return store.MergeSides(sn.Side(), t.snapshotSide(sn.id), t.side(to, id, "b"), push)
			})
		}, visit)
}

// snapshotSide streams the records of a snapshot in cluster and name
// order.
func (t *tx) snapshotSide(id string) iter.Seq2[store.SideRecord, error] {
	return t.sideRows(`SELECT r.cluster, `+snapshotRecordCols+` FROM hds_snapshot_records r
		WHERE r.snapshot_id = ? ORDER BY r.cluster, r.name`, id)
}

// resealBatch is how many snapshot values ResealSnapshots reads at a time.
const resealBatch = 100

// snapValue is a credential value a snapshot keeps, by its key.
type snapValue struct {
	snapshot, cluster, name string
	recordID, typ, value    string
	automatic               bool
	projectID               string
}

// ResealSnapshots implements store.Snapshots: the values are read in
// batches by key, and each batch's new values written in one write
// transaction (a snapshot deleted meanwhile is skipped).
func (s *Store) ResealSnapshots(ctx context.Context, reseal store.SnapshotResealer) (int, error) {
	n := 0
	var after snapValue
	for {
		var batch []snapValue
		err := s.read(ctx, func(t *tx) error {
			rows, err := t.rows(`SELECT r.snapshot_id, r.cluster, r.name, r.record_id, r.type, r.value, s.automatic, s.project_id
				FROM hds_snapshot_records r JOIN hds_snapshots s ON s.id = r.snapshot_id
				WHERE r.type IN ('CREDENTIAL', '[]CREDENTIAL') AND (r.snapshot_id, r.cluster, r.name) > (?, ?, ?)
				ORDER BY r.snapshot_id, r.cluster, r.name LIMIT ?`, after.snapshot, after.cluster, after.name, resealBatch)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var v snapValue
				if err := rows.Scan(&v.snapshot, &v.cluster, &v.name, &v.recordID, &v.typ, &v.value, &v.automatic, &v.projectID); err != nil {
					return err
				}
				batch = append(batch, v)
			}
			return rows.Err()
		})
		if err != nil || len(batch) == 0 {
			return n, err
		}
		after = batch[len(batch)-1]
		type write struct {
			v     snapValue
			value string
		}
		var writes []write
		for _, v := range batch {
			out, ok, err := reseal(v.recordID, store.DataType(v.typ), json.RawMessage(v.value))
			if err != nil {
				return n, err
			}
			if ok {
				writes = append(writes, write{v, string(out)})
			}
		}
		if len(writes) == 0 {
			continue
		}
		err = s.write(ctx, func(t *tx) error {
			for _, w := range writes {
				res, err := t.exec(`UPDATE hds_snapshot_records SET value = ? WHERE snapshot_id = ? AND cluster = ? AND name = ?`,
					w.value, w.v.snapshot, w.v.cluster, w.v.name)
				if err != nil {
					return err
				}
				if n, err := res.RowsAffected(); err != nil || n == 0 {
					continue // deleted meanwhile
				}
				if delta := int64(len(w.value) - len(w.v.value)); delta != 0 && !w.v.automatic {
					if _, err := t.exec(`UPDATE hds_snapshots SET bytes = bytes + ? WHERE id = ?`, delta, w.v.snapshot); err != nil {
						return err
					}
					if _, err := t.exec(`UPDATE hds_projects SET bytes = bytes + ? WHERE id = ?`, delta, w.v.projectID); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		n += len(writes)
	}
}

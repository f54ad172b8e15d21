package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/hds-go/hds/store"
)

var _ store.Snapshots = (*Store)(nil)

// snapshotColumns are the columns of hds_snapshots that make a snapRow.
const snapshotColumns = `s.id, s.name, s.collection, s.cluster, s.description, s.revision, s.records, s.bytes, s.automatic, s.created_at, s.created_by`

// snapRow is a snapshot row with its id and bytes.
type snapRow struct {
	store.Snapshot
	id    string
	bytes int64
}

func scanSnapshot(row interface{ Scan(...any) error }, extra ...any) (*snapRow, error) {
	var s snapRow
	err := row.Scan(append([]any{&s.id, &s.Name, &s.Collection, &s.Cluster, &s.Description, &s.Revision, &s.Records, &s.bytes,
		&s.Automatic, &s.CreatedAt, &s.CreatedBy}, extra...)...)
	s.CreatedAt = s.CreatedAt.UTC()
	return &s, err
}

// findSnapshot returns the snapshot name of the project projectID, or
// ErrNotFound.
func (q queryer) findSnapshot(ctx context.Context, projectID, name string) (*snapRow, error) {
	row, err := q.row(ctx, `SELECT `+snapshotColumns+` FROM hds_snapshots s WHERE s.project_id = $1 AND s.name = $2`,
		projectID, lookupName(name))
	if err != nil {
		return nil, err
	}
	s, err := scanSnapshot(row)
	if err != nil {
		return nil, notFoundOr(err, "snapshot", name)
	}
	return s, nil
}

// takeSnapshot copies side of the project projectID as the snapshot name,
// in q's transaction, whose caller holds the project's row lock: every
// write of the project takes it first, so the copy (one statement, after
// the lock) holds exactly what the project's revision, read under the
// lock, says. It writes the snapshot.create entry.
func (q queryer) takeSnapshot(ctx context.Context, p store.Path, projectID string, side store.Side, name, description string,
	automatic bool) (*store.Snapshot, error) {
	sp, depth := p, levelCollection
	sp.Collection, sp.Cluster = side.Collection, side.Cluster
	if side.Cluster != "" {
		depth = levelCluster
	}
	r, err := q.resolve(ctx, sp, depth)
	if err != nil {
		return nil, err
	}
	revision, err := q.sum(ctx, `SELECT revision FROM hds_projects WHERE id = $1`, projectID)
	if err != nil {
		return nil, err
	}
	if !automatic {
		n, err := q.count(ctx, `SELECT count(*) FROM hds_snapshots WHERE project_id = $1 AND NOT automatic`, projectID)
		if err != nil {
			return nil, err
		}
		if err := q.s.currentQuotas().CheckSnapshots(n); err != nil {
			return nil, err
		}
	}
	sn := store.Snapshot{Name: name, Collection: side.Collection, Cluster: side.Cluster, Description: description,
		Revision: revision, Automatic: automatic, CreatedAt: q.s.now(), CreatedBy: p.Caller.ActorName()}
	id := store.NewID()
	if err := q.insert(ctx, "snapshot", name, "project", p.Project, `INSERT INTO hds_snapshots (id, project_id, name, name_lower,
		collection, cluster, description, revision, records, bytes, automatic, created_at, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, 0, $9, $10, $11) ON CONFLICT DO NOTHING RETURNING 1`,
		id, projectID, name, strings.ToLower(name), sn.Collection, sn.Cluster, description, revision, automatic,
		sn.CreatedAt, sn.CreatedBy); err != nil {
		return nil, err
	}
	if side.Cluster != "" {
		if _, err := q.exec(ctx, `INSERT INTO hds_snapshot_clusters (snapshot_id, name) VALUES ($1, $2)`, id, side.Cluster); err != nil {
			return nil, err
		}
		_, err = q.exec(ctx, `INSERT INTO hds_snapshot_records (snapshot_id, cluster, name, record_id, type, value, version,
			created_at, updated_at, updated_by) SELECT $1, $2, r.name, r.id, r.type, r.value, r.version, r.created_at,
			r.updated_at, r.updated_by FROM hds_records r WHERE r.cluster_id = $3`, id, side.Cluster, r.cluster.String)
	} else {
		if _, err := q.exec(ctx, `INSERT INTO hds_snapshot_clusters (snapshot_id, name)
			SELECT $1, k.name FROM hds_clusters k WHERE k.collection_id = $2`, id, r.collection.String); err != nil {
			return nil, err
		}
		_, err = q.exec(ctx, `INSERT INTO hds_snapshot_records (snapshot_id, cluster, name, record_id, type, value, version,
			created_at, updated_at, updated_by) SELECT $1, k.name, r.name, r.id, r.type, r.value, r.version, r.created_at,
			r.updated_at, r.updated_by FROM hds_clusters k JOIN hds_records r ON r.cluster_id = k.id WHERE k.collection_id = $2`,
			id, r.collection.String)
	}
	if err != nil {
		return nil, err
	}
	row, err := q.row(ctx, `SELECT count(*), coalesce(sum(octet_length(name) + octet_length(value)), 0)
		FROM hds_snapshot_records WHERE snapshot_id = $1`, id)
	if err != nil {
		return nil, err
	}
	var bytes int64
	if err := row.Scan(&sn.Records, &bytes); err != nil {
		return nil, classify(err)
	}
	if automatic {
		bytes = 0
	} else if err := q.addBytes(ctx, projectID, bytes, q.s.currentQuotas(), p.Project); err != nil {
		return nil, err
	}
	if _, err := q.exec(ctx, `UPDATE hds_snapshots SET records = $2, bytes = $3 WHERE id = $1`, id, sn.Records, bytes); err != nil {
		return nil, err
	}
	_, err = q.audit(ctx, projectID, p.Caller, store.AuditEntry{Action: store.ActionSnapshotCreate, Collection: sn.Collection,
		Cluster: sn.Cluster, Target: name})
	return &sn, err
}

// dropSnapshot deletes the snapshot and writes its snapshot.delete entry.
func (q queryer) dropSnapshot(ctx context.Context, p store.Path, projectID string, s *snapRow) error {
	if err := q.execOne(ctx, "snapshot", s.Name, `DELETE FROM hds_snapshots WHERE id = $1`, s.id); err != nil {
		return err
	}
	if err := q.addBytes(ctx, projectID, -s.bytes, q.s.currentQuotas(), p.Project); err != nil {
		return err
	}
	_, err := q.audit(ctx, projectID, p.Caller, store.AuditEntry{Action: store.ActionSnapshotDelete, Collection: s.Collection,
		Cluster: s.Cluster, Target: s.Name})
	return err
}

// autoSnapshot takes a batch's automatic snapshot (store.AutoSnapshot) in
// the batch's transaction, which holds the project's row lock, and
// deletes the automatic ones beyond a.Keep, oldest first.
func (q queryer) autoSnapshot(ctx context.Context, p store.Path, projectID string, revision int64, a *store.AutoSnapshot) (string, error) {
	sn, err := q.takeSnapshot(ctx, p, projectID, a.Side, store.AutomaticName(revision), "", true)
	if err != nil {
		return "", err
	}
	rows, err := q.rows(ctx, `SELECT `+snapshotColumns+` FROM hds_snapshots s WHERE s.project_id = $1 AND s.automatic
		ORDER BY s.revision DESC, s.created_at DESC, s.name OFFSET $2`, projectID, max(a.Keep, 1))
	if err != nil {
		return "", err
	}
	var old []*snapRow
	for rows.Next() {
		s, err := scanSnapshot(rows)
		if err != nil {
			rows.Close()
			return "", classify(err)
		}
		old = append(old, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", classify(err)
	}
	for i := len(old) - 1; i >= 0; i-- { // oldest first
		if err := q.dropSnapshot(ctx, p, projectID, old[i]); err != nil {
			return "", err
		}
	}
	return sn.Name, nil
}

// CreateSnapshot implements store.Snapshots: one transaction that takes
// the project's row lock first.
func (s *Store) CreateSnapshot(ctx context.Context, p store.Path, name, description string) (_ *store.Snapshot, err error) {
	if err := store.ValidateSnapshotName(name); err != nil {
		return nil, err
	}
	ctx, end := s.call(ctx)
	defer end(&err)
	var out *store.Snapshot
	err = s.inTx(ctx, func(q queryer) error {
		if err := q.lockProjectNamed(ctx, p.Project); err != nil {
			return err
		}
		// What is taken must exist (404) before its name is checked
		// (409), as on the other stores.
		level := levelCollection
		if p.Cluster != "" {
			level = levelCluster
		}
		r, err := q.resolve(ctx, p, level)
		if err != nil {
			return err
		}
		if _, err := q.findSnapshot(ctx, r.project, name); err == nil {
			return &store.ExistsError{Kind: "snapshot", Name: name}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		out, err = q.takeSnapshot(ctx, p, r.project, store.Side{Collection: p.Collection, Cluster: p.Cluster}, name, description, false)
		return err
	})
	return out, err
}

// FindSnapshots implements store.Snapshots.
func (s *Store) FindSnapshots(ctx context.Context, p store.Path, sq store.SnapshotQuery) ([]*store.Snapshot, int, error) {
	return findWithin(ctx, s, p, levelProject, func(ctx context.Context, q queryer, r resolved) ([]*store.Snapshot, int, error) {
		where := ` WHERE s.project_id = $1 AND ($2::text IS NULL OR s.name_lower LIKE $2) AND ($3 = '' OR s.collection = $3)`
		args := []any{r.project, likePattern(sq.Search), sq.Collection}
		var limit any
		if sq.Limit > 0 {
			limit = sq.Limit
		}
		rows, err := q.rows(ctx, `SELECT `+snapshotColumns+` FROM hds_snapshots s`+where+`
			ORDER BY s.revision DESC, s.created_at DESC, s.name LIMIT $4 OFFSET $5`, append(args, limit, sq.Offset)...)
		if err != nil {
			return nil, 0, err
		}
		out := []*store.Snapshot{}
		for rows.Next() {
			sn, err := scanSnapshot(rows)
			if err != nil {
				rows.Close()
				return nil, 0, classify(err)
			}
			out = append(out, &sn.Snapshot)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, classify(err)
		}
		total, err := q.count(ctx, `SELECT count(*) FROM hds_snapshots s`+where, args...)
		return out, total, err
	})
}

// FindSnapshot implements store.Snapshots.
func (s *Store) FindSnapshot(ctx context.Context, p store.Path, name string) (_ *store.Snapshot, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelProject)
	if err != nil {
		return nil, err
	}
	sn, err := q.findSnapshot(ctx, r.project, name)
	if err != nil {
		return nil, err
	}
	return &sn.Snapshot, nil
}

// SnapshotRecords implements store.Snapshots: the snapshot never changes
// (a re-seal aside), so its clusters and records are read on the pool,
// each in one statement.
func (s *Store) SnapshotRecords(ctx context.Context, p store.Path, name string, visit func(string, *store.Record) error) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelProject)
	if err != nil {
		return err
	}
	sn, err := q.findSnapshot(ctx, r.project, name)
	if err != nil {
		return err
	}
	rows, err := q.rows(ctx, `SELECT k.name, r.record_id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at, r.updated_by
		FROM hds_snapshot_clusters k LEFT JOIN hds_snapshot_records r ON r.snapshot_id = k.snapshot_id AND r.cluster = k.name
		WHERE k.snapshot_id = $1 ORDER BY k.name, r.name`, sn.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	last := ""
	first := true
	for rows.Next() {
		var cluster string
		var c compareRow
		var rname sql.NullString
		if err := rows.Scan(&cluster, &c.id, &rname, &c.typ, &c.value, &c.version, &c.created, &c.updated, &c.updatedBy); err != nil {
			return classify(err)
		}
		if first || cluster != last {
			first, last = false, cluster
			if err := visit(cluster, nil); err != nil {
				return callerError{err}
			}
		}
		if rec := c.record(rname.String); rec != nil {
			if err := visit(cluster, rec); err != nil {
				return callerError{err}
			}
		}
	}
	return classify(rows.Err())
}

// DeleteSnapshot implements store.Snapshots, in one transaction.
func (s *Store) DeleteSnapshot(ctx context.Context, p store.Path, name string) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.inProjectTx(ctx, p, func(q queryer, r resolved) error {
		if err := q.lockProject(ctx, r.project); err != nil {
			return err
		}
		sn, err := q.findSnapshot(ctx, r.project, name)
		if err != nil {
			return err
		}
		return q.dropSnapshot(ctx, p, r.project, sn)
	})
}

// RecordSnapshotReveal implements store.Snapshots.
func (s *Store) RecordSnapshotReveal(ctx context.Context, p store.Path, name string) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.inProjectTx(ctx, p, func(q queryer, r resolved) error {
		sn, err := q.findSnapshot(ctx, r.project, name)
		if err != nil {
			return err
		}
		_, err = q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionCredentialReveal,
			Collection: sn.Collection, Cluster: sn.Cluster, Target: name})
		return err
	})
}

// CompareSnapshot implements store.Snapshots: CompareRecords, whose from
// side is read from the snapshot's rows.
func (s *Store) CompareSnapshot(ctx context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
	return s.CompareRecords(ctx, p, from, to, visit)
}

// snapshotCompareSide is compareSide for a snapshot whose id is the
// parameter arg: its records with their cluster's name (an empty one for
// a snapshot of a cluster).
func snapshotCompareSide(side store.Side, arg string) string {
	cluster := `r.cluster`
	if side.Cluster != "" {
		cluster = `''::text COLLATE "C"`
	}
	return `SELECT ` + cluster + ` AS cluster, r.record_id AS id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at, r.updated_by
	FROM hds_snapshot_records r WHERE r.snapshot_id = ` + arg
}

// ResealSnapshots implements store.Snapshots: the values are read in
// batches by key, each batch re-sealed in one transaction that locks its
// rows (a snapshot deleted meanwhile is skipped).
func (s *Store) ResealSnapshots(ctx context.Context, reseal store.SnapshotResealer) (_ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	n := 0
	after := [3]string{"00000000-0000-0000-0000-000000000000", "", ""}
	for {
		done := true
		err := s.inTx(ctx, func(q queryer) error {
			rows, err := q.rows(ctx, `SELECT r.snapshot_id, r.cluster, r.name, r.record_id, r.type, r.value, s.automatic, s.project_id
				FROM hds_snapshot_records r JOIN hds_snapshots s ON s.id = r.snapshot_id
				WHERE r.type IN ('CREDENTIAL', '[]CREDENTIAL') AND (r.snapshot_id, r.cluster, r.name) > ($1::uuid, $2, $3)
				ORDER BY r.snapshot_id, r.cluster, r.name LIMIT 100 FOR UPDATE OF r`, after[0], after[1], after[2])
			if err != nil {
				return err
			}
			type value struct {
				snapshot, cluster, name, recordID, typ, value, projectID string
				automatic                                                bool
			}
			var batch []value
			for rows.Next() {
				var v value
				if err := rows.Scan(&v.snapshot, &v.cluster, &v.name, &v.recordID, &v.typ, &v.value, &v.automatic, &v.projectID); err != nil {
					rows.Close()
					return classify(err)
				}
				batch = append(batch, v)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return classify(err)
			}
			if len(batch) == 0 {
				return nil
			}
			done = false
			last := batch[len(batch)-1]
			after = [3]string{last.snapshot, last.cluster, last.name}
			for _, v := range batch {
				out, write, err := reseal(v.recordID, store.DataType(v.typ), json.RawMessage(v.value))
				if err != nil {
					return callerError{err}
				}
				if !write {
					continue
				}
				if _, err := q.exec(ctx, `UPDATE hds_snapshot_records SET value = $4 WHERE snapshot_id = $1 AND cluster = $2 AND name = $3`,
					v.snapshot, v.cluster, v.name, string(out)); err != nil {
					return err
				}
				if delta := int64(len(out) - len(v.value)); delta != 0 && !v.automatic {
					if _, err := q.exec(ctx, `UPDATE hds_snapshots SET bytes = bytes + $2 WHERE id = $1`, v.snapshot, delta); err != nil {
						return err
					}
					if _, err := q.exec(ctx, `UPDATE hds_projects SET bytes = bytes + $2 WHERE id = $1`, v.projectID, delta); err != nil {
						return err
					}
				}
				n++
			}
			return nil
		})
		if err != nil {
			var ce callerError
			if errors.As(err, &ce) {
				return n, ce.err
			}
			return n, err
		}
		if done {
			return n, nil
		}
	}
}

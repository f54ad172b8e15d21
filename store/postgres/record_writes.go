package postgres

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/hds-go/hds/store"
)

// The single-record writes: create, update (with its history) and delete.

// CreateRecord implements store.Store.
func (s *Store) CreateRecord(ctx context.Context, p store.Path, in *store.Record, w store.Write) (_ *store.Record, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	res, err := q.resolve(ctx, p, levelCluster)
	if err != nil {
		return nil, err
	}
	var out *store.Record
	err = s.inTx(ctx, func(q queryer) error {
		if err := q.lockProject(ctx, res.project); err != nil {
			return err
		}
		out, err = q.createRecord(ctx, siteOf(p, res.project, res.cluster.String), p.Record, in, s.now(), s.currentQuotas())
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// createRecord inserts the record name into the cluster of the site
// from in, with its audit entry.
func (q queryer) createRecord(ctx context.Context, at site, name string, in *store.Record,
	now time.Time, quotas store.Quotas) (*store.Record, error) {
	clusterID, clusterName := at.clusterID, at.cluster
	if err := store.ValidateName(name); err != nil {
		return nil, err
	}
	// The cluster's row is locked so that its records are counted exactly
	// (store.Quotas).
	if err := q.lockCluster(ctx, clusterID, clusterName); err != nil {
		return nil, err
	}
	if quotas.MaxRecordsPerCluster > 0 {
		n, err := q.count(ctx, `SELECT count(*) FROM hds_records WHERE cluster_id = $1`, clusterID)
		if err != nil {
			return nil, err
		}
		if err := quotas.CheckRecords(n); err != nil {
			// A taken name is 409 first, as the insert would say.
			if err := q.nameTaken(ctx, `SELECT EXISTS (SELECT 1 FROM hds_records WHERE cluster_id = $1 AND name = $2)`,
				"record", name, clusterID, name); err != nil {
				return nil, err
			}
			if err := q.nameIsNoID(ctx, clusterID, name, ""); err != nil {
				return nil, err
			}
			return nil, err
		}
	}
	if err := q.nameIsNoID(ctx, clusterID, name, ""); err != nil {
		return nil, err
	}
	r := in.Clone()
	r.Name, r.Version, r.CreatedAt, r.UpdatedAt, r.UpdatedBy = name, 1, now, now, at.caller.ID()
	if r.ID == "" {
		r.ID = store.NewID()
	}
	vc := valueColumnsOf(r.Type, r.Value)
	err := q.insert(ctx, "record", r.Name, "cluster", clusterName, `INSERT INTO hds_records
		(id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at, updated_by)
		VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $9, $10, $11, $12, $12, $13)
		ON CONFLICT (cluster_id, name) DO NOTHING RETURNING 1`,
		r.ID, clusterID, r.Name, strings.ToLower(r.Name), string(r.Type), string(r.Value),
		vc.vtext, vc.vtextLower, vc.sortGroup, vc.sortNum, vc.sortText, now, r.UpdatedBy)
	if err == nil {
		err = q.addBytes(ctx, at.projectID, size(r.Name, r.Value), quotas, at.project)
	}
	if err == nil {
		err = q.auditRecord(ctx, at, r, store.ActionRecordCreate)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// UpdateRecord implements store.Store: in one transaction, the record is
// found and locked (FOR UPDATE: concurrent writers, on any instance, wait
// for it), update runs, and the new state is written together with the
// history in one statement (writeSQL). The precondition is checked on the
// locked row, after the write so that a taken name (409) comes first; a
// failed precondition rolls the write back.
func (s *Store) UpdateRecord(ctx context.Context, p store.Path, w store.Write, update func(*store.Record) error) (_ *store.Record, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	var out *store.Record
	err = s.inTx(ctx, func(q queryer) error {
		if err := q.lockProjectNamed(ctx, p.Project); err != nil {
			return err
		}
		cur, at, err := q.findRecord(ctx, p, lockRecordQuery)
		if err != nil {
			return err
		}
		out, err = q.updateLocked(ctx, at, cur, w, update, s.now(), s.currentQuotas())
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// updateLocked applies update to cur, locked in the transaction q runs
// in, at the site, with the checks of UpdateRecord, and writes its audit
// entry. Update's error comes back as a callerError; a failed
// precondition must roll the transaction back.
func (q queryer) updateLocked(ctx context.Context, at site, cur *store.Record, w store.Write,
	update func(*store.Record) error, now time.Time, quotas store.Quotas) (*store.Record, error) {
	next := cur.Clone()
	if err := update(next); err != nil {
		return nil, callerError{err}
	}
	if next.Name != cur.Name {
		if err := store.ValidateName(next.Name); err != nil {
			return nil, err
		}
		if err := q.nameIsNoID(ctx, at.clusterID, next.Name, cur.ID); err != nil {
			return nil, err
		}
	}
	out, delta, err := q.write(ctx, cur, next.Name, next.Type, next.Value, now, at.caller, w)
	if err != nil {
		return nil, err
	}
	if err := w.Check(cur); err != nil {
		return nil, err
	}
	if err := q.addBytes(ctx, at.projectID, delta, quotas, at.project); err != nil {
		return nil, err
	}
	return out, q.auditRecord(ctx, at, out, store.UpdateAction(cur, next))
}

// writeSQL writes a record's new state and, in the same statement, keeps
// the state it replaces ($14, the replaced version) as a version ($15:
// when history is kept) and drops the versions beyond the newest $16.
// The CTEs see the table as it was before the statement, so the row just
// inserted is never deleted.
const writeSQL = `WITH kept AS (
	INSERT INTO hds_record_versions (record_id, version, name, type, value, changed_at, changed_by)
	SELECT $1::uuid, $14::bigint, $17::text, $18::text, $19::text, $20::timestamptz, $21::text WHERE $15::boolean
), pruned AS (
	DELETE FROM hds_record_versions WHERE record_id = $1::uuid AND version <= $14::bigint - $16::bigint
)
UPDATE hds_records SET name = $2, name_lower = $3, type = $4, value = $5,
	version = $6, vtext = $7, vtext_lower = $8, sort_group = $9, sort_num = $10, sort_text = $11,
	updated_at = $12, updated_by = $13
WHERE id = $1`

// write makes name, t and value the new state of the locked record cur,
// written at now by c, keeping cur's state in the history as
// w.MaxVersions says. It returns the new record and by how many bytes
// its project grows (store.Quotas), which the caller adds.
func (q queryer) write(ctx context.Context, cur *store.Record, name string, t store.DataType, value json.RawMessage,
	now time.Time, c store.Caller, w store.Write) (*store.Record, int64, error) {
	next := &store.Record{ID: cur.ID, Name: name, Type: t, Value: append(json.RawMessage(nil), value...),
		Version: cur.Version + 1, CreatedAt: cur.CreatedAt, UpdatedAt: now, UpdatedBy: c.ID()}
	keep := max(w.MaxVersions, 0)
	// The versions writeSQL drops.
	pruned, err := q.historyBytes(ctx, cur.ID, cur.Version-int64(keep))
	if err != nil {
		return nil, 0, err
	}
	delta := size(next.Name, next.Value) - size(cur.Name, cur.Value) - pruned
	if keep > 0 {
		delta += size(cur.Name, cur.Value)
	}
	vc := valueColumnsOf(next.Type, next.Value)
	_, err = q.exec(ctx, writeSQL,
		next.ID, next.Name, strings.ToLower(next.Name), string(next.Type), string(next.Value), next.Version,
		vc.vtext, vc.vtextLower, vc.sortGroup, vc.sortNum, vc.sortText, next.UpdatedAt, next.UpdatedBy,
		cur.Version, keep > 0, keep,
		cur.Name, string(cur.Type), string(cur.Value), cur.UpdatedAt, cur.UpdatedBy)
	if isUniqueViolation(err) {
		return nil, 0, &store.ExistsError{Kind: "record", Name: next.Name}
	}
	if err != nil {
		return nil, 0, err
	}
	return next, delta, nil
}

// historyBytes returns what the kept versions of the record with id, up
// to version through, count against its project's quota.
func (q queryer) historyBytes(ctx context.Context, id string, through int64) (int64, error) {
	return q.sum(ctx, `SELECT coalesce(sum(octet_length(name) + octet_length(value)), 0)
		FROM hds_record_versions WHERE record_id = $1 AND version <= $2`, id, through)
}

// size is what a name and a value count against a project's quota.
func size(name string, value json.RawMessage) int64 { return int64(len(name) + len(value)) }

// DeleteRecord implements store.Store, in one transaction on the locked
// record: the condition is checked on it, and the bytes it and its
// history held are given back to its project (store.Quotas).
func (s *Store) DeleteRecord(ctx context.Context, p store.Path, w store.Write) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.inTx(ctx, func(q queryer) error {
		if err := q.lockProjectNamed(ctx, p.Project); err != nil {
			return err
		}
		r, at, err := q.findRecord(ctx, p, lockRecordQuery)
		if err != nil {
			return err
		}
		if err := w.Check(r); err != nil {
			return err
		}
		return q.deleteRecord(ctx, at, r, p.Record)
	})
}

// deleteRecord deletes the locked record r at the site (named name in
// the request), takes it and its history off the project's bytes
// (store.Quotas), and writes its audit entry.
func (q queryer) deleteRecord(ctx context.Context, at site, r *store.Record, name string) error {
	history, err := q.historyBytes(ctx, r.ID, r.Version) // every kept version is older than r's
	if err != nil {
		return err
	}
	if err := q.deleteByID(ctx, "hds_records", r.ID, "record", name); err != nil {
		return err
	}
	if err := q.addBytes(ctx, at.projectID, -size(r.Name, r.Value)-history, store.Quotas{}, at.project); err != nil {
		return err
	}
	return q.auditRecord(ctx, at, r, store.ActionRecordDelete)
}

package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/hds-go/hds/store"
)

// A record's history: its kept versions, read and restored.

const versionColumns = `version, name, type, value, changed_at, changed_by`

func scanVersion(row interface{ Scan(...any) error }, extra ...any) (*store.RecordVersion, error) {
	var v store.RecordVersion
	var typ string
	err := row.Scan(append([]any{&v.Version, &v.Name, &typ, (*[]byte)(&v.Value), &v.ChangedAt, &v.ChangedBy}, extra...)...)
	v.Type, v.ChangedAt = store.DataType(typ), v.ChangedAt.UTC()
	return &v, err
}

// FindRecordVersions implements store.Store: the record's path in one
// round trip, its states in another.
func (s *Store) FindRecordVersions(ctx context.Context, p store.Path, lq store.ListQuery) ([]*store.RecordVersion, int, error) {
	page, total, err := s.findRecordVersions(ctx, p, lq, false)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*store.RecordVersion, len(page))
	for i, v := range page {
		out[i] = v.item
	}
	return out, total, nil
}

// findRecordVersions reads a page of the record's states; with lazy, the
// values of kept versions larger than inlineBytes are left out.
func (s *Store) findRecordVersions(ctx context.Context, p store.Path, lq store.ListQuery, lazily bool) (_ []lazy[*store.RecordVersion], _ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	cur, _, err := q.findRecord(ctx, p, findRecordQuery)
	if err != nil {
		return nil, 0, err
	}
	var kept int
	row, err := q.row(ctx, `SELECT count(*) FROM hds_record_versions WHERE record_id = $1`, cur.ID)
	if err == nil {
		err = classify(row.Scan(&kept))
	}
	if err != nil {
		return nil, 0, err
	}
	out := []lazy[*store.RecordVersion]{}
	offset, limit := lq.Offset, lq.Limit
	if offset == 0 && limit > 0 {
		v := store.VersionOf(cur)
		v.Value = cur.Value // cur is ours: no copy
		out = append(out, lazy[*store.RecordVersion]{item: v})
		limit--
	} else if offset > 0 {
		offset--
	}
	if limit > 0 && offset < kept {
		columns := versionColumns
		if lazily {
			columns = lazyVersionColumns
		}
		rows, err := q.rows(ctx, `SELECT `+columns+` FROM hds_record_versions v WHERE record_id = $1
			ORDER BY version DESC LIMIT $2 OFFSET $3`, cur.ID, limit, offset)
		if err != nil {
			return nil, 0, err
		}
		defer rows.Close()
		for rows.Next() {
			var it lazy[*store.RecordVersion]
			if lazily {
				it, err = scanLazyVersion(rows)
			} else {
				it.item, err = scanVersion(rows)
			}
			if err != nil {
				return nil, 0, classify(err)
			}
			it.item.RecordID = cur.ID
			out = append(out, it)
		}
		if err := rows.Err(); err != nil {
			return nil, 0, classify(err)
		}
	}
	return out, kept + 1, nil
}

// version returns the state of cur at version, or a NotFoundError.
func (q queryer) version(ctx context.Context, cur *store.Record, version int64) (*store.RecordVersion, error) {
	if version == cur.Version {
		return store.VersionOf(cur), nil
	}
	if version > cur.Version || version < 1 {
		return nil, store.VersionNotFound(version)
	}
	row, err := q.row(ctx, `SELECT `+versionColumns+` FROM hds_record_versions WHERE record_id = $1 AND version = $2`, cur.ID, version)
	if err != nil {
		return nil, err
	}
	v, err := scanVersion(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.VersionNotFound(version)
	}
	v.RecordID = cur.ID
	return v, classify(err)
}

// FindRecordVersion implements store.Store.
func (s *Store) FindRecordVersion(ctx context.Context, p store.Path, version int64) (_ *store.Record, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	cur, _, err := q.findRecord(ctx, p, findRecordQuery)
	if err != nil {
		return nil, err
	}
	v, err := q.version(ctx, cur, version)
	if err != nil {
		return nil, err
	}
	return v.At(cur), nil
}

// RestoreRecord implements store.Store, in one transaction on the locked
// record.
func (s *Store) RestoreRecord(ctx context.Context, p store.Path, version int64, w store.Write) (_ *store.Record, err error) {
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
		v, err := q.version(ctx, cur, version)
		if err != nil {
			return err
		}
		if err := w.Check(cur); err != nil {
			return err
		}
		var delta int64
		if out, delta, err = q.write(ctx, cur, cur.Name, v.Type, v.Value, s.now(), p.Caller, w); err != nil {
			return err
		}
		if err := q.addBytes(ctx, at.projectID, delta, s.currentQuotas(), p.Project); err != nil {
			return err
		}
		return q.auditRecord(ctx, at, out, store.ActionRecordRestore)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

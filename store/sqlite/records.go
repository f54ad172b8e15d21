package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/hds-go/hds/store"
)

// recordCols are the columns scanRecord reads, of hds_records as r.
const recordCols = `r.id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at, r.updated_by`

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanRecord reads the recordCols of a row.
func scanRecord(row scanner) (*store.Record, error) {
	var r store.Record
	var typ, value string
	var created, updated int64
	if err := row.Scan(&r.ID, &r.Name, &typ, &value, &r.Version, &created, &updated, &r.UpdatedBy); err != nil {
		return nil, err
	}
	r.Type, r.Value = store.DataType(typ), json.RawMessage(value)
	r.CreatedAt, r.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &r, nil
}

// eachRecord calls f with each record a query of recordCols returns.
func (t *tx) eachRecord(query string, args []any, f func(*store.Record) error) error {
	rows, err := t.rows(query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return err
		}
		if err := f(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// recordIn finds the record name (or id) of k, or returns nil.
func (t *tx) recordIn(k *clus, name string) (*store.Record, error) {
	if id, ok := store.CanonicalUUID(name); ok {
		r, err := scanRecord(t.row(`SELECT `+recordCols+` FROM hds_records r WHERE r.cluster_id = ? AND r.id = ?`, k.ID, id))
		if err == nil || !errors.Is(err, sql.ErrNoRows) {
			return r, err
		}
	}
	r, err := scanRecord(t.row(`SELECT `+recordCols+` FROM hds_records r WHERE r.cluster_id = ? AND r.name = ?`, k.ID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// record resolves p's record, in one statement with the path above it.
func (t *tx) record(p store.Path) (*clus, *store.Record, error) {
	r, err := t.resolve(p, toRecord)
	if err != nil {
		return nil, nil, err
	}
	return r.k, r.r, nil
}

// FindRecord implements store.Store: one statement (resolve.go).
func (s *Store) FindRecord(ctx context.Context, p store.Path) (*store.Record, error) {
	var out *store.Record
	err := s.readOne(ctx, func(t *tx) error {
		_, r, err := t.record(p)
		out = r
		return err
	})
	return out, err
}

// CreateRecord implements store.Store. What does not need the database
// (the name's check, the id, the copy of the value and its index keys) is
// done before the writer takes the call (newRecord), so that the one
// writer does not spend its time on it; the project's revision and byte
// count are written once, by one statement (flushProject).
func (s *Store) CreateRecord(ctx context.Context, p store.Path, in *store.Record, _ store.Write) (*store.Record, error) {
	nr := newRecord(p.Record, in)
	var out *store.Record
	err := s.writeReplay(ctx, func(t *tx) error {
		k, err := t.cluster(p)
		if err != nil {
			return err
		}
		t.deferProject = true
		if out, err = t.createNew(k, nr, p.Caller); err != nil {
			return err
		}
		return t.flushProject()
	})
	return out, err
}

// prepared is a record to create as newRecord makes it, before its
// transaction: what createNew writes and the errors it gives, in their
// order.
type prepared struct {
	name    string
	nameErr error // store.ValidateName's
	// id is the record's id (new, or the canonical form of the one
	// given: given); idErr when the one given is not a UUID.
	id    string
	given bool
	idErr error
	typ   store.DataType
	value json.RawMessage
	// The columns recordKeys derives from the value, and the name's
	// lower-cased form and the bytes the record counts.
	vk               []byte
	rk, vtext, lower any
	nameLower        string
	n                int64
}

// newRecord prepares the record name, from in, for createNew.
func newRecord(name string, in *store.Record) *prepared {
	nr := &prepared{name: name, typ: in.Type}
	if nr.nameErr = store.ValidateName(name); nr.nameErr != nil {
		return nr
	}
	if in.ID == "" {
		nr.id = store.NewID()
	} else if canon, ok := store.CanonicalUUID(in.ID); ok {
		nr.id, nr.given = canon, true
	} else {
		nr.idErr = &store.ValidationError{Message: "record id " + strconv.Quote(in.ID) + " is not a UUID"}
	}
	nr.value = append(json.RawMessage(nil), in.Value...)
	nr.vk, nr.rk, nr.vtext, nr.lower = recordKeys(nr.typ, nr.value)
	nr.nameLower = lower(name)
	nr.n = size(name, nr.value)
	return nr
}

// createRecord adds the record name to k from in, made by c, with its
// audit entry.
func (t *tx) createRecord(k *clus, name string, in *store.Record, c store.Caller) (*store.Record, error) {
	return t.createNew(k, newRecord(name, in), c)
}

// createNew adds the record nr to k, made by c, with its audit entry.
func (t *tx) createNew(k *clus, nr *prepared, c store.Caller) (*store.Record, error) {
	if nr.nameErr != nil {
		return nil, nr.nameErr
	}
	existing, err := t.recordIn(k, nr.name)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return nil, &store.ExistsError{Kind: "record", Name: nr.name}
	}
	if err := t.s.quotas.Load().CheckRecords(k.records); err != nil {
		return nil, err
	}
	if err := t.s.quotas.Load().CheckBytes(k.c.pr.bytes, nr.n); err != nil {
		return nil, err
	}
	if nr.idErr != nil {
		return nil, nr.idErr
	}
	if nr.given {
		var n int
		if err := t.row(`SELECT count(*) FROM hds_records WHERE id = ?`, nr.id).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, &store.ExistsError{Kind: "record id", Name: nr.id}
		}
	}
	r := &store.Record{ID: nr.id, Name: nr.name, Type: nr.typ, Value: nr.value, Version: 1,
		CreatedAt: t.now, UpdatedAt: t.now, UpdatedBy: c.ID()}
	// seq numbers the record in hds_records_text (migration 0003).
	if _, err := t.exec(`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower,
		vkey, rkey, bytes, created_at, updated_at, updated_by, seq) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?,
		(SELECT coalesce(max(seq), 0) + 1 FROM hds_records))`,
		r.ID, k.ID, r.Name, nr.nameLower, string(r.Type), string(r.Value), nr.vtext, nr.lower, nr.vk, nr.rk, nr.n,
		micros(t.now), micros(t.now), r.UpdatedBy); err != nil {
		return nil, err
	}
	if _, err := t.exec(`UPDATE hds_clusters SET records = records + 1 WHERE id = ?`, k.ID); err != nil {
		return nil, err
	}
	k.records++
	if err := t.addBytes(k.c.pr, nr.n); err != nil {
		return nil, err
	}
	return r, t.auditRecord(k, r, c, store.ActionRecordCreate)
}

// auditRecord writes the audit entry of action on r, in k, by c.
func (t *tx) auditRecord(k *clus, r *store.Record, c store.Caller, action store.Action) error {
	return t.audit(k.c.pr, c, store.AuditEntry{Action: action, Collection: k.c.Name, Cluster: k.Name,
		Record: r.Name, RecordID: r.ID, Version: r.Version})
}

// UpdateRecord implements store.Store. The project's revision and byte
// count are written once, by one statement (flushProject).
func (s *Store) UpdateRecord(ctx context.Context, p store.Path, w store.Write, update func(*store.Record) error) (*store.Record, error) {
	var out *store.Record
	err := s.writeReplay(ctx, func(t *tx) error {
		k, r, err := t.record(p)
		if err != nil {
			return err
		}
		t.deferProject = true
		if out, err = t.updateRecord(k, r, p.Caller, w, update); err != nil {
			return err
		}
		return t.flushProject()
	})
	return out, err
}

// updateRecord applies update to r, in k, by c, with the checks of
// UpdateRecord, and returns the record as written.
func (t *tx) updateRecord(k *clus, r *store.Record, c store.Caller, w store.Write, update func(*store.Record) error) (*store.Record, error) {
	next := r.Clone()
	if err := update(next); err != nil {
		return nil, err
	}
	if next.Name != r.Name {
		if err := store.ValidateName(next.Name); err != nil {
			return nil, err
		}
		id, _ := store.CanonicalUUID(next.Name)
		var n int
		if err := t.row(`SELECT count(*) FROM hds_records WHERE cluster_id = ? AND (name = ? OR id = ?) AND id <> ?`,
			k.ID, next.Name, id, r.ID).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, &store.ExistsError{Kind: "record", Name: next.Name}
		}
	}
	if err := w.Check(r); err != nil {
		return nil, err
	}
	action := store.UpdateAction(r, next)
	out, err := t.writeRecord(k, r, next.Name, next.Type, next.Value, c, w)
	if err != nil {
		return nil, err
	}
	return out, t.auditRecord(k, out, c, action)
}

// writeRecord makes name, type and value the record's new state, keeping
// the state it replaces in its history, cut to w.MaxVersions, or returns
// the *store.QuotaError of a project that would grow past its quota.
func (t *tx) writeRecord(k *clus, cur *store.Record, name string, typ store.DataType, value json.RawMessage, c store.Caller, w store.Write) (*store.Record, error) {
	var before int64
	if err := t.row(`SELECT bytes FROM hds_records WHERE id = ?`, cur.ID).Scan(&before); err != nil {
		return nil, err
	}
	// The history's bytes once cut, known before anything is written: the
	// state cur replaces (kept when w.MaxVersions > 0) and the newest
	// w.MaxVersions-1 versions before it. The quota is checked first, so
	// that a write past it fails having written nothing: in a lean group
	// of writes (writer.go) it is answered and the group goes on, instead
	// of the group being rolled back and run again.
	var hist int64
	if w.MaxVersions > 0 {
		if err := t.row(`SELECT coalesce(sum(b), 0) FROM (SELECT length(CAST(name AS BLOB)) + length(CAST(value AS BLOB)) AS b
			FROM hds_record_versions WHERE record_id = ? ORDER BY version DESC LIMIT ?)`, cur.ID, w.MaxVersions-1).Scan(&hist); err != nil {
			return nil, err
		}
		hist += size(cur.Name, cur.Value)
	}
	after := size(name, value) + hist
	if err := t.s.quotas.Load().CheckBytes(k.c.pr.bytes, after-before); err != nil {
		return nil, err
	}
	if w.MaxVersions > 0 {
		if _, err := t.exec(`INSERT INTO hds_record_versions (record_id, version, name, type, value, changed_at, changed_by)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, cur.ID, cur.Version, cur.Name, string(cur.Type), string(cur.Value),
			micros(cur.UpdatedAt), cur.UpdatedBy); err != nil {
			return nil, err
		}
	}
	if _, err := t.exec(`DELETE FROM hds_record_versions WHERE record_id = ? AND version NOT IN
		(SELECT version FROM hds_record_versions WHERE record_id = ? ORDER BY version DESC LIMIT ?)`,
		cur.ID, cur.ID, max(w.MaxVersions, 0)); err != nil {
		return nil, err
	}
	if err := t.addBytes(k.c.pr, after-before); err != nil {
		return nil, err
	}
	r := &store.Record{ID: cur.ID, Name: name, Type: typ, Value: append(json.RawMessage(nil), value...), Version: cur.Version + 1,
		CreatedAt: cur.CreatedAt, UpdatedAt: t.now, UpdatedBy: c.ID()}
	vk, rk, vtext, vlower := recordKeys(typ, value)
	if _, err := t.exec(`UPDATE hds_records SET name = ?, name_lower = ?, type = ?, value = ?, version = ?, vtext = ?,
		vtext_lower = ?, vkey = ?, rkey = ?, bytes = ?, updated_at = ?, updated_by = ? WHERE id = ?`,
		name, lower(name), string(typ), string(value), r.Version, vtext, vlower, vk, rk, after,
		micros(t.now), r.UpdatedBy, r.ID); err != nil {
		return nil, err
	}
	return r, nil
}

// DeleteRecord implements store.Store. The project's revision and byte
// count are written once, by one statement (flushProject).
func (s *Store) DeleteRecord(ctx context.Context, p store.Path, w store.Write) error {
	return s.writeReplay(ctx, func(t *tx) error {
		k, r, err := t.record(p)
		if err != nil {
			return err
		}
		if err := w.Check(r); err != nil {
			return err
		}
		t.deferProject = true
		if err := t.deleteRecord(k, r, p.Caller); err != nil {
			return err
		}
		return t.flushProject()
	})
}

// deleteRecord deletes r of k and its history, by c.
func (t *tx) deleteRecord(k *clus, r *store.Record, c store.Caller) error {
	var n int64
	if err := t.row(`DELETE FROM hds_records WHERE id = ? RETURNING bytes`, r.ID).Scan(&n); err != nil {
		return err
	}
	if _, err := t.exec(`UPDATE hds_clusters SET records = records - 1 WHERE id = ?`, k.ID); err != nil {
		return err
	}
	k.records--
	if err := t.addBytes(k.c.pr, -n); err != nil {
		return err
	}
	return t.auditRecord(k, r, c, store.ActionRecordDelete)
}

// versions returns the states of r, newest first: its current one, then
// the kept ones.
func (t *tx) versions(r *store.Record, limit, offset int) ([]*store.RecordVersion, int, error) {
	var kept int
	if err := t.row(`SELECT count(*) FROM hds_record_versions WHERE record_id = ?`, r.ID).Scan(&kept); err != nil {
		return nil, 0, err
	}
	out := []*store.RecordVersion{}
	if offset == 0 && limit > 0 {
		out = append(out, store.VersionOf(r))
		limit--
	} else if offset > 0 {
		offset--
	}
	if limit > 0 {
		rows, err := t.rows(`SELECT version, name, type, value, changed_at, changed_by FROM hds_record_versions
			WHERE record_id = ? ORDER BY version DESC LIMIT ? OFFSET ?`, r.ID, limit, offset)
		if err != nil {
			return nil, 0, err
		}
		defer rows.Close()
		for rows.Next() {
			v := store.RecordVersion{RecordID: r.ID}
			var typ, value string
			var at int64
			if err := rows.Scan(&v.Version, &v.Name, &typ, &value, &at, &v.ChangedBy); err != nil {
				return nil, 0, err
			}
			v.Type, v.Value, v.ChangedAt = store.DataType(typ), json.RawMessage(value), fromMicros(at)
			out = append(out, &v)
		}
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
	}
	return out, kept + 1, nil
}

// version returns the state of r at version v, or nil.
func (t *tx) version(r *store.Record, v int64) (*store.RecordVersion, error) {
	if v == r.Version {
		return store.VersionOf(r), nil
	}
	out := store.RecordVersion{RecordID: r.ID, Version: v}
	var typ, value string
	var at int64
	err := t.row(`SELECT name, type, value, changed_at, changed_by FROM hds_record_versions WHERE record_id = ? AND version = ?`, r.ID, v).
		Scan(&out.Name, &typ, &value, &at, &out.ChangedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out.Type, out.Value, out.ChangedAt = store.DataType(typ), json.RawMessage(value), fromMicros(at)
	return &out, nil
}

// FindRecordVersions implements store.Store.
func (s *Store) FindRecordVersions(ctx context.Context, p store.Path, q store.ListQuery) ([]*store.RecordVersion, int, error) {
	var out []*store.RecordVersion
	var total int
	err := s.read(ctx, func(t *tx) error {
		_, r, err := t.record(p)
		if err != nil {
			return err
		}
		out, total, err = t.versions(r, q.Limit, q.Offset)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// FindRecordVersion implements store.Store.
func (s *Store) FindRecordVersion(ctx context.Context, p store.Path, version int64) (*store.Record, error) {
	var out *store.Record
	err := s.read(ctx, func(t *tx) error {
		_, r, err := t.record(p)
		if err != nil {
			return err
		}
		v, err := t.version(r, version)
		if err != nil {
			return err
		}
		if v == nil {
			return store.VersionNotFound(version)
		}
		out = v.At(r)
		return nil
	})
	return out, err
}

// RestoreRecord implements store.Store.
func (s *Store) RestoreRecord(ctx context.Context, p store.Path, version int64, w store.Write) (*store.Record, error) {
	var out *store.Record
	err := s.write(ctx, func(t *tx) error {
		k, r, err := t.record(p)
		if err != nil {
			return err
		}
		v, err := t.version(r, version)
		if err != nil {
			return err
		}
		if v == nil {
			return store.VersionNotFound(version)
		}
		if err := w.Check(r); err != nil {
			return err
		}
		out, err = t.writeRecord(k, r, r.Name, v.Type, v.Value, p.Caller, w)
		if err != nil {
			return err
		}
		return t.auditRecord(k, out, p.Caller, store.ActionRecordRestore)
	})
	return out, err
}

// ResealRecord implements store.Store. Every new value is computed before
// any is written, in one transaction: an error changes nothing.
func (s *Store) ResealRecord(ctx context.Context, id string, reseal store.Resealer) (bool, error) {
	changed := false
	err := s.write(ctx, func(t *tx) error {
		canon, ok := store.CanonicalUUID(id)
		if !ok {
			return &store.NotFoundError{Kind: "record", Name: id}
		}
		var projectID, typ, value string
		err := t.row(`SELECT c.project_id, r.type, r.value FROM hds_records r JOIN hds_clusters k ON k.id = r.cluster_id
			JOIN hds_collections c ON c.id = k.collection_id WHERE r.id = ?`, canon).Scan(&projectID, &typ, &value)
		if errors.Is(err, sql.ErrNoRows) {
			return &store.NotFoundError{Kind: "record", Name: id}
		}
		if err != nil {
			return err
		}
		type state struct {
			version int64
			value   string
		}
		var cur *state
		if t := store.DataType(typ); t.IsCredential() {
			v, ok, err := reseal(t, json.RawMessage(value))
			if err != nil {
				return err
			}
			if ok {
				cur = &state{value: string(v)}
			}
		}
		rows, err := t.rows(`SELECT version, type, value FROM hds_record_versions WHERE record_id = ?
			AND type IN ('CREDENTIAL', '[]CREDENTIAL') ORDER BY version`, canon)
		if err != nil {
			return err
		}
		var hist []state
		for rows.Next() {
			var st state
			var vt string
			if err := rows.Scan(&st.version, &vt, &st.value); err != nil {
				rows.Close()
				return err
			}
			v, ok, err := reseal(store.DataType(vt), json.RawMessage(st.value))
			if err != nil {
				rows.Close()
				return err
			}
			if ok {
				hist = append(hist, state{version: st.version, value: string(v)})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if cur != nil {
			if _, err := t.exec(`UPDATE hds_records SET value = ? WHERE id = ?`, cur.value, canon); err != nil {
				return err
			}
			changed = true
		}
		for _, h := range hist {
			if _, err := t.exec(`UPDATE hds_record_versions SET value = ? WHERE record_id = ? AND version = ?`, h.value, canon, h.version); err != nil {
				return err
			}
			changed = true
		}
		if !changed {
			return nil
		}
		// Re-sealing is never refused: the counts follow the new sizes.
		var before, after int64
		if err := t.row(`SELECT bytes FROM hds_records WHERE id = ?`, canon).Scan(&before); err != nil {
			return err
		}
		if err := t.row(`SELECT length(CAST(name AS BLOB)) + length(CAST(value AS BLOB))
			+ coalesce((SELECT sum(length(CAST(v.name AS BLOB)) + length(CAST(v.value AS BLOB))) FROM hds_record_versions v WHERE v.record_id = r.id), 0)
			FROM hds_records r WHERE id = ?`, canon).Scan(&after); err != nil {
			return err
		}
		if _, err := t.exec(`UPDATE hds_records SET bytes = ? WHERE id = ?`, after, canon); err != nil {
			return err
		}
		_, err = t.exec(`UPDATE hds_projects SET bytes = bytes + ? WHERE id = ?`, after-before, projectID)
		return err
	})
	return changed, err
}

// FindCredentialRecords implements store.Store.
func (s *Store) FindCredentialRecords(ctx context.Context, afterID string, limit int) ([]store.RecordRef, error) {
	var refs []store.RecordRef
	err := s.read(ctx, func(t *tx) error {
		rows, err := t.rows(`SELECT p.name, c.name, k.name, `+recordCols+` FROM hds_records r
			JOIN hds_clusters k ON k.id = r.cluster_id JOIN hds_collections c ON c.id = k.collection_id
			JOIN hds_projects p ON p.id = c.project_id
			WHERE r.id > ? AND (r.type IN ('CREDENTIAL', '[]CREDENTIAL') OR EXISTS (SELECT 1 FROM hds_record_versions v
				WHERE v.record_id = r.id AND v.type IN ('CREDENTIAL', '[]CREDENTIAL')))
			ORDER BY r.id LIMIT ?`, afterID, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var pn, cn, kn string
			var r store.Record
			var typ, value string
			var created, updated int64
			if err := rows.Scan(&pn, &cn, &kn, &r.ID, &r.Name, &typ, &value, &r.Version, &created, &updated, &r.UpdatedBy); err != nil {
				return err
			}
			r.Type, r.Value = store.DataType(typ), json.RawMessage(value)
			r.CreatedAt, r.UpdatedAt = fromMicros(created), fromMicros(updated)
			refs = append(refs, store.RecordRef{Path: store.Path{Project: pn, Collection: cn, Cluster: kn, Record: r.ID}, Record: &r})
		}
		return rows.Err()
	})
	return refs, err
}

package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/hds-go/hds/store"
)

// Credential records: re-sealing under a new key, and finding them.

// ResealRecord implements store.Store: in one transaction, the record and
// its credential versions are locked, re-sealed in Go, and the changed
// values written back; nothing else of them changes.
func (s *Store) ResealRecord(ctx context.Context, id string, reseal store.Resealer) (_ bool, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	rid, ok := store.CanonicalUUID(id)
	if !ok {
		return false, &store.NotFoundError{Kind: "record", Name: id}
	}
	changed := false
	err = s.inTx(ctx, func(q queryer) error {
		if _, err := q.exec(ctx, `SELECT 1 FROM hds_projects p WHERE p.id = (SELECT c.project_id FROM hds_records r
			JOIN hds_clusters k ON k.id = r.cluster_id JOIN hds_collections c ON c.id = k.collection_id WHERE r.id = $1)
			FOR NO KEY UPDATE`, rid); err != nil {
			return err
		}
		row, err := q.row(ctx, `SELECT type, value, cluster_id FROM hds_records WHERE id = $1 FOR UPDATE`, rid)
		if err != nil {
			return err
		}
		var typ, value, clusterID string
		var delta int64 // what re-sealing changes in the project's bytes (never refused)
		switch err := row.Scan(&typ, &value, &clusterID); {
		case errors.Is(err, sql.ErrNoRows):
			return &store.NotFoundError{Kind: "record", Name: id}
		case err != nil:
			return classify(err)
		}
		if t := store.DataType(typ); t.IsCredential() {
			v, ok, err := reseal(t, json.RawMessage(value))
			if err != nil {
				return err
			}
			if ok {
				if _, err := q.exec(ctx, `UPDATE hds_records SET value = $2 WHERE id = $1`, rid, string(v)); err != nil {
					return err
				}
				changed = true
				delta += int64(len(v) - len(value))
			}
		}
		rows, err := q.rows(ctx, `SELECT version, type, value FROM hds_record_versions
			WHERE record_id = $1 AND type IN ('CREDENTIAL', '[]CREDENTIAL') ORDER BY version FOR UPDATE`, rid)
		if err != nil {
			return err
		}
		type stale struct {
			version int64
			value   json.RawMessage
			was     int
		}
		var updates []stale
		for rows.Next() {
			var version int64
			if err := rows.Scan(&version, &typ, &value); err != nil {
				rows.Close()
				return classify(err)
			}
			v, ok, err := reseal(store.DataType(typ), json.RawMessage(value))
			if err != nil {
				rows.Close()
				return err
			}
			if ok {
				updates = append(updates, stale{version, v, len(value)})
			}
		}
		if err := rows.Err(); err != nil {
			return classify(err)
		}
		rows.Close()
		for _, u := range updates {
			if _, err := q.exec(ctx, `UPDATE hds_record_versions SET value = $3 WHERE record_id = $1 AND version = $2`,
				rid, u.version, string(u.value)); err != nil {
				return err
			}
			changed = true
			delta += int64(len(u.value) - u.was)
		}
		return q.addBytesOfCluster(ctx, clusterID, delta, store.Quotas{}, "")
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// FindCredentialRecords implements store.Store.
func (s *Store) FindCredentialRecords(ctx context.Context, afterID string, limit int) (_ []store.RecordRef, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	var after any
	if afterID != "" {
		u, ok := store.CanonicalUUID(afterID)
		if !ok {
			return nil, &store.ValidationError{Message: "afterID must be a record id"}
		}
		after = u
	}
	rows, err := s.q().rows(ctx, `SELECT p.name, c.name, k.name, `+recordColumns+`
		FROM hds_records r
		JOIN hds_clusters k ON k.id = r.cluster_id
		JOIN hds_collections c ON c.id = k.collection_id
		JOIN hds_projects p ON p.id = c.project_id
		WHERE (r.type IN ('CREDENTIAL', '[]CREDENTIAL') OR EXISTS (SELECT 1 FROM hds_record_versions v
			WHERE v.record_id = r.id AND v.type IN ('CREDENTIAL', '[]CREDENTIAL')))
			AND ($1::uuid IS NULL OR r.id > $1::uuid)
		ORDER BY r.id LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	refs := []store.RecordRef{}
	for rows.Next() {
		var ref store.RecordRef
		rec, err := scanRecordWith(rows, &ref.Path.Project, &ref.Path.Collection, &ref.Path.Cluster)
		if err != nil {
			return nil, classify(err)
		}
		ref.Record, ref.Path.Record = rec, rec.ID
		refs = append(refs, ref)
	}
	return refs, classify(rows.Err())
}

package postgres

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/hds-go/hds/store"
)

// A set-based run written back: its records, versions, deletes and
// byte count in a few statements over arrays.

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
	var updated, created, kept []*store.Record
	var updatedIn, createdIn []string // the cluster ids of updated and created
	var cutIDs []string
	var cuts []int64
	for _, rec := range tx.recs {
		switch {
		case rec.cur == nil && rec.pre != nil:
			deleted = append(deleted, rec.pre.ID)
		case rec.cur == nil:
		case rec.pre == nil:
			created, createdIn = append(created, rec.cur), append(createdIn, rec.k.id)
		case rec.cur != rec.pre:
			updated, updatedIn = append(updated, rec.cur), append(updatedIn, rec.k.id)
			if rec.cut > 0 {
				cutIDs, cuts = append(cutIDs, rec.cur.ID), append(cuts, rec.cut)
			}
		}
		if rec.cur != nil {
			for _, v := range rec.hist {
				if v.v != nil {
					kept = append(kept, v.v)
				}
			}
		}
	}
	// Each statement writes at most writeChunk rows, and at most about
	// writeBytes of values, so that it takes a bounded time (each
	// statement must end within the store's timeout, see conn.go) and its
	// arguments, made for it alone, a bounded memory.
	err := chunked(len(deleted), func(i, j int) error {
		_, err := tx.q.exec(ctx, `DELETE FROM hds_records WHERE id = ANY($1::uuid[])`, pq.Array(deleted[i:j]))
		return err
	})
	if err == nil {
		err = chunkedRecords(updated, func(i, j int) error {
			var rows recordRows
			for n := i; n < j; n++ {
				rows.add(updatedIn[n], updated[n])
			}
			_, err := tx.q.exec(ctx, `UPDATE hds_records r SET name = u.name, name_lower = u.name_lower, type = u.type,
			value = u.value, version = u.version, vtext = u.vtext, vtext_lower = u.vtext_lower, sort_group = u.sort_group,
			sort_num = u.sort_num, sort_text = u.sort_text, updated_at = $1, updated_by = $2
			FROM `+recordsUnnest+` WHERE r.id = u.id`, append([]any{tx.now, tx.c.ID()}, rows.args()...)...)
			return err
		})
	}
	if err == nil {
		err = chunkedRecords(created, func(i, j int) error {
			var rows recordRows
			for n := i; n < j; n++ {
				rows.add(createdIn[n], created[n])
			}
			_, err := tx.q.exec(ctx, `INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version,
			vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at, updated_by)
			SELECT u.id, u.cluster_id, u.name, u.name_lower, u.type, u.value, u.version,
			u.vtext, u.vtext_lower, u.sort_group, u.sort_num, u.sort_text, $1, $1, $2 FROM `+recordsUnnest,
				append([]any{tx.now, tx.c.ID()}, rows.args()...)...)
			return err
		})
	}
	if err == nil {
		err = chunked(len(cutIDs), func(i, j int) error {
			_, err := tx.q.exec(ctx, `DELETE FROM hds_record_versions v USING unnest($1::uuid[], $2::bigint[]) u(id, cut)
			WHERE v.record_id = u.id AND v.version <= u.cut`, pq.Array(cutIDs[i:j]), pq.Array(cuts[i:j]))
			return err
		})
	}
	if err == nil {
		err = chunkedRecords(kept, func(i, j int) error {
			var rows versionRows
			for _, r := range kept[i:j] {
				rows.add(r)
			}
			_, err := tx.q.exec(ctx, `INSERT INTO hds_record_versions (record_id, version, name, type, value, changed_at, changed_by)
			SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[])`,
				pq.Array(rows.ids), pq.Array(rows.versions), pq.Array(rows.names), pq.Array(rows.types),
				pq.Array(rows.values), pq.Array(rows.at), pq.Array(rows.by))
			return err
		})
	}
	if err != nil {
		return err
	}
	if tx.delta != 0 {
		if _, err := tx.q.exec(ctx, `UPDATE hds_projects SET bytes = bytes + $2 WHERE id = $1`, tx.projectID, tx.delta); err != nil {
			return err
		}
	}
	return chunked(len(tx.entries), func(i, j int) error {
		return tx.q.auditAll(ctx, tx.projectID, tx.c, tx.entries[i:j])
	})
}

// writeChunk is how many rows one statement of a set-based write writes
// at most; writeBytes about how many bytes of records (names and
// values) one statement that writes records holds at most, unless one
// record alone holds more.
const (
	writeChunk = 1000
	writeBytes = 1 << 20
)

// chunkedRecords calls write(i, j) for the ranges [i, j) of recs of at
// most writeChunk records and writeBytes bytes (or one record), in
// order, until one fails.
func chunkedRecords(recs []*store.Record, write func(i, j int) error) error {
	for i := 0; i < len(recs); {
		j, n := i+1, size(recs[i].Name, recs[i].Value)
		for j < len(recs) && j-i < writeChunk {
			n += size(recs[j].Name, recs[j].Value)
			if n > writeBytes {
				break
			}
			j++
		}
		if err := write(i, j); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// chunked calls write(i, j) for the ranges [i, j) of at most writeChunk
// of n rows, in order, until one fails.
func chunked(n int, write func(i, j int) error) error {
	for i := 0; i < n; i += writeChunk {
		if err := write(i, min(i+writeChunk, n)); err != nil {
			return err
		}
	}
	return nil
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

// args are the arguments of the rows.
func (rr *recordRows) args() []any {
	return []any{pq.Array(rr.ids), pq.Array(rr.clusters), pq.Array(rr.names), pq.Array(rr.lower),
		pq.Array(rr.types), pq.Array(rr.values), pq.Array(rr.versions), pq.Array(rr.vtext),
		pq.Array(rr.vtextLower), pq.Array(rr.sortGroups), pq.Array(rr.sortNum), pq.Array(rr.sortText)}
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

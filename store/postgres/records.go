package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/hds-go/hds/store"
)

const recordColumns = `r.id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at`

func scanRecord(row interface{ Scan(...any) error }, extra ...any) (*store.Record, error) {
	return scanRecordAt(row, nil, extra)
}

// scanRecordWith scans columns before the record's (leading) into lead.
func scanRecordWith(row interface{ Scan(...any) error }, lead ...any) (*store.Record, error) {
	return scanRecordAt(row, lead, nil)
}

func scanRecordAt(row interface{ Scan(...any) error }, lead, extra []any) (*store.Record, error) {
	var r store.Record
	var typ, value string
	dest := append(lead, &r.ID, &r.Name, &typ, &value, &r.Version, &r.CreatedAt, &r.UpdatedAt)
	err := row.Scan(append(dest, extra...)...)
	r.Type, r.Value = store.DataType(typ), json.RawMessage(value)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return &r, err
}

// The prefixes of the canonical text that indexes hold (migration 0002),
// in code points: btree entries are limited to about 2.7 kB, so no index
// holds a whole value. sortTextPrefix must equal the length of sort_text
// that migration 0002 cut existing rows to.
const (
	sortTextPrefix = 256
	valuePrefix    = 64
)

// prefix returns the first n code points of s.
func prefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// valueColumns are the derived columns the value filters and sortBy=value
// read, computed once at write time.
type valueColumns struct {
	vtext, vtextLower, sortNum, sortText any
	sortGroup                            int
}

func valueColumnsOf(t store.DataType, v json.RawMessage) valueColumns {
	k := store.KeyOf(t, v)
	c := valueColumns{sortGroup: int(k.Group)}
	if k.HasText {
		c.vtext, c.vtextLower = k.Text, strings.ToLower(k.Text)
	}
	switch k.Group {
	case store.GroupNumber:
		c.sortNum = k.Decimal()
	case store.GroupText:
		c.sortText = prefix(k.Text, sortTextPrefix)
	}
	return c
}

// findRecordSQL resolves the whole path and the record (by id first, then
// by name) in one round trip. With FOR UPDATE it also locks the record.
const findRecordSQL = `SELECT p.owner_id, c.id IS NOT NULL, k.id, r.id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at
FROM hds_projects p
LEFT JOIN hds_collections c ON c.project_id = p.id AND c.name = $2
LEFT JOIN hds_clusters k ON k.collection_id = c.id AND k.name = $3
LEFT JOIN LATERAL (
	SELECT * FROM hds_records r WHERE r.cluster_id = k.id AND (r.id = $4::uuid OR r.name = $5)
	ORDER BY r.id = $4::uuid DESC NULLS LAST LIMIT 1 %s
) r ON true
WHERE p.name = $1`

var (
	findRecordQuery = strings.Replace(findRecordSQL, "%s", "", 1)
	lockRecordQuery = strings.Replace(findRecordSQL, "%s", "FOR UPDATE", 1)
)

// findRecord returns the record and the id of its cluster.
func (q queryer) findRecord(ctx context.Context, p store.Path, query string) (*store.Record, string, error) {
	var id any
	if u, ok := store.CanonicalUUID(p.Record); ok {
		id = u
	}
	row, err := q.row(ctx, query, lookupName(p.Project), lookupName(p.Collection), lookupName(p.Cluster), id, lookupName(p.Record))
	if err != nil {
		return nil, "", err
	}
	var owner string
	var collectionFound bool
	var clusterID, rid, name, typ, value sql.NullString
	var version sql.NullInt64
	var created, updated sql.NullTime
	err = row.Scan(&owner, &collectionFound, &clusterID, &rid, &name, &typ, &value, &version, &created, &updated)
	if err != nil {
		return nil, "", notFoundOr(err, "project", p.Project)
	}
	if err := checkPath(p, levelCluster, owner, collectionFound, clusterID.Valid); err != nil {
		return nil, "", err
	}
	if !rid.Valid {
		return nil, "", &store.NotFoundError{Kind: "record", Name: p.Record}
	}
	return &store.Record{
		ID: rid.String, Name: name.String, Type: store.DataType(typ.String), Value: json.RawMessage(value.String),
		Version: version.Int64, CreatedAt: created.Time.UTC(), UpdatedAt: updated.Time.UTC(),
	}, clusterID.String, nil
}

var recordSortColumns = map[store.SortField]string{
	store.SortName:      "name",
	store.SortID:        "id",
	store.SortCreatedAt: "created_at",
	store.SortUpdatedAt: "updated_at",
	store.SortType:      "type",
	// sort_text is a prefix of the text: equal prefixes are ordered by
	// the whole text, in the text group only (numbers that are equal tie
	// by name, whatever their text).
	store.SortValue: "sort_group,sort_num,sort_text,CASE WHEN sort_group = " + strconv.Itoa(int(store.GroupText)) + " THEN vtext END",
}

// FindRecords implements store.Store. Filters run in SQL; only the filters
// in use appear in the statement, so each combination gets its own plan.
func (s *Store) FindRecords(ctx context.Context, p store.Path, rq store.RecordQuery) (_ []*store.Record, _ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	res, err := q.resolve(ctx, p, levelCluster)
	if err != nil {
		return nil, 0, err
	}
	args := []any{res.cluster.String}
	var where strings.Builder
	where.WriteString("cluster_id = $1")
	filter := func(cond string, arg any) {
		args = append(args, arg)
		where.WriteString(" AND " + strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	if rq.Search != "" {
		filter(`name_lower LIKE $? ESCAPE '\'`, likePattern(rq.Search))
	}
	if rq.Type != "" {
		filter(`type = $?`, string(rq.Type))
	}
	if rq.HasValue {
		if !storable(rq.Value) {
			return []*store.Record{}, 0, nil
		}
		// The prefix is what hds_records_vtext_prefix holds.
		filter(`left(vtext, `+strconv.Itoa(valuePrefix)+`) = left($?, `+strconv.Itoa(valuePrefix)+`) AND vtext = $?`, rq.Value)
	}
	if rq.ValueContains != "" {
		filter(`vtext_lower LIKE $? ESCAPE '\'`, likePattern(rq.ValueContains))
	}
	n := len(args)
	rows, err := q.rows(ctx, `SELECT `+recordColumns+`, count(*) OVER () FROM hds_records r WHERE `+where.String()+
		` ORDER BY `+orderBy(rq.ListQuery, recordSortColumns)+` LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2),
		append(args, rq.Limit, rq.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	return scanList(rows, func(r *sql.Rows, total *int) (*store.Record, error) { return scanRecord(r, total) },
		func() (int, error) {
			return q.count(ctx, `SELECT count(*) FROM hds_records r WHERE `+where.String(), args...)
		})
}

// nameIsNoID refuses a record name that is the id (in any case) of a
// record of the cluster other than self: that segment names the record
// with the id (API.md section 2), so the name is taken.
func (q queryer) nameIsNoID(ctx context.Context, clusterID, name, self string) error {
	id, ok := store.CanonicalUUID(name)
	if !ok || id == self {
		return nil
	}
	var taken bool
	row, err := q.row(ctx, `SELECT EXISTS (SELECT 1 FROM hds_records WHERE cluster_id = $1 AND id = $2)`, clusterID, id)
	if err == nil {
		err = classify(row.Scan(&taken))
	}
	if err != nil {
		return err
	}
	if taken {
		return &store.ExistsError{Kind: "record", Name: name}
	}
	return nil
}

// FindRecord implements store.Store, in one round trip.
func (s *Store) FindRecord(ctx context.Context, p store.Path) (_ *store.Record, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	r, _, err := s.q().findRecord(ctx, p, findRecordQuery)
	return r, err
}

// CreateRecord implements store.Store.
func (s *Store) CreateRecord(ctx context.Context, p store.Path, in *store.Record) (_ *store.Record, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	res, err := q.resolve(ctx, p, levelCluster)
	if err != nil {
		return nil, err
	}
	if err := store.ValidateName(p.Record); err != nil {
		return nil, err
	}
	if err := q.nameIsNoID(ctx, res.cluster.String, p.Record, ""); err != nil {
		return nil, err
	}
	now := s.now()
	r := in.Clone()
	r.Name, r.Version, r.CreatedAt, r.UpdatedAt = p.Record, 1, now, now
	if r.ID == "" {
		r.ID = store.NewID()
	}
	vc := valueColumnsOf(r.Type, r.Value)
	err = q.insert(ctx, "record", r.Name, "cluster", p.Cluster, `INSERT INTO hds_records
		(id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $9, $10, $11, $12, $12)
		ON CONFLICT (cluster_id, name) DO NOTHING RETURNING 1`,
		r.ID, res.cluster.String, r.Name, strings.ToLower(r.Name), string(r.Type), string(r.Value),
		vc.vtext, vc.vtextLower, vc.sortGroup, vc.sortNum, vc.sortText, now)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// UpdateRecord implements store.Store: in one transaction, the record is
// found and locked, update runs, and the result is written.
func (s *Store) UpdateRecord(ctx context.Context, p store.Path, update func(*store.Record) error) (_ *store.Record, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	var out *store.Record
	err = s.inTx(ctx, func(q queryer) error {
		cur, clusterID, err := q.findRecord(ctx, p, lockRecordQuery)
		if err != nil {
			return err
		}
		next := cur.Clone()
		if err := update(next); err != nil {
			return callerError{err}
		}
		next.ID, next.Version, next.CreatedAt, next.UpdatedAt = cur.ID, cur.Version+1, cur.CreatedAt, s.now()
		if next.Name != cur.Name {
			if err := store.ValidateName(next.Name); err != nil {
				return err
			}
			if err := q.nameIsNoID(ctx, clusterID, next.Name, cur.ID); err != nil {
				return err
			}
		}
		vc := valueColumnsOf(next.Type, next.Value)
		_, err = q.exec(ctx, `UPDATE hds_records SET name = $2, name_lower = $3, type = $4, value = $5,
			version = $6, vtext = $7, vtext_lower = $8, sort_group = $9, sort_num = $10, sort_text = $11, updated_at = $12
			WHERE id = $1`,
			next.ID, next.Name, strings.ToLower(next.Name), string(next.Type), string(next.Value), next.Version,
			vc.vtext, vc.vtextLower, vc.sortGroup, vc.sortNum, vc.sortText, next.UpdatedAt)
		if isUniqueViolation(err) {
			return &store.ExistsError{Kind: "record", Name: next.Name}
		}
		out = next
		return err
	})
	return out, err
}

// DeleteRecord implements store.Store.
func (s *Store) DeleteRecord(ctx context.Context, p store.Path) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, _, err := q.findRecord(ctx, p, findRecordQuery)
	if err != nil {
		return err
	}
	return q.deleteByID(ctx, "hds_records", r.ID, "record", p.Record)
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
		WHERE r.type IN ('CREDENTIAL', '[]CREDENTIAL') AND ($1::uuid IS NULL OR r.id > $1::uuid)
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

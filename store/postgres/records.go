package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/internal/timetext"
	"github.com/hds-go/hds/store"
)

const recordColumns = `r.id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at, r.updated_by`

func scanRecord(row interface{ Scan(...any) error }, extra ...any) (*store.Record, error) {
	return scanRecordAt(row, nil, extra)
}

// scanRecordWith scans columns before the record's (leading) into lead.
func scanRecordWith(row interface{ Scan(...any) error }, lead ...any) (*store.Record, error) {
	return scanRecordAt(row, lead, nil)
}

func scanRecordAt(row interface{ Scan(...any) error }, lead, extra []any) (*store.Record, error) {
	var r store.Record
	var typ string
	dest := append(lead, &r.ID, &r.Name, &typ, (*[]byte)(&r.Value), &r.Version, &r.CreatedAt, &r.UpdatedAt, &r.UpdatedBy)
	err := row.Scan(append(dest, extra...)...) // the value is copied once
	r.Type = store.DataType(typ)
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
		c.sortNum = sortkey.Decimal(k)
	case store.GroupText:
		c.sortText = prefix(k.Text, sortTextPrefix)
	}
	return c
}

// findRecordSQL resolves the whole path and the record (by id first, then
// by name) in one round trip. With FOR UPDATE it also locks the record.
var findRecordSQL = `SELECT p.id, p.owner_id, ` + memberRoleSQL("6") + `, c.id IS NOT NULL, k.id, r.id, r.name, r.type, r.value, r.version, r.created_at, r.updated_at, r.updated_by
FROM hds_projects p
LEFT JOIN hds_collections c ON c.project_id = p.id AND c.name = $2
LEFT JOIN hds_clusters k ON k.collection_id = c.id AND k.name = $3
LEFT JOIN LATERAL (
	SELECT * FROM hds_records r WHERE r.cluster_id = k.id AND (r.id = $4::uuid OR r.name = $5)
	ORDER BY r.id = $4::uuid DESC NULLS LAST LIMIT 1 %s
) r ON true
WHERE p.name = $1`

var (
	// Their session forms check a deferred session ($7, $8).
	findRecordQuery = newPathQuery(strings.Replace(findRecordSQL, "%s", "", 1), 6)
	lockRecordQuery = newPathQuery(strings.Replace(findRecordSQL, "%s", "FOR UPDATE", 1), 6)
)

// site is where a record write happens and who makes it: what its audit
// entry needs.
type site struct {
	caller              store.Caller
	projectID, project  string
	collection, cluster string
	clusterID           string
}

// siteOf is the site of p, in the cluster with clusterID of the project
// with projectID.
func siteOf(p store.Path, projectID, clusterID string) site {
	return site{caller: p.Caller, projectID: projectID, project: p.Project,
		collection: p.Collection, cluster: p.Cluster, clusterID: clusterID}
}

// audit writes the audit entry of action on r at the site.
func (q queryer) auditRecord(ctx context.Context, at site, r *store.Record, action store.Action) error {
	_, err := q.audit(ctx, at.projectID, at.caller, store.AuditEntry{Action: action,
		Collection: at.collection, Cluster: at.cluster, Record: r.Name, RecordID: r.ID, Version: r.Version})
	return err
}

// findRecord returns the record and its site, with query (findRecordQuery
// or lockRecordQuery), after the caller's deferred session check when one
// is due (in the same statement).
func (q queryer) findRecord(ctx context.Context, p store.Path, query pathQuery) (*store.Record, site, error) {
	var id any
	if u, ok := store.CanonicalUUID(p.Record); ok {
		id = u
	}
	args := []any{lookupName(p.Project), lookupName(p.Collection), lookupName(p.Cluster), id, lookupName(p.Record),
		p.Caller.UserID}
	var collectionFound sql.NullBool
	var clusterID, rid, name, typ, value, updatedBy sql.NullString
	var version sql.NullInt64
	var created, updated sql.NullTime
	st, err := q.resolveRow(ctx, p, query, args,
		&collectionFound, &clusterID, &rid, &name, &typ, &value, &version, &created, &updated, &updatedBy)
	if err != nil {
		return nil, site{}, err
	}
	if err := checkPath(p, levelCluster, st, collectionFound.Bool, clusterID.Valid); err != nil {
		return nil, site{}, err
	}
	if !rid.Valid {
		return nil, site{}, &store.NotFoundError{Kind: "record", Name: p.Record}
	}
	return &store.Record{
		ID: rid.String, Name: name.String, Type: store.DataType(typ.String), Value: json.RawMessage(value.String),
		Version: version.Int64, CreatedAt: created.Time.UTC(), UpdatedAt: updated.Time.UTC(), UpdatedBy: updatedBy.String,
	}, siteOf(p, st.ProjectID, clusterID.String), nil
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

// numberSortColumns are recordSortColumns for a list of one number type
// (INTEGER or FLOAT): by value, every record is in the number group with
// no text, so the order is sort_num's, which hds_records_number holds
// within the type.
var numberSortColumns = func() map[store.SortField]string {
	m := maps.Clone(recordSortColumns)
	m[store.SortValue] = "sort_num"
	return m
}()

// rangeOperand returns the SQL operand a range filter of type t compares
// and the bound to compare it with (API.md section 5): numbers exactly by
// sort_num (hds_records_number), DATETIME by its instant
// (hds_datetime_instant, migration 0008, indexed by hds_records_datetime),
// the other types by vtext (COLLATE "C": byte-wise).
func rangeOperand(t store.DataType, bound store.ValueKey) (string, any) {
	switch t {
	case store.Integer, store.Float:
		return "sort_num", sortkey.Decimal(bound)
	case store.DateTime:
		return "hds_datetime_instant(type, vtext)", sortkey.EpochDecimal(timetext.Instant(bound.Text))
	}
	return "vtext", bound.Text
}

// FindRecords implements store.Store. Filters run in SQL; only the filters
// in use appear in the statement, so each combination gets its own plan.
func (s *Store) FindRecords(ctx context.Context, p store.Path, rq store.RecordQuery) ([]*store.Record, int, error) {
	return findRecords(s, ctx, p, rq, recordColumns, scanRecord)
}

// findRecords runs FindRecords' statement with the record columns given
// (recordColumns, or lazyRecordColumns for streaming), scanned by scan.
func findRecords[T any](s *Store, ctx context.Context, p store.Path, rq store.RecordQuery, columns string,
	scan func(row interface{ Scan(...any) error }, extra ...any) (T, error)) ([]T, int, error) {
	return findWithin(ctx, s, p, levelCluster, func(ctx context.Context, q queryer, res resolved) ([]T, int, error) {
		b := binder{literal: rq.Search != "" || rq.ValueContains != "" || rq.Min != nil || rq.Max != nil}
		var where strings.Builder
		where.WriteString("cluster_id = " + b.bind(res.cluster.String))
		filter := func(cond string, arg any) {
			where.WriteString(" AND " + strings.ReplaceAll(cond, "$?", b.bind(arg)))
		}
		if rq.Search != "" {
			filter(`name_lower LIKE $? ESCAPE '\'`, likePattern(rq.Search))
		}
		sortColumns := recordSortColumns
		if rq.Type != "" {
			// Written out, never bound: a type is one of a few names, and
			// only a plan that sees it can use an index whose WHERE names
			// types (hds_records_number, hds_records_datetime).
			where.WriteString(" AND type = " + pq.QuoteLiteral(string(rq.Type)))
			switch {
			case rq.SortBy != store.SortValue:
			case rq.Type == store.Integer || rq.Type == store.Float:
				sortColumns = numberSortColumns
			default:
				// A type has one sort group: said outright, the group is
				// a range of hds_records_value_order.
				where.WriteString(" AND sort_group = " + strconv.Itoa(int(store.KeyOf(rq.Type, nil).Group)))
			}
		}
		if rq.HasValue {
			if !storable(rq.Value) {
				return []T{}, emptyTotal(rq.ListQuery), nil
			}
			// The prefix is what hds_records_vtext_prefix holds.
			filter(`left(vtext, `+strconv.Itoa(valuePrefix)+`) = left($?, `+strconv.Itoa(valuePrefix)+`) AND vtext = $?`, rq.Value)
		}
		if rq.ValueContains != "" {
			filter(`vtext_lower LIKE $? ESCAPE '\'`, likePattern(rq.ValueContains))
		}
		for _, bound := range []struct {
			key *store.ValueKey
			op  string
		}{{rq.Min, ">="}, {rq.Max, "<="}} {
			if bound.key != nil {
				col, arg := rangeOperand(rq.Type, *bound.key)
				filter(col+" "+bound.op+" $?", arg)
			}
		}
		return listRecords(ctx, q, &b, rq.ListQuery, columns, where.String(), orderBy(rq.ListQuery, sortColumns), scan)
	})
}

// totalRecord is a row shaped like hds_records, under the alias r, for
// the row of a list statement that carries the total: any list of record
// columns reads it without a NULL, so that the row scans as a record
// does (and is dropped).
const totalRecord = `(SELECT '00000000-0000-0000-0000-000000000000'::uuid AS id, '' COLLATE "C" AS name,
	'' COLLATE "C" AS type, ''::text AS value, 0::bigint AS version, 'epoch'::timestamptz AS created_at,
	'epoch'::timestamptz AS updated_at, ''::text AS updated_by) r`

// listRecords reads a page of records in one statement, whatever the
// page: its rows end with a part column, 1 (and 2) for the records of
// the page, and -1 - total for the one row that carries the total (none
// with NoCount, when the statement is the page alone; small positive
// numbers reach the driver's interface without an allocation), which is
// there even when the page is empty, so that an empty page, an offset
// past the end or a cursor never costs a statement of its own to count. The total is counted once, in a CTE. A cursor reads
// by keyset: part 1 is the first condition of afterConds, part 2 the
// second (sortBy=value), limited to what part 1 left of the page, so
// that it reads nothing when part 1 filled it. Each part's rows come in
// the page's order; the parts are put in order here.
func listRecords[T any](ctx context.Context, q queryer, b *binder, lq store.ListQuery, columns, where, order string,
	scan func(row interface{ Scan(...any) error }, extra ...any) (T, error)) ([]T, int, error) {
	var with, body []string
	page := func(part int, cond, limit string) string {
		return `(SELECT ` + columns + `, ` + strconv.Itoa(part) + ` AS part FROM hds_records r WHERE ` + where + cond +
			` ORDER BY ` + order + ` LIMIT ` + limit + `)`
	}
	if !lq.NoCount {
		with = append(with, `c AS (SELECT count(*) AS n FROM hds_records r WHERE `+where+`)`)
	}
	if lq.After == nil {
		body = append(body, page(1, "", b.bind(lq.Limit)+` OFFSET `+b.bind(lq.Offset)))
	} else {
		limit := b.bind(lq.Limit)
		conds := afterConds(lq)
		if len(conds) == 1 {
			body = append(body, page(1, ` AND `+conds[0](b), limit))
		} else {
			with = append(with, `a AS `+page(1, ` AND `+conds[0](b), limit))
			body = append(body, `SELECT * FROM a`, page(2, ` AND `+conds[1](b), limit+` - (SELECT count(*) FROM a)`))
		}
	}
	if !lq.NoCount {
		body = append(body, `SELECT `+columns+`, -1 - c.n FROM c, `+totalRecord)
	}
	query := strings.Join(body, "\nUNION ALL ")
	if len(with) > 0 {
		query = `WITH ` + strings.Join(with, ", ") + "\n" + query
	}
	rows, err := b.rows(ctx, q, query)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	items, rest := []T{}, []T(nil)
	total := store.NotCounted
	for rows.Next() {
		var part int64 // int64 as the driver's: converted without a string
		it, err := scan(rows, &part)
		if err != nil {
			return nil, 0, classify(err)
		}
		switch {
		case part < 0:
			total = int(-1 - part)
		case part == 1:
			items = append(items, it)
		default:
			rest = append(rest, it)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, classify(err)
	}
	if items = append(items, rest...); len(items) > lq.Limit {
		items = items[:lq.Limit]
	}
	return items, total, nil
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

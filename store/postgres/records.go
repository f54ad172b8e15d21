package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"strconv"
	"strings"

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
// and the bound to compare it with (docs/api.md#list-queries): numbers
// exactly by sort_num (hds_records_number), DATETIME by its instant
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
			// Each side names its partial index's condition, so that the
			// plan may read the trigram index for the texts it holds and
			// hds_records_long_text for the others (migration 0015).
			filter(`((length(vtext_lower) <= 4096 AND vtext_lower LIKE $? ESCAPE '\') OR
				(length(vtext_lower) > 4096 AND vtext_lower LIKE $? ESCAPE '\'))`, likePattern(rq.ValueContains))
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
// with the id (docs/api.md#data-model), so the name is taken.
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

package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/lib/pq"

	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/store"
)

// Cursors (store.ListQuery.After) are keyset conditions: a page resumes
// with a WHERE that keeps the rows after the position in the list's order
// and starts an index range scan there, never an OFFSET scan. Each
// condition leads with a bound on the sort column(s) the index is ordered
// by ((cluster_id, name) for name, hds_records_value_order for value,
// hds_records_number for the value of one number type, hds_records_type
// for type, and from migration 0008 hds_records_cluster_id,
// hds_records_created and hds_records_updated for id and the times, and
// their likes for collections and clusters), then the exact order: the
// sort field, then name, then id.

// binder numbers the arguments of a statement as they are added, or,
// when literal, writes them into the statement as SQL literals.
//
// Statements are prepared once and cached (Store.stmt), and after five
// runs PostgreSQL may keep a generic plan, made without the values: fine
// where the values do not change the best plan, ruinous where they do. A
// list filtered by a pattern (search, valueContains) or a range
// (minValue, maxValue) is literal: its statement is sent as written (the
// simple protocol, one round trip, never prepared) and planned for its
// own values every time, so that '%rec-05%' and '%5%', or a narrow and a
// wide range, each get their plan.
type binder struct {
	args    []any
	literal bool
}

// bind adds v and returns its placeholder, or its literal.
func (b *binder) bind(v any) string {
	if b.literal {
		return literal(v)
	}
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// literal is v as an SQL literal: strings quoted (pq.QuoteLiteral, an E
// string when they hold a backslash), whole numbers in decimal, times in
// RFC 3339 (each statement casts what it binds). The values bound are a
// list's filters and positions, which hold no NUL (refused before).
func literal(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return pq.QuoteLiteral(v)
	case int:
		return strconv.Itoa(v)
	case time.Time:
		return pq.QuoteLiteral(v.UTC().Format(time.RFC3339Nano))
	}
	panic(fmt.Sprintf("postgres: no literal for %T", v))
}

// rows runs query, whose placeholders b bound.
func (b *binder) rows(ctx context.Context, q queryer, query string) (*sql.Rows, error) {
	if !b.literal {
		return q.rows(ctx, query, b.args...)
	}
	var rows *sql.Rows
	var err error
	if q.tx != nil {
		rows, err = q.tx.QueryContext(ctx, query)
	} else {
		rows, err = q.s.db.QueryContext(ctx, query)
	}
	return rows, classify(err)
}

// afterConds returns the conditions of the rows after lq.After, read in
// turn until the page is full (listRecords: each a part of one
// statement): one for every sort but value, whose groups each need their
// own index range (the rest of the position's group, then the groups
// after it). Each binds its arguments to the binder of its statement.
func afterConds(lq store.ListQuery) []func(b *binder) string {
	if lq.SortBy != store.SortValue {
		return []func(*binder) string{func(b *binder) string { return afterCond(lq, b) }}
	}
	conds := []func(*binder) string{func(b *binder) string {
		return valueAfter(lq.After, lq.Desc, b)
	}}
	if g := lq.After.Key.Group; (!lq.Desc && g < store.GroupNoValue) || (lq.Desc && g > store.GroupNumber) {
		op := " > "
		if lq.Desc {
			op = " < "
		}
		conds = append(conds, func(*binder) string { return `sort_group` + op + strconv.Itoa(int(g)) })
	}
	return conds
}

// tieAfter is the condition of the rows after pos among those whose sort
// keys equal pos's: by name, then id, both ascending.
func tieAfter(pos *store.Position, b *binder) string {
	name, id := b.bind(pos.Name)+"::text", b.bind(pos.ID)+"::uuid"
	return `(name > ` + name + ` OR (name = ` + name + ` AND id > ` + id + `))`
}

// afterCond is the condition of the rows after lq.After in any order but
// by value.
func afterCond(lq store.ListQuery, b *binder) string {
	pos := lq.After
	gt := ">"
	if lq.Desc {
		gt = "<"
	}
	switch lq.SortBy {
	case store.SortID:
		return `id ` + gt + ` ` + b.bind(pos.ID) + `::uuid`
	case store.SortName:
		name, id := b.bind(pos.Name)+"::text", b.bind(pos.ID)+"::uuid"
		return `name ` + gt + `= ` + name + ` AND (name ` + gt + ` ` + name + ` OR (name = ` + name + ` AND id > ` + id + `))`
	}
	col, v, cast := "updated_at", any(pos.Time), "::timestamptz"
	switch lq.SortBy {
	case store.SortCreatedAt:
		col = "created_at"
	case store.SortType:
		col, v, cast = "type", string(pos.Type), "::text"
	}
	p := b.bind(v) + cast
	return col + ` ` + gt + `= ` + p + ` AND (` + col + ` ` + gt + ` ` + p + ` OR (` + col + ` = ` + p + ` AND ` + tieAfter(pos, b) + `))`
}

// valueAfter is the condition of the rows of sortBy=value after pos in
// pos's group: an index range of hds_records_value_order from pos.
func valueAfter(pos *store.Position, desc bool, b *binder) string {
	k := pos.Key
	gt := ">"
	if desc {
		gt = "<"
	}
	g := strconv.Itoa(int(k.Group))
	var same string
	switch k.Group {
	case store.GroupNumber:
		n := b.bind(sortkey.Decimal(k)) + "::numeric"
		same = `sort_group = ` + g + ` AND sort_num ` + gt + `= ` + n +
			` AND (sort_num ` + gt + ` ` + n + ` OR (sort_num = ` + n + ` AND ` + tieAfter(pos, b) + `))`
	case store.GroupText:
		t := b.bind(k.Text) + "::text"
		pre := `left(` + t + `, ` + strconv.Itoa(sortTextPrefix) + `)`
		same = `sort_group = ` + g + ` AND sort_num IS NULL AND sort_text ` + gt + `= ` + pre +
			` AND (sort_text ` + gt + ` ` + pre + ` OR (sort_text = ` + pre +
			` AND (vtext ` + gt + ` ` + t + ` OR (vtext = ` + t + ` AND ` + tieAfter(pos, b) + `))))`
	default:
		same = `sort_group = ` + g + ` AND sort_num IS NULL AND sort_text IS NULL AND ` + tieAfter(pos, b)
	}
	return same
}

// findContainers runs the statement of a list of projects, collections or
// clusters: columns from table (with its alias) where where holds, with
// args for where's placeholders, in lq's order and page, resumed by
// keyset when lq has a cursor. Rows are scanned by scan.
func findContainers[T any](ctx context.Context, q queryer, lq store.ListQuery, columns, table, where string, args []any,
	scan func(*sql.Rows, *int) (T, error)) ([]T, int, error) {
	count := func() (int, error) { return q.count(ctx, `SELECT count(*) FROM `+table+` WHERE `+where, args...) }
	b := binder{args: args}
	total, page := totalColumn(lq, table, where), where
	if lq.After != nil {
		total, page = "-1", where+` AND `+afterCond(lq, &b)
	}
	rows, err := q.rows(ctx, `SELECT `+columns+`, `+total+` FROM `+table+` WHERE `+page+` ORDER BY `+orderBy(lq, containerColumns)+
		` LIMIT `+b.bind(lq.Limit)+` OFFSET `+b.bind(lq.Offset), b.args...)
	if err != nil {
		return nil, 0, err
	}
	if lq.After == nil {
		return scanList(rows, scan, counter(lq, count))
	}
	items, n, err := scanList(rows, scan, nil)
	if err == nil && !lq.NoCount {
		n, err = count()
	}
	return items, n, err
}

package sqlite

import (
	"slices"
	"strings"

	"github.com/hds-go/hds/store"
)

// list builds the WHERE, ORDER BY and paging of a list statement from a
// ListQuery: the same filters, sorts and cursors as the other stores
// (docs/api.md#list-queries), written so that an index on (parent, sort
// column, name, id) serves them.
type list struct {
	where []string
	args  []any
}

// cond adds a condition and its arguments.
func (l *list) cond(c string, args ...any) {
	l.where = append(l.where, c)
	l.args = append(l.args, args...)
}

// and returns l with the condition c and its arguments too, l left as it
// is (the copy shares nothing l can still append to).
func (l list) and(c string, args ...any) list {
	m := list{where: slices.Clip(l.where), args: slices.Clip(l.args)}
	m.cond(c, args...)
	return m
}

// search adds a literal, case-insensitive substring filter on col, a
// column holding the lower-cased text (empty s filters nothing).
func (l *list) search(col, s string) {
	if s != "" {
		l.cond("instr("+col+", ?) > 0", lower(s))
	}
}

// sortColumn is the column a list of alias's rows sorts by.
func sortColumn(alias string, by store.SortField) string {
	switch by {
	case store.SortID:
		return alias + ".id"
	case store.SortCreatedAt:
		return alias + ".created_at"
	case store.SortUpdatedAt:
		return alias + ".updated_at"
	case store.SortType:
		return alias + ".type"
	case store.SortValue:
		return alias + ".vkey"
	}
	return alias + ".name"
}

// positionKey is the value of the sort column at the position pos.
func positionKey(by store.SortField, pos *store.Position) any {
	switch by {
	case store.SortID:
		return pos.ID
	case store.SortCreatedAt, store.SortUpdatedAt:
		return micros(pos.Time)
	case store.SortType:
		return string(pos.Type)
	case store.SortValue:
		return vkey(pos.Key)
	}
	return pos.Name
}

// after adds q's cursor: only the rows that sort after q.After. Ties of
// the sort column are broken by name, then id, both ascending whatever
// q.Desc says.
func (l *list) after(alias string, q store.ListQuery) {
	if q.After != nil {
		l.afterKey(alias, q, sortColumn(alias, q.SortBy), positionKey(q.SortBy, q.After))
	}
}

// afterKey is after with the sort column col and the position's key in
// it.
func (l *list) afterKey(alias string, q store.ListQuery, col string, key any) {
	pos := q.After
	name, id := alias+".name", alias+".id"
	switch {
	case q.SortBy == store.SortID && !q.Desc:
		l.cond(col+" > ?", key) // ids are unique: no ties
	case q.SortBy == store.SortID:
		l.cond(col+" < ?", key)
	case q.SortBy == store.SortName && !q.Desc:
		l.cond(name+" > ?", pos.Name) // names are unique in their parent: no ties
	case q.SortBy == store.SortName:
		l.cond(name+" < ?", pos.Name)
	case !q.Desc:
		l.cond("("+col+", "+name+", "+id+") > (?, ?, ?)", key, pos.Name, pos.ID)
	default:
		// The first condition is the range a descending index on col
		// starts at.
		l.cond(col+" <= ? AND ("+col+" < ? OR ("+name+", "+id+") > (?, ?))", key, key, pos.Name, pos.ID)
	}
}

// whereClause is " WHERE ..." of the conditions (empty when none).
func (l *list) whereClause() string {
	if len(l.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(l.where, " AND ")
}

// orderPage is the ORDER BY, LIMIT and OFFSET of q.
func orderPage(alias string, q store.ListQuery) (string, []any) {
	return orderPageBy(alias, q, sortColumn(alias, q.SortBy))
}

// orderPageBy is orderPage with the sort column col.
func orderPageBy(alias string, q store.ListQuery, col string) (string, []any) {
	dir := ""
	if q.Desc {
		dir = " DESC"
	}
	order := " ORDER BY " + col + dir
	switch q.SortBy {
	case store.SortID, store.SortName: // unique (names in their parent): no ties
	default:
		order += ", " + alias + ".name, " + alias + ".id"
	}
	return order + " LIMIT ? OFFSET ?", []any{q.Limit, q.Offset}
}

// lower is the lower-cased text the *_lower columns and the search
// filters compare (strings.ToLower, as the memory store).
func lower(s string) string { return strings.ToLower(s) }

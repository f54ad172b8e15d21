package sqlite

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hds-go/hds/store"
)

// A record list (docs/api.md#list-queries) is a count and a page. The
// filters on columns (type, value, range) and every sort are index
// ranges in the list's order (migration 0001), read backwards a run of
// equal keys at a time when descending (descByRuns, migration 0008). A
// substring filter, search or valueContains, is the set of its matches'
// rowids, found in an index: the trigram index hds_records_text for a
// pattern of 3 characters or more, else the names in
// hds_records_name_lower (the values in the table).
//
// The count counts the matches first; the page is then read one of two
// ways, chosen by that count rather than left to the planner (which,
// without statistics, takes every index range for a few rows):
//
//   - From the matches, when they are few: the filter's index (the set
//     of rowids, the range, the value) finds them, and their records
//     are read and sorted.
//   - In order, when they are many: the index of the list's order is
//     read from the start (or the cursor) until the page is full (a run
//     at a time when descending), each
//     entry checked against the filters; a substring filter is checked
//     by rowid, without reading the record, or, when half of the
//     cluster or more matches (so that about every other record read
//     is a match), by reading the text, which spares finding the set.
//
// A cluster that holds every record (the common case of one box) counts
// the trigram index's matches without looking each one up.

// minTrigram is the shortest pattern the trigram index finds: shorter
// ones are matched by reading the texts.
const minTrigram = 3

// The longest text, in characters, hds_records_text holds (migration
// 0003) is longTextChars (keyprefix.go): valueContains reads longer
// ones, whose vtext_lower is not kept (migration 0007).

// longTexts is the condition that a record of hds_records as alias has
// a text longer than hds_records_text holds (hds_records_long_text
// finds them).
func longTexts(alias string) string {
	return alias + ".vtext_lower IS NULL AND " + alias + ".vtext IS NOT NULL"
}

// text is the SQL expression of the lower-cased text f reads, of
// hds_records as alias.
func (f textFilter) text(alias string) string {
	if f.col == "name_lower" {
		return alias + ".name_lower"
	}
	return lowerText(alias)
}

// textFilter is a substring filter of a record list: the lower-cased
// pattern and the column of hds_records (and of hds_records_text) holding
// the lower-cased text it is found in.
type textFilter struct {
	col, pattern string
}

// indexed reports whether hds_records_text finds f's matches.
func (f textFilter) indexed() bool { return utf8.RuneCountInString(f.pattern) >= minTrigram }

// phrase is f's pattern as an FTS5 query: one string, whose trigrams must
// follow each other, so that it matches exactly the texts that contain
// the pattern. Inside the quotes only '"' is special, doubled.
func (f textFilter) phrase() string {
	return `"` + strings.ReplaceAll(f.pattern, `"`, `""`) + `"`
}

// matches is a statement that selects the rowids of the records of the
// cluster id that match f, found in indexes: through hds_records_text
// (and hds_records_long_text) when f is indexed, else by reading the
// texts (the names in hds_records_name_lower, the values in the table:
// all of it, in the table's order, when scan is true, else the cluster's
// records by hds_records_cluster_id).
func (f textFilter) matches(id string, scan bool) (string, []any) {
	switch {
	case !f.indexed() && f.col == "name_lower":
		return "SELECT x.rowid FROM hds_records x INDEXED BY hds_records_name_lower WHERE x.cluster_id = ? AND instr(x.name_lower, ?) > 0",
			[]any{id, f.pattern}
	case !f.indexed() && scan:
		return "SELECT x.rowid FROM hds_records x NOT INDEXED WHERE x.cluster_id = ? AND instr(" + lowerText("x") + ", ?) > 0",
			[]any{id, f.pattern}
	case !f.indexed():
		return "SELECT x.rowid FROM hds_records x INDEXED BY hds_records_cluster_id WHERE x.cluster_id = ? AND instr(" + lowerText("x") + ", ?) > 0",
			[]any{id, f.pattern}
	}
	q := "SELECT x.rowid FROM hds_records x WHERE x.cluster_id = ? AND x.seq IN (SELECT rowid FROM hds_records_text WHERE " +
		f.col + " MATCH ?)"
	if f.col == "name_lower" {
		return q, []any{id, f.phrase()}
	}
	return q + " UNION ALL SELECT x.rowid FROM hds_records x WHERE x.cluster_id = ? AND " + longTexts("x") +
		" AND instr(hds_lower(x.vtext), ?) > 0", []any{id, f.phrase(), id, f.pattern}
}

// recordList is a record list's filters.
type recordList struct {
	q     store.RecordQuery
	k     *clus
	texts []textFilter
	// checkMax makes maxValue's bound a condition no index serves
	// (FindRecords: a descending range read by runs).
	checkMax bool
	// scan is whether the cluster holds at least half of the records
	// of every cluster: the values a short valueContains reads are then
	// read from the whole table, in its order, rather than looked up.
	scan bool
}

// newRecordList returns the filters of q on k's records.
func newRecordList(k *clus, q store.RecordQuery) *recordList {
	rl := &recordList{q: q, k: k}
	if q.Search != "" {
		rl.texts = append(rl.texts, textFilter{"name_lower", lower(q.Search)})
	}
	if q.ValueContains != "" {
		rl.texts = append(rl.texts, textFilter{"vtext_lower", lower(q.ValueContains)})
	}
	return rl
}

// columns adds the filters on columns (the cluster, type, value and
// range) to l; with checked, as conditions no index serves ("+"), only
// checked on each record read.
func (rl *recordList) columns(l *list, checked bool) {
	q := rl.q
	r := "r."
	if checked {
		r = "+r."
	}
	l.cond(r+"cluster_id = ?", rl.k.ID)
	if q.Type != "" {
		l.cond(r+"type = ?", string(q.Type))
	}
	if q.HasValue {
		// hds_records_vtext holds the texts' first keyPrefix characters.
		l.cond("substr("+r+"vtext, 1, 64) = substr(?, 1, 64) AND "+r+"vtext = ?", q.Value, q.Value)
	}
	if q.Min != nil {
		l.cond(r+"type = ?", string(q.Type))
		l.cutBound(r+"rkey", rkey(q.Type, *q.Min), q.Min.Text, true)
	}
	if q.Max != nil {
		m := r
		if rl.checkMax {
			m = "+r."
		}
		l.cond(r+"type = ?", string(q.Type))
		l.cutBound(m+"rkey", rkey(q.Type, *q.Max), q.Max.Text, false)
	}
}

// matching adds the substring filters to l, each as the rowids of its
// matches.
func (rl *recordList) matching(l *list) {
	for _, f := range rl.texts {
		q, args := f.matches(rl.k.ID, rl.scan)
		l.cond("r.rowid IN ("+q+")", args...)
	}
}

// countRecords counts the matches: from the cluster's counter when
// nothing filters, from the indexes that find the matches of a substring
// filter alone, else reading the matches' records.
func (t *tx) countRecords(rl *recordList) (int, error) {
	var l list
	rl.columns(&l, false)
	var n int
	switch {
	case len(l.where) == 1 && len(rl.texts) == 0:
		return int(rl.k.records), nil
	case len(l.where) == 1 && len(rl.texts) == 1:
		f := rl.texts[0]
		q, args := f.matches(rl.k.ID, rl.scan)
		if f.indexed() {
			alone, err := t.alone(rl.k)
			if err != nil {
				return 0, err
			}
			if alone {
				// The trigram index holds the records of this
				// cluster only: its matches are the cluster's,
				// counted without looking each up.
				q, args = `SELECT rowid FROM hds_records_text WHERE `+f.col+` MATCH ?`, []any{f.phrase()}
				if f.col == "vtext_lower" {
					q += ` UNION ALL SELECT x.rowid FROM hds_records x WHERE ` + longTexts("x") +
						` AND instr(hds_lower(x.vtext), ?) > 0`
					args = append(args, f.pattern)
				}
			}
		}
		err := t.row(`SELECT count(*) FROM (`+q+`)`, args...).Scan(&n)
		return n, err
	}
	rl.matching(&l)
	err := t.row(`SELECT count(*) FROM hds_records r`+l.whereClause(), l.args...).Scan(&n)
	return n, err
}

// alone reports whether k holds every record of the database (the
// clusters' counters, which limits.max_records_per_cluster reads, say
// so).
func (t *tx) alone(k *clus) (bool, error) {
	var all int
	err := t.row(`SELECT coalesce(sum(records), 0) FROM hds_clusters`).Scan(&all)
	return all == k.records, err
}

// fromMatches reports whether the page of a list with this many matches
// is read from the matches rather than in order: when they are filtered
// (by more than the cluster and type, which the indexes of every order
// lead with) and no more than a tenth of the cluster, or of a few pages.
func (rl *recordList) fromMatches(matches int) bool {
	q := rl.q
	if q.NoCount || (len(rl.texts) == 0 && !q.HasValue && q.Min == nil && q.Max == nil) {
		return false
	}
	return matches <= max(int(rl.k.records)/10, 4*(q.Offset+q.Limit))
}

// byRuns reports whether the list is read in order from an ascending
// index read backwards, a run of equal keys at a time (descByRuns): a
// descending list by created_at, updated_at, value (or range key) or
// type (of more than one type), whose ties are in ascending name order.
func (rl *recordList) byRuns() bool {
	q := rl.q
	switch q.SortBy {
	case store.SortCreatedAt, store.SortUpdatedAt, store.SortValue:
		return q.Desc
	case store.SortType:
		return q.Desc && q.Type == ""
	}
	return false
}

// descByRuns reads the page of a descending list by runs (byRuns) from
// from, an ascending index on (cluster, [type,] col, name, id), with the
// conditions l (q.After's not among them; after is its key in col, as
// positionKey, or rkey, gives it; upper, when not nil, is the cut key of
// a maxValue whose bound in l no index serves: the list's start when it
// has no cursor). Read backwards, the index gives col
// descending but the ties (a run of records of one key: a batch's shared
// time, a type, a value) in descending name order. So the list is read
// a run at a time, each forwards from where the page starts in it
// (OFFSET on an index range, which skips entries without reading their
// records): first the rest of the cursor's run, from the cursor; then,
// from the keys of the next entries read backwards (from the index
// alone, when l's conditions are on its columns) as far as the page
// ends and one more, the run the page starts in, the runs after it that
// end before the last key read (sorted by the database: no more entries
// than the page holds), and the last key's run, which may go on beyond
// the keys read, from its start. A page inside a run of 100,000 records
// (an import's shared time), by cursor or by offset, reads the page's
// records only, never sorts the run. A key column (value, range) holds
// cut keys (keyprefix.go): a run of a cut key is ordered by its tail
// first, descending (the database sorts such a run: texts of more than
// keyPrefix bytes sharing their first ones).
func (t *tx) descByRuns(from string, l *list, q store.ListQuery, col string, after, upper any) ([]*store.Record, error) {
	skip, need := q.Offset, q.Limit
	items := []*store.Record{}
	read := func(m list, order string, limit, offset int) error {
		return t.eachPacked(`SELECT `+packedRecord+from+m.whereClause()+order+` LIMIT ? OFFSET ?`, append(slices.Clip(m.args), limit, offset),
			func(r *store.Record) error {
				items = append(items, r)
				return nil
			})
	}
	cut := col == "r.vkey" || col == "r.rkey"
	// inRun is the order within the run of key k: by name, or, for a
	// cut key, by its tail first.
	inRun := func(k any) string {
		if b, ok := k.([]byte); ok && cut && len(b) >= keyPrefix {
			return " ORDER BY " + keyTail(col) + " DESC, r.name, r.id"
		}
		return " ORDER BY r.name, r.id"
	}
	byKey := " ORDER BY " + col + " DESC, r.name, r.id"
	if cut {
		byKey = " ORDER BY " + col + " DESC, " + keyTail(col) + " DESC, r.name, r.id"
	}
	rest := *l
	if upper != nil && q.After == nil {
		rest = rest.and(col+" <= ?", upper) // maxValue, l's condition on it unindexed
	}
	if q.After != nil {
		key, run := after, list{}
		if cut {
			var tail string
			key, tail = cutKey(after.([]byte), q.After.Key.Text)
			run = rest.and(col+" = ? AND ("+keyTail(col)+" < ? OR ("+keyTail(col)+" = ? AND (r.name, r.id) > (?, ?)))",
				key, tail, tail, q.After.Name, q.After.ID)
		} else {
			run = rest.and(col+" = ? AND (r.name, r.id) > (?, ?)", key, q.After.Name, q.After.ID)
		}
		rest = rest.and(col+" < ?", key)
		// The part of the offset the cursor's run takes: all of it
		// when the run has that many entries.
		inRunSkipped := skip
		if skip > 0 {
			var n int
			if err := t.row(`SELECT count(*) FROM (SELECT 1`+from+run.whereClause()+` LIMIT ?)`, append(run.args, skip)...).Scan(&n); err != nil {
				return nil, err
			}
			inRunSkipped = min(n, skip)
		}
		if skip -= inRunSkipped; skip == 0 {
			if err := read(run, inRun(key), need, inRunSkipped); err != nil {
				return nil, err
			}
		}
		if len(items) == need {
			return items, nil
		}
		need -= len(items)
	}
	rows, err := t.rows(`SELECT `+col+from+rest.whereClause()+` ORDER BY `+col+` DESC, r.name DESC, r.id DESC LIMIT ?`,
		append(slices.Clip(rest.args), skip+need+1)...)
	if err != nil {
		return nil, err
	}
	// keys are the keys read, as the database gives them; same, whether
	// two are equal (a key column's are byte strings).
	var keys []any
	for rows.Next() {
		var k any
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, err
		}
		keys = append(keys, k)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	same := func(a, b any) bool {
		if x, ok := a.([]byte); ok {
			y, ok := b.([]byte)
			return ok && string(x) == string(y)
		}
		return a == b
	}
	if skip >= len(keys) {
		return items, nil
	}
	// first is where the page starts: in the run of keys[first], at its
	// entry skip-start.
	first, start := keys[skip], skip
	for start > 0 && same(keys[start-1], first) {
		start--
	}
	var last any // the key of the run that may go on beyond the keys read
	if len(keys) > skip+need {
		last = keys[skip+need]
	}
	if err := read(rest.and(col+" = ?", first), inRun(first), need, skip-start); err != nil || (last != nil && same(first, last)) {
		return items, err
	}
	// The runs after the first that end before the last key read: the
	// keys from end to next. Their count bounds the read, not a lower
	// bound on col, which the planner might take instead of l's own (a
	// minValue) and read from there.
	end, next := skip+1, len(keys)
	for end < len(keys) && same(keys[end], first) {
		end++
	}
	if last != nil {
		for next = skip + need; next > end && same(keys[next-1], last); next-- {
		}
	}
	if n := min(next-end, q.Limit-len(items)); n > 0 {
		if err := read(rest.and(col+" < ?", first), byKey, n, 0); err != nil {
			return nil, err
		}
	}
	if last != nil && len(items) < q.Limit {
		if err := read(rest.and(col+" = ?", last), inRun(last), q.Limit-len(items), 0); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// orderIndex is the index that reads the list in order, sorted by col:
// forwards, or backwards a run at a time (descByRuns) when descending.
func (rl *recordList) orderIndex(col string) string {
	q := rl.q
	if col == "r.rkey" {
		return "hds_records_range"
	}
	if q.Type != "" {
		switch q.SortBy {
		case store.SortID:
			return "hds_records_type_id"
		case store.SortCreatedAt:
			return "hds_records_type_created"
		case store.SortUpdatedAt:
			return "hds_records_type_updated"
		case store.SortValue:
			return "hds_records_type_value"
		}
		return "hds_records_type" // by name, and by type: one type
	}
	switch q.SortBy {
	case store.SortID:
		return "hds_records_cluster_id"
	case store.SortCreatedAt:
		return "hds_records_created"
	case store.SortUpdatedAt:
		return "hds_records_updated"
	case store.SortValue:
		return "hds_records_value"
	case store.SortType:
		return "hds_records_type"
	}
	return "hds_records_name_lower"
}

// FindRecords implements store.Store: one statement counts, one reads
// the page, each served by an index.
func (s *Store) FindRecords(ctx context.Context, p store.Path, q store.RecordQuery) ([]*store.Record, int, error) {
	var items []*store.Record
	total := store.NotCounted
	err := s.read(ctx, func(t *tx) error {
		k, err := t.cluster(p)
		if err != nil {
			return err
		}
		rl := newRecordList(k, q)
		for _, f := range rl.texts {
			if f.col == "vtext_lower" && !f.indexed() {
				var last int // the highest seq: about the records of every cluster
				if err := t.row(`SELECT coalesce(max(seq), 0) FROM hds_records`).Scan(&last); err != nil {
					return err
				}
				rl.scan = 2*k.records >= last
			}
		}
		matches := 0
		if !q.NoCount {
			if total, err = t.countRecords(rl); err != nil {
				return err
			}
			matches = total
		}
		items = []*store.Record{}
		if total == 0 {
			return nil
		}
		// From the matches, when they are few (sorted): for a
		// substring filter the set of their rowids finds them, the
		// other filters are checked.
		sorted := rl.fromMatches(matches)
		fromSet := sorted && len(rl.texts) > 0
		// Within a range type the range key orders as the value key
		// does: hds_records_range serves the filter, the range and the
		// order.
		byRange := q.SortBy == store.SortValue && store.IsRangeType(q.Type) && q.Type != store.DateTime
		runs := !sorted && rl.byRuns() // descByRuns reads from q.After itself
		// A descending range read by runs starts at the cursor, or
		// the runs between two keys: maxValue is then checked, not a
		// bound the planner could start from (descByRuns adds it as
		// one when it is the list's start).
		rl.checkMax = runs && byRange
		var l list
		rl.columns(&l, fromSet)
		if !q.NoCount && !fromSet && (2*matches >= k.records || runs) {
			// Half of the cluster or more: read in order, about one
			// record in two matches; finding the set would cost more.
			// So does a descending list read by runs, whose several
			// statements would each find the set again, where each
			// reads at most about ten records a match (fromMatches
			// takes fewer matches).
			for _, f := range rl.texts {
				l.cond("instr("+f.text("r")+", ?) > 0", f.pattern)
			}
		} else {
			rl.matching(&l)
		}
		col := sortColumn("r", q.SortBy)
		var key any
		if q.After != nil {
			key = positionKey(q.SortBy, q.After)
		}
		var upper any // where a descending range by runs starts
		if byRange {
			col = "r.rkey"
			if rl.checkMax && q.Max != nil {
				upper, _ = cutKey(rkey(q.Type, *q.Max), q.Max.Text)
			}
			l.cond("r.rkey IS NOT NULL")
			if q.After != nil {
				key = rkey(q.Type, q.After.Key)
			}
		}
		cut := col == "r.vkey" || col == "r.rkey" // keyprefix.go
		if q.After != nil && cut && !runs {
			l.afterCut(q.ListQuery, col, key.([]byte), q.After.Key.Text)
		} else if q.After != nil && !runs {
			l.afterKey("r", q.ListQuery, col, key)
		}
		from := " FROM hds_records r INDEXED BY " + rl.orderIndex(col)
		if sorted {
			// "+" makes the order an expression no index serves: the
			// planner reads the matches by the filters alone, then
			// sorts them.
			from, col = " FROM hds_records r", "+"+col
		}
		if runs {
			items, err = t.descByRuns(from, &l, q.ListQuery, col, key, upper)
			return err
		}
		page := func(exact bool) error {
			items = items[:0]
			order, args := orderPageBy("r", q.ListQuery, col)
			if cut {
				order, args = cutOrder(q.ListQuery, col, exact)
			}
			return t.eachPacked(`SELECT `+packedRecord+from+l.whereClause()+order, append(slices.Clip(l.args), args...),
				func(r *store.Record) error {
					items = append(items, r)
					return nil
				})
		}
		// Sorted by a cut key: the page is read in the indexes' order,
		// which is the exact one unless it holds records whose cut keys
		// tie; then it is read again with their tails (which sorts
		// each run of equal cut keys).
		if err := page(sorted); err != nil || !cut || sorted {
			return err
		}
		ties, err := cutTies(pageKeys(items, col, q.Type), func(key []byte, i int) (bool, error) {
			var n int
			err := t.row(`SELECT count(*) FROM (SELECT 1 FROM hds_records r WHERE r.cluster_id = ? AND `+col+` = ? AND r.id <> ? LIMIT 1)`,
				k.ID, key, items[i].ID).Scan(&n)
			return n > 0, err
		})
		if err != nil || !ties {
			return err
		}
		return page(true)
	})
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

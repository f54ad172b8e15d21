package memory

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hds-go/hds/store"
)

// matchRecords returns the page of the records of k that q asks for, in
// q's order, and the number of matches (store.NotCounted when q asks for
// none). It reads the cluster's indexes (records) and never sorts the
// cluster:
//
//   - a filtered list of a small cluster filters every record and sorts
//     the matches;
//   - else the page is read from the index of q's sort key, from q's cursor,
//     filtering on the way, and stops once it is full;
//   - a type filter narrows the records to that type's value index, a
//     range filter (minValue, maxValue) or a value filter to a span of
//     it (or of each type's); the span's size is found by position in
//     the index, and when it is small the page is sorted out of it
//     instead;
//   - a count is the span's size when the span holds exactly the
//     matches; else counting walks the span (or every record when no
//     filter narrows them) and keeps the matches on the way while they
//     are few, which then make the page; such a total is remembered
//     until the cluster's next change (counts).
//
// Callers hold s.mu.
func matchRecords(k *cluster, q store.RecordQuery) ([]*record, int) {
	l := newLister(k.records, q)
	if !l.m.none() && l.n <= l.keep() {
		return l.scanAll()
	}
	l.plan()
	total := store.NotCounted
	if !q.NoCount {
		switch {
		case l.m.none():
			total = l.n
		case l.exact:
			total = l.size
		default:
			filters := filterKey(q)
			if n, ok := l.x.counts.get(l.x.gen, filters); ok {
				total = n
				break
			}
			total, page, done := l.countAndKeep()
			l.x.counts.put(l.x.gen, filters, total)
			if !done {
				page = l.walk()
			}
			return page, total
		}
	}
	if l.narrowed && !l.sortsSpan() && l.size <= l.keep() {
		return l.fromSpans(), total
	}
	return l.walk(), total
}

// lister plans and reads one list of a cluster's records.
type lister struct {
	x     *records
	q     store.RecordQuery
	m     recordMatcher
	order func(a, b *record) int // q's order
	after *record                // q's cursor as a record, or nil
	n     int                    // records in the cluster
	want  int                    // offset+limit, at most n
	// narrowed is set when the filters confine the matches to spans of
	// value indexes (spans, possibly none, of size records in all); exact
	// when those spans hold the matches exactly.
	narrowed, exact bool
	spans           []span
	size            int
	// typ is the index of q.Type, when typed.
	typ   uint8
	typed bool
}

// span is a run of one value index: the records whose value lies from
// lo to hi (probes of value keys, inclusive; nil when unbounded).
type span struct {
	t      *tree
	lo, hi *record
}

// above reports whether r's value lies after the span's end.
func (s span) above(r *record) bool { return s.hi != nil && compareKeys(r, s.hi) > 0 }

// below reports whether r's value lies before the span's start.
func (s span) below(r *record) bool { return s.lo != nil && compareKeys(r, s.lo) < 0 }

// len returns the number of records in the span, found by position.
func (s span) len() int {
	n := s.t.Len()
	if s.hi != nil {
		n = rank(s.t, func(r *record) bool { return compareKeys(r, s.hi) <= 0 })
	}
	if s.lo != nil {
		n -= rank(s.t, func(r *record) bool { return compareKeys(r, s.lo) < 0 })
	}
	return max(n, 0) // lo after hi: none
}

// rank returns the number of records of t that before reports, which
// must be a prefix of t's order: a binary search by position.
func rank(t *tree, before func(*record) bool) int {
	lo, hi := 0, t.Len()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if r, _ := t.GetAt(mid); before(r) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// scan calls visit with the span's records in ascending order until it
// returns false.
func (s span) scan(visit func(*record) bool) {
	f := func(r *record) bool { return !s.above(r) && visit(r) }
	if s.lo == nil {
		s.t.Scan(f)
	} else {
		s.t.Ascend(s.lo, f)
	}
}

func newLister(x *records, q store.RecordQuery) *lister {
	l := &lister{x: x, q: q, m: newRecordMatcher(q), order: recordOrder(q.ListQuery), n: x.len()}
	l.want = l.n
	if q.Offset < l.want && q.Limit < l.want-q.Offset {
		l.want = q.Offset + q.Limit
	}
	if q.After != nil {
		l.after = positionRecord(q.After)
	}
	return l
}

// scanAll returns the page and the total of a filtered list of a small
// cluster (at most keep records): every record filtered in name order,
// the matches sorted, as a walk of the index would read them all anyway.
func (l *lister) scanAll() ([]*record, int) {
	var matches []*record
	total := 0
	l.x.scan(func(r *record) bool {
		if l.m.matches(r) {
			total++
			if l.after == nil || l.order(r, l.after) > 0 {
				matches = append(matches, r)
			}
		}
		return true
	})
	switch {
	case l.q.SortBy == store.SortName && l.q.Desc:
		slices.Reverse(matches) // names are unique: no ties
	case l.q.SortBy != store.SortName:
		slices.SortFunc(matches, l.order)
	}
	if l.q.NoCount {
		total = store.NotCounted
	}
	return window(matches, l.q.ListQuery), total
}

// plan finds the spans of value indexes the filters confine the matches
// to, and their size.
func (l *lister) plan() {
	l.planSpans()
	for _, s := range l.spans {
		l.size += s.len()
	}
}

func (l *lister) planSpans() {
	q := l.q
	// Search and valueContains are never read from an index.
	unindexed := q.Search != "" || q.ValueContains != ""
	switch {
	case q.Type != "":
		l.narrowed = true
		t, ok := lookupType(q.Type)
		v := l.x.byValue[t]
		if !ok || v == nil {
			return // no record has the type
		}
		l.typ, l.typed = t, true
		switch {
		case q.HasValue:
			if s, ok := equalSpan(v, q.Type, q.Value); ok {
				l.spans = []span{s}
			}
			l.exact = !unindexed && q.Min == nil && q.Max == nil && exactEqual(q.Type)
		case (q.Min != nil || q.Max != nil) && q.Type != store.DateTime:
			// The value index orders these types as the range filters
			// compare them (DATETIME compares by instant, its index by
			// text).
			s := span{t: v}
			if q.Min != nil {
				s.lo = keyRecord(*q.Min)
			}
			if q.Max != nil {
				s.hi = keyRecord(*q.Max)
			}
			l.spans = []span{s}
			l.exact = !unindexed
		default:
			l.spans = []span{{t: v}}
			l.exact = !unindexed && q.Min == nil && q.Max == nil
		}
	case q.HasValue:
		l.narrowed, l.exact = true, !unindexed
		for t, v := range l.x.byValue {
			if s, ok := equalSpan(v, typeTable[t], q.Value); ok {
				l.spans = append(l.spans, s)
				l.exact = l.exact && exactEqual(typeTable[t])
			}
		}
	}
}

// exactEqual reports whether the span equalSpan returns for a type holds
// exactly the records whose text is the value: true but for numbers,
// whose span holds every text of the number.
func exactEqual(t store.DataType) bool { return t != store.Integer && t != store.Float }

// equalSpan returns the span of the value index v (of the type t) whose
// records may have the canonical text value, or false when none can.
func equalSpan(v *tree, t store.DataType, value string) (span, bool) {
	p := &record{}
	switch {
	case t.IsCredential():
		return span{}, false
	case t == store.Null:
		if value != "null" {
			return span{}, false
		}
		p.set("", t, json.RawMessage(value))
	case t == store.Integer:
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return span{}, false
		}
		p.set("", t, json.RawMessage(value))
	case t == store.Float:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return span{}, false
		}
		// The span holds the records of that number; the filter then
		// keeps those whose text is value.
		p.set("", t, json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)))
	case t.IsArray() || t == store.Boolean:
		p.set("", t, json.RawMessage(value))
	default:
		text, _ := json.Marshal(value)
		p.set("", t, text)
	}
	return span{t: v, lo: p, hi: p}, true
}

// keep is how many matches a list keeps aside while it counts or probes
// a span, to sort the page out of them: about the square root of the
// work of reading the page from the sort key's index when matches are
// rare (want·n/matches), so that neither way costs much more than the
// other.
func (l *lister) keep() int {
	return max(2*int(math.Sqrt(float64(l.want)*float64(l.n))), 4*l.want, 64)
}

// sortsSpan reports whether the one span is an index in q's order (a
// typed list sorted by value), so that the page is read from it in order.
func (l *lister) sortsSpan() bool { return l.q.SortBy == store.SortValue && l.typed }

// countAndKeep counts the matches, walking the spans or, when not
// narrowed, every record. It keeps the matches after the cursor while
// they are few: done reports that they were, and page is then the page.
func (l *lister) countAndKeep() (total int, page []*record, done bool) {
	limit := l.keep()
	var kept []*record
	overflow := false
	visit := func(r *record) bool {
		if l.m.matches(r) {
			total++
			if !overflow && (l.after == nil || l.order(r, l.after) > 0) {
				if len(kept) == limit {
					overflow, kept = true, nil
				} else {
					kept = append(kept, r)
				}
			}
		}
		return true
	}
	if l.narrowed {
		for _, s := range l.spans {
			s.scan(visit)
		}
	} else {
		l.x.scan(visit)
	}
	if overflow {
		return total, nil, false
	}
	return total, l.sorted(kept), true
}

// fromSpans returns the page sorted out of the matches in the spans (few
// records: size at most keep).
func (l *lister) fromSpans() []*record {
	kept := make([]*record, 0, l.size)
	visit := func(r *record) bool {
		if l.m.matches(r) && (l.after == nil || l.order(r, l.after) > 0) {
			kept = append(kept, r)
		}
		return true
	}
	for _, s := range l.spans {
		s.scan(visit)
	}
	return l.sorted(kept)
}

// sorted sorts matches in q's order and cuts out the page.
func (l *lister) sorted(matches []*record) []*record {
	slices.SortFunc(matches, l.order)
	return window(matches, l.q.ListQuery)
}

// walk reads the page from the index of q's sort key, from the cursor,
// filtering, until it is full.
func (l *lister) walk() []*record {
	if l.want == 0 || (l.narrowed && len(l.spans) == 0) {
		return nil
	}
	src, stop := l.source()
	page := make([]*record, 0, min(l.want, 128))
	for r := src.next(); r != nil; r = src.next() {
		if stop != nil && stop(r) {
			break
		}
		if l.m.matches(r) {
			if page = append(page, r); len(page) == l.want {
				break
			}
		}
	}
	if l.q.Offset >= len(page) {
		return nil
	}
	return page[l.q.Offset:]
}

// source returns the records in q's order from the cursor: the index of
// the sort key, or for sortBy=value the value index of q's type or all of
// them merged, or for sortBy=type the name index a type at a time. stop,
// when not nil, reports the first record past the span a typed list
// sorted by value reads.
func (l *lister) source() (src source, stop func(*record) bool) {
	x, desc := l.x, l.q.Desc
	switch l.q.SortBy {
	case store.SortID:
		return newWalker(x.byID, &idKey, desc, l.after), nil
	case store.SortCreatedAt:
		return newWalker(x.byCreated, &createdKey, desc, l.after), nil
	case store.SortUpdatedAt:
		return newWalker(x.byUpdated, &updatedKey, desc, l.after), nil
	case store.SortType:
		return l.byType(), nil
	case store.SortValue:
		if l.typed {
			return l.spanWalk()
		}
		m := &merge{order: l.order}
		for _, v := range x.byValue {
			w := newWalker(v, &valueKey, desc, l.after)
			if r := w.next(); r != nil {
				m.heads, m.walkers = append(m.heads, r), append(m.walkers, w)
			}
		}
		return m, nil
	}
	return newWalker(x.byName, &nameKey, desc, l.after), nil
}

// spanWalk reads the one span of a typed list sorted by value, in order,
// from the later of its start and the cursor.
func (l *lister) spanWalk() (source, func(*record) bool) {
	s := l.spans[0]
	from, stop := s.lo, s.above
	if l.q.Desc {
		from, stop = s.hi, s.below
	}
	if from == nil || (l.after != nil && l.order(l.after, from) > 0) {
		from = l.after
	}
	return newWalker(s.t, &valueKey, l.q.Desc, from), stop
}

// byType returns the records in type order (the types' names, byte-wise,
// reversed by desc), each type's by name ascending.
func (l *lister) byType() source {
	var types []uint8
	for t := range l.x.byValue {
		if !l.typed || t == l.typ {
			types = append(types, t)
		}
	}
	slices.SortFunc(types, func(a, b uint8) int { return strings.Compare(string(typeTable[a]), string(typeTable[b])) })
	if l.q.Desc {
		slices.Reverse(types)
	}
	return &typeSource{l: l, types: types}
}

// typeSource lists the records of each of its types in turn, by name.
type typeSource struct {
	l     *lister
	types []uint8
	cur   source
}

func (s *typeSource) next() *record {
	for {
		if s.cur != nil {
			if r := s.cur.next(); r != nil {
				return r
			}
			s.cur = nil
		}
		if len(s.types) == 0 {
			return nil
		}
		t := s.types[0]
		s.types = s.types[1:]
		s.cur = s.l.ofType(t)
	}
}

// ofType returns the records of type t after the cursor, by name: the
// value index of t sorted by name when it is small, else the name index
// filtered by type.
func (l *lister) ofType(t uint8) source {
	after := l.after
	if after != nil {
		c := strings.Compare(string(typeTable[t]), string(after.Type()))
		if l.q.Desc {
			c = -c
		}
		switch {
		case c < 0:
			return &slice{} // before the cursor
		case c > 0:
			after = nil
		}
	}
	v := l.x.byValue[t]
	if n := v.Len(); n <= l.keep() {
		recs := make([]*record, 0, n)
		v.Scan(func(r *record) bool {
			if after == nil || compareNameID(r, after) > 0 {
				recs = append(recs, r)
			}
			return true
		})
		slices.SortFunc(recs, compareNameID)
		return &slice{recs: recs}
	}
	return &typed{src: newWalker(l.x.byName, &nameKey, false, after), typ: t}
}

// A source yields records in a list's order; next returns nil at the
// end.
type source interface{ next() *record }

// slice is a source of records in order.
type slice struct{ recs []*record }

func (s *slice) next() *record {
	if len(s.recs) == 0 {
		return nil
	}
	r := s.recs[0]
	s.recs = s.recs[1:]
	return r
}

// typed keeps the records of one type of a source.
type typed struct {
	src source
	typ uint8
}

func (s *typed) next() *record {
	for r := s.src.next(); r != nil; r = s.src.next() {
		if r.typ == s.typ {
			return r
		}
	}
	return nil
}

// merge merges sources in a list's order (the value indexes of several
// types, sortBy=value): heads holds each walker's next record.
type merge struct {
	order   func(a, b *record) int
	heads   []*record
	walkers []*walker
}

func (m *merge) next() *record {
	best := -1
	for i, r := range m.heads {
		if best < 0 || m.order(r, m.heads[best]) < 0 {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	r := m.heads[best]
	if next := m.walkers[best].next(); next != nil {
		m.heads[best] = next
	} else {
		m.heads = slices.Delete(m.heads, best, best+1)
		m.walkers = slices.Delete(m.walkers, best, best+1)
	}
	return r
}

// positionRecord is a record holding the sort fields of pos, to compare
// records with it in a list's order.
func positionRecord(pos *store.Position) *record {
	id, _ := parseID(pos.ID)
	r := keyRecord(pos.Key)
	r.setData(pos.Name, r.value())
	r.id, r.created, r.updated = id, micros(pos.Time), micros(pos.Time)
	if pos.Type != "" {
		r.typ = typeIndex(pos.Type)
	}
	return r
}

// keyRecord returns a record without a name whose value key is k: a
// number as it is, a text as a STRING, no value as NULL. It sorts before
// every record with that value in a value index.
func keyRecord(k store.ValueKey) *record {
	r := &record{}
	switch k.Group {
	case store.GroupNumber:
		t := store.Float
		if k.IsInt {
			t = store.Integer
		}
		r.set("", t, json.RawMessage(k.Text))
		r.num = math.Float64bits(k.Float)
		if k.IsInt {
			r.num = uint64(k.Int)
		}
	case store.GroupText:
		text, _ := json.Marshal(k.Text)
		r.set("", store.String, text)
	default:
		r.set("", store.Null, json.RawMessage("null"))
	}
	return r
}

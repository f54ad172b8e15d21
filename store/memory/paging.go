package memory

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/store"
)

// counted is the total of a list of n matches: n, or store.NotCounted
// when q asks for no count.
func counted(n int, q store.ListQuery) int {
	if q.NoCount {
		return store.NotCounted
	}
	return n
}

// recordMatcher applies a RecordQuery's filters, cheapest first, with
// the query lower-cased once and its type as an index.
type recordMatcher struct {
	q                store.RecordQuery
	search, contains string
	// typ is the index of q.Type; unknown is set when no record has ever
	// had that type (nothing matches).
	typ     uint8
	unknown bool
	// byValue is set when a filter reads the value.
	byValue bool
}

func newRecordMatcher(q store.RecordQuery) recordMatcher {
	m := recordMatcher{q: q, search: strings.ToLower(q.Search), contains: strings.ToLower(q.ValueContains),
		byValue: q.HasValue || q.ValueContains != "" || q.Min != nil || q.Max != nil}
	if q.Type != "" {
		var ok bool
		m.typ, ok = lookupType(q.Type)
		m.unknown = !ok
	}
	return m
}

// none reports whether the query has no filter.
func (m *recordMatcher) none() bool { return m.q.Type == "" && m.search == "" && !m.byValue }

func (m *recordMatcher) matches(r *record) bool {
	switch {
	case m.q.Type != "" && (m.unknown || r.typ != m.typ),
		m.search != "" && !strings.Contains(strings.ToLower(r.Name()), m.search):
		return false
	case !m.byValue:
		return true
	}
	k := r.key()
	switch {
	case m.q.HasValue && (!k.HasText || k.Text != m.q.Value),
		m.contains != "" && (!k.HasText || !strings.Contains(strings.ToLower(k.Text), m.contains)),
		(m.q.Min != nil || m.q.Max != nil) && (r.Type() != m.q.Type || !sortkey.InRange(m.q, k)):
		return false
	}
	return true
}

// recordOrder sorts records by q.SortBy, ties by name then id ascending.
func recordOrder(q store.ListQuery) func(a, b *record) int {
	return func(a, b *record) int {
		var c int
		switch q.SortBy {
		case store.SortValue:
			c = compareKeys(a, b)
		case store.SortType:
			c = strings.Compare(string(a.Type()), string(b.Type()))
		case store.SortID:
			c = bytes.Compare(a.id[:], b.id[:])
		case store.SortCreatedAt:
			c = cmp.Compare(a.created, b.created)
		case store.SortUpdatedAt:
			c = cmp.Compare(a.updated, b.updated)
		default:
			c = strings.Compare(a.Name(), b.Name())
		}
		if q.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Name(), b.Name()), bytes.Compare(a.id[:], b.id[:]))
	}
}

// entry holds the fields every list but the records' can sort by.
type entry = store.SortKey

// page sorts items as q says and cuts out the requested window. It
// returns the window and the number of items before paging.
func page[T any](items []T, q store.ListQuery, fields func(T) entry) ([]T, int) {
	order := q.CompareKeys
	total := counted(len(items), q)
	if a := q.After; a != nil {
		pos := store.KeyAt(*a)
		items = slices.DeleteFunc(items, func(it T) bool { return order(fields(it), pos) <= 0 })
	}
	slices.SortFunc(items, func(x, y T) int { return order(fields(x), fields(y)) })
	return window(items, q), total
}

func window[T any](items []T, q store.ListQuery) []T {
	if q.Offset >= len(items) {
		return []T{}
	}
	items = items[q.Offset:]
	if q.Limit < len(items) {
		items = items[:q.Limit]
	}
	return items
}

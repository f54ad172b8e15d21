package memory

import (
	"container/heap"
	"encoding/json"
	"math"
	"slices"
	"sort"

	"github.com/hds-go/hds/store"
)

// matchRecords returns the page of the records of k that q asks for, in
// q's order, and the number of matches. It never copies the cluster: in
// name order it walks the sorted cache from where the page starts (found
// by binary search when q resumes after a position) and stops once the
// page is full; in any other order it keeps the page in a bounded heap
// while it walks the records once. Callers hold s.mu.
func matchRecords(k *cluster, q store.RecordQuery) ([]*record, int) {
	recs := k.byName()
	m := newRecordMatcher(q)
	order := recordOrder(q.ListQuery)
	after := func(*record) bool { return true }
	if q.After != nil {
		pos := positionRecord(q.After)
		after = func(r *record) bool { return order(r, pos) > 0 }
	}
	want := len(recs)
	if q.Offset < want && q.Limit < want-q.Offset {
		want = q.Offset + q.Limit
	}
	total := store.NotCounted
	if !q.NoCount {
		total = 0
		for _, r := range recs {
			if m.matches(r) {
				total++
			}
		}
	}
	var page []*record
	if q.SortBy == store.SortName {
		// Names are unique in a cluster, so the records after a position
		// are a suffix of the name order (a prefix, descending).
		collect := func(r *record) bool {
			if m.matches(r) {
				page = append(page, r)
			}
			return len(page) < want
		}
		if !q.Desc {
			for i := sort.Search(len(recs), func(i int) bool { return after(recs[i]) }); i < len(recs) && collect(recs[i]); i++ {
			}
		} else {
			for i := sort.Search(len(recs), func(i int) bool { return !after(recs[i]) }) - 1; i >= 0 && collect(recs[i]); i-- {
			}
		}
	} else {
		top := &topRecords{order: order, max: want}
		for _, r := range recs {
			if m.matches(r) && after(r) {
				top.offer(r)
			}
		}
		page = top.items
		slices.SortFunc(page, order)
	}
	if q.Offset >= len(page) {
		return nil, total
	}
	return page[q.Offset:], total
}

// positionRecord is a record holding the sort fields of pos, to compare
// records with it in a list's order.
func positionRecord(pos *store.Position) *record {
	id, _ := parseID(pos.ID)
	r := &record{id: id, created: micros(pos.Time), updated: micros(pos.Time)}
	// A value whose key is pos.Key: a number as it is, a text as a
	// STRING, no value as NULL.
	k := pos.Key
	switch k.Group {
	case store.GroupNumber:
		t := store.Float
		if k.IsInt {
			t = store.Integer
		}
		r.set(pos.Name, t, json.RawMessage(k.Text))
		r.isInt, r.num = k.IsInt, math.Float64bits(k.Float)
		if k.IsInt {
			r.num = uint64(k.Int)
		}
	case store.GroupText:
		text, _ := json.Marshal(k.Text)
		r.set(pos.Name, store.String, text)
	default:
		r.set(pos.Name, store.Null, json.RawMessage("null"))
	}
	if pos.Type != "" {
		r.typ = typeIndex(pos.Type)
	}
	return r
}

// topRecords keeps the first max records offered, in order: a max-heap
// whose root is the last of them.
type topRecords struct {
	items []*record
	order func(a, b *record) int
	max   int
}

func (t *topRecords) offer(r *record) {
	switch {
	case t.max == 0:
	case len(t.items) < t.max:
		heap.Push(t, r)
	case t.order(r, t.items[0]) < 0:
		t.items[0] = r
		heap.Fix(t, 0)
	}
}

// Len, Less, Swap, Push and Pop implement heap.Interface.
func (t *topRecords) Len() int           { return len(t.items) }
func (t *topRecords) Less(i, j int) bool { return t.order(t.items[i], t.items[j]) > 0 }
func (t *topRecords) Swap(i, j int)      { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *topRecords) Push(x any)         { t.items = append(t.items, x.(*record)) }
func (t *topRecords) Pop() any {
	r := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	return r
}

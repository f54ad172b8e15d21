package memory

import (
	"bytes"

	"github.com/tidwall/btree"
)

// sortKey is what a walk of an index needs of its sort key.
type sortKey struct {
	// cmp orders records as an ascending list sorted by the key does:
	// ties by name, then id.
	cmp func(a, b *record) int
	// same reports whether a and b have the same key (a run of ties).
	same func(a, b *record) bool
	// start sets p to a probe that sorts before the records with r's key
	// and after those with a smaller key.
	start func(p, r *record)
}

var (
	nameKey = sortKey{
		cmp:   compareNameID,
		same:  func(a, b *record) bool { return a.Name() == b.Name() },
		start: func(p, r *record) { *p = record{data: r.Name(), nameLen: r.nameLen} },
	}
	idKey = sortKey{
		cmp:   func(a, b *record) int { return bytes.Compare(a.id[:], b.id[:]) },
		same:  func(a, b *record) bool { return a.id == b.id },
		start: func(p, r *record) { *p = record{id: r.id} },
	}
	createdKey = sortKey{
		cmp:   compareCreated,
		same:  func(a, b *record) bool { return a.created == b.created },
		start: func(p, r *record) { *p = record{created: r.created} },
	}
	updatedKey = sortKey{
		cmp:   compareUpdated,
		same:  func(a, b *record) bool { return a.updated == b.updated },
		start: func(p, r *record) { *p = record{updated: r.updated} },
	}
	valueKey = sortKey{
		cmp:  compareValue,
		same: func(a, b *record) bool { return compareKeys(a, b) == 0 },
		start: func(p, r *record) {
			*p = record{data: r.value(), typ: r.typ, num: r.num} // no name
		},
	}
)

// maxRun is the longest run of ties a descending walk holds to list it
// in ascending order; a longer run is listed from its start instead.
const maxRun = 64

// walker reads one index in a list's order from after a position (a
// cursor, or a bound of a span). Ascending, it steps forward. Descending,
// it steps back, but lists each run of records with the same key (ties)
// by name and id ascending, as every list breaks ties: it holds a short
// run as it steps back over it, and lists a long one forward from its
// start (fwd), then moves before it.
type walker struct {
	it    btree.IterG[*record]
	key   *sortKey
	desc  bool
	ok    bool // it is on a record not yet listed (ascending, fwd)
	fwd   bool
	run   *record   // fwd: a record with the run's key
	held  []*record // descending: a short run, last first
	probe record
}

// newWalker returns a walker of t, sorted by key, in the order desc
// says, from after the position after (nil: from the first record).
func newWalker(t *tree, key *sortKey, desc bool, after *record) *walker {
	w := &walker{key: key, desc: desc}
	w.it.Init(t, false)
	switch {
	case after == nil && !desc:
		w.ok = w.it.First()
	case after == nil:
		w.ok = w.it.Last()
	default:
		// Ascending: the records after it. Descending: first its ties
		// after it (by name and id), then the records before its key.
		w.fwd, w.run = desc, after
		w.ok = w.it.Seek(after)
		for w.ok && key.cmp(w.it.Item(), after) <= 0 {
			w.ok = w.it.Next()
		}
	}
	return w
}

// next returns the next record, or nil at the end.
func (w *walker) next() *record {
	if !w.desc {
		return w.step()
	}
	for {
		if n := len(w.held); n > 0 {
			r := w.held[n-1]
			w.held = w.held[:n-1]
			return r
		}
		if w.fwd {
			if w.ok && w.key.same(w.it.Item(), w.run) {
				return w.step()
			}
			// The run is listed: go on before it.
			w.fwd = false
			w.key.start(&w.probe, w.run)
			if w.it.Seek(&w.probe) {
				w.ok = w.it.Prev()
			} else {
				w.ok = w.it.Last()
			}
			continue
		}
		if !w.ok {
			return nil
		}
		last := w.it.Item()
		w.held = append(w.held, last)
		for {
			w.ok = w.it.Prev()
			if !w.ok || !w.key.same(w.it.Item(), last) {
				break
			}
			if len(w.held) == maxRun {
				w.held = w.held[:0]
				w.fwd, w.run = true, last
				w.key.start(&w.probe, last)
				w.ok = w.it.Seek(&w.probe)
				break
			}
			w.held = append(w.held, w.it.Item())
		}
	}
}

// step returns the record the iterator is on and moves forward.
func (w *walker) step() *record {
	if !w.ok {
		return nil
	}
	r := w.it.Item()
	w.ok = w.it.Next()
	return r
}

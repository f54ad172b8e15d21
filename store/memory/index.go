package memory

import (
	"bytes"
	"cmp"
	"math"
	"strings"
	"sync"

	"github.com/tidwall/btree"

	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/store"
)

// tree is an ordered index of records (github.com/tidwall/btree: pull
// iterators that seek and step both ways, which the lists need to resume
// at a cursor and to merge indexes). Every index is changed under the
// store's write lock and read under its read lock, so the trees take no
// lock of their own.
type tree = btree.BTreeG[*record]

func newTree(less func(a, b *record) bool) *tree {
	return btree.NewBTreeGOptions(less, btree.Options{NoLocks: true})
}

// records holds a cluster's records in one ordered index per sort key of
// a list (docs/api.md#list-queries): by name (which also finds a record
// by name), by id (which also finds it by id), by created_at, by
// updated_at, and, per type, by value. sortBy=type reads the name index a
// type at a time. A record is in every index once; ties are broken by name
// then id, as the lists break them, so that an index's order is a list's
// order.
type records struct {
	byName, byID, byCreated, byUpdated *tree
	// byValue has one tree per type present: the records of that type
	// in value order (type filters and range filters read one of them).
	byValue map[uint8]*tree
	// gen moves with every change to the indexes (under the write lock);
	// counts holds totals of lists for one gen.
	gen    uint64
	counts counts
	// state is the cluster's store.Cluster.State: insert and remove add 1
	// to it, and so do the other changes it counts (Store.write, the
	// renames); a batch's rollback sets it back.
	state int64
}

func newRecords() *records {
	return &records{
		byName:    newTree(func(a, b *record) bool { return a.Name() < b.Name() }),
		byID:      newTree(func(a, b *record) bool { return bytes.Compare(a.id[:], b.id[:]) < 0 }),
		byCreated: newTree(func(a, b *record) bool { return compareCreated(a, b) < 0 }),
		byUpdated: newTree(func(a, b *record) bool { return compareUpdated(a, b) < 0 }),
		byValue:   make(map[uint8]*tree),
	}
}

// compareCreated, compareUpdated and compareValue order records by one
// field, ties by name then id ascending: the order of an ascending list.
func compareCreated(a, b *record) int {
	return cmp.Or(cmp.Compare(a.created, b.created), compareNameID(a, b))
}

func compareUpdated(a, b *record) int {
	return cmp.Or(cmp.Compare(a.updated, b.updated), compareNameID(a, b))
}

func compareValue(a, b *record) int {
	return cmp.Or(compareKeys(a, b), compareNameID(a, b))
}

// compareKeys orders the values of a and b as sortkey.Compare does,
// without building their keys when both are numbers.
func compareKeys(a, b *record) int {
	if a.group() != b.group() || store.SortGroup(a.group()) != store.GroupNumber {
		return sortkey.Compare(a.key(), b.key())
	}
	aInt, bInt := a.isInt(), b.isInt()
	switch {
	case aInt && bInt:
		return cmp.Compare(int64(a.num), int64(b.num))
	case !aInt && !bInt:
		return cmp.Compare(math.Float64frombits(a.num), math.Float64frombits(b.num))
	case aInt:
		return compareIntFloat(int64(a.num), math.Float64frombits(b.num))
	}
	return -compareIntFloat(int64(b.num), math.Float64frombits(a.num))
}

// compareIntFloat compares an int64 and a (finite) float64 exactly.
func compareIntFloat(i int64, f float64) int {
	switch {
	case f < -(1 << 63):
		return 1
	case f >= 1<<63:
		return -1
	}
	t := int64(f) // exact: |f| < 2^63, truncated toward zero
	if c := cmp.Compare(i, t); c != 0 {
		return c
	}
	return cmp.Compare(0, f-float64(t)) // f's fraction, exact
}

func compareNameID(a, b *record) int {
	return cmp.Or(strings.Compare(a.Name(), b.Name()), bytes.Compare(a.id[:], b.id[:]))
}

// len returns the number of records.
func (x *records) len() int { return x.byName.Len() }

// probes are records used as search keys, reused to spare an allocation
// per lookup.
var probes = sync.Pool{New: func() any { return new(record) }}

// get returns the record named name, or nil.
func (x *records) get(name string) *record {
	p := probes.Get().(*record)
	p.data, p.nameLen = name, uint16(len(name))
	r, _ := x.byName.Get(p)
	*p = record{}
	probes.Put(p)
	return r
}

// getID returns the record with id, or nil.
func (x *records) getID(id recordID) *record {
	p := probes.Get().(*record)
	p.id = id
	r, _ := x.byID.Get(p)
	*p = record{}
	probes.Put(p)
	return r
}

// values returns the value index of the type t, made when missing.
func (x *records) values(t uint8) *tree {
	v := x.byValue[t]
	if v == nil {
		v = newTree(func(a, b *record) bool { return compareValue(a, b) < 0 })
		x.byValue[t] = v
	}
	return v
}

// insert adds r to every index.
func (x *records) insert(r *record) {
	x.state++
	x.byID.Set(r)
	x.attach(r)
}

// remove takes r out of every index.
func (x *records) remove(r *record) {
	x.state++
	x.detach(r) // moves gen
	x.byID.Delete(r)
}

// detach takes r out of the indexes whose order a write may change (all
// but the id's: a new name moves a record among its ties of created_at),
// before the write; attach puts it back after.
func (x *records) detach(r *record) {
	x.gen++
	x.byName.Delete(r)
	x.byCreated.Delete(r)
	x.byUpdated.Delete(r)
	if v := x.byValue[r.typ]; v != nil {
		v.Delete(r)
		if v.Len() == 0 {
			delete(x.byValue, r.typ)
		}
	}
}

func (x *records) attach(r *record) {
	x.gen++
	x.byName.Set(r)
	x.byCreated.Set(r)
	x.byUpdated.Set(r)
	x.values(r.typ).Set(r)
}

// scan calls visit with every record in name order until it returns
// false.
func (x *records) scan(visit func(*record) bool) { x.byName.Scan(visit) }

// all returns the records in name order.
func (x *records) all() []*record {
	out := make([]*record, 0, x.len())
	x.byName.Scan(func(r *record) bool {
		out = append(out, r)
		return true
	})
	return out
}

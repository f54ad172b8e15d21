package memory

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hds-go/hds/internal/uuidtext"
	"github.com/hds-go/hds/store"
)

// record is a record's current state, laid out small (80 bytes and one
// string; a million small records take about 210 bytes each, indexes
// included): the name and the value in one string, the id as 16 bytes,
// the type as an index, timestamps as Unix microseconds, the numeric value
// of a number parsed once, and the history behind a pointer that most
// records leave nil. Its value is never changed in place (a write replaces
// the string), so that states handed out can share it. The store.Record a
// caller sees is built from it by fill.
type record struct {
	// data is the name followed by the canonical JSON of the value (the
	// first nameLen bytes are the name); the store never changes its
	// bytes (Value shares them).
	data    string
	id      recordID
	Version int64
	// created and updated are Unix microseconds (the store keeps
	// microseconds, in UTC).
	created, updated int64
	// num holds the value of a number: an int64 for an INTEGER, else the
	// bits of a float64.
	num     uint64
	typ     uint8 // index in typeTable
	nameLen uint16
	by      actor // UpdatedBy
	// history holds the states the record had before, oldest first, at
	// most the MaxVersions of the last write; nil when there are none.
	// Each state is immutable.
	history *[]*store.RecordVersion
}

// Name returns the record's name.
func (r *record) Name() string { return r.data[:r.nameLen] }

// value returns the canonical JSON of the value as a string.
func (r *record) value() string { return r.data[r.nameLen:] }

// Value returns the canonical JSON of the value, shared: never to be
// changed.
func (r *record) Value() json.RawMessage {
	v := r.value()
	return json.RawMessage(unsafe.Slice(unsafe.StringData(v), len(v)))
}

// setData makes name and value (canonical JSON) the record's, in one new
// string.
func (r *record) setData(name, value string) {
	r.data, r.nameLen = name+value, uint16(len(name))
}

// named returns a record with only a name, to look records up by name.
func named(name string) *record { return &record{data: name, nameLen: uint16(len(name))} }

// recordID is a record id: a UUID as its 16 bytes. Byte order is the
// order of the canonical (lower-case) text.
type recordID [16]byte

// parseID reads a record id from its text in any case, or reports false.
func parseID(s string) (recordID, bool) {
	var id recordID
	c, ok := store.CanonicalUUID(s)
	if !ok {
		return id, false
	}
	b := []byte(c[0:8] + c[9:13] + c[14:18] + c[19:23] + c[24:36])
	_, err := hex.Decode(id[:], b)
	return id, err == nil
}

// ID returns the record's id as text.
func (r *record) ID() string {
	var b [36]byte
	return string(uuidtext.Append(b[:0], r.id))
}

// typeTable holds every type a record has had, so that a record keeps an
// index of one byte, and typeGroups the store.SortGroup of each. It
// starts with store.Types; any other type is added under typeMu (a caller
// may store any DataType it validated).
var (
	typeMu    sync.Mutex
	typeTable = func() *[256]store.DataType {
		var t [256]store.DataType
		copy(t[:], store.Types)
		return &t
	}()
	typeGroups = func() *[256]uint8 {
		var g [256]uint8
		for i, t := range store.Types {
			g[i] = groupOf(t)
		}
		return &g
	}()
	typeCount = len(store.Types)
)

// groupOf returns the store.SortGroup of the values of type t.
func groupOf(t store.DataType) uint8 {
	switch {
	case t.IsCredential(), t == store.Null:
		return uint8(store.GroupNoValue)
	case t == store.Integer, t == store.Float:
		return uint8(store.GroupNumber)
	}
	return uint8(store.GroupText)
}

// group returns the store.SortGroup of the record's value.
func (r *record) group() uint8 { return typeGroups[r.typ] }

// isInt reports whether the record is an INTEGER (num holds an int64).
func (r *record) isInt() bool { return typeTable[r.typ] == store.Integer }

// typeIndex returns the index of t in typeTable, adding it when new.
func typeIndex(t store.DataType) uint8 {
	for i, x := range store.Types {
		if x == t {
			return uint8(i)
		}
	}
	typeMu.Lock()
	defer typeMu.Unlock()
	for i := len(store.Types); i < typeCount; i++ {
		if typeTable[i] == t {
			return uint8(i)
		}
	}
	if typeCount == len(typeTable) {
		panic("memory: too many record types")
	}
	typeTable[typeCount], typeGroups[typeCount] = t, groupOf(t)
	typeCount++
	return uint8(typeCount - 1)
}

// actor is an interned UpdatedBy: an index in actorNames. Records
// written by one user share its id's text, in four bytes each.
type actor uint32

// actorNames holds every UpdatedBy a record has had (0 is ""), copied
// on write; actorIndex finds them. A process meets as many as it has
// users and API tokens.
var (
	actorMu    sync.Mutex
	actorNames atomic.Pointer[[]string]
	actorIndex sync.Map // string -> actor
)

// actorOf interns name.
func actorOf(name string) actor {
	if name == "" {
		return 0
	}
	if a, ok := actorIndex.Load(name); ok {
		return a.(actor)
	}
	actorMu.Lock()
	defer actorMu.Unlock()
	if a, ok := actorIndex.Load(name); ok {
		return a.(actor)
	}
	names := []string{""}
	if p := actorNames.Load(); p != nil {
		names = *p
	}
	names = append(names[:len(names):len(names)], strings.Clone(name))
	actorNames.Store(&names)
	a := actor(len(names) - 1)
	actorIndex.Store(name, a)
	return a
}

// String returns the actor's name.
func (a actor) String() string {
	if a == 0 {
		return ""
	}
	return (*actorNames.Load())[a]
}

// Type returns the record's type.
func (r *record) Type() store.DataType { return typeTable[r.typ] }

// CreatedAt and UpdatedAt return the record's timestamps.
func (r *record) CreatedAt() time.Time { return time.UnixMicro(r.created).UTC() }
func (r *record) UpdatedAt() time.Time { return time.UnixMicro(r.updated).UTC() }

// set makes the record's state name, t and value (copied), and derives
// what lists read from it.
func (r *record) set(name string, t store.DataType, value json.RawMessage) {
	r.typ = typeIndex(t)
	r.setData(name, string(value))
	r.num = 0
	if k := store.KeyOf(t, value); k.Group == store.GroupNumber {
		if k.IsInt {
			r.num = uint64(k.Int)
		} else {
			r.num = math.Float64bits(k.Float)
		}
	}
}

// key returns what the value filters and sortBy=value read. Its text
// shares the value's bytes, but for a JSON string with escapes.
func (r *record) key() store.ValueKey {
	t, value := r.Type(), r.value()
	switch {
	case store.SortGroup(r.group()) == store.GroupNumber:
		k := store.ValueKey{Group: store.GroupNumber, Text: value, HasText: true, IsInt: r.isInt()}
		if k.IsInt {
			k.Int, k.Float = int64(r.num), float64(int64(r.num))
		} else {
			k.Float = math.Float64frombits(r.num)
		}
		return k
	case t.IsCredential():
		return store.ValueKey{Group: store.GroupNoValue}
	case t == store.Null:
		return store.ValueKey{Group: store.GroupNoValue, Text: "null", HasText: true}
	case t.IsArray() || t == store.Boolean:
		return store.ValueKey{Group: store.GroupText, Text: value, HasText: true}
	}
	v := value
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && !strings.ContainsRune(v, '\\') {
		return store.ValueKey{Group: store.GroupText, Text: v[1 : len(v)-1], HasText: true}
	}
	return store.KeyOf(t, r.Value())
}

// hist returns the record's history (nil when none).
func (r *record) hist() []*store.RecordVersion {
	if r.history == nil {
		return nil
	}
	return *r.history
}

// setHist replaces the record's history.
func (r *record) setHist(h []*store.RecordVersion) {
	if len(h) == 0 {
		r.history = nil
		return
	}
	r.history = &h
}

// fill sets o to the record's current state, sharing its value and
// taking its id from ids (the id's text, or "" to format it).
func (r *record) fill(o *store.Record, id string) {
	if id == "" {
		id = r.ID()
	}
	*o = store.Record{ID: id, Name: r.Name(), Type: r.Type(), Value: r.Value(), Version: r.Version,
		CreatedAt: r.CreatedAt(), UpdatedAt: r.UpdatedAt(), UpdatedBy: r.by.String()}
}

// state returns the record's current state, sharing its (immutable)
// value: for reading and handing to readers, never to change.
func (r *record) state() *store.Record {
	var o store.Record
	r.fill(&o, "")
	return &o
}

// Clone returns a copy of the record's current state that the caller may
// change.
func (r *record) Clone() *store.Record {
	o := r.state()
	o.Value = append(json.RawMessage(nil), r.value()...)
	return o
}

// idsText returns the ids of recs as one text, in one allocation: the
// id of recs[i] is idAt(text, i).
func idsText(recs []*record) string {
	buf := make([]byte, 0, 36*len(recs))
	for _, r := range recs {
		buf = uuidtext.Append(buf, r.id)
	}
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// idAt returns the i-th id of a text of idsText.
func idAt(text string, i int) string { return text[36*i : 36*i+36] }

// micros returns t as Unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// lookupType returns the index of t in typeTable, or false when no record
// has had the type.
func lookupType(t store.DataType) (uint8, bool) {
	for i, x := range store.Types {
		if x == t {
			return uint8(i), true
		}
	}
	typeMu.Lock()
	defer typeMu.Unlock()
	for i := len(store.Types); i < typeCount; i++ {
		if typeTable[i] == t {
			return uint8(i), true
		}
	}
	return 0, false
}

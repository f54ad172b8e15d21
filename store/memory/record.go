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

// record is a record's current state, laid out small (a million small
// records take about 240 bytes each, maps included): the id as 16
// bytes, the type as an index, timestamps as Unix microseconds, the
// numeric value of a number parsed once, and the history behind a pointer
// that most records leave nil. Its Value is never changed in place (a
// write replaces it), so that states handed out can share it. The
// store.Record a caller sees is built from it by out.
type record struct {
	Name string
	// value is the canonical JSON; the bytes of a json.RawMessage the
	// store owns and never changes (Value shares them).
	value   string
	id      recordID
	Version int64
	// created and updated are Unix microseconds (the store keeps
	// microseconds, in UTC).
	created, updated int64
	// num holds the value of a GroupNumber record: an int64 when isInt,
	// else the bits of a float64.
	num   uint64
	typ   uint8 // index in typeTable
	group uint8 // a store.SortGroup
	isInt bool
	by    actor // UpdatedBy
	// history holds the states the record had before, oldest first, at
	// most the MaxVersions of the last write; nil when there are none.
	// Each state is immutable.
	history *[]*store.RecordVersion
}

// Value returns the canonical JSON of the value, shared: never to be
// changed.
func (r *record) Value() json.RawMessage {
	return json.RawMessage(unsafe.Slice(unsafe.StringData(r.value), len(r.value)))
}

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
// index of one byte. It starts with store.Types; any other type is added
// under typeMu (a caller may store any DataType it validated).
var (
	typeMu    sync.Mutex
	typeTable = func() *[256]store.DataType {
		var t [256]store.DataType
		copy(t[:], store.Types)
		return &t
	}()
	typeCount = len(store.Types)
)

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
	typeTable[typeCount] = t
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

// set makes the record's state name, t and value (the caller's copy,
// kept as it is), and derives what lists read from it.
func (r *record) set(name string, t store.DataType, value json.RawMessage) {
	r.Name, r.typ = name, typeIndex(t)
	r.value = unsafe.String(unsafe.SliceData(value), len(value))
	k := store.KeyOf(t, value)
	r.group, r.isInt, r.num = uint8(k.Group), k.IsInt, 0
	if k.Group == store.GroupNumber {
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
	t := r.Type()
	switch {
	case store.SortGroup(r.group) == store.GroupNumber:
		k := store.ValueKey{Group: store.GroupNumber, Text: r.value, HasText: true, IsInt: r.isInt}
		if r.isInt {
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
		return store.ValueKey{Group: store.GroupText, Text: r.value, HasText: true}
	}
	v := r.value
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
	*o = store.Record{ID: id, Name: r.Name, Type: r.Type(), Value: r.Value(), Version: r.Version,
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
	o.Value = append(json.RawMessage(nil), r.value...)
	return o
}

// idTexts returns the ids of recs as text, in one allocation.
func idTexts(recs []*record) []string {
	buf := make([]byte, 0, 36*len(recs))
	for _, r := range recs {
		buf = uuidtext.Append(buf, r.id)
	}
	all := unsafe.String(unsafe.SliceData(buf), len(buf))
	ids := make([]string, len(recs))
	for i := range recs {
		ids[i] = all[36*i : 36*i+36]
	}
	return ids
}

// micros returns t as Unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

package handler

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"math"
	"net/url"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/store"
)

// Cursors (docs/api.md#list-queries, v1.1). A cursor is the position of
// the last item of a page (store.Position) with a binding to the list it
// came from, sealed with an HMAC under a key derived from the JWT secret,
// so that every instance sharing the secret reads it and nothing altered is
// believed. It is opaque base64url:
//
//	version (1 byte) | binding (8) | name | id | sort field | tag (16)
//
// where the binding is a hash of the list (its kind and path) and of the
// query's sort and filters, and strings are varint-length-prefixed. The
// sort field is what the list is sorted by: a time (Unix nanoseconds), a
// type, or a value key. A value key's text is bounded: a longer text is
// cut to cursorTextBytes (at a code point) with a hash of the whole text,
// and on resume the whole text is read back from the record, when it is
// still there with that text (recoverText). If it is not, the page
// resumes at the cut text: items may then be listed again, never skipped.

const (
	cursorVersion   = 1
	cursorBinding   = 8
	cursorTag       = 16
	cursorTextBytes = 256
	cursorTextHash  = 8
)

// The messages of a refused cursor (400 INVALID_REQUEST).
const (
	msgCursorMalformed = "cursor is malformed"
	msgCursorOther     = "cursor belongs to another list, sort or set of filters"
	msgCursorOffset    = "offset must be absent or 0 with a cursor"
)

// cursors seal and open the cursors of lists.
type cursors struct {
	key  []byte
	macs *sync.Pool // of hash.Hash: HMAC-SHA256 under key
}

// newCursors derives the cursor key from the JWT secret of tokens; without
// tokens (a handler built for a test) the key is random.
func newCursors(tokens *auth.Tokens) cursors {
	var key []byte
	if tokens == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	} else {
		key = tokens.DeriveKey("hds list cursors")
	}
	return cursors{key: key, macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}}
}

// listCursor is the cursor side of one list request: its binding, and
// the position it resumes after, when it was given a cursor.
type listCursor struct {
	c       cursors
	binding [cursorBinding]byte
	by      store.SortField
	// textHash is the hash of the whole text of a value key cut in the
	// cursor given (nil when the text is whole).
	textHash []byte
}

// open binds a list request: the list's kind and scope (names), the
// query's sort and filters (fields, in a fixed order). When the request
// has a cursor it sets q.After to its position; a cursor with an offset
// other than 0, one that does not open and one of another list are 400.
func (c cursors) open(v url.Values, q *store.ListQuery, scope []string, filters ...string) (*listCursor, error) {
	lc := &listCursor{c: c, by: q.SortBy}
	var buf [256]byte
	b := buf[:0]
	for _, s := range scope {
		b = appendString(b, s)
	}
	b = appendString(b, string(q.SortBy))
	b = strconv.AppendBool(b, q.Desc)
	b = appendString(b, q.Search)
	for _, s := range filters {
		b = appendString(b, s)
	}
	sum := sha256.Sum256(b)
	copy(lc.binding[:], sum[:])
	if !v.Has("cursor") {
		return lc, nil
	}
	if q.Offset != 0 {
		return nil, envelope.BadRequest(msgCursorOffset)
	}
	pos, err := lc.decode(v.Get("cursor"))
	if err != nil {
		return nil, err
	}
	q.After = pos
	return lc, nil
}

// appendTag appends the tag of a cursor's body (its HMAC, cut) to b.
func (c cursors) appendTag(b, body []byte) []byte {
	m := c.macs.Get().(hash.Hash)
	m.Reset()
	m.Write(body)
	var sum [sha256.Size]byte
	m.Sum(sum[:0])
	c.macs.Put(m)
	return append(b, sum[:cursorTag]...)
}

// next returns the cursor of the page that ends with the item at pos.
func (lc *listCursor) next(pos store.Position) string {
	b := make([]byte, 0, 96)
	b = append(b, cursorVersion)
	b = append(b, lc.binding[:]...)
	b = appendString(b, pos.Name)
	b = appendString(b, pos.ID)
	switch lc.by {
	case store.SortCreatedAt, store.SortUpdatedAt:
		b = binary.BigEndian.AppendUint64(b, uint64(pos.Time.UnixNano()))
	case store.SortType:
		b = appendString(b, string(pos.Type))
	case store.SortValue:
		k := pos.Key
		b = append(b, byte(k.Group))
		switch k.Group {
		case store.GroupNumber:
			if k.IsInt {
				b = append(b, 1)
				b = binary.BigEndian.AppendUint64(b, uint64(k.Int))
			} else {
				b = append(b, 0)
				b = binary.BigEndian.AppendUint64(b, math.Float64bits(k.Float))
			}
		case store.GroupText:
			if len(k.Text) <= cursorTextBytes {
				b = append(b, 0)
				b = appendString(b, k.Text)
			} else {
				cut := cursorTextBytes
				for !utf8.RuneStart(k.Text[cut]) {
					cut--
				}
				b = append(b, 1)
				b = appendString(b, k.Text[:cut])
				b = append(b, textHash(k.Text)...)
			}
		}
	}
	b = lc.c.appendTag(b, b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decode opens a cursor of this list.
func (lc *listCursor) decode(s string) (*store.Position, error) {
	malformed := envelope.BadRequest(msgCursorMalformed)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+cursorBinding+cursorTag {
		return nil, malformed
	}
	body, tag := b[:len(b)-cursorTag], b[len(b)-cursorTag:]
	var want [cursorTag]byte
	if !hmac.Equal(tag, lc.c.appendTag(want[:0], body)) || body[0] != cursorVersion {
		return nil, malformed
	}
	if !hmac.Equal(body[1:1+cursorBinding], lc.binding[:]) {
		return nil, envelope.BadRequest(msgCursorOther)
	}
	r := reader{b: body[1+cursorBinding:]}
	pos := &store.Position{Name: r.string(), ID: r.string()}
	switch lc.by {
	case store.SortCreatedAt, store.SortUpdatedAt:
		pos.Time = time.Unix(0, int64(r.uint64())).UTC()
	case store.SortType:
		pos.Type = store.DataType(r.string())
	case store.SortValue:
		k := &pos.Key
		k.Group = store.SortGroup(r.byte())
		switch k.Group {
		case store.GroupNumber:
			k.IsInt = r.byte() == 1
			if n := r.uint64(); k.IsInt {
				k.Int, k.Float = int64(n), float64(int64(n))
			} else {
				k.Float = math.Float64frombits(n)
			}
		case store.GroupText:
			cut := r.byte() == 1
			k.Text, k.HasText = r.string(), true
			if cut {
				lc.textHash = r.take(cursorTextHash)
			}
		}
	}
	if r.bad || len(r.b) > 0 {
		return nil, malformed
	}
	return pos, nil
}

// recoverText makes the text of q.After whole when the cursor cut it, with
// the text of the record the position names, when it still has the text
// the cursor was made from (find reads it; nil when it is gone).
func (lc *listCursor) recoverText(q *store.ListQuery, find func(id string) *store.Record) {
	if lc.textHash == nil || q.After == nil {
		return
	}
	if r := find(q.After.ID); r != nil {
		if k := store.KeyOf(r.Type, r.Value); k.Group == store.GroupText && hmac.Equal(textHash(k.Text), lc.textHash) {
			q.After.Key.Text = k.Text
		}
	}
}

// textHash identifies a whole text cut in a cursor.
func textHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:cursorTextHash]
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// reader reads a cursor's body; bad is set on any short read.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.bad = true
		r.b = nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) uint64() uint64 {
	if v := r.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func (r *reader) string() string {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.bad = true
		return ""
	}
	r.b = r.b[k:]
	return string(r.take(int(n)))
}

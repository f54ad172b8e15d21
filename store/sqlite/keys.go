package sqlite

import (
	"encoding/binary"
	"encoding/json"
	"math/big"

	"github.com/hds-go/hds/internal/timetext"
	"github.com/hds-go/hds/store"
)

// The sort keys of a record are byte strings computed in Go whose
// byte-wise order (SQLite compares BLOBs with memcmp) is the order the
// API sorts and filters by, so that an index on them serves lists:
//
//   - vkey, sortBy=value (sortkey.Compare in internal/sortkey): the group as one byte,
//     then for a number numKey, for a text its bytes, for no value
//     nothing.
//   - rkey, the range filters within a range type (sortkey.CompareRange):
//     a 0 byte (so that no key is empty), then numKey for INTEGER and
//     FLOAT, the instant for DATETIME, the canonical text for the others.

// vkey returns the sortBy=value key of a value key.
func vkey(k store.ValueKey) []byte {
	b := []byte{byte(k.Group)}
	switch k.Group {
	case store.GroupNumber:
		return appendNum(b, k)
	case store.GroupText:
		return append(b, k.Text...)
	}
	return b
}

// rkey returns the range key of a value key of type t, or nil when t is
// not a range type.
func rkey(t store.DataType, k store.ValueKey) []byte {
	if !store.IsRangeType(t) {
		return nil
	}
	b := []byte{0}
	switch t {
	case store.Integer, store.Float:
		return appendNum(b, k)
	case store.DateTime:
		at := timetext.Instant(k.Text)
		b = binary.BigEndian.AppendUint64(b, uint64(at.Unix())^(1<<63))
		return binary.BigEndian.AppendUint32(b, uint32(at.Nanosecond()))
	}
	return append(b, k.Text...)
}

// recordKeys returns the vkey, rkey (NULL when none), both cut to
// keyPrefix bytes, vtext (NULL for credentials) and vtext_lower (NULL
// for credentials and texts longer than hds_records_text holds) of a
// record of type t with value v.
func recordKeys(t store.DataType, v json.RawMessage) (vk []byte, rk any, vtext any, vlower any) {
	k := store.KeyOf(t, v)
	vk, _ = cutKey(vkey(k), "") // keyprefix.go
	if b := rkey(t, k); b != nil {
		rk, _ = cutKey(b, "")
	}
	if k.HasText {
		vtext, vlower = k.Text, keptLower(k.Text)
	}
	return vk, rk, vtext, vlower
}

// appendNum appends the order-preserving encoding of the exact value of
// a number key: an int64 or a float64, both binary fractions m·2^e with a
// mantissa of at most 64 bits. A sign byte (0 negative, 1 zero, 2
// positive), then for a positive number the biased exponent (2 bytes) and
// the normalized mantissa (8 bytes), for a negative one the same bytes
// inverted, so that a larger magnitude sorts first.
func appendNum(b []byte, k store.ValueKey) []byte {
	f := new(big.Float).SetPrec(64)
	if k.IsInt {
		f.SetInt64(k.Int)
	} else {
		f.SetFloat64(k.Float)
	}
	sign := f.Sign()
	if sign == 0 {
		return append(b, 1)
	}
	mant := new(big.Float).SetPrec(64)
	exp := f.MantExp(mant) // f = mant · 2^exp, 0.5 <= |mant| < 1
	mant.Abs(mant)
	mant.SetMantExp(mant, 64)
	m, _ := mant.Uint64()
	var enc [10]byte
	binary.BigEndian.PutUint16(enc[:2], uint16(exp+32768))
	binary.BigEndian.PutUint64(enc[2:], m)
	if sign < 0 {
		for i := range enc {
			enc[i] = ^enc[i]
		}
		return append(append(b, 0), enc[:]...)
	}
	return append(append(b, 2), enc[:]...)
}

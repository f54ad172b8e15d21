package store

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/timetext"
)

// DataType is a record type: one of the scalar types below or an array of
// one ("[]STRING", ...). Its value is the canonical upper-case name.
type DataType string

// The scalar types. Every one of them also exists as an array type, see
// ArrayOf.
const (
	String     DataType = "STRING"
	Integer    DataType = "INTEGER"
	Float      DataType = "FLOAT"
	Boolean    DataType = "BOOLEAN"
	Date       DataType = "DATE"
	Time       DataType = "TIME"
	DateTime   DataType = "DATETIME"
	UUID       DataType = "UUID"
	Null       DataType = "NULL"
	Credential DataType = "CREDENTIAL"
)

const arrayPrefix = "[]"

var scalarTypes = []DataType{String, Integer, Float, Boolean, Date, Time, DateTime, UUID, Null, Credential}

// Types lists every supported type: the scalars, then their arrays.
var Types = func() []DataType {
	all := append([]DataType(nil), scalarTypes...)
	for _, t := range scalarTypes {
		all = append(all, ArrayOf(t))
	}
	return all
}()

var (
	typeByName = func() map[string]DataType {
		m := make(map[string]DataType, 2*len(Types))
		for _, t := range Types {
			m[string(t)] = t
		}
		for short, t := range map[string]DataType{"STR": String, "INT": Integer, "FLT": Float, "BOOL": Boolean} {
			m[short] = t
			m[arrayPrefix+short] = ArrayOf(t)
		}
		return m
	}()
	supportedTypes = func() string {
		names := make([]string, len(Types))
		for i, t := range Types {
			names[i] = string(t)
		}
		return "supported types: " + strings.Join(names, ", ")
	}()
)

// ArrayOf returns the array type whose elements are of scalar type t.
func ArrayOf(t DataType) DataType { return arrayPrefix + t }

// IsArray reports whether t is an array type.
func (t DataType) IsArray() bool { return strings.HasPrefix(string(t), arrayPrefix) }

// Elem returns the element type of an array type, or t itself.
func (t DataType) Elem() DataType { return DataType(strings.TrimPrefix(string(t), arrayPrefix)) }

// IsCredential reports whether t is CREDENTIAL or []CREDENTIAL, whose
// values are secrets.
func (t DataType) IsCredential() bool { return t.Elem() == Credential }

// ParseType reads a type name in any case (ASCII only), accepting the short
// forms STR, INT, FLT and BOOL and their arrays. An unknown name is a
// *ValidationError listing every supported type.
func ParseType(name string) (DataType, error) {
	if t, ok := typeByName[asciiUpper(name)]; ok {
		return t, nil
	}
	if strings.IndexByte(name, 0) >= 0 || !utf8.ValidString(name) || len(name) > 64 {
		return "", invalid("unknown type; %s", supportedTypes)
	}
	return "", invalid("unknown type %q; %s", name, supportedTypes)
}

func asciiUpper(s string) string {
	for i := 0; i < len(s); i++ {
		if 'a' <= s[i] && s[i] <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'a' <= b[j] && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// ParseJSON checks a JSON value against t and returns its canonical JSON:
// compact, a UUID in lower case, a FLOAT as strconv.FormatFloat(v, 'g',
// -1, 64), an INTEGER in decimal. An empty raw stands for a value left out
// and is read as null. A value that does not fit is a *ValidationError
// naming the type and the problem (and, for arrays, the element index); it
// never repeats the value.
func (t DataType) ParseJSON(raw []byte) (json.RawMessage, error) {
	raw = bytes.Trim(raw, " \t\r\n") // JSON white space only
	if len(raw) == 0 {
		raw = []byte("null")
	}
	if !t.IsArray() {
		return t.parseScalar(raw)
	}
	elem := t.Elem()
	if raw[0] != '[' {
		return nil, invalid("%s value must be a JSON array", t)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, invalid("%s value must be a JSON array", t)
	}
	var out bytes.Buffer
	out.Grow(len(raw))
	out.WriteByte('[')
	for i, e := range elems {
		c, err := elem.parseScalar(e)
		if err != nil {
			return nil, invalid("%s element %d: %s", t, i, err.Error())
		}
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(c)
	}
	out.WriteByte(']')
	return out.Bytes(), nil
}

// ParseText reads a value given as text in a query string: STRING, DATE,
// TIME, DATETIME, UUID and CREDENTIAL as given; INTEGER, FLOAT and BOOLEAN
// from their JSON spelling (42, 3.14, true); NULL from no value or an empty
// one; arrays as a JSON array. present is false when no value was given.
func (t DataType) ParseText(s string, present bool) (json.RawMessage, error) {
	if !present {
		return t.ParseJSON(nil)
	}
	switch t {
	case String, Date, Time, DateTime, UUID, Credential:
		if !utf8.ValidString(s) {
			return nil, invalid("%s value must be valid UTF-8", t)
		}
		c, err := t.checkString(s)
		if err != nil {
			return nil, err
		}
		return jsonstr.Append(nil, c), nil
	case Null:
		if s != "" {
			return nil, invalid("NULL takes no value")
		}
		return json.RawMessage("null"), nil
	case Integer, Float, Boolean:
		if !isJSONNumber(s) && s != "true" && s != "false" {
			return nil, t.mismatch()
		}
	}
	if t.IsArray() && !json.Valid([]byte(s)) {
		return nil, invalid("%s value must be a JSON array", t)
	}
	return t.ParseJSON([]byte(s))
}

// mismatch is the error for a scalar JSON value of the wrong kind.
func (t DataType) mismatch() error {
	switch t {
	case String:
		return invalid("STRING value must be a string")
	case Integer:
		return invalid("INTEGER value must be a number written as a whole number in int64 range (no fraction, no exponent)")
	case Float:
		return invalid("FLOAT value must be a finite number")
	case Boolean:
		return invalid("BOOLEAN value must be true or false")
	case Date:
		return invalid("DATE value must be a string YYYY-MM-DD holding a real calendar date")
	case Time:
		return invalid("TIME value must be a string HH:MM:SS with an optional fraction of 1 to 9 digits, from 00:00:00 to 23:59:59")
	case DateTime:
		return invalid("DATETIME value must be an RFC 3339 string with an offset, e.g. 2026-11-22T08:18:19Z")
	case UUID:
		return invalid("UUID value must be a string in 8-4-4-4-12 hex form")
	case Null:
		return invalid("NULL value must be null")
	case Credential:
		return invalid("CREDENTIAL value must be a non-empty string")
	}
	return invalid("%s value is not valid", t)
}

func (t DataType) parseScalar(raw []byte) (json.RawMessage, error) {
	switch t {
	case Null:
		if string(raw) != "null" {
			return nil, t.mismatch()
		}
		return json.RawMessage("null"), nil
	case Boolean:
		if s := string(raw); s != "true" && s != "false" {
			return nil, t.mismatch()
		}
		return json.RawMessage(raw), nil
	case Integer:
		if !isJSONInteger(raw) {
			return nil, t.mismatch()
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, t.mismatch()
		}
		return strconv.AppendInt(nil, n, 10), nil
	case Float:
		if !isJSONNumber(string(raw)) {
			return nil, t.mismatch()
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil { // out of range: ±Inf
			return nil, t.mismatch()
		}
		return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
	}
	// The string types.
	if len(raw) == 0 || raw[0] != '"' {
		return nil, t.mismatch()
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, t.mismatch()
	}
	c, err := t.checkString(s)
	if err != nil {
		return nil, err
	}
	return jsonstr.Append(nil, c), nil
}

// checkString validates s as a value of the string type t and returns its
// canonical form.
func (t DataType) checkString(s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", invalid("%s value must not contain U+0000", t)
	}
	ok := true
	switch t {
	case Date:
		ok = timetext.IsDate(s)
	case Time:
		ok = timetext.IsTime(s)
	case DateTime:
		ok = timetext.IsDateTime(s)
	case UUID:
		s, ok = CanonicalUUID(s)
	case Credential:
		ok = s != ""
	}
	if !ok {
		return "", t.mismatch()
	}
	return s, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isJSONInteger reports whether b is a JSON number with no fraction and
// no exponent.
func isJSONInteger(b []byte) bool {
	s := strings.TrimPrefix(string(b), "-")
	if s == "" || !isDigits(s) {
		return false
	}
	return s == "0" || s[0] != '0'
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// SortGroup orders records by value: numbers first, then values with a
// canonical text, then values without one.
type SortGroup int

// The value groups of sortBy=value, in ascending order.
const (
	GroupNumber  SortGroup = iota // INTEGER and FLOAT, by numeric value
	GroupText                     // every other type with a canonical text, byte-wise
	GroupNoValue                  // NULL, CREDENTIAL and []CREDENTIAL
)

// ValueKey is what filtering and sorting by value look at, computed once
// from a record's type and canonical value (KeyOf). sortBy=value orders
// keys by Group, then within GroupNumber by exact numeric value (an int64
// and a float64 compared exactly, not through float64), within GroupText
// by Text byte-wise; keys of GroupNoValue are equal. The range filters
// (RecordQuery.Min and Max) compare INTEGER and FLOAT keys as sortBy=value
// does, DATETIME keys by the instant Text denotes (its offset taken into
// account, to the nanosecond), and the other range types by Text
// byte-wise.
type ValueKey struct {
	Group SortGroup
	// Text is the canonical text; HasText is false for credentials, which
	// are never matched by value filters.
	Text    string
	HasText bool
	// Int (when IsInt) or Float hold the numeric value of GroupNumber.
	IsInt bool
	Int   int64
	Float float64
}

// KeyOf computes the ValueKey of a canonical value of type t.
func KeyOf(t DataType, value json.RawMessage) ValueKey {
	switch {
	case t.IsCredential():
		return ValueKey{Group: GroupNoValue}
	case t == Null:
		return ValueKey{Group: GroupNoValue, Text: "null", HasText: true}
	case t == Integer:
		n, _ := strconv.ParseInt(string(value), 10, 64)
		return ValueKey{Group: GroupNumber, Text: string(value), HasText: true, IsInt: true, Int: n, Float: float64(n)}
	case t == Float:
		f, _ := strconv.ParseFloat(string(value), 64)
		return ValueKey{Group: GroupNumber, Text: string(value), HasText: true, Float: f}
	case t.IsArray() || t == Boolean:
		return ValueKey{Group: GroupText, Text: string(value), HasText: true}
	}
	var s string
	_ = json.Unmarshal(value, &s) // canonical values always decode
	return ValueKey{Group: GroupText, Text: s, HasText: true}
}

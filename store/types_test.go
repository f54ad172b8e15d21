package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/store"
)

const supportedTypes = "supported types: STRING, INTEGER, FLOAT, BOOLEAN, DATE, TIME, DATETIME, UUID, NULL, CREDENTIAL, " +
	"[]STRING, []INTEGER, []FLOAT, []BOOLEAN, []DATE, []TIME, []DATETIME, []UUID, []NULL, []CREDENTIAL"

func TestTypes(t *testing.T) {
	var names []string
	for _, typ := range store.Types {
		names = append(names, string(typ))
	}
	if got := "supported types: " + strings.Join(names, ", "); got != supportedTypes {
		t.Errorf("store.Types = %s\nwant %s", got, supportedTypes)
	}
	for _, tc := range []struct {
		typ        store.DataType
		array      bool
		elem       store.DataType
		credential bool
	}{
		{store.String, false, store.String, false},
		{store.Null, false, store.Null, false},
		{store.Credential, false, store.Credential, true},
		{store.ArrayOf(store.String), true, store.String, false},
		{store.ArrayOf(store.Credential), true, store.Credential, true},
		{store.ArrayOf(store.Null), true, store.Null, false},
	} {
		if got := tc.typ.IsArray(); got != tc.array {
			t.Errorf("%s.IsArray() = %v, want %v", tc.typ, got, tc.array)
		}
		if got := tc.typ.Elem(); got != tc.elem {
			t.Errorf("%s.Elem() = %s, want %s", tc.typ, got, tc.elem)
		}
		if got := tc.typ.IsCredential(); got != tc.credential {
			t.Errorf("%s.IsCredential() = %v, want %v", tc.typ, got, tc.credential)
		}
	}
	if got := store.ArrayOf(store.Integer); got != "[]INTEGER" {
		t.Errorf("ArrayOf(INTEGER) = %s, want []INTEGER", got)
	}
}

func TestParseType(t *testing.T) {
	for _, typ := range store.Types {
		for _, in := range []string{string(typ), strings.ToLower(string(typ)), mixedCase(string(typ))} {
			got, err := store.ParseType(in)
			if err != nil || got != typ {
				t.Errorf("ParseType(%q) = %q, %v; want %s", in, got, err, typ)
			}
		}
	}
	for _, tc := range []struct {
		in   string
		want store.DataType
	}{
		{"STR", store.String},
		{"str", store.String},
		{"Str", store.String},
		{"INT", store.Integer},
		{"int", store.Integer},
		{"FLT", store.Float},
		{"flt", store.Float},
		{"BOOL", store.Boolean},
		{"bool", store.Boolean},
		{"[]STR", store.ArrayOf(store.String)},
		{"[]int", store.ArrayOf(store.Integer)},
		{"[]Flt", store.ArrayOf(store.Float)},
		{"[]bool", store.ArrayOf(store.Boolean)},
		{"[]null", store.ArrayOf(store.Null)},
		{"[]Credential", store.ArrayOf(store.Credential)},
		{"dateTime", store.DateTime},
		{"uuid", store.UUID},
	} {
		got, err := store.ParseType(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseType(%q) = %q, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{
		"", " ", "TEXT", "STRINGS", "STRIN", "INTEGER ", " INTEGER", "[]", "[][]INT", "[] INT", "INT[]", "[INT]",
		"ARRAY", "DOUBLE", "NUMBER", "CRED", "BOOLEAN[]", "DATE_TIME", "TIMESTAMP",
		"\u017ftring", // ſtring: strings.ToUpper would make it STRING
		"\u017fTR",    // ſTR
		"[]\u017ftr",  // []ſtr
		"\u0131nt",    // ınt (dotless i): strings.ToUpper would make it INT
		"STRING\x00",  // NUL
		"\xffSTRING",  // invalid UTF-8
		"ＳＴＲＩＮＧ",      // full-width
		strings.Repeat("X", 1000),
	} {
		got, err := store.ParseType(in)
		if err == nil {
			t.Errorf("ParseType(%q) = %q, want an error", in, got)
			continue
		}
		var verr *store.ValidationError
		if !errors.As(err, &verr) {
			t.Errorf("ParseType(%q) error %v (%T) is not a *store.ValidationError", in, err, err)
			continue
		}
		if !strings.Contains(verr.Message, supportedTypes) {
			t.Errorf("ParseType(%q) error %q does not list every supported type (%s)", in, verr.Message, supportedTypes)
		}
		if got != "" {
			t.Errorf("ParseType(%q) returned type %q with its error", in, got)
		}
	}
}

// mixedCase alternates upper and lower case ASCII letters.
func mixedCase(s string) string {
	b := []byte(s)
	for i := range b {
		if i%2 == 1 && 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// parseRow is one ParseJSON or ParseText case: want is the canonical
// JSON, or, when bad is true, a fragment the error message must contain.
type parseRow struct {
	typ  store.DataType
	in   string
	want string
	bad  bool
}

func ok(typ store.DataType, in, want string) parseRow    { return parseRow{typ, in, want, false} }
func bad(typ store.DataType, in, errHas string) parseRow { return parseRow{typ, in, errHas, true} }

var (
	aString   = store.ArrayOf(store.String)
	aInteger  = store.ArrayOf(store.Integer)
	aFloat    = store.ArrayOf(store.Float)
	aBoolean  = store.ArrayOf(store.Boolean)
	aDate     = store.ArrayOf(store.Date)
	aTime     = store.ArrayOf(store.Time)
	aDateTime = store.ArrayOf(store.DateTime)
	aUUID     = store.ArrayOf(store.UUID)
	aNull     = store.ArrayOf(store.Null)
	aCred     = store.ArrayOf(store.Credential)
)

var parseJSONRows = []parseRow{
	ok(store.String, `"abc"`, `"abc"`),
	ok(store.String, `""`, `""`),
	ok(store.String, ` "padded" `, `"padded"`),
	ok(store.String, `"<b>&amp;</b>"`, `"<b>&amp;</b>"`),
	ok(store.String, `"caf\u00e9"`, `"café"`),
	ok(store.String, `"café"`, `"café"`),
	ok(store.String, `"tab\there"`, `"tab\there"`),
	ok(store.String, `"quote\"back\\slash\/"`, `"quote\"back\\slash/"`),
	ok(store.String, `"\u2028"`, `"\u2028"`),
	ok(store.String, `"\ud83d\ude00"`, `"😀"`),
	ok(store.String, `"null"`, `"null"`),
	bad(store.String, `"a\u0000b"`, "U+0000"),
	bad(store.String, `5`, "STRING"),
	bad(store.String, `null`, "STRING"),
	bad(store.String, ``, "STRING"),
	bad(store.String, `["a"]`, "STRING"),
	bad(store.String, `{"a":1}`, "STRING"),
	bad(store.String, `"abc`, "STRING"),
	bad(store.String, `"a" "b"`, "STRING"),
	bad(store.String, `'a'`, "STRING"),

	ok(store.Integer, `5`, `5`),
	ok(store.Integer, `-3`, `-3`),
	ok(store.Integer, `0`, `0`),
	ok(store.Integer, `-0`, `0`),
	ok(store.Integer, ` 42 `, `42`),
	ok(store.Integer, `9223372036854775807`, `9223372036854775807`),
	ok(store.Integer, `-9223372036854775808`, `-9223372036854775808`),
	bad(store.Integer, `5.0`, "INTEGER"),
	bad(store.Integer, `1e3`, "INTEGER"),
	bad(store.Integer, `1E3`, "INTEGER"),
	bad(store.Integer, `9223372036854775808`, "INTEGER"),
	bad(store.Integer, `-9223372036854775809`, "INTEGER"),
	bad(store.Integer, `"5"`, "INTEGER"),
	bad(store.Integer, `05`, "INTEGER"),
	bad(store.Integer, `+5`, "INTEGER"),
	bad(store.Integer, `0x10`, "INTEGER"),
	bad(store.Integer, `-`, "INTEGER"),
	bad(store.Integer, `true`, "INTEGER"),
	bad(store.Integer, `null`, "INTEGER"),
	bad(store.Integer, ``, "INTEGER"),
	bad(store.Integer, `1 2`, "INTEGER"),

	ok(store.Float, `3.14`, `3.14`),
	ok(store.Float, `3.140`, `3.14`),
	ok(store.Float, `1e21`, `1e+21`),
	ok(store.Float, `1E21`, `1e+21`),
	ok(store.Float, `1e+21`, `1e+21`),
	ok(store.Float, `5`, `5`),
	ok(store.Float, `2.0`, `2`),
	ok(store.Float, `-0.0`, `-0`),
	ok(store.Float, `100000`, `100000`),
	ok(store.Float, `2500000`, `2.5e+06`),
	ok(store.Float, `0.000001`, `1e-06`),
	ok(store.Float, `0.0001`, `0.0001`),
	ok(store.Float, `9007199254740993`, `9.007199254740992e+15`),
	ok(store.Float, `5e-324`, `5e-324`),
	ok(store.Float, `1e-400`, `0`),
	ok(store.Float, `1.7976931348623157e308`, `1.7976931348623157e+308`),
	bad(store.Float, `1e400`, "FLOAT"),
	bad(store.Float, `-1e400`, "FLOAT"),
	bad(store.Float, `1.7976931348623159e308`, "FLOAT"),
	bad(store.Float, `NaN`, "FLOAT"),
	bad(store.Float, `Infinity`, "FLOAT"),
	bad(store.Float, `"3.14"`, "FLOAT"),
	bad(store.Float, `.5`, "FLOAT"),
	bad(store.Float, `5.`, "FLOAT"),
	bad(store.Float, `1e`, "FLOAT"),
	bad(store.Float, `+1`, "FLOAT"),
	bad(store.Float, `0x1p-2`, "FLOAT"),
	bad(store.Float, `1_000`, "FLOAT"),
	bad(store.Float, `null`, "FLOAT"),
	bad(store.Float, `true`, "FLOAT"),

	ok(store.Boolean, `true`, `true`),
	ok(store.Boolean, `false`, `false`),
	bad(store.Boolean, `"true"`, "BOOLEAN"),
	bad(store.Boolean, `TRUE`, "BOOLEAN"),
	bad(store.Boolean, `1`, "BOOLEAN"),
	bad(store.Boolean, `null`, "BOOLEAN"),

	ok(store.Date, `"2026-02-28"`, `"2026-02-28"`),
	ok(store.Date, `"2024-02-29"`, `"2024-02-29"`),
	ok(store.Date, `"0001-01-01"`, `"0001-01-01"`),
	bad(store.Date, `"2026-02-30"`, "DATE"),
	bad(store.Date, `"2026-02-29"`, "DATE"),
	bad(store.Date, `"2026-13-01"`, "DATE"),
	bad(store.Date, `"2026-00-10"`, "DATE"),
	bad(store.Date, `"2026-2-28"`, "DATE"),
	bad(store.Date, `"20260228"`, "DATE"),
	bad(store.Date, `"2026-02-28T00:00:00Z"`, "DATE"),
	bad(store.Date, `"+2026-02-28"`, "DATE"),
	bad(store.Date, `"２０２６-02-28"`, "DATE"),
	bad(store.Date, `2026`, "DATE"),
	bad(store.Date, `"2026-02-28\u0000"`, "U+0000"),

	ok(store.Time, `"00:00:00"`, `"00:00:00"`),
	ok(store.Time, `"23:59:59"`, `"23:59:59"`),
	ok(store.Time, `"12:00:00.5"`, `"12:00:00.5"`),
	ok(store.Time, `"23:59:59.123456789"`, `"23:59:59.123456789"`),
	ok(store.Time, `"08:18:19.500"`, `"08:18:19.500"`),
	bad(store.Time, `"24:00:00"`, "TIME"),
	bad(store.Time, `"23:60:00"`, "TIME"),
	bad(store.Time, `"23:59:60"`, "TIME"),
	bad(store.Time, `"23:59:59.1234567890"`, "TIME"),
	bad(store.Time, `"23:59:59."`, "TIME"),
	bad(store.Time, `"1:00:00"`, "TIME"),
	bad(store.Time, `"12:00"`, "TIME"),
	bad(store.Time, `"12:00:00Z"`, "TIME"),
	bad(store.Time, `"12:00:00+01:00"`, "TIME"),
	bad(store.Time, `"12:00:00,5"`, "TIME"),
	bad(store.Time, `"12:00:00.5a"`, "TIME"),
	bad(store.Time, `120000`, "TIME"),

	ok(store.DateTime, `"2026-11-22T08:18:19Z"`, `"2026-11-22T08:18:19Z"`),
	ok(store.DateTime, `"2026-11-22T09:18:19.500+01:00"`, `"2026-11-22T09:18:19.500+01:00"`),
	ok(store.DateTime, `"2026-11-22T08:18:19.123Z"`, `"2026-11-22T08:18:19.123Z"`),
	ok(store.DateTime, `"2026-11-22T08:18:19.123456789Z"`, `"2026-11-22T08:18:19.123456789Z"`),
	ok(store.DateTime, `"2026-11-22T03:18:19-05:00"`, `"2026-11-22T03:18:19-05:00"`),
	ok(store.DateTime, `"2026-11-22T03:18:19+23:59"`, `"2026-11-22T03:18:19+23:59"`),
	bad(store.DateTime, `"2026-11-22T08:18:19"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22 08:18:19Z"`, "DATETIME"),
	ok(store.DateTime, `"2026-11-22t08:18:19Z"`, `"2026-11-22t08:18:19Z"`), // RFC 3339 allows lower case; kept as given
	ok(store.DateTime, `"2026-11-22T08:18:19z"`, `"2026-11-22T08:18:19z"`),
	bad(store.DateTime, `"2026-11-22x08:18:19Z"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22T08:18:19y"`, "DATETIME"),
	bad(store.DateTime, `"2026-02-30T08:18:19Z"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22T24:00:00Z"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22T08:18:60Z"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22T08:18:19+0100"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22T08:18:19+01"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22T08:18:19+24:00"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22T08:18:19.1234567890Z"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22T08:18Z"`, "DATETIME"),
	bad(store.DateTime, `"2026-11-22"`, "DATETIME"),
	bad(store.DateTime, `1763799499`, "DATETIME"),

	bad(store.Time, `"12:00:00\u0000"`, "U+0000"),
	bad(store.DateTime, `"2026-11-22T08:18:19Z\u0000"`, "U+0000"),
	bad(store.UUID, `"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5\u0000"`, "U+0000"),
	bad(aDate, `["2026-01-01\u0000"]`, "U+0000"),
	ok(store.UUID, `"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"`, `"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"`),
	ok(store.UUID, `"0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"`, `"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"`),
	ok(store.UUID, `"00000000-0000-0000-0000-000000000000"`, `"00000000-0000-0000-0000-000000000000"`),
	bad(store.UUID, `"0190a1b2c3d47e5f8a9b0c1d2e3f4a5b"`, "UUID"),
	bad(store.UUID, `"{0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}"`, "UUID"),
	bad(store.UUID, `"urn:uuid:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"`, "UUID"),
	bad(store.UUID, `"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g"`, "UUID"),
	bad(store.UUID, `"0190a1b2-c3d47-e5f-8a9b-0c1d2e3f4a5b"`, "UUID"),
	bad(store.UUID, `""`, "UUID"),

	ok(store.Null, `null`, `null`),
	ok(store.Null, ``, `null`),
	ok(store.Null, "  \n", `null`),
	bad(store.Null, `"null"`, "NULL"),
	bad(store.Null, `0`, "NULL"),
	bad(store.Null, `[]`, "NULL"),
	bad(store.Null, `nul`, "NULL"),

	ok(store.Credential, `"s3cret"`, `"s3cret"`),
	ok(store.Credential, `" "`, `" "`),
	bad(store.Credential, `""`, "CREDENTIAL"),
	bad(store.Credential, `5`, "CREDENTIAL"),
	bad(store.Credential, `null`, "CREDENTIAL"),
	bad(store.Credential, `"s3cret\u0000"`, "U+0000"),

	ok(aString, `["a", "b"]`, `["a","b"]`),
	ok(aString, `[]`, `[]`),
	ok(aString, ` [ ] `, `[]`),
	ok(aString, "[\n \"x\" ,\t\"\" ]", `["x",""]`),
	ok(aString, `["<&>", "caf\u00e9"]`, `["<&>","café"]`),
	bad(aString, `["a", 1, "b"]`, "element 1"),
	bad(aString, `["a", "b", 5]`, "element 2"),
	bad(aString, `["a", "b\u0000"]`, "element 1"),
	bad(aString, `["a", "b\u0000"]`, "U+0000"),
	bad(aString, `[["a"]]`, "element 0"),
	bad(aString, `"a"`, "[]STRING"),
	bad(aString, `null`, "[]STRING"),
	bad(aString, ``, "[]STRING"),
	bad(aString, `[`, "[]STRING"),
	bad(aString, `["a",]`, "[]STRING"),
	bad(aString, `{"0": "a"}`, "[]STRING"),
	bad(aString, `[] []`, "[]STRING"),
	ok(aInteger, `[1, -2, 3]`, `[1,-2,3]`),
	ok(aInteger, `[-0]`, `[0]`),
	bad(aInteger, `[1, 2.5]`, "element 1"),
	bad(aInteger, `[1, 2, 1e3]`, "element 2"),
	bad(aInteger, `[null]`, "element 0"),
	ok(aFloat, `[1e21, 3.140, 2]`, `[1e+21,3.14,2]`),
	bad(aFloat, `[1, 1e400]`, "element 1"),
	ok(aBoolean, `[true, false]`, `[true,false]`),
	bad(aBoolean, `[true, "false"]`, "element 1"),
	ok(aDate, `["2026-01-01", "2024-02-29"]`, `["2026-01-01","2024-02-29"]`),
	bad(aDate, `["2026-01-01", "2026-02-30"]`, "element 1"),
	ok(aTime, `["23:59:59.123456789"]`, `["23:59:59.123456789"]`),
	bad(aTime, `["00:00:00", "24:00:00"]`, "element 1"),
	ok(aDateTime, `["2026-11-22T09:18:19.500+01:00"]`, `["2026-11-22T09:18:19.500+01:00"]`),
	bad(aDateTime, `["2026-11-22T09:18:19"]`, "element 0"),
	ok(aUUID, `["0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"]`, `["0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"]`),
	bad(aUUID, `["0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "x"]`, "element 1"),
	ok(aNull, `[null, null]`, `[null,null]`),
	ok(aNull, `[]`, `[]`),
	bad(aNull, `[null, 0]`, "element 1"),
	ok(aCred, `["a", "b"]`, `["a","b"]`),
	bad(aCred, `["a", ""]`, "element 1"),
	bad(aCred, `["a", "b", "c\u0000"]`, "element 2"),
}

func TestParseJSON(t *testing.T) {
	for _, tc := range parseJSONRows {
		got, err := tc.typ.ParseJSON([]byte(tc.in))
		checkParse(t, "ParseJSON", tc, got, err)
	}
}

func checkParse(t *testing.T, fn string, tc parseRow, got json.RawMessage, err error) {
	t.Helper()
	if tc.bad {
		if err == nil {
			t.Errorf("%s.%s(%q) = %s, want an error containing %q", tc.typ, fn, tc.in, got, tc.want)
			return
		}
		var verr *store.ValidationError
		if !errors.As(err, &verr) {
			t.Errorf("%s.%s(%q) error %v (%T) is not a *store.ValidationError", tc.typ, fn, tc.in, err, err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s.%s(%q) error %q does not contain %q", tc.typ, fn, tc.in, err, tc.want)
		}
		if !strings.Contains(err.Error(), string(tc.typ.Elem())) {
			t.Errorf("%s.%s(%q) error %q does not name the type", tc.typ, fn, tc.in, err)
		}
		return
	}
	if err != nil {
		t.Errorf("%s.%s(%q) error %v, want %s", tc.typ, fn, tc.in, err, tc.want)
		return
	}
	if string(got) != tc.want {
		t.Errorf("%s.%s(%q) = %s, want %s", tc.typ, fn, tc.in, got, tc.want)
	}
}

func TestParseJSONErrorNeverRepeatsTheValue(t *testing.T) {
	const secret = "hunter2-very-secret"
	for _, tc := range []struct {
		typ store.DataType
		in  string
	}{
		{store.Credential, `"` + secret + "\\u0000\""},
		{store.Credential, `["` + secret + `"]`},
		{aCred, `["` + secret + `", 5]`},
		{aCred, `["` + secret + `\u0000"]`},
		{aCred, `["` + secret + `"`},
		{store.Integer, `"` + secret + `"`},
		{store.Date, `"` + secret + `"`},
		{store.UUID, `"` + secret + `"`},
		{aString, `{"` + secret + `": 1}`},
	} {
		_, err := tc.typ.ParseJSON([]byte(tc.in))
		if err == nil {
			t.Errorf("%s.ParseJSON(%s) succeeded, want an error", tc.typ, tc.in)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "hunter") {
			t.Errorf("%s.ParseJSON(%s) error %q repeats the value", tc.typ, tc.in, err)
		}
	}
}

var parseTextRows = []parseRow{
	ok(store.Integer, `42`, `42`),
	ok(store.Integer, `-3`, `-3`),
	ok(store.Integer, `0`, `0`),
	bad(store.Integer, `+5`, "INTEGER"),
	bad(store.Integer, `0x10`, "INTEGER"),
	bad(store.Integer, `5.0`, "INTEGER"),
	bad(store.Integer, `1e3`, "INTEGER"),
	bad(store.Integer, ``, "INTEGER"),
	bad(store.Integer, ` 42`, "INTEGER"),
	bad(store.Integer, `42 `, "INTEGER"),
	bad(store.Integer, `true`, "INTEGER"),
	bad(store.Integer, `"42"`, "INTEGER"),
	bad(store.Integer, `9223372036854775808`, "INTEGER"),
	ok(store.Float, `3.14`, `3.14`),
	ok(store.Float, `1e21`, `1e+21`),
	ok(store.Float, `-2`, `-2`),
	bad(store.Float, `+1`, "FLOAT"),
	bad(store.Float, `NaN`, "FLOAT"),
	bad(store.Float, `Inf`, "FLOAT"),
	bad(store.Float, `0x1p-2`, "FLOAT"),
	bad(store.Float, `1_000`, "FLOAT"),
	bad(store.Float, `.5`, "FLOAT"),
	bad(store.Float, `1e400`, "FLOAT"),
	bad(store.Float, ``, "FLOAT"),
	ok(store.Boolean, `true`, `true`),
	ok(store.Boolean, `false`, `false`),
	bad(store.Boolean, `TRUE`, "BOOLEAN"),
	bad(store.Boolean, `1`, "BOOLEAN"),
	bad(store.Boolean, `yes`, "BOOLEAN"),
	bad(store.Boolean, ``, "BOOLEAN"),
	ok(store.String, `hello`, `"hello"`),
	ok(store.String, ``, `""`),
	ok(store.String, `say "hi"`, `"say \"hi\""`),
	ok(store.String, `<b>&`, `"<b>&"`),
	ok(store.String, `42`, `"42"`),
	ok(store.String, `null`, `"null"`),
	ok(store.String, ` spaced `, `" spaced "`),
	ok(store.String, "caf\u00e9", `"café"`),
	bad(store.String, "a\x00b", "U+0000"),
	bad(store.String, "\xff", "UTF-8"),
	ok(store.Date, `2026-02-28`, `"2026-02-28"`),
	bad(store.Date, `2026-02-30`, "DATE"),
	bad(store.Date, `"2026-02-28"`, "DATE"),
	ok(store.Time, `23:59:59.123456789`, `"23:59:59.123456789"`),
	bad(store.Time, `24:00:00`, "TIME"),
	ok(store.DateTime, `2026-11-22T09:18:19.500+01:00`, `"2026-11-22T09:18:19.500+01:00"`),
	bad(store.DateTime, `2026-11-22T09:18:19`, "DATETIME"),
	ok(store.UUID, `0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B`, `"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"`),
	bad(store.UUID, `not-a-uuid`, "UUID"),
	ok(store.Credential, `s3cret`, `"s3cret"`),
	bad(store.Credential, ``, "CREDENTIAL"),
	bad(store.Credential, "s3\x00cret", "U+0000"),
	ok(store.Null, ``, `null`),
	bad(store.Null, `x`, "NULL"),
	bad(store.Null, `null`, "NULL"),
	ok(aString, `["a", "b"]`, `["a","b"]`),
	ok(aString, `[]`, `[]`),
	ok(aInteger, `[1, 2]`, `[1,2]`),
	ok(aFloat, `[1e21]`, `[1e+21]`),
	ok(aNull, `[null]`, `[null]`),
	ok(aUUID, `["0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"]`, `["0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"]`),
	bad(aInteger, `1,2`, "[]INTEGER"),
	bad(aInteger, `[1, 2.5]`, "element 1"),
	bad(aString, `a,b`, "[]STRING"),
	bad(aString, ``, "[]STRING"),
	bad(aString, `["a",`, "[]STRING"),
	bad(aNull, ``, "[]NULL"),
	bad(aCred, `["a", ""]`, "element 1"),
}

func TestParseText(t *testing.T) {
	for _, tc := range parseTextRows {
		got, err := tc.typ.ParseText(tc.in, true)
		checkParse(t, "ParseText", tc, got, err)
	}
	// No value at all is a left-out value: only NULL takes it.
	for _, typ := range store.Types {
		got, err := typ.ParseText("", false)
		if typ == store.Null {
			if err != nil || string(got) != "null" {
				t.Errorf("NULL.ParseText(absent) = %s, %v; want null", got, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s.ParseText(absent) = %s, want an error", typ, got)
		}
	}
}

func key(t *testing.T, typ store.DataType, js string) store.ValueKey {
	t.Helper()
	v, err := typ.ParseJSON([]byte(js))
	if err != nil {
		t.Fatalf("%s.ParseJSON(%s): %v", typ, js, err)
	}
	return store.KeyOf(typ, v)
}

func TestKeyOf(t *testing.T) {
	for _, tc := range []struct {
		typ  store.DataType
		in   string
		want store.ValueKey
	}{
		{store.Integer, `-3`, store.ValueKey{Group: store.GroupNumber, Text: "-3", HasText: true, IsInt: true, Int: -3, Float: -3}},
		{store.Integer, `9223372036854775807`, store.ValueKey{Group: store.GroupNumber, Text: "9223372036854775807", HasText: true, IsInt: true, Int: 9223372036854775807, Float: 9223372036854775807}},
		{store.Float, `2.50`, store.ValueKey{Group: store.GroupNumber, Text: "2.5", HasText: true, Float: 2.5}},
		{store.Float, `1e21`, store.ValueKey{Group: store.GroupNumber, Text: "1e+21", HasText: true, Float: 1e21}},
		{store.String, `"abc"`, store.ValueKey{Group: store.GroupText, Text: "abc", HasText: true}},
		{store.String, `""`, store.ValueKey{Group: store.GroupText, Text: "", HasText: true}},
		{store.String, `"a\"b\\c"`, store.ValueKey{Group: store.GroupText, Text: `a"b\c`, HasText: true}},
		{store.String, `"<&>"`, store.ValueKey{Group: store.GroupText, Text: `<&>`, HasText: true}},
		{store.Boolean, `true`, store.ValueKey{Group: store.GroupText, Text: "true", HasText: true}},
		{store.Date, `"2026-01-01"`, store.ValueKey{Group: store.GroupText, Text: "2026-01-01", HasText: true}},
		{store.Time, `"08:00:00.5"`, store.ValueKey{Group: store.GroupText, Text: "08:00:00.5", HasText: true}},
		{store.DateTime, `"2026-11-22T09:18:19.500+01:00"`, store.ValueKey{Group: store.GroupText, Text: "2026-11-22T09:18:19.500+01:00", HasText: true}},
		{store.UUID, `"0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"`, store.ValueKey{Group: store.GroupText, Text: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", HasText: true}},
		{aString, `["a", "b"]`, store.ValueKey{Group: store.GroupText, Text: `["a","b"]`, HasText: true}},
		{aInteger, `[1, 2]`, store.ValueKey{Group: store.GroupText, Text: `[1,2]`, HasText: true}},
		{aNull, `[null, null]`, store.ValueKey{Group: store.GroupText, Text: `[null,null]`, HasText: true}},
		{aNull, `[]`, store.ValueKey{Group: store.GroupText, Text: `[]`, HasText: true}},
		{store.Null, `null`, store.ValueKey{Group: store.GroupNoValue, Text: "null", HasText: true}},
		{store.Credential, `"secret"`, store.ValueKey{Group: store.GroupNoValue}},
		{aCred, `["secret"]`, store.ValueKey{Group: store.GroupNoValue}},
	} {
		if got := key(t, tc.typ, tc.in); got != tc.want {
			t.Errorf("KeyOf(%s, %s) = %+v, want %+v", tc.typ, tc.in, got, tc.want)
		}
	}
	// Sealed credential values are opaque to the store: any bytes.
	for _, v := range []string{"", "not json", `{"sealed":"x"}`} {
		if got := store.KeyOf(store.Credential, json.RawMessage(v)); got.HasText || got.Group != store.GroupNoValue {
			t.Errorf("KeyOf(CREDENTIAL, %q) = %+v, want no text in GroupNoValue", v, got)
		}
	}
}

func TestMatchesSearch(t *testing.T) {
	for _, tc := range []struct {
		name, search string
		want         bool
	}{
		{"anything", "", true},
		{"café", "CAF", true},
		{"CAFÉ", "é", true},
		{"café", "É", true},
		{"ΣΟΦΙΑ", "σοφ", true},
		{"100%", "%", true},
		{"100", "%", false},
		{"abc", "a_c", false},
		{"a_c", "a_c", true},
		{`a\c`, `\`, true},
		{"abc", `\`, false},
		{"abc", "abcd", false},
	} {
		if got := store.MatchesSearch(tc.name, tc.search); got != tc.want {
			t.Errorf("MatchesSearch(%q, %q) = %v, want %v", tc.name, tc.search, got, tc.want)
		}
	}
}

// fuzzSeeds are inputs worth starting every value fuzzer from.
func fuzzSeeds() []string {
	seeds := []string{"", "null", "true", "false", "0", "-0", "1e400", "1e-400", "9223372036854775808", "[]", "[null]", "{}",
		`"\u0000"`, `"\ud800"`, `"\u2028"`, "\"\xff\"", `[1,"a",null]`, "[[[]]]", " \u00a0", "\xc2\x85", "5\u00a0"}
	for _, tc := range parseJSONRows {
		seeds = append(seeds, tc.in)
	}
	return seeds
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, typ := range store.Types {
			in := bytes.Clone(raw)
			got, err := typ.ParseJSON(in)
			if !bytes.Equal(in, raw) {
				t.Fatalf("%s.ParseJSON changed its input", typ)
			}
			if err != nil {
				var verr *store.ValidationError
				if !errors.As(err, &verr) {
					t.Fatalf("%s.ParseJSON(%q) error %v (%T) is not a *store.ValidationError", typ, raw, err, err)
				}
				continue
			}
			if !json.Valid(got) {
				t.Fatalf("%s.ParseJSON(%q) = %q, not valid JSON", typ, raw, got)
			}
			if !utf8.Valid(got) {
				t.Fatalf("%s.ParseJSON(%q) = %q, not valid UTF-8", typ, raw, got)
			}
			again, err := typ.ParseJSON(got)
			if err != nil {
				t.Fatalf("%s.ParseJSON(%q) = %q, which ParseJSON rejects: %v", typ, raw, got, err)
			}
			if !bytes.Equal(again, got) {
				t.Fatalf("%s: canonical form is not a fixed point: %q -> %q -> %q", typ, raw, got, again)
			}
			k := store.KeyOf(typ, got)
			if k != store.KeyOf(typ, again) {
				t.Fatalf("%s: KeyOf differs for equal values %q", typ, got)
			}
			if sortkey.Compare(k, k) != 0 {
				t.Fatalf("%s: CompareValues(%q, itself) != 0", typ, got)
			}
			if typ.IsCredential() == k.HasText {
				t.Fatalf("%s: KeyOf(%q).HasText = %v", typ, got, k.HasText)
			}
		}
	})
}

func FuzzParseText(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, true)
	}
	for _, tc := range parseTextRows {
		f.Add(tc.in, true)
	}
	f.Add("", false)
	f.Fuzz(func(t *testing.T, s string, present bool) {
		for _, typ := range store.Types {
			got, err := typ.ParseText(s, present)
			if err != nil {
				var verr *store.ValidationError
				if !errors.As(err, &verr) {
					t.Fatalf("%s.ParseText(%q) error %v (%T) is not a *store.ValidationError", typ, s, err, err)
				}
				continue
			}
			again, err := typ.ParseJSON(got)
			if err != nil {
				t.Fatalf("%s.ParseText(%q) = %q, which ParseJSON rejects: %v", typ, s, got, err)
			}
			if !bytes.Equal(again, got) {
				t.Fatalf("%s.ParseText(%q) = %q is not canonical: ParseJSON gives %q", typ, s, got, again)
			}
			_ = store.KeyOf(typ, got)
		}
	})
}

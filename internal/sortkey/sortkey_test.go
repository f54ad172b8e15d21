package sortkey_test

import (
	"testing"

	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/store"
)

func key(t *testing.T, typ store.DataType, js string) store.ValueKey {
	t.Helper()
	v, err := typ.ParseJSON([]byte(js))
	if err != nil {
		t.Fatalf("%s.ParseJSON(%s): %v", typ, js, err)
	}
	return store.KeyOf(typ, v)
}

func TestCompare(t *testing.T) {
	type v struct {
		typ store.DataType
		js  string
	}
	for _, tc := range []struct {
		a, b v
		want int
	}{
		{v{store.Integer, "2"}, v{store.Float, "2.5"}, -1},
		{v{store.Float, "2.5"}, v{store.Integer, "3"}, -1},
		{v{store.Integer, "2"}, v{store.Float, "2.0"}, 0},
		{v{store.Integer, "0"}, v{store.Float, "-0"}, 0},
		{v{store.Integer, "-3"}, v{store.Integer, "2"}, -1},
		{v{store.Float, "-1e300"}, v{store.Integer, "-9223372036854775808"}, -1},
		{v{store.Integer, "9007199254740993"}, v{store.Float, "9007199254740992"}, 1},
		{v{store.Integer, "9007199254740992"}, v{store.Float, "9007199254740992"}, 0},
		{v{store.Integer, "9223372036854775807"}, v{store.Float, "9223372036854775807"}, -1}, // the float is 2^63
		{v{store.Integer, "-9223372036854775808"}, v{store.Float, "-9223372036854775808"}, 0},
		{v{store.Integer, "9223372036854775806"}, v{store.Integer, "9223372036854775807"}, -1},
		{v{store.Float, "5e-324"}, v{store.Integer, "0"}, 1},
		{v{store.Float, "1.7976931348623157e308"}, v{store.String, `""`}, -1},
		{v{store.Integer, "5"}, v{store.String, `"1"`}, -1},
		{v{store.String, `""`}, v{store.String, `"a"`}, -1},
		{v{store.String, `"B"`}, v{store.String, `"a"`}, -1},
		{v{store.String, `"a"`}, v{store.String, `"é"`}, -1},
		{v{store.String, `"abc"`}, v{store.String, `"abc"`}, 0},
		{v{store.String, `"10"`}, v{store.String, `"9"`}, -1},
		{v{store.ArrayOf(store.Null), `[null]`}, v{store.String, `"abc"`}, -1},
		{v{store.ArrayOf(store.String), `["a"]`}, v{store.ArrayOf(store.Integer), `[]`}, -1},
		{v{store.Boolean, "true"}, v{store.String, `"true"`}, 0},
		{v{store.Date, `"2026-01-01"`}, v{store.String, `"B"`}, -1},
		{v{store.String, `"zzz"`}, v{store.Null, "null"}, -1},
		{v{store.Float, "1e300"}, v{store.Null, "null"}, -1},
		{v{store.String, `"zzz"`}, v{store.Credential, `"a"`}, -1},
		{v{store.Null, "null"}, v{store.Credential, `"a"`}, 0},
		{v{store.Credential, `"a"`}, v{store.ArrayOf(store.Credential), `["b"]`}, 0},
		{v{store.Null, "null"}, v{store.Null, "null"}, 0},
	} {
		a, b := key(t, tc.a.typ, tc.a.js), key(t, tc.b.typ, tc.b.js)
		if got := sortkey.Compare(a, b); got != tc.want {
			t.Errorf("Compare(%s %s, %s %s) = %d, want %d", tc.a.typ, tc.a.js, tc.b.typ, tc.b.js, got, tc.want)
		}
		if got := sortkey.Compare(b, a); got != -tc.want {
			t.Errorf("Compare(%s %s, %s %s) = %d, want %d", tc.b.typ, tc.b.js, tc.a.typ, tc.a.js, got, -tc.want)
		}
	}
}

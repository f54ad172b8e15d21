package sortkey_test

import (
	"testing"
	"time"

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

func TestInRange(t *testing.T) {
	for _, tc := range []struct {
		typ      store.DataType
		min, max string // JSON; "" for no bound
		in       string
		want     bool
	}{
		{store.Integer, "2", "", "2", true},
		{store.Integer, "", "2", "3", false},
		{store.Float, "1.5", "2.5", "2.5", true},
		{store.DateTime, `"2026-01-01T10:00:00+01:00"`, "", `"2026-01-01T09:00:00Z"`, true}, // the same instant
		{store.DateTime, "", `"2026-01-01T09:00:00Z"`, `"2026-01-01T09:30:00+01:00"`, true}, // 08:30Z
		{store.DateTime, `"2026-01-01T09:00:00.000000001Z"`, "", `"2026-01-01T09:00:00Z"`, false},
		{store.String, `"b"`, `"c"`, `"bz"`, true},
		{store.String, `"b"`, `"c"`, `"cz"`, false},
	} {
		q := store.RecordQuery{Type: tc.typ}
		if tc.min != "" {
			k := key(t, tc.typ, tc.min)
			q.Min = &k
		}
		if tc.max != "" {
			k := key(t, tc.typ, tc.max)
			q.Max = &k
		}
		if got := sortkey.InRange(q, key(t, tc.typ, tc.in)); got != tc.want {
			t.Errorf("InRange([%s, %s], %s %s) = %v, want %v", tc.min, tc.max, tc.typ, tc.in, got, tc.want)
		}
	}
	if !sortkey.InRange(store.RecordQuery{Type: store.Integer}, key(t, store.Integer, "7")) {
		t.Error("InRange without bounds = false, want true")
	}
}

func TestDecimal(t *testing.T) {
	for _, tc := range []struct {
		typ  store.DataType
		in   string
		want string
	}{
		{store.Integer, "-9223372036854775808", "-9223372036854775808"},
		{store.Float, "2.5", "2.5"},
		{store.Float, "1e21", "1000000000000000000000"},
		{store.Float, "0.1", "0.1000000000000000055511151231257827021181583404541015625"},
		{store.Float, "-0", "-0"},
	} {
		if got := sortkey.Decimal(key(t, tc.typ, tc.in)); got != tc.want {
			t.Errorf("Decimal(%s %s) = %s, want %s", tc.typ, tc.in, got, tc.want)
		}
	}
}

func TestEpochDecimal(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Unix(1_700_000_000, 500_000_000), "1700000000500000000e-9"},
		{time.Unix(-1, 999_999_999), "-1e-9"},
		{time.Unix(0, 0), "0e-9"},
	} {
		if got := sortkey.EpochDecimal(tc.t); got != tc.want {
			t.Errorf("EpochDecimal(%v) = %s, want %s", tc.t, got, tc.want)
		}
	}
}

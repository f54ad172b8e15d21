package client

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Decode against the real handler: every type rule of
// docs/api.md#the-go-client, and every error.

type everything struct {
	S        string        `hds:"s"`
	I        int64         `hds:"i"`
	F        float64       `hds:"f"`
	F32      float32       `hds:"f"`
	B        bool          `hds:"b"`
	D        string        `hds:"d"`
	T        string        `hds:"t"`
	DT       time.Time     `hds:"dt"`
	DTText   string        `hds:"dt"`
	U        string        `hds:"u"`
	N        int           `hds:"n"`
	NText    string        `hds:"n"`
	NSlice   []string      `hds:"n"`
	PW       string        `hds:"pw"`
	SS       []string      `hds:"ss"`
	IS       []int8        `hds:"is"`
	FS       []float64     `hds:"fs"`
	BS       []bool        `hds:"bs"`
	DS       []string      `hds:"ds"`
	TS       []string      `hds:"ts"`
	DTS      []time.Time   `hds:"dts"`
	US       []string      `hds:"us"`
	NS       []int         `hds:"ns"`
	PWS      []string      `hds:"pws"`
	URL      string        `hds:"url"`
	Empty    []uint        `hds:"empty"`
	Timeout  time.Duration `hds:"timeout"`
	Timeouts []time.Duration
	Missing  string `hds:"missing"`
	Untagged string
}

func TestDecodeEveryType(t *testing.T) {
	s := newTestServer(t)
	allTypes(s)
	s.put("web", "prod", "k", "timeout", "STRING", `"1d12h"`)
	s.put("web", "prod", "k", "i", "INTEGER", "-42")
	got := everything{N: 7, NText: "x", NSlice: []string{"x"}, Missing: "kept", Untagged: "kept too"}
	if err := s.client().Decode(t.Context(), "web", "prod", "k", &got); err != nil {
		t.Fatal(err)
	}
	want := everything{
		S: "text", I: -42, F: 3.25, F32: 3.25, B: true, D: "2026-11-22", T: "08:18:19.5",
		DT:     time.Date(2026, 11, 22, 9, 18, 19, 500_000_000, time.FixedZone("", 3600)),
		DTText: "2026-11-22T09:18:19.500+01:00", U: "0190f1e4-0000-7000-8000-000000000001",
		PW: "s3cret", SS: []string{"a", "b"}, IS: []int8{1, -2}, FS: []float64{0.5, 1e21}, BS: []bool{true, false},
		DS: []string{"2026-01-02"}, TS: []string{"23:59:59"}, DTS: []time.Time{time.Date(2026, 11, 22, 8, 18, 19, 0, time.UTC)},
		US: []string{"0190f1e4-0000-7000-8000-000000000002"}, NS: []int{0, 0}, PWS: []string{"x", "y"},
		URL: "db://s3cret@text", Empty: []uint{}, Timeout: 36 * time.Hour, Missing: "kept", Untagged: "kept too",
	}
	if !got.DT.Equal(want.DT) || !got.DTS[0].Equal(want.DTS[0]) {
		t.Errorf("times: %v %v", got.DT, got.DTS)
	}
	got.DT, want.DT, got.DTS, want.DTS = time.Time{}, time.Time{}, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// Every integer type takes an INTEGER that fits, and refuses one that
// does not (an error naming the record and the field).
func TestDecodeIntegerRanges(t *testing.T) {
	for _, tc := range []struct {
		value string
		dst   any
		fits  bool
	}{
		{"127", &struct{ V int8 }{}, true}, {"128", &struct{ V int8 }{}, false}, {"-128", &struct{ V int8 }{}, true},
		{"-129", &struct{ V int8 }{}, false}, {"32768", &struct{ V int16 }{}, false}, {"2147483648", &struct{ V int32 }{}, false},
		{"9223372036854775807", &struct{ V int64 }{}, true}, {"9223372036854775807", &struct{ V int }{}, true},
		{"255", &struct{ V uint8 }{}, true}, {"256", &struct{ V uint8 }{}, false}, {"-1", &struct{ V uint }{}, false},
		{"-1", &struct{ V uint64 }{}, false}, {"65536", &struct{ V uint16 }{}, false}, {"4294967296", &struct{ V uint32 }{}, false},
		{"9223372036854775807", &struct{ V uint64 }{}, true}, {"0", &struct{ V uintptr }{}, true},
	} {
		k := &Cluster{Name: "k", Records: map[string]Record{"v": {"INTEGER", mustInt(tc.value)}}}
		err := k.Decode(retag(tc.dst))
		if tc.fits != (err == nil) {
			t.Errorf("%s into %T: err %v", tc.value, tc.dst, err)
			continue
		}
		if err != nil && (!strings.Contains(err.Error(), `record "v"`) || !strings.Contains(err.Error(), "field V") || !strings.Contains(err.Error(), "overflows")) {
			t.Errorf("%s into %T: error %q does not name the record, the field and the overflow", tc.value, tc.dst, err)
		}
	}
}

// mustInt parses a decimal int64.
func mustInt(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// retag returns a pointer to a struct like *dst's (one field V) whose
// field has the tag hds:"v".
func retag(dst any) any {
	f := reflect.TypeOf(dst).Elem().Field(0)
	f.Tag = `hds:"v"`
	return reflect.New(reflect.StructOf([]reflect.StructField{f})).Interface()
}

// What does not fit is an error naming the record and the field, and
// leaves dst as it was, the fields decoded before the error included.
func TestDecodeMismatches(t *testing.T) {
	records := map[string]Record{
		"s": {"STRING", "text"}, "i": {"INTEGER", int64(5)}, "f": {"FLOAT", 1.5}, "big": {"FLOAT", 1e300},
		"b": {"BOOLEAN", true}, "d": {"DATE", "2026-11-22"}, "t": {"TIME", "08:00:00"},
		"dt": {"DATETIME", "2026-11-22T08:18:19Z"}, "u": {"UUID", "0190f1e4-0000-7000-8000-000000000001"},
		"pw": {"CREDENTIAL", "x"}, "is": {"[]INTEGER", []int64{1, 300}}, "ss": {"[]STRING", []string{"a"}},
		"dur": {"STRING", "soon"},
	}
	for _, tc := range []struct {
		what   string
		dst    any
		record string
		field  string
		says   string
	}{
		{"INTEGER into a float", &struct {
			V float64 `hds:"i"`
		}{}, "i", "V", "does not fit"},
		{"INTEGER into a string", &struct {
			V string `hds:"i"`
		}{}, "i", "V", "does not fit"},
		{"INTEGER into a time.Duration", &struct {
			V time.Duration `hds:"i"`
		}{}, "i", "V", "does not fit"},
		{"FLOAT into an int", &struct {
			V int `hds:"f"`
		}{}, "f", "V", "does not fit"},
		{"FLOAT beyond float32", &struct {
			V float32 `hds:"big"`
		}{}, "big", "V", "overflows float32"},
		{"BOOLEAN into a string", &struct {
			V string `hds:"b"`
		}{}, "b", "V", "does not fit"},
		{"STRING into a bool", &struct {
			V bool `hds:"s"`
		}{}, "s", "V", "does not fit"},
		{"STRING into a time.Time", &struct {
			V time.Time `hds:"s"`
		}{}, "s", "V", "does not fit"},
		{"DATE into a time.Time", &struct {
			V time.Time `hds:"d"`
		}{}, "d", "V", "does not fit"},
		{"TIME into a time.Time", &struct {
			V time.Time `hds:"t"`
		}{}, "t", "V", "does not fit"},
		{"DATETIME into an int", &struct {
			V int `hds:"dt"`
		}{}, "dt", "V", "does not fit"},
		{"UUID into a time.Duration", &struct {
			V time.Duration `hds:"u"`
		}{}, "u", "V", "does not fit"},
		{"CREDENTIAL into a time.Duration", &struct {
			V time.Duration `hds:"pw"`
		}{}, "pw", "V", "does not fit"},
		{"a STRING that is no duration", &struct {
			V time.Duration `hds:"dur"`
		}{}, "dur", "V", "not a duration"},
		{"an array into a scalar", &struct {
			V int `hds:"is"`
		}{}, "is", "V", "does not fit"},
		{"a scalar into a slice", &struct {
			V []string `hds:"s"`
		}{}, "s", "V", "does not fit"},
		{"an element that overflows", &struct {
			V []int8 `hds:"is"`
		}{}, "is", "V", "element 1: the value overflows int8"},
		{"[]STRING into []int", &struct {
			V []int `hds:"ss"`
		}{}, "ss", "V", "does not fit"},
		{"STRING into an any", &struct {
			V any `hds:"s"`
		}{}, "s", "V", "does not fit"},
		{"STRING into a pointer", &struct {
			V *string `hds:"s"`
		}{}, "s", "V", "does not fit"},
	} {
		k := &Cluster{Project: "web", Collection: "prod", Name: "k", Records: records}
		before := reflect.ValueOf(tc.dst).Elem().Interface()
		err := k.Decode(tc.dst)
		if err == nil {
			t.Errorf("%s: no error", tc.what)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, `record "`+tc.record+`"`) || !strings.Contains(msg, "field "+tc.field) || !strings.Contains(msg, tc.says) {
			t.Errorf("%s: error %q does not name record %q, field %s and say %q", tc.what, msg, tc.record, tc.field, tc.says)
		}
		if strings.Contains(msg, "soon") || strings.Contains(msg, "text") {
			t.Errorf("%s: error %q shows a value", tc.what, msg)
		}
		if after := reflect.ValueOf(tc.dst).Elem().Interface(); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: dst changed to %+v", tc.what, after)
		}
	}
}

// An error leaves every field as it was, those before the failing one
// included; a missing required record is an error too.
func TestDecodeLeavesDstOnError(t *testing.T) {
	type config struct {
		A    string `hds:"a"`
		Port int8   `hds:"port"`
		Z    string `hds:"z,required"`
	}
	k := &Cluster{Project: "web", Collection: "prod", Name: "k", Records: map[string]Record{
		"a": {"STRING", "new"}, "port": {"INTEGER", int64(5432)}, "z": {"STRING", "zz"},
	}}
	cfg := config{A: "old", Port: 1, Z: "old"}
	err := k.Decode(&cfg)
	if err == nil || !strings.Contains(err.Error(), `record "port"`) || !strings.Contains(err.Error(), "field config.Port (int8)") {
		t.Errorf("overflow: %v", err)
	}
	if cfg != (config{A: "old", Port: 1, Z: "old"}) {
		t.Errorf("dst changed: %+v", cfg)
	}
	delete(k.Records, "z")
	k.Records["port"] = Record{"INTEGER", int64(80)}
	err = k.Decode(&cfg)
	if err == nil || !strings.Contains(err.Error(), `record "z"`) || !strings.Contains(err.Error(), "required by field config.Z") ||
		!strings.Contains(err.Error(), "web/prod/k") {
		t.Errorf("required: %v", err)
	}
	if cfg != (config{A: "old", Port: 1, Z: "old"}) {
		t.Errorf("dst changed: %+v", cfg)
	}
	k.Records["z"] = Record{"STRING", "zz"}
	if err := k.Decode(&cfg); err != nil || cfg != (config{A: "new", Port: 80, Z: "zz"}) {
		t.Errorf("fits: %v %+v", err, cfg)
	}
}

// A misuse is an error, never a panic, and sends no request.
func TestDecodeMisuse(t *testing.T) {
	var nilPtr *struct{}
	n := 5
	for _, tc := range []struct {
		what string
		dst  any
		says string
	}{
		{"nil", nil, "got nil"},
		{"a struct", struct{}{}, "got struct {}"},
		{"a nil pointer", nilPtr, "a nil *struct {}"},
		{"a pointer to an int", &n, "got *int"},
		{"a pointer to a pointer", new(*struct{}), "got **struct {}"},
		{"a map", map[string]any{}, "got map[string]interface {}"},
		{"a tag naming no record", &struct {
			V int `hds:",required"`
		}{}, "field V: the hds tag names no record"},
		{"an unknown option", &struct {
			V int `hds:"v,optional"`
		}{}, `unknown hds tag option "optional"`},
		{"an unexported field", &struct {
			v int `hds:"v"`
		}{}, "unexported field"},
	} {
		k := &Cluster{Records: map[string]Record{"v": {"INTEGER", int64(1)}}}
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panic %v", tc.what, p)
				}
			}()
			err = k.Decode(tc.dst)
		}()
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v, want one saying %q", tc.what, err, tc.says)
		}
	}
	// Client.Decode refuses a misuse before any request: this client has
	// no server to talk to.
	c, err := New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	err = c.Decode(t.Context(), "p", "c", "k", struct{}{})
	var ne *RequestError
	if err == nil || errors.As(err, &ne) || !strings.Contains(err.Error(), "pointer to a struct") {
		t.Errorf("Client.Decode of a struct: %v", err)
	}
}

// Client.Decode returns the server's errors as *Error.
func TestDecodeServerError(t *testing.T) {
	s := newTestServer(t)
	var cfg struct {
		V int `hds:"v"`
	}
	err := s.client().Decode(t.Context(), "web", "prod", "k", &cfg)
	var e *Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != "RESOURCE_NOT_FOUND" {
		t.Errorf("got %v", err)
	}
}

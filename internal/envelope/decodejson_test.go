package envelope_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/envelope"
)

// TestDecodeJSON: the strict decoder checks keys at every depth, names
// the key by its path, and describes type errors by the JSON kind wanted.
func TestDecodeJSON(t *testing.T) {
	type user struct {
		Name string `json:"name"`
	}
	type doc struct {
		Addr   string          `json:"addr"`
		On     *bool           `json:"on"`
		N      *int            `json:"n"`
		Inner  struct{ A int } `json:"inner"`
		Users  []user          `json:"users"`
		ByName map[string]user `json:"by_name"`
		Tags   []string        `json:"tags"`
		Free   any             `json:"free"`
	}
	tests := []struct {
		name, text, want string // want: the error; "" for none
	}{
		{"every field", `{"addr":"x","on":true,"n":3,"inner":{"A":1},"users":[{"name":"a"}],"by_name":{"k":{"name":"b"}},"tags":["t"],"free":{"any":1}}`, ""},
		{"unknown top-level key", `{"adr":"x"}`, `unknown field "adr"`},
		{"key in the wrong case", `{"Addr":"x"}`, `unknown field "Addr"`},
		{"unknown nested key", `{"inner":{"a":1}}`, `unknown field "inner.a"`},
		{"unknown key in an array element", `{"users":[{"name":"a"},{"nmae":"b"}]}`, `unknown field "users[1].nmae"`},
		{"unknown key in a map value", `{"by_name":{"k":{"x":1}}}`, `unknown field "by_name.k.x"`},
		{"boolean wanted", `{"on":"yes"}`, `field "on" must be true or false`},
		{"whole number wanted", `{"n":1.5}`, `field "n" must be a whole number`},
		{"nested type error", `{"inner":{"A":"x"}}`, `field "inner.A" must be a whole number`},
		{"object wanted", `{"inner":[]}`, `field "inner" must be an object`},
		{"not an object", `[1]`, "the text must be a JSON object"},
		{"malformed", `{"addr": }`, "malformed JSON: syntax error at byte 10"},
		{"trailing data", `{} {}`, "malformed JSON: syntax error at byte 4"},
		{"invalid UTF-8", "{\"addr\":\"\xff\"}", "the text is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			err := envelope.DecodeJSON([]byte(tt.text), &d, "the text")
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, "b", d.ByName["k"].Name, "decoded map value")
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			var je *envelope.JSONError
			assert.True(t, errors.As(err, &je), "the error is a *JSONError")
		})
	}
}

package jsonstr_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/jsonstr"
)

// stdlib is what encoding/json writes for s with HTML escaping off.
func stdlib(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// seeds are the strings where an encoder goes wrong: every escape, HTML
// characters, invalid and truncated UTF-8, surrogates, U+2028/U+2029,
// U+FFFD itself, and the largest code points.
var seeds = []string{
	"", "plain", `"`, `\`, "\b\f", "\b\f\n\r\t", "\x00\x01\x1f\x7f", "<script>&amp;</script>",
	"\u2028\u2029", "a\u2028b\u2029c", "\xff", "\xfe\xff", "a\xffb", "\xe2\x80", "\xe2\x80\xa8\xe2",
	"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\ufffd", "\U0010ffff", "日本語", "é\u0301",
	"\x80", "tab\there", `{"json":"inside"}`, "end\\",
}

func TestAppendSeeds(t *testing.T) {
	for _, s := range seeds {
		assert.Equal(t, string(stdlib(t, s)), string(jsonstr.Append(nil, s)), "%q", s)
	}
}

// TestAppendEveryRuneAndByte covers every code point (surrogates included,
// which encode as invalid UTF-8) and every single byte, each between
// plain text, so that the copying around an escape is checked too.
func TestAppendEveryRuneAndByte(t *testing.T) {
	var all []string
	for r := rune(0); r <= utf8.MaxRune; r++ {
		all = append(all, "a"+string(r)+"z")
	}
	for c := 0; c < 256; c++ {
		all = append(all, "a"+string([]byte{byte(c)})+"z", string([]byte{byte(c)}))
	}
	// All at once; on a difference, find the first string that differs.
	joined := strings.Join(all, "")
	if bytes.Equal(jsonstr.Append(nil, joined), stdlib(t, joined)) {
		return
	}
	for _, s := range all {
		if got, want := jsonstr.Append(nil, s), stdlib(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	}
	t.Fatal("the joined string differs, but no part of it does")
}

func TestAppendKeepsThePrefix(t *testing.T) {
	assert.Equal(t, `x:"a\"b"`, string(jsonstr.Append([]byte("x:"), `a"b`)))
}

// FuzzAppend holds Append byte-equal to encoding/json (HTML escaping off)
// for every string. Its seed corpus runs in every go test.
func FuzzAppend(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := jsonstr.Append(nil, s), stdlib(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

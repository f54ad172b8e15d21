package store_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/hds-go/hds/store"
)

func TestValidateName(t *testing.T) {
	for _, name := range []string{
		"a",
		"my project",
		"...",
		".a",
		"a.",
		"..a",
		"%",
		`a\b`,
		"a:b?c#d",
		"é",
		"日本語",
		"😀",
		"a\u00a0b", // inner no-break space
		"a\u3000b", // inner ideographic space
		"a\u200bb", // zero width space is not white space
		"\u200b",
		strings.Repeat("a", 128),
		strings.Repeat("é", 128), // 256 bytes
		strings.Repeat("😀", 128), // 512 bytes
		"\u00a1",                 // just above U+00A0
	} {
		if err := store.ValidateName(name); err != nil {
			t.Errorf("ValidateName(%q) = %v, want nil", name, err)
		}
	}

	for _, tc := range []struct {
		name, errHas string
	}{
		{"", "empty"},
		{strings.Repeat("a", 129), "128"},
		{strings.Repeat("é", 129), "128"},
		{strings.Repeat("😀", 129), "128"},
		{"\xff", "UTF-8"},
		{"a\xc3", "UTF-8"},
		{"\xed\xa0\x80", "UTF-8"}, // an encoded surrogate
		{"\xc0\xaf", "UTF-8"},     // overlong '/'
		{"a\x00b", "control"},
		{"\x00", "control"},
		{"a\x01", "control"},
		{"a\x1fb", "control"},
		{"a\tb", "control"},
		{"a\nb", "control"},
		{"a\x7fb", "control"},
		{"a\u0080b", "control"},
		{"a\u0085b", "control"},
		{"a\u009fb", "control"},
		{"a/b", "'/'"},
		{"/", "'/'"},
		{"a/", "'/'"},
		{".", `"."`},
		{"..", `".."`},
		{" a", "white space"},
		{"a ", "white space"},
		{" ", "white space"},
		{"\u00a0a", "white space"},
		{"a\u00a0", "white space"},
		{"\u3000a", "white space"},
		{"a\u3000", "white space"},
		{"\u2028a", "white space"},
		{"a\u2029", "white space"},
		{"\u2000a", "white space"},
		{"a\u205f", "white space"},
		{"\u1680a", "white space"},
	} {
		err := store.ValidateName(tc.name)
		if err == nil {
			t.Errorf("ValidateName(%q) = nil, want an error mentioning %q", tc.name, tc.errHas)
			continue
		}
		var verr *store.ValidationError
		if !errors.As(err, &verr) {
			t.Errorf("ValidateName(%q) error %v (%T) is not a *store.ValidationError", tc.name, err, err)
		}
		if !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("ValidateName(%q) error %q does not name the rule (%q)", tc.name, err, tc.errHas)
		}
	}
}

// nameOK is an independent statement of API.md's name rules.
func nameOK(name string) bool {
	if !utf8.ValidString(name) {
		return false
	}
	runes := []rune(name)
	if len(runes) < 1 || len(runes) > 128 || name == "." || name == ".." {
		return false
	}
	for _, r := range runes {
		if r <= 0x1f || (0x7f <= r && r <= 0x9f) || r == '/' {
			return false
		}
	}
	return !unicode.IsSpace(runes[0]) && !unicode.IsSpace(runes[len(runes)-1])
}

func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"", "a", ".", "..", "...", "/", "a/b", " a", "a ", "\u00a0", "a\u00a0b", "\u3000",
		"\x00", "\x1f", "\x7f", "\u0085", "\u009f", "\u00a0x", "\xff", "\xed\xa0\x80", "😀", "é",
		strings.Repeat("a", 128), strings.Repeat("a", 129), strings.Repeat("é", 128), strings.Repeat("é", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := store.ValidateName(name)
		if want := nameOK(name); (err == nil) != want {
			t.Fatalf("ValidateName(%q) = %v, want valid=%v", name, err, want)
		}
		if err == nil {
			n := utf8.RuneCountInString(name)
			if !utf8.ValidString(name) || n < 1 || n > store.MaxNameLength ||
				strings.ContainsAny(name, "/\x00") {
				t.Fatalf("ValidateName accepted %q", name)
			}
			return
		}
		var verr *store.ValidationError
		if !errors.As(err, &verr) {
			t.Fatalf("ValidateName(%q) error %v (%T) is not a *store.ValidationError", name, err, err)
		}
	})
}

package handler

import (
	"errors"
	"testing"
	"time"
	"unicode"

	"github.com/hds-go/hds/store"
)

// TestControlCharactersAreSection2s checks that unicode.IsControl, which
// token names are checked with, is exactly docs/api.md#data-model's rule
// for control characters: U+0000 to U+001F and U+007F to U+009F, nothing
// else.
func TestControlCharactersAreSection2s(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := r <= 0x1f || r >= 0x7f && r <= 0x9f
		if got := unicode.IsControl(r); got != want {
			t.Errorf("unicode.IsControl(%U) = %v, docs/api.md#data-model says %v", r, got, want)
		}
	}
}

// TestTokenNameControlCharacters checks that a token name with a control
// character of either range is refused, and that other characters,
// invisible ones included, are not.
func TestTokenNameControlCharacters(t *testing.T) {
	role := "viewer"
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a\x00b", false}, {"a\x1fb", false}, {"a\x7fb", false}, {"a\u0085b", false}, {"a\u009fb", false},
		{"a\u00a0b", true}, {"a\u2028b", true}, {"a\u200bb", true}, {"a b", true},
	} {
		name := tc.name
		_, err := tokenBody{Name: &name, Role: &role}.check(time.Now())
		var verr *store.ValidationError
		switch {
		case tc.ok && err != nil:
			t.Errorf("name %q: %v, want it accepted", tc.name, err)
		case !tc.ok && !errors.As(err, &verr):
			t.Errorf("name %q: %v, want a validation error", tc.name, err)
		case !tc.ok && verr.Message != "name must be 1 to 128 bytes of text without control characters":
			t.Errorf("name %q: message %q", tc.name, verr.Message)
		}
	}
}

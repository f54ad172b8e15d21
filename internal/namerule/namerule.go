// Package namerule holds the rules of a name (docs/api.md#data-model)
// with nothing but the standard library, so that both the domain (package
// store) and the Go client's reference parser (internal/refs) check names
// the same way.
package namerule

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLength is the longest name, in Unicode code points.
const MaxLength = 128

// Problem returns the rule name breaks, in words, or "" when it is a
// valid name: 1 to MaxLength code points of valid UTF-8, no control
// characters (U+0000 to U+001F, U+007F to U+009F), no '/', not "." or
// "..", and no leading or trailing white space.
func Problem(name string) string {
	if name == "" {
		return "name must not be empty"
	}
	if !utf8.ValidString(name) {
		return "name must be valid UTF-8"
	}
	if n := utf8.RuneCountInString(name); n > MaxLength {
		return fmt.Sprintf("name must be at most %d characters, got %d", MaxLength, n)
	}
	if name == "." || name == ".." {
		return fmt.Sprintf("name must not be %q", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) { // U+0000..U+001F and U+007F..U+009F
			return fmt.Sprintf("name must not contain control characters (found U+%04X)", r)
		}
	}
	if strings.ContainsRune(name, '/') {
		return "name must not contain '/'"
	}
	first, _ := utf8.DecodeRuneInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return "name must not begin or end with white space"
	}
	return ""
}

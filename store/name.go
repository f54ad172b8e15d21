package store

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLength is the longest name, in Unicode code points.
const MaxNameLength = 128

// ValidateName checks a project, collection, cluster or record name: 1 to
// 128 code points of valid UTF-8, no control characters (U+0000 to U+001F,
// U+007F to U+009F), no '/', not "." or "..", and no leading or trailing
// white space. It returns a *ValidationError naming the rule that failed.
func ValidateName(name string) error {
	if name == "" {
		return invalid("name must not be empty")
	}
	if !utf8.ValidString(name) {
		return invalid("name must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		return invalid("name must be at most %d characters, got %d", MaxNameLength, n)
	}
	if name == "." || name == ".." {
		return invalid("name must not be %q", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) { // U+0000..U+001F and U+007F..U+009F
			return invalid("name must not contain control characters (found U+%04X)", r)
		}
	}
	if strings.ContainsRune(name, '/') {
		return invalid("name must not contain '/'")
	}
	first, _ := utf8.DecodeRuneInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return invalid("name must not begin or end with white space")
	}
	return nil
}

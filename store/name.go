package store

import "github.com/hds-go/hds/internal/namerule"

// MaxNameLength is the longest name, in Unicode code points.
const MaxNameLength = namerule.MaxLength

// ValidateName checks a project, collection, cluster or record name: 1 to
// 128 code points of valid UTF-8, no control characters (U+0000 to U+001F,
// U+007F to U+009F), no '/', not "." or "..", and no leading or trailing
// white space. It returns a *ValidationError naming the rule that failed.
func ValidateName(name string) error {
	if p := namerule.Problem(name); p != "" {
		return invalid("%s", p)
	}
	return nil
}

// Package refs parses the references between records that a STRING value
// may hold (docs/api.md#references-between-records): ${NAME} (a record
// of the same cluster), ${CLUSTER/NAME} (a record of another cluster of the
// same collection) and ${COLLECTION/CLUSTER/NAME} (a record anywhere in the
// same project), each name percent-encoded as in a path. $${ stands for a
// literal ${. Text that does not form a reference is literal text.
//
// It imports only the standard library (and internal/namerule), so that
// the Go client follows references with it too; resolving them against a
// store is package internal/resolve.
package refs

import (
	"net/url"
	"strings"

	"github.com/hds-go/hds/internal/namerule"
)

// Ref is one reference. Collection and Cluster are empty when the
// reference leaves them out (they are then those of the record that holds
// it); Name is never empty. Every name is decoded and valid
// (docs/api.md#data-model).
type Ref struct {
	Collection string
	Cluster    string
	Name       string
	// Text is the reference as written, ${ and } included.
	Text string
}

// Part is a piece of a parsed value: literal text (Ref nil), or a
// reference.
type Part struct {
	// Literal is the text of a literal part, $${ already turned into ${.
	Literal string
	Ref     *Ref
}

// Parse splits s into literal text and references, in order. Adjacent
// literal text is one part. A value without references is one literal
// part (none when s is empty).
func Parse(s string) []Part {
	var parts []Part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, Part{Literal: lit.String()})
			lit.Reset()
		}
	}
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			lit.WriteString(s)
			break
		}
		lit.WriteString(s[:i])
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "$${"):
			lit.WriteString("${")
			s = s[3:]
		case strings.HasPrefix(s, "${"):
			ref, n, ok := parseRef(s)
			if !ok {
				lit.WriteString("${")
				s = s[2:]
				continue
			}
			flush()
			parts = append(parts, Part{Ref: ref})
			s = s[n:]
		default:
			lit.WriteByte('$')
			s = s[1:]
		}
	}
	flush()
	return parts
}

// Has reports whether s holds at least one reference: whether Parse
// would return a part with a Ref. $${ alone is not a reference.
func Has(s string) bool {
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return false
		}
		if i > 0 && s[i-1] == '$' {
			// $${: a literal. (Parse reads a '$' at a time, so the '$'
			// just before ${ always starts a $${.)
			s = s[i+2:]
			continue
		}
		if _, _, ok := parseRef(s[i:]); ok {
			return true
		}
		s = s[i+2:]
	}
}

// parseRef reads the reference at the start of s, which begins with ${:
// up to the first }, one to three names separated by /, each
// percent-decoded and valid. It returns the reference and its length.
func parseRef(s string) (*Ref, int, bool) {
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return nil, 0, false
	}
	body := s[2:end]
	names := strings.Split(body, "/")
	if len(names) > 3 {
		return nil, 0, false
	}
	for i, n := range names {
		d, err := url.PathUnescape(n)
		if err != nil || namerule.Problem(d) != "" {
			return nil, 0, false
		}
		names[i] = d
	}
	r := &Ref{Name: names[len(names)-1], Text: s[:end+1]}
	switch len(names) {
	case 2:
		r.Cluster = names[0]
	case 3:
		r.Collection, r.Cluster = names[0], names[1]
	}
	return r, end + 1, true
}

package handler

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/store"
)

// Conditional requests
// (docs/api.md#concurrency-control-and-record-history): every response
// that carries one record has its entity tag (store.Record.ETag); PUT R,
// DELETE R and the restore route honour If-Match, GET R honours
// If-None-Match. GET K carries the cluster's tag (store.Cluster.ETag) and
// honours If-None-Match too.

// entityTags is a parsed If-Match or If-None-Match header.
type entityTags struct {
	present bool     // the header was sent
	any     bool     // "*"
	strong  []string // the strong tags, quotes included
	weak    []string // the weak tags' opaque parts, quotes included
}

// parseEntityTags reads every field line of the header name: "*", or a
// comma-separated list of entity tags (RFC 9110 section 8.8.3), empty
// list elements allowed. Anything else is 400 INVALID_REQUEST.
func parseEntityTags(h http.Header, name string) (entityTags, error) {
	lines := h.Values(name)
	tags := entityTags{present: len(lines) > 0}
	if !tags.present {
		return tags, nil
	}
	bad := envelope.BadRequest(name + ` must be "*" or a comma-separated list of quoted entity tags, such as "abc" or W/"abc"`)
	joined := strings.TrimSpace(strings.Join(lines, ","))
	if joined == "*" {
		tags.any = true
		return tags, nil
	}
	rest := joined
	for {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			break
		}
		weak := strings.HasPrefix(rest, "W/")
		if weak {
			rest = rest[2:]
		}
		tag, n, ok := quotedTag(rest)
		if !ok {
			return entityTags{}, bad
		}
		if weak {
			tags.weak = append(tags.weak, tag)
		} else {
			tags.strong = append(tags.strong, tag)
		}
		rest = strings.TrimLeft(rest[n:], " \t")
		if rest != "" && rest[0] != ',' {
			return entityTags{}, bad
		}
	}
	if len(tags.strong)+len(tags.weak) == 0 {
		return entityTags{}, bad
	}
	return tags, nil
}

// quotedTag reads the opaque tag at the start of s: a double quote, etagc
// characters (%x21, %x23-7E, %x80-FF), a double quote. It returns the tag
// with its quotes and its length.
func quotedTag(s string) (string, int, bool) {
	if s == "" || s[0] != '"' {
		return "", 0, false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], i + 1, true
		case c == 0x21, c >= 0x23 && c <= 0x7e, c >= 0x80:
		default:
			return "", 0, false
		}
	}
	return "", 0, false
}

// matchesNoneOf reports whether If-None-Match tags match tag (weak
// comparison: W/"x" matches "x").
func (t entityTags) matchesNoneOf(tag string) bool {
	return t.present && (t.any || slices.Contains(t.strong, tag) || slices.Contains(t.weak, tag))
}

// notModified answers 304 Not Modified, with tag as the ETag and no
// body, when the If-None-Match tags inm match tag, and reports whether it
// did: GET R (docs/api.md#concurrency-control-and-record-history) and
// GET K with or without format=env (docs/api.md#cluster-tags) share it.
func notModified(w http.ResponseWriter, inm entityTags, tag string) bool {
	if !inm.matchesNoneOf(tag) {
		return false
	}
	w.Header().Set("ETag", tag)
	w.WriteHeader(http.StatusNotModified)
	return true
}

// preconditions holds what the conditional-write options say.
type preconditions struct {
	// requireIfMatch refuses PUT R, DELETE R and restore without If-Match
	// (428).
	requireIfMatch bool
	// maxVersions is how many versions besides the current one a record
	// keeps (history.max_versions).
	maxVersions int
}

// conditionalWrite is the store.Write of a PUT R, DELETE R or restore
// request, and whether it lacks a required If-Match.
type conditionalWrite struct {
	store.Write
	missing bool
}

// writeOf reads the request's If-Match (400 when malformed) and returns
// the store.Write of the request: its actor, its condition (weak tags
// never match, "*" matches any existing record) and the history to keep.
// A required but missing If-Match becomes a condition that never
// matches, so that the store reports it only after every other check
// (400, 404, 409): preconditions come last.
func (pc preconditions) writeOf(r *http.Request) (conditionalWrite, error) {
	w := conditionalWrite{Write: store.Write{MaxVersions: pc.maxVersions}}
	tags, err := parseEntityTags(r.Header, "If-Match")
	switch {
	case err != nil:
		return w, err
	case !tags.present && pc.requireIfMatch:
		w.IfMatch, w.missing = []string{}, true
	case tags.present && !tags.any:
		w.IfMatch = append([]string{}, tags.strong...)
	}
	return w, nil
}

// fail answers a write refused by the store: a failed precondition is 412
// with the record's current ETag, or 428 when the If-Match it needed was
// missing; anything else goes to the error table as it is.
func (w conditionalWrite) fail(rw http.ResponseWriter, r *http.Request, err error) {
	var pe *store.PreconditionError
	if errors.As(err, &pe) {
		if w.missing {
			err = envelope.ErrPreconditionRequired
		} else {
			rw.Header().Set("ETag", pe.ETag)
		}
	}
	envelope.Error(rw, r, err)
}

package handler

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/store"
)

// The fields each kind of list may be sorted by.
var (
	containerSortFields = sortFields(store.SortName, store.SortID, store.SortCreatedAt, store.SortUpdatedAt)
	recordSortFields    = sortFields(store.SortName, store.SortValue, store.SortType, store.SortID, store.SortCreatedAt, store.SortUpdatedAt)
)

func sortFields(fields ...store.SortField) map[string]store.SortField {
	m := make(map[string]store.SortField, len(fields))
	for _, f := range fields {
		m[string(f)] = f
	}
	return m
}

// contractParams are the query parameters of the contract
// (docs/api.md#record-types-and-values, docs/api.md#routes and
// docs/api.md#list-queries, v1.1 included): each may be given at most
// once. A parameter added to the API joins this list.
var contractParams = []string{
	"limit", "offset", "search", "sortBy", "sortOrder", "type", "value", "valueContains",
	"minValue", "maxValue", "cursor", "count", "reveal", "rename", "version", "format", "mode", "dry_run",
	"action", "actor", "since", "until", "after", "collection", "cluster", "from", "to", "unchanged",
	"resolve", "types", "from_snapshot",
}

// parseQuery parses a raw query string strictly
// (docs/api.md#conventions): one that does not parse (a bad '%' escape, a
// ';' separator) and a contract parameter given twice are 400
// INVALID_REQUEST, never dropped or guessed at. An empty query is nil
// Values (read only: no handler adds to them), without a map made for
// each request that has none.
func parseQuery(raw string) (url.Values, error) {
	if raw == "" {
		return nil, nil
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, envelope.BadRequest("malformed query string: " + err.Error() +
			" (a ';' or '%' in a parameter must be percent-encoded: %3B, %25)")
	}
	for _, name := range contractParams {
		if len(v[name]) > 1 {
			return nil, envelope.BadRequest("the query parameter " + name + " is given more than once")
		}
	}
	return v, nil
}

// parsePage reads limit and offset (docs/api.md#list-queries): all a
// history list reads, and the start of every other list's query
// (parseListQuery).
func parsePage(v url.Values) (store.ListQuery, error) {
	q := store.NewListQuery()
	var err error
	if v.Has("limit") {
		s := v.Get("limit")
		q.Limit, err = decimal(s, "limit")
		switch {
		case s == "" || strings.Trim(s, "0123456789") != "":
			return q, envelope.BadRequest("limit must be a decimal integer from 1 to " + strconv.Itoa(store.MaxLimit))
		case err != nil || q.Limit < 1 || q.Limit > store.MaxLimit: // digits only, out of range
			return q, envelope.BadRequest("limit must be between 1 and " + strconv.Itoa(store.MaxLimit))
		}
	}
	if v.Has("offset") {
		if q.Offset, err = decimal(v.Get("offset"), "offset"); err != nil {
			return q, err
		}
	}
	return q, nil
}

// parseListQuery reads limit, offset, search, sortBy, sortOrder and count
// (docs/api.md#list-queries). Unknown parameters are ignored; a bad value
// of a known one is 400 INVALID_REQUEST.
func parseListQuery(v url.Values, sortable map[string]store.SortField) (store.ListQuery, error) {
	q, err := parsePage(v)
	if err != nil {
		return q, err
	}
	if v.Has("search") {
		if q.Search, err = filterText(v.Get("search"), "search", true); err != nil {
			return q, err
		}
	}
	if v.Has("sortBy") {
		f, ok := sortable[v.Get("sortBy")]
		if !ok {
			return q, envelope.BadRequest("sortBy must be one of " + strings.Join(sortNames(sortable), ", "))
		}
		q.SortBy = f
	}
	switch order := v.Get("sortOrder"); {
	case !v.Has("sortOrder"), order == "asc":
	case order == "desc":
		q.Desc = true
	default:
		return q, envelope.BadRequest("sortOrder must be asc or desc")
	}
	return q, parseCount(v, &q)
}

// parseCount reads count (docs/api.md#list-queries): false sets
// q.NoCount.
func parseCount(v url.Values, q *store.ListQuery) error {
	switch c := v.Get("count"); {
	case !v.Has("count"), c == "true":
	case c == "false":
		q.NoCount = true
	default:
		return envelope.BadRequest("count must be true or false")
	}
	return nil
}

// parseRecordQuery reads a list query plus the record filters type,
// value, valueContains, minValue and maxValue.
func parseRecordQuery(v url.Values) (store.RecordQuery, error) {
	lq, err := parseListQuery(v, recordSortFields)
	q := store.RecordQuery{ListQuery: lq}
	if err != nil {
		return q, err
	}
	if v.Has("type") {
		if q.Type, err = store.ParseType(v.Get("type")); err != nil {
			return q, err
		}
	}
	if v.Has("value") {
		if q.Value, err = filterText(v.Get("value"), "value", false); err != nil {
			return q, err
		}
		q.HasValue = true
	}
	if v.Has("valueContains") {
		if q.ValueContains, err = filterText(v.Get("valueContains"), "valueContains", false); err != nil {
			return q, err
		}
	}
	if !v.Has("minValue") && !v.Has("maxValue") {
		return q, nil
	}
	if !store.IsRangeType(q.Type) {
		names := make([]string, len(store.RangeTypes))
		for i, t := range store.RangeTypes {
			names[i] = string(t)
		}
		return q, envelope.BadRequest("minValue and maxValue need type to be one of " + strings.Join(names, ", "))
	}
	if q.Min, err = rangeBound(v, "minValue", q.Type); err != nil {
		return q, err
	}
	q.Max, err = rangeBound(v, "maxValue", q.Type)
	return q, err
}

// rangeBound reads the range filter param, when given, as the query text
// of a value of type t (docs/api.md#list-queries): a bound that does not
// fit is 400 VALIDATION_ERROR.
func rangeBound(v url.Values, param string, t store.DataType) (*store.ValueKey, error) {
	if !v.Has(param) {
		return nil, nil
	}
	value, err := t.ParseText(v.Get(param), true)
	if err != nil {
		return nil, &store.ValidationError{Message: param + ": " + err.Error()}
	}
	k := store.KeyOf(t, value)
	return &k, nil
}

// sortNames lists the accepted sortBy values in a fixed order.
func sortNames(sortable map[string]store.SortField) []string {
	var names []string
	for _, f := range []store.SortField{store.SortName, store.SortValue, store.SortType, store.SortID, store.SortCreatedAt, store.SortUpdatedAt} {
		if _, ok := sortable[string(f)]; ok {
			names = append(names, string(f))
		}
	}
	return names
}

// decimal parses a non-negative decimal integer: digits only, so that
// "1e3", "1.5", "+5" and "-1" are refused.
func decimal(s, param string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] < '0' || s[0] > '9' || n < 0 {
		return 0, envelope.BadRequest(param + " must be a decimal integer of 0 or more (digits only, at most 9223372036854775807)")
	}
	return n, nil
}

// filterText checks the text of a search or value filter: valid UTF-8, no
// U+0000, and for name searches no control characters at all (a name
// cannot hold one).
func filterText(s, param string, isName bool) (string, error) {
	if !utf8.ValidString(s) {
		return "", envelope.BadRequest(param + " must be valid UTF-8")
	}
	for _, r := range s {
		if r == 0 {
			return "", envelope.BadRequest(param + " must not contain U+0000")
		}
		if isName && unicode.IsControl(r) {
			return "", envelope.BadRequest(param + " must not contain control characters")
		}
	}
	return s, nil
}

// parseReveal reads the reveal parameter: absent or "false" hide
// credential values, "true" shows them, anything else is 400.
func parseReveal(v url.Values) (bool, error) {
	switch r := v.Get("reveal"); {
	case !v.Has("reveal"), r == "false":
		return false, nil
	case r == "true":
		return true, nil
	}
	return false, envelope.BadRequest("reveal must be true or false")
}

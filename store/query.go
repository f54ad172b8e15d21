package store

import (
	"cmp"
	"strings"
	"time"
)

// Paging bounds and defaults of list queries.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// SortField is a field a list can be sorted by.
type SortField string

// The sort fields. SortValue and SortType apply to records only.
const (
	SortName      SortField = "name"
	SortID        SortField = "id"
	SortCreatedAt SortField = "created_at"
	SortUpdatedAt SortField = "updated_at"
	SortValue     SortField = "value"
	SortType      SortField = "type"
)

// ListQuery filters, sorts and pages a list. The zero value is not valid;
// start from NewListQuery.
type ListQuery struct {
	// Limit is 1 to MaxLimit; Offset is 0 or more.
	Limit  int
	Offset int
	// Search keeps names that contain it, both sides lower-cased with
	// strings.ToLower; it is matched literally (no wildcards).
	Search string
	// SortBy is the field to sort by; ties are broken by name, then id,
	// both ascending whatever Desc says.
	SortBy SortField
	// Desc reverses the order of SortBy.
	Desc bool
	// NoCount asks the store not to count the matches
	// (docs/api.md#list-queries, count=false): the total that
	// FindProjects, FindCollections, FindClusters, FindRecords and
	// StreamRecords return is then NotCounted, and no work is spent
	// counting. The zero value counts. The record history ignores it.
	NoCount bool
	// After, when not nil, resumes the list after an item
	// (docs/api.md#list-queries, cursors): only the matches that sort
	// after After in this query's order are listed, from the first of them
	// (Offset is then 0). The total still counts every match. The record
	// history ignores it.
	After *Position
}

// Position is where a list resumes (ListQuery.After): the sort fields of
// the last item of the previous page. Name and ID, which break ties, are
// always set; of the others only the one SortBy names is read.
type Position struct {
	Name string
	ID   string
	// Time is the created_at or updated_at of the item, for those sorts.
	Time time.Time
	// Type is the record's type, for SortType.
	Type DataType
	// Key is the record's value key (KeyOf), for SortValue.
	Key ValueKey
}

// SortKey holds the fields that a list other than records sorts by
// (docs/api.md#list-queries): the item's id, name (a user's username),
// created_at and updated_at.
type SortKey struct {
	ID, Name             string
	CreatedAt, UpdatedAt time.Time
}

// KeyAt is the SortKey of the position p (ListQuery.After), for comparing
// items with it.
func KeyAt(p Position) SortKey {
	return SortKey{ID: p.ID, Name: p.Name, CreatedAt: p.Time, UpdatedAt: p.Time}
}

// CompareKeys orders a and b as q sorts a list other than records: by
// q.SortBy (SortID, SortCreatedAt, SortUpdatedAt; the name otherwise),
// reversed when q.Desc, ties broken by name, then id, both ascending.
func (q ListQuery) CompareKeys(a, b SortKey) int {
	var c int
	switch q.SortBy {
	case SortID:
		c = strings.Compare(a.ID, b.ID)
	case SortCreatedAt:
		c = a.CreatedAt.Compare(b.CreatedAt)
	case SortUpdatedAt:
		c = a.UpdatedAt.Compare(b.UpdatedAt)
	default:
		c = strings.Compare(a.Name, b.Name)
	}
	if q.Desc {
		c = -c
	}
	return cmp.Or(c, strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID))
}

// NotCounted is the total a list returns when its query has NoCount.
const NotCounted = -1

// At returns the position of a list item with these fields in a list
// sorted by by.
func At(by SortField, id, name string, created, updated time.Time) Position {
	p := Position{ID: id, Name: name}
	switch by {
	case SortCreatedAt:
		p.Time = created
	case SortUpdatedAt:
		p.Time = updated
	}
	return p
}

// RecordAt returns the position of r in a list of records sorted by by.
func RecordAt(by SortField, r *Record) Position {
	p := At(by, r.ID, r.Name, r.CreatedAt, r.UpdatedAt)
	switch by {
	case SortType:
		p.Type = r.Type
	case SortValue:
		p.Key = KeyOf(r.Type, r.Value)
	}
	return p
}

// NewListQuery returns the default query: the first 100 items by name.
func NewListQuery() ListQuery {
	return ListQuery{Limit: DefaultLimit, SortBy: SortName}
}

// RecordQuery is a ListQuery with the record filters. Filters combine with
// AND.
type RecordQuery struct {
	ListQuery
	// Type, when not empty, keeps records of that type.
	Type DataType
	// Value, when HasValue, keeps records whose canonical text equals it.
	Value    string
	HasValue bool
	// ValueContains, when not empty, keeps records whose canonical text
	// contains it, both sides lower-cased; it is matched literally.
	ValueContains string
	// Min and Max, when not nil, keep records whose value lies in the
	// inclusive range (docs/api.md#list-queries, minValue and maxValue).
	// They need Type to be a range type (IsRangeType), and are keys of
	// values of Type (KeyOf of what Type.ParseText returns). INTEGER and
	// FLOAT compare numerically and exactly, DATETIME by the instant it
	// denotes, the others by canonical text byte-wise: see ValueKey.
	Min, Max *ValueKey
}

// IsRangeType reports whether the range filters (RecordQuery.Min and Max)
// apply to records of type t: INTEGER, FLOAT, DATE, TIME, DATETIME,
// STRING and UUID.
func IsRangeType(t DataType) bool {
	switch t {
	case Integer, Float, Date, Time, DateTime, String, UUID:
		return true
	}
	return false
}

// RangeTypes lists the range types, in the order of
// docs/api.md#list-queries.
var RangeTypes = []DataType{Integer, Float, Date, Time, DateTime, String, UUID}

// MatchesSearch reports whether name matches a Search or ValueContains
// filter s (empty matches everything).
func MatchesSearch(name, s string) bool {
	return s == "" || strings.Contains(strings.ToLower(name), strings.ToLower(s))
}

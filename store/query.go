package store

import (
	"strings"
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
	// NoCount asks the store not to count the matches (API.md section 5,
	// count=false): the total that FindProjects, FindCollections,
	// FindClusters, FindRecords and StreamRecords return is then
	// NotCounted, and no work is spent counting. The zero value counts.
	// The record history ignores it.
	NoCount bool
}

// NotCounted is the total a list returns when its query has NoCount.
const NotCounted = -1

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
}

// MatchesSearch reports whether name matches a Search or ValueContains
// filter s (empty matches everything).
func MatchesSearch(name, s string) bool {
	return s == "" || strings.Contains(strings.ToLower(name), strings.ToLower(s))
}

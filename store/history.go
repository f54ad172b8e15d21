package store

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// DefaultMaxVersions is how many versions of a record, besides the
// current one, hds keeps by default
// (docs/api.md#concurrency-control-and-record-history).
const DefaultMaxVersions = 10

// ErrPreconditionFailed reports that a conditional write (Write.IfMatch)
// found the record in another state and changed nothing. Stores return a
// *PreconditionError, which matches it.
var ErrPreconditionFailed = preconditionFailed{}

type preconditionFailed struct{}

func (preconditionFailed) Error() string { return "precondition failed" }

// PreconditionError names the state a conditional write found: the
// record's current version and entity tag. It matches
// ErrPreconditionFailed.
type PreconditionError struct {
	Version int64
	ETag    string
}

// Error returns, for example, "current version is 7".
// A Version of 0 means that the record does not exist (a conditional
// upsert of a batch that found none): "the record does not exist".
func (e *PreconditionError) Error() string {
	if e.Version == 0 {
		return "the record does not exist"
	}
	return "current version is " + strconv.FormatInt(e.Version, 10)
}

// Is reports whether target is ErrPreconditionFailed.
func (e *PreconditionError) Is(target error) bool { return target == ErrPreconditionFailed }

// preconditionOf returns the error of a failed precondition on r.
func preconditionOf(r *Record) error {
	return &PreconditionError{Version: r.Version, ETag: r.ETag()}
}

// Write says on which condition a change to a record happens, and how
// much history the record keeps after it. Who makes the change is the
// Path's Caller: the state the write makes records Caller.ID()
// (Record.UpdatedBy, RecordVersion.ChangedBy), and so does its audit
// entry.
type Write struct {
	// IfMatch, when not nil, makes the write conditional: it happens only
	// when the record's current entity tag (Record.ETag) is one of
	// IfMatch, checked in the same atomic step as the write; otherwise
	// nothing changes and the store returns a *PreconditionError. An
	// empty, non-nil IfMatch never matches. Nil writes unconditionally.
	IfMatch []string
	// MaxVersions is how many versions besides the current one the record
	// keeps after the write (history.max_versions); older ones are
	// dropped in the same atomic step. 0 keeps none, so callers that keep
	// history must say so (DefaultMaxVersions).
	MaxVersions int
}

// Matches reports whether a record in state r passes w's condition.
func (w Write) Matches(r *Record) bool {
	return w.IfMatch == nil || slices.Contains(w.IfMatch, r.ETag())
}

// Check returns a *PreconditionError when r does not pass w's condition.
// Stores call it with the record's current state, inside the atomic step
// that writes.
func (w Write) Check(r *Record) error {
	if w.Matches(r) {
		return nil
	}
	return preconditionOf(r)
}

// ETag returns the strong entity tag (quotes included) of the state of the
// record with id at version: it names the state, not a representation,
// and since record ids are never reused and versions only grow, no two
// states of any records share a tag.
func ETag(id string, version int64) string {
	return `"` + id + "." + strconv.FormatInt(version, 10) + `"`
}

// ETag returns the entity tag of the record's current state.
func (r *Record) ETag() string { return ETag(r.ID, r.Version) }

// RecordVersion is one state of a record: its current one, or one kept by
// its history.
type RecordVersion struct {
	// RecordID is the id of the record (credentials are sealed to it).
	RecordID string
	Version  int64
	Name     string
	Type     DataType
	// Value is the value in that state, as stored (credentials sealed).
	Value json.RawMessage
	// ChangedAt is when that state was written; ChangedBy who wrote it.
	ChangedAt time.Time
	ChangedBy string
}

// Clone returns a deep copy of v.
func (v *RecordVersion) Clone() *RecordVersion {
	c := *v
	c.Value = append(json.RawMessage(nil), v.Value...)
	return &c
}

// VersionOf returns the current state of r as a RecordVersion.
func VersionOf(r *Record) *RecordVersion {
	return &RecordVersion{RecordID: r.ID, Version: r.Version, Name: r.Name, Type: r.Type,
		Value: append(json.RawMessage(nil), r.Value...), ChangedAt: r.UpdatedAt, ChangedBy: r.UpdatedBy}
}

// At returns r as it was in state v: r's id and creation time with v's
// name, type, value, version, author and time (as UpdatedAt).
func (v *RecordVersion) At(r *Record) *Record {
	return &Record{ID: r.ID, Name: v.Name, Type: v.Type, Value: append(json.RawMessage(nil), v.Value...),
		Version: v.Version, CreatedAt: r.CreatedAt, UpdatedAt: v.ChangedAt, UpdatedBy: v.ChangedBy}
}

// VersionNotFound returns the *NotFoundError of a version of a record
// that is not kept or was never reached: `version "3" not found`.
func VersionNotFound(version int64) error {
	return &NotFoundError{Kind: "version", Name: strconv.FormatInt(version, 10)}
}

// Resealer rewrites a sealed credential value: it returns the new value
// and true, or the value as it is and false when it has nothing to do.
// Stores call it with the type and value of each credential state of a
// record (see Store.ResealRecord).
type Resealer func(t DataType, value json.RawMessage) (json.RawMessage, bool, error)

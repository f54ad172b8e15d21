package store

import (
	"encoding/json"
	"time"
)

// Record is a named value of a declared type inside a cluster. Its name
// is unique within its cluster.
type Record struct {
	ID   string
	Name string
	Type DataType
	// Value is the canonical JSON of the value (see DataType.ParseJSON).
	// For CREDENTIAL and []CREDENTIAL records it holds what the layer
	// above the store gave it, sealed or not; stores never interpret it.
	Value json.RawMessage
	// Version starts at 1 and grows by 1 on every update.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
	// UpdatedBy is who wrote the current state (Caller.ID() of the create
	// or of the last change); empty when not known (records written
	// before hds kept it).
	UpdatedBy string
}

// Clone returns a deep copy of r.
func (r *Record) Clone() *Record {
	c := *r
	c.Value = append(json.RawMessage(nil), r.Value...)
	return &c
}

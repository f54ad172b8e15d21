package handler

import (
	"encoding/json"
	"fmt"

	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/store"
)

// errNoCredentialKey refuses credential values when no key is configured.
var errNoCredentialKey = &store.ValidationError{
	Message: "no credential key is configured: CREDENTIAL and []CREDENTIAL records are disabled"}

// credentials seals credential values before they reach the store and
// opens them for reveal=true. A nil ring means no key is configured.
type credentials struct {
	ring Sealer
}

// seal turns the canonical plain value of a credential type into its
// sealed form for the record with id recordID. Other types pass through.
func (c credentials) seal(t store.DataType, recordID string, value json.RawMessage) (json.RawMessage, error) {
	if !t.IsCredential() {
		return value, nil
	}
	if c.ring == nil {
		return nil, errNoCredentialKey
	}
	return c.ring.SealValue(t, recordID, value)
}

// visible is the value as a response shows it: credentials masked (each
// element of a []CREDENTIAL) unless reveal is set, then opened. A value
// that does not open is an internal error (500), never shown.
func (c credentials) visible(r *store.Record, reveal bool) (json.RawMessage, error) {
	switch {
	case !r.Type.IsCredential():
		return r.Value, nil
	case !reveal:
		return sealing.MaskValue(r.Type, r.Value)
	case c.ring == nil:
		return nil, fmt.Errorf("record %s: a credential but no credential key is configured: %w", r.ID, sealing.ErrOpen)
	}
	return c.ring.OpenValue(r.Type, r.ID, r.Value)
}

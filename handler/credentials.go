package handler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/store"
)

// Mask is what a credential value looks like in a response without
// reveal=true.
const Mask = `"********"`

// errNoCredentialKey refuses credential values when no key is configured.
var errNoCredentialKey = &store.ValidationError{
	Message: "no credential key is configured: CREDENTIAL and []CREDENTIAL records are disabled"}

// credentials seals credential values before they reach the store and
// opens them for reveal=true. A nil ring means no key is configured.
type credentials struct {
	ring *sealing.Keyring
}

// aad binds a sealed value to its record (and, in an array, its index).
func aad(recordID string, index int) string {
	if index < 0 {
		return recordID
	}
	return recordID + "[" + strconv.Itoa(index) + "]"
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
	return mapStrings(t, value, func(i int, s string) (string, error) {
		return c.ring.Seal(aad(recordID, i), []byte(s)), nil
	})
}

// open returns the plain canonical value of a sealed credential value.
func (c credentials) open(r *store.Record) (json.RawMessage, error) {
	if c.ring == nil {
		return nil, fmt.Errorf("record %s: credential value but no credential key configured: %w", r.ID, sealing.ErrOpen)
	}
	return mapStrings(r.Type, r.Value, func(i int, s string) (string, error) {
		plain, err := c.ring.Open(aad(r.ID, i), s)
		if err != nil {
			return "", fmt.Errorf("record %s: %w", r.ID, err)
		}
		return string(plain), nil
	})
}

// visible is the value as a response shows it: credentials masked (each
// element of a []CREDENTIAL) unless reveal is set, then opened.
func (c credentials) visible(r *store.Record, reveal bool) (json.RawMessage, error) {
	switch {
	case !r.Type.IsCredential():
		return r.Value, nil
	case reveal:
		return c.open(r)
	}
	return mapStrings(r.Type, r.Value, func(int, string) (string, error) { return "********", nil })
}

// mapStrings applies f to the string of a CREDENTIAL value (index -1) or
// to each string of a []CREDENTIAL value, and returns the re-encoded
// value.
func mapStrings(t store.DataType, value json.RawMessage, f func(i int, s string) (string, error)) (json.RawMessage, error) {
	if !t.IsArray() {
		var s string
		if err := json.Unmarshal(value, &s); err != nil {
			return nil, fmt.Errorf("credential value is not a string: %w", err)
		}
		out, err := f(-1, s)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
	var elems []string
	if err := json.Unmarshal(value, &elems); err != nil {
		return nil, fmt.Errorf("credential array is not an array of strings: %w", err)
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, s := range elems {
		out, err := f(i, s)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		enc, _ := json.Marshal(out)
		b.Write(enc)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

package sealing

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/store"
)

// Masked is the text a credential value shows in a response without
// reveal=true.
const Masked = "********"

// aad binds a sealed value to its record and, in an array, its index.
func aad(recordID string, index int) string {
	if index < 0 {
		return recordID
	}
	return recordID + "[" + strconv.Itoa(index) + "]"
}

// SealValue turns the canonical plain value of a credential type (a JSON
// string, or an array of them) into its sealed form for the record
// recordID: each string sealed on its own. Other types pass through.
func (k *Keyring) SealValue(t store.DataType, recordID string, value json.RawMessage) (json.RawMessage, error) {
	if !t.IsCredential() {
		return value, nil
	}
	return mapStrings(t, value, func(i int, s string) (string, error) {
		return k.Seal(aad(recordID, i), []byte(s)), nil
	})
}

// OpenValue returns the plain canonical value of a sealed credential
// value. An error names the record but never the value.
func (k *Keyring) OpenValue(t store.DataType, recordID string, value json.RawMessage) (json.RawMessage, error) {
	if !t.IsCredential() {
		return value, nil
	}
	return mapStrings(t, value, func(i int, s string) (string, error) {
		plain, err := k.Open(aad(recordID, i), s)
		if err != nil {
			return "", fmt.Errorf("record %s: %w", recordID, err)
		}
		return string(plain), nil
	})
}

// ResealValue re-seals a sealed credential value under the primary key.
// It reports false, and returns value as it is, when every part was
// already sealed by the primary key.
func (k *Keyring) ResealValue(t store.DataType, recordID string, value json.RawMessage) (json.RawMessage, bool, error) {
	stale := false
	_, err := mapStrings(t, value, func(_ int, s string) (string, error) {
		stale = stale || !k.SealedByPrimary(s)
		return s, nil
	})
	if err != nil || !stale {
		return value, false, err
	}
	plain, err := k.OpenValue(t, recordID, value)
	if err != nil {
		return nil, false, err
	}
	sealed, err := k.SealValue(t, recordID, plain)
	return sealed, true, err
}

// MaskValue returns the value of a credential type as a response shows it
// without reveal=true: "********", or an array of as many of them.
func MaskValue(t store.DataType, value json.RawMessage) (json.RawMessage, error) {
	return mapStrings(t, value, func(int, string) (string, error) { return Masked, nil })
}

var errNotStrings = errors.New("sealing: a credential value is not a string or an array of strings")

// mapStrings applies f to the string of a CREDENTIAL value (index -1) or
// to each string of a []CREDENTIAL value, and returns the re-encoded
// value.
func mapStrings(t store.DataType, value json.RawMessage, f func(i int, s string) (string, error)) (json.RawMessage, error) {
	if !t.IsArray() {
		var s string
		if err := json.Unmarshal(value, &s); err != nil {
			return nil, errNotStrings
		}
		out, err := f(-1, s)
		if err != nil {
			return nil, err
		}
		return jsonstr.Append(nil, out), nil
	}
	var elems []string
	if err := json.Unmarshal(value, &elems); err != nil {
		return nil, errNotStrings
	}
	b := []byte{'['}
	for i, s := range elems {
		out, err := f(i, s)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, out)
	}
	return append(b, ']'), nil
}

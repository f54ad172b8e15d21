// Package sealing encrypts credential values above the store, so that no
// Store implementation ever sees their plain text. Each value is sealed
// with AES-256-GCM under a random nonce, with the record id as additional
// authenticated data (a sealed value copied onto another record does not
// open), and names the key that sealed it, so keys can rotate: the
// primary key seals, every key of the ring opens what it sealed.
//
// A sealed value is the text "hds1:" + key id + ":" + base64url(nonce ‖
// ciphertext ‖ tag).
package sealing

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeyBytes is the length of a key: AES-256.
const KeyBytes = 32

const prefix = "hds1:"

// ErrOpen reports a sealed value that does not open: tampered with, moved
// to another record, or sealed by a key not in the ring. It says nothing
// about the value.
var ErrOpen = errors.New("sealing: value does not open")

// Keyring seals with its primary key and opens with any of its keys. It
// is safe for concurrent use.
type Keyring struct {
	primary string // key id
	aeads   map[string]cipher.AEAD
}

// NewKeyring returns a ring whose primary key is primary; previous keys
// only open. Every key must be KeyBytes long.
func NewKeyring(primary []byte, previous ...[]byte) (*Keyring, error) {
	k := &Keyring{aeads: make(map[string]cipher.AEAD)}
	for i, key := range append([][]byte{primary}, previous...) {
		if len(key) != KeyBytes {
			return nil, fmt.Errorf("credential key %d must be %d bytes, got %d", i, KeyBytes, len(key))
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("credential key %d: %w", i, err)
		}
		aead, err := cipher.NewGCMWithRandomNonce(block)
		if err != nil {
			return nil, fmt.Errorf("credential key %d: %w", i, err)
		}
		id := KeyID(key)
		if i == 0 {
			k.primary = id
		}
		if _, dup := k.aeads[id]; !dup {
			k.aeads[id] = aead
		}
	}
	return k, nil
}

// KeyID names a key without revealing it: the first 8 bytes of a SHA-256
// of the key, in hex.
func KeyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("hds credential key id\x00"), key...))
	return hex.EncodeToString(sum[:8])
}

// Seal encrypts plain for the record with id recordID under the primary
// key.
func (k *Keyring) Seal(recordID string, plain []byte) string {
	ct := k.aeads[k.primary].Seal(nil, nil, plain, []byte(recordID))
	return prefix + k.primary + ":" + base64.RawURLEncoding.EncodeToString(ct)
}

// Open decrypts a value sealed for recordID by any key of the ring.
func (k *Keyring) Open(recordID, sealed string) ([]byte, error) {
	id, data, ok := split(sealed)
	if !ok {
		return nil, ErrOpen
	}
	aead, ok := k.aeads[id]
	if !ok {
		return nil, ErrOpen
	}
	ct, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil {
		return nil, ErrOpen
	}
	plain, err := aead.Open(nil, nil, ct, []byte(recordID))
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// SealedByPrimary reports whether sealed was sealed by the primary key, so
// that rotation can skip it.
func (k *Keyring) SealedByPrimary(sealed string) bool {
	id, _, ok := split(sealed)
	return ok && id == k.primary
}

func split(sealed string) (id, data string, ok bool) {
	rest, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ":")
}

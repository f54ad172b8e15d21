package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"strings"
)

// API tokens (docs/api.md#sharing-and-api-tokens) are "hds_" followed by
// APITokenChars random base62 characters (about 256 bits, from
// crypto/rand). Only their SHA-256 is stored: with that much randomness a
// slow hash adds nothing.
const (
	APITokenPrefix = "hds_"
	APITokenChars  = 43
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewAPIToken returns a new API token string and its hash.
func NewAPIToken() (token string, hash []byte, err error) {
	b := make([]byte, 0, len(APITokenPrefix)+APITokenChars)
	b = append(b, APITokenPrefix...)
	var buf [64]byte
	for len(b) < cap(b) {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", nil, err
		}
		for _, c := range buf {
			// 248 = 4*62: rejecting the bytes above keeps every character
			// equally likely.
			if c < 248 && len(b) < cap(b) {
				b = append(b, base62[c%62])
			}
		}
	}
	token = string(b)
	h := sha256.Sum256(b)
	return token, h[:], nil
}

// IsAPIToken reports whether a bearer token is meant as an API token (it
// has the prefix), well formed or not.
func IsAPIToken(raw string) bool { return strings.HasPrefix(raw, APITokenPrefix) }

// HashAPIToken returns the hash of a well-formed API token string, and
// false for anything else (a wrong length or alphabet), which cannot be a
// token and needs no lookup.
func HashAPIToken(raw string) ([]byte, bool) {
	if len(raw) != len(APITokenPrefix)+APITokenChars || !IsAPIToken(raw) {
		return nil, false
	}
	for i := len(APITokenPrefix); i < len(raw); i++ {
		if strings.IndexByte(base62, raw[i]) < 0 {
			return nil, false
		}
	}
	h := sha256.Sum256([]byte(raw))
	return h[:], true
}

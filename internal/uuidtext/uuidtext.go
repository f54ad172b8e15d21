// Package uuidtext writes the canonical text of a UUID: the one encoder
// behind store.NewID and the record ids the memory store keeps as 16
// bytes.
package uuidtext

import "encoding/hex"

// Append appends the canonical text of the UUID b (8-4-4-4-12
// lowercase hex) to dst.
func Append(dst []byte, b [16]byte) []byte {
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return append(dst, s[:]...)
}

// Package jsonstr appends a Go string to a buffer as a JSON string, byte
// for byte as encoding/json writes it with HTML escaping off
// (Encoder.SetEscapeHTML(false)): the one string encoder of the hand-written
// JSON in handler, store and sealing. jsonstr_test.go holds it to
// encoding/json for every string.
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s to b as a quoted JSON string and returns the extended
// buffer. It escapes '"' and '\\'; \b, \f, \n, \r and \t by their short
// forms; the other bytes below U+0020 as \u00XX; U+2028 and U+2029 as
// \u2028 and \u2029; and writes each byte of invalid UTF-8 as \ufffd.
// '<', '>' and '&' are written as they are.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

package handler

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/store"
)

// The hot responses (records, record lists, cluster data) are encoded by
// appending to a pooled buffer: no reflection and no allocation per
// record, which is where encoding/json spent most of a list's time.

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooled keeps very large buffers out of the pool.
const maxPooled = 1 << 20

// writeJSON writes the success envelope around the JSON that fill appends.
func writeJSON(w http.ResponseWriter, status int, message string, fill func([]byte) ([]byte, error)) error {
	bp := bufPool.Get().(*[]byte)
	b := append((*bp)[:0], `{"success":true,"data":`...)
	b, err := fill(b)
	if err == nil {
		b = append(b, `,"message":`...)
		b = appendString(b, message)
		b = append(b, "}\n"...)
		envelope.WriteRaw(w, status, b)
	}
	if cap(b) <= maxPooled {
		*bp = b
		bufPool.Put(bp)
	}
	return err
}

// appendRecord appends the JSON of a record with the given (masked or
// revealed) value.
func appendRecord(b []byte, r *store.Record, value json.RawMessage) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, r.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, r.Name)
	b = append(b, `,"type":`...)
	b = appendString(b, string(r.Type))
	b = append(b, `,"value":`...)
	b = append(b, value...)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, r.Version, 10)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, r.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, r.UpdatedAt)
	return append(b, '}')
}

// appendTime appends t as the API formats timestamps, quoted.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timeLayout)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does
// (without HTML escaping): quotes, backslashes, control characters,
// U+2028 and U+2029, and invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
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
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

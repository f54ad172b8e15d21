package store

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"github.com/hds-go/hds/internal/uuidtext"
)

// idState makes ids generated in the same millisecond sort in order
// (RFC 9562 section 6.2, method 1: rand_a holds a counter).
var idState struct {
	sync.Mutex
	ms  int64
	seq uint16
}

// NewID returns a new UUID version 7 in lowercase canonical form. Ids made
// by one process sort by creation time, even within one millisecond.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		panic("store: crypto/rand failed: " + err.Error())
	}
	idState.Lock()
	ms := time.Now().UnixMilli()
	if ms <= idState.ms {
		idState.seq++
		if idState.seq > 0x0fff { // counter overflow: borrow the next millisecond
			idState.ms++
			idState.seq = 0
		}
		ms = idState.ms
	} else {
		idState.ms = ms
		idState.seq = binary.BigEndian.Uint16(b[6:8]) & 0x07ff // leave room to count up
	}
	seq := idState.seq
	idState.Unlock()

	b[0] = byte(ms >> 40)
	b[1] = byte(ms >> 32)
	b[2] = byte(ms >> 24)
	b[3] = byte(ms >> 16)
	b[4] = byte(ms >> 8)
	b[5] = byte(ms)
	b[6] = 0x70 | byte(seq>>8)&0x0f
	b[7] = byte(seq)
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

func formatUUID(b [16]byte) string {
	var s [36]byte
	return string(uuidtext.Append(s[:0], b))
}

// CanonicalUUID reports whether s is a UUID in 8-4-4-4-12 hex form (any
// case) and returns it in lowercase.
func CanonicalUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	out := []byte(s)
	for i, c := range out {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
			continue
		}
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			out[i] = c + ('a' - 'A')
		default:
			return "", false
		}
	}
	return string(out), true
}

package middleware

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/hds-go/hds/internal/reqinfo"
)

// RequestIDHeader is the header that carries the request id both ways.
const RequestIDHeader = "X-Request-ID"

// RequestID gives each request an id: the client's X-Request-ID when it
// is 1 to 128 printable ASCII characters, a new random one otherwise. The
// id is echoed in the response header and recorded for the log line. It
// also starts the request's reqinfo, so it must run first.
func RequestID() func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := firstHeader(r.Header, canonicalRequestID)
			if !validRequestID(id) {
				id = newRequestID()
			}
			w.Header()[canonicalRequestID] = []string{id}
			info := &reqinfo.Info{RequestID: id}
			next.ServeHTTP(w, r.WithContext(reqinfo.NewContext(r.Context(), info)))
		})
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// requestIDs makes ids unique across processes and cheap to make: a
// random per-process prefix and a counter. They need not be
// unpredictable, only distinct.
var requestIDs = struct {
	prefix string
	n      atomic.Uint64
}{prefix: func() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b[:]) + "-"
}()}

func newRequestID() string {
	var buf [40]byte
	b := append(buf[:0], requestIDs.prefix...)
	return string(strconv.AppendUint(b, requestIDs.n.Add(1), 10))
}

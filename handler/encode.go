package handler

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
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
		b = jsonstr.Append(b, message)
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
	b = appendRecordHead(b, r)
	b = append(b, value...)
	return appendRecordTail(b, r)
}

// appendRecordHead appends the JSON of a record up to its value.
func appendRecordHead(b []byte, r *store.Record) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, r.ID)
	b = append(b, `,"name":`...)
	b = jsonstr.Append(b, r.Name)
	b = append(b, `,"type":`...)
	b = jsonstr.Append(b, string(r.Type))
	return append(b, `,"value":`...)
}

// appendRecordTail appends the JSON of a record after its value.
func appendRecordTail(b []byte, r *store.Record) []byte {
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
	b = appendTimeText(b, t)
	return append(b, '"')
}

// appendTimeText appends t in timeLayout. The layout is fixed, so the
// digits are written directly: a list of 100 records formats 200
// timestamps, and time.Time.AppendFormat, which interprets its layout on
// every call, was most of a list's encoding time. Years outside 0-9999,
// which the fixed layout cannot hold, go through AppendFormat.
func appendTimeText(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, timeLayout)
	}
	hour, minute, second := t.Clock()
	micro := t.Nanosecond() / 1000
	return append(b,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+second/10), byte('0'+second%10), '.',
		byte('0'+micro/100000), byte('0'+micro/10000%10), byte('0'+micro/1000%10),
		byte('0'+micro/100%10), byte('0'+micro/10%10), byte('0'+micro%10), 'Z')
}

// answerWriter writes a success envelope as it is made, a chunk at a
// time, for answers that grow with the request (batches, imports): its
// data is appended to b, which more writes out once it holds a chunk.
type answerWriter struct {
	bw *bufio.Writer
	b  []byte
}

// startAnswer sends the status and the envelope's head.
func startAnswer(w http.ResponseWriter, r *http.Request, status int) *answerWriter {
	envelope.SetContentType(w.Header())
	w.WriteHeader(status)
	a := &answerWriter{bw: bufio.NewWriterSize(progressWriter{w, r}, chunkBytes), b: make([]byte, 0, 2*chunkBytes)}
	a.b = append(a.b, `{"success":true,"data":`...)
	return a
}

// more writes the buffer out once it holds a chunk.
func (a *answerWriter) more() {
	if len(a.b) >= chunkBytes {
		_, _ = a.bw.Write(a.b) // a write error shows at Flush
		a.b = a.b[:0]
	}
}

// end closes the envelope with message and flushes it.
func (a *answerWriter) end(message string) {
	a.b = append(a.b, `,"message":`...)
	a.b = jsonstr.Append(a.b, message)
	a.b = append(a.b, "}\n"...)
	_, _ = a.bw.Write(a.b)
	_ = a.bw.Flush() // the client went away
}

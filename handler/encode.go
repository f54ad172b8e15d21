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
	sec := t.Unix()
	if sec < firstSecond || sec > lastSecond {
		return t.UTC().AppendFormat(b, timeLayout)
	}
	// The civil date of the day, counted from 0000-03-01 (years that
	// start in March put the leap day last), as in Howard Hinnant's
	// civil_from_days; sec is at least firstSecond, so every
	// division is of a number not below 0.
	days := (sec - firstSecond) / 86400
	daySec := int((sec - firstSecond) % 86400)
	era := days / 146097
	doe := days - era*146097                               // day of the 400-year era
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of the era
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of the March year
	mp := (5*doy + 2) / 153                                // month, March being 0
	day := int(doy - (153*mp+2)/5 + 1)
	month, year := int(mp)+3, int(era*400+yoe)
	if month > 12 {
		month, year = month-12, year+1
	}
	hour, minute, second := daySec/3600, daySec/60%60, daySec%60
	micro := t.Nanosecond() / 1000
	// Written into an array, then appended at once: appending its 27
	// bytes one by one costs as much again.
	var text [27]byte
	put2(text[0:2], year/100)
	put2(text[2:4], year%100)
	put2(text[5:7], month)
	put2(text[8:10], day)
	put2(text[11:13], hour)
	put2(text[14:16], minute)
	put2(text[17:19], second)
	put2(text[20:22], micro/10000)
	put2(text[22:24], micro/100%100)
	put2(text[24:26], micro%100)
	text[4], text[7], text[10], text[13], text[16], text[19], text[26] = '-', '-', 'T', ':', ':', '.', 'Z'
	return append(b, text[:]...)
}

// put2 writes the two digits of n, 0 to 99, to dst.
func put2(dst []byte, n int) {
	_ = dst[1]
	dst[0], dst[1] = digitPairs[2*n], digitPairs[2*n+1]
}

// firstSecond and lastSecond are the Unix seconds of 0000-03-01T00:00:00Z
// and 9999-12-31T23:59:59Z: appendTimeText writes the instants between
// itself. (January and February of year 0 go through AppendFormat.)
const (
	firstSecond = -62162035200
	lastSecond  = 253402300799
)

// digitPairs holds "00" to "99": the two digits of n are
// digitPairs[2*n] and digitPairs[2*n+1].
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

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

package handler

import (
	"iter"
	"net/http"
	"strconv"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// Lists, cluster data and history are written to the client as they are
// read (docs/api.md#limits-rate-limits-and-quotas): items are appended to
// a pooled buffer that is written out whenever it holds chunkBytes, and a
// value of chunkBytes or more goes to the client straight from where it is,
// never copied into the buffer. A response therefore holds at most about
// chunkBytes plus one item, whatever the size of the list, and no store
// lock is held while it is written (see store.Streamer).
//
// Each chunk moves the response's write deadline one write timeout ahead
// (progress), so that a slow reader of a big answer is cut only when it
// stops reading.
//
// Until the first chunk is written nothing has gone to the client, so a
// failure (a credential that does not open, a store error) is still
// answered with its error envelope. A failure after that can no longer
// change the status: the response is aborted (http.ErrAbortHandler), so
// that the client sees a broken response rather than a short list that
// looks complete, and the cause is kept for the log.

// chunkBytes is how much of a response is gathered before it is written.
const chunkBytes = 32 << 10

// stream writes one success envelope in chunks.
type stream struct {
	w      http.ResponseWriter
	r      *http.Request
	status int
	bp     *[]byte
	b      []byte
	sent   bool // the status line went out: errors can no longer be answered
	gone   bool // a write failed: the client went away
}

// newStream starts the success envelope of a streamed response; data
// follows.
func newStream(w http.ResponseWriter, r *http.Request, status int) *stream {
	bp := bufPool.Get().(*[]byte)
	s := &stream{w: w, r: r, status: status, bp: bp}
	s.b = append((*bp)[:0], `{"success":true,"data":`...)
	return s
}

// flush writes what the buffer holds, with the status line first.
func (s *stream) flush() {
	if !s.sent {
		envelope.SetContentType(s.w.Header())
		s.w.WriteHeader(s.status)
		s.sent = true
	}
	if len(s.b) > 0 && !s.gone {
		s.progress()
		if _, err := s.w.Write(s.b); err != nil {
			s.gone = true
		}
	}
	s.b = s.b[:0]
}

// progress moves the write deadline of the response (the server's
// WriteTimeout, server.write_timeout in the example) to a whole
// WriteTimeout from now before each chunk: a streamed answer may take as
// long as it needs while its client keeps reading, and a client that
// stops reading is still cut one WriteTimeout after it stopped.
func (s *stream) progress() { extendWriteDeadline(s.w, s.r) }

// extendWriteDeadline moves the write deadline of the response w to r to
// a whole WriteTimeout of its server from now (see progress).
func extendWriteDeadline(w http.ResponseWriter, r *http.Request) {
	srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
	if !ok || srv.WriteTimeout <= 0 {
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(srv.WriteTimeout)) // ErrNotSupported: as it was
}

// progressWriter writes to a response, moving its write deadline ahead
// before each write (see progress).
type progressWriter struct {
	w http.ResponseWriter
	r *http.Request
}

func (pw progressWriter) Write(b []byte) (int, error) {
	extendWriteDeadline(pw.w, pw.r)
	return pw.w.Write(b)
}

// more writes the buffer out once it holds a chunk, and reports whether
// the client is still there to read more.
func (s *stream) more() bool {
	if len(s.b) >= chunkBytes {
		s.flush()
	}
	return !s.gone
}

// value appends v, a JSON value: a large one is written to the client as
// it is, never copied.
func (s *stream) value(v []byte) {
	if len(v) < chunkBytes {
		s.b = append(s.b, v...)
		return
	}
	s.flush()
	if !s.gone {
		s.progress()
		if _, err := s.w.Write(v); err != nil {
			s.gone = true
		}
	}
}

// end closes the envelope with message and writes what remains.
func (s *stream) end(message string) {
	s.b = append(s.b, `,"message":`...)
	s.b = jsonstr.Append(s.b, message)
	s.b = append(s.b, "}\n"...)
	s.flush()
	s.release()
}

// fail answers err: with its error envelope when nothing was sent yet,
// else by aborting the response (the cause goes to the log).
func (s *stream) fail(err error) {
	s.release()
	if !s.sent {
		s.w.Header().Del("ETag") // the tag named the answer that failed
		envelope.Error(s.w, s.r, err)
		return
	}
	reqinfo.From(s.r.Context()).Err = err
	panic(http.ErrAbortHandler)
}

// release returns the buffer to the pool.
func (s *stream) release() {
	if s.bp == nil {
		return
	}
	if cap(s.b) <= maxPooled {
		*s.bp = s.b
		bufPool.Put(s.bp)
	}
	s.bp, s.b = nil, nil
}

// streamPage answers a list page (docs/api.md#list-queries) with the
// items as items yields them, each appended by add; a failure of either is
// answered by fail. With a cursor function, items may yield one item
// more than q.Limit (the store was asked for it): it is not listed, and
// tells that the page has a next one, whose cursor next makes from the
// last item listed; the page then ends with next_cursor.
func streamPage[T any](w http.ResponseWriter, r *http.Request, total int, q store.ListQuery,
	items iter.Seq2[T, error], add func(*stream, T) error, next func(T) string) {
	out := newStream(w, r, http.StatusOK)
	out.b = append(out.b, `{"items":[`...)
	var last T
	n, more := 0, false
	page := func(yield func(T, error) bool) {
		for it, err := range items {
			if err == nil && next != nil && n == q.Limit {
				more = true
				return
			}
			n++
			last = it
			if !yield(it, err) {
				return
			}
		}
	}
	if streamItems(out, page, add) {
		out.b = pageEnd(out.b, total, q)
		if next != nil {
			out.b = append(out.b, `,"next_cursor":`...)
			if more {
				out.b = jsonstr.Append(out.b, next(last))
			} else {
				out.b = append(out.b, "null"...)
			}
		}
		out.b = append(out.b, '}')
		out.end("OK")
	}
}

// streamItems appends to s what items yields, comma-separated, each by
// add, until the client goes away. It reports false when it failed (fail
// answered the request).
func streamItems[T any](s *stream, items iter.Seq2[T, error], add func(*stream, T) error) bool {
	first := true
	for it, err := range items {
		if !first {
			s.b = append(s.b, ',')
		}
		if err == nil {
			err = add(s, it)
		}
		if err != nil {
			s.fail(err)
			return false
		}
		if !s.more() {
			break
		}
		first = false
	}
	return true
}

// pageEnd appends the members of a list page after its items, but for
// the closing brace; total is null when q asked for no count.
func pageEnd(b []byte, total int, q store.ListQuery) []byte {
	b = append(b, `],"total":`...)
	if q.NoCount {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(total), 10)
	}
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(q.Limit), 10)
	b = append(b, `,"offset":`...)
	return strconv.AppendInt(b, int64(q.Offset), 10)
}

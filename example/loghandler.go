package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// lineHandler is slog.NewTextHandler(w, nil), line for line and byte for
// byte, with a shorter path for the records the server logs most: the
// one line per request (hds's request log: strings, an int and a
// duration). Such a record, with no attribute groups and only string,
// int64 and duration values, is written here; anything else is handed
// to the text handler itself. The request line through slog's text
// handler was about 8% of the server's CPU on a single-record GET
// (docs/performance.md), much of it in the generic walk over the
// attributes, which this skips. TestLineHandlerMatchesText holds the two
// outputs equal.
type lineHandler struct {
	text *slog.TextHandler
	w    io.Writer
}

// newLineHandler returns a lineHandler writing to w. w must be safe for
// concurrent use and take each line whole in one Write, as logWriter
// does: unlike the text handler, lineHandler holds no lock of its own.
func newLineHandler(w io.Writer) *lineHandler {
	return &lineHandler{text: slog.NewTextHandler(w, nil), w: w}
}

// Enabled implements slog.Handler: the text handler's levels.
func (h *lineHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.text.Enabled(ctx, l)
}

// WithAttrs implements slog.Handler: such a logger is the text
// handler's.
func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler { return h.text.WithAttrs(attrs) }

// WithGroup implements slog.Handler: such a logger is the text
// handler's.
func (h *lineHandler) WithGroup(name string) slog.Handler { return h.text.WithGroup(name) }

// lineBufs recycles the lines' buffers.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Handle implements slog.Handler. The line is built in one pass over
// the attributes; the first that is not one Handle writes itself (an
// empty key, a kind other than string, int64 and duration) hands the
// whole record to the text handler instead, before anything is written.
func (h *lineHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Time.IsZero() {
		return h.text.Handle(ctx, r)
	}
	bp := lineBufs.Get().(*[]byte)
	b := append((*bp)[:0], "time="...)
	b = appendRFC3339Millis(b, r.Time.Round(0))
	b = append(b, " level="...)
	b = appendText(b, r.Level.String())
	b = append(b, " msg="...)
	b = appendText(b, r.Message)
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		v := a.Value
		k := v.Kind()
		if a.Key == "" || (k != slog.KindString && k != slog.KindInt64 && k != slog.KindDuration) {
			plain = false
			return false
		}
		b = append(b, ' ')
		b = appendText(b, a.Key)
		b = append(b, '=')
		switch k {
		case slog.KindString:
			b = appendText(b, v.String())
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		default:
			b = append(b, v.Duration().String()...)
		}
		return true
	})
	var err error
	if plain {
		b = append(b, '\n')
		_, err = h.w.Write(b)
	}
	if cap(b) <= 64<<10 {
		*bp = b
		lineBufs.Put(bp)
	}
	if !plain {
		return h.text.Handle(ctx, r)
	}
	return err
}

// appendRFC3339Millis is the text handler's time: RFC 3339 to the
// millisecond, always three digits.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the 4th digit
}

// appendText appends s as the text handler writes a string: as it is,
// or quoted (strconv.Quote) when it is empty or holds a space, '=', '"',
// a control character or anything not printable.
func appendText(b []byte, s string) []byte {
	plain, ascii := textPlain(s)
	switch {
	case plain:
		return append(b, s...)
	case ascii: // printable ASCII: strconv.Quote adds the quotes only
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	default:
		return strconv.AppendQuote(b, s)
	}
}

// Byte classes of textPlain.
const (
	bytePlain   = iota // written as it is, quoted or not
	byteSpace          // ' ' or '=': s is quoted, the byte is not escaped
	byteEscaped        // a control byte or '"': quoted and escaped
	byteSlash          // '\\' or DEL: not quoted for it, escaped in quotes
	byteWide           // the start of a multi-byte character
)

// byteClass is the class of every byte.
var byteClass = func() (c [256]uint8) {
	for i := range c {
		switch b := byte(i); {
		case b >= utf8.RuneSelf:
			c[i] = byteWide
		case b < 0x20 || b == '"':
			c[i] = byteEscaped
		case b == ' ' || b == '=':
			c[i] = byteSpace
		case b == '\\' || b == 0x7f:
			c[i] = byteSlash
		}
	}
	return c
}()

// textPlain reports whether s needs no quoting (the text handler's
// needsQuoting, negated) and, when it does, whether quoting it is only
// adding the quotes: s is printable ASCII without '"' or '\\'.
func textPlain(s string) (plain, ascii bool) {
	if s == "" {
		return false, true
	}
	plain, ascii = true, true
	for i := 0; i < len(s); {
		c := byteClass[s[i]]
		if c == bytePlain { // most bytes: one test, before the switch
			i++
			continue
		}
		switch c {
		case byteSpace:
			plain = false
		case byteEscaped:
			return false, false
		case byteSlash:
			ascii = false
		case byteWide:
			ascii = false
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
				return false, false
			}
			i += size
			continue
		}
		i++
	}
	return plain, ascii
}

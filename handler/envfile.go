package handler

import (
	"iter"
	"net/http"
	"strconv"
	"strings"

	"github.com/hds-go/hds/internal/resolve"
	"github.com/hds-go/hds/store"
)

// The environment file of a cluster, GET K?format=env
// (docs/api.md#environment-files): one line NAME='value' per record whose
// name is an environment variable name, sorted by name byte-wise, in POSIX
// shell single quotes, so that `set -a; . ./file` loads every value byte
// for byte.

// envContentType is the Content-Type of an environment file.
const envContentType = "text/plain; charset=utf-8"

// skippedRecordsHeader is the response header of an environment file that
// counts the records whose names are not environment variable names.
const skippedRecordsHeader = "X-Hds-Skipped-Records"

// formatEnv is the only value of the format query parameter of GET K.
const formatEnv = "env"

// isEnvName reports whether name is an environment variable name as an
// environment file writes it: [A-Za-z_][A-Za-z0-9_]*.
func isEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// appendEnvLine appends NAME='text' and a newline; a single quote in
// text ends the quoted string, is written escaped (\') and opens a new
// one.
func appendEnvLine(b []byte, name, text string) []byte {
	b = append(b, name...)
	b = append(b, '=', '\'')
	for {
		i := strings.IndexByte(text, '\'')
		if i < 0 {
			break
		}
		b = append(b, text[:i]...)
		b = append(b, `'\''`...)
		text = text[i+1:]
	}
	b = append(b, text...)
	return append(b, '\'', '\n')
}

// envBuffered is how much of an environment file is gathered before it
// is written: a file that fits is answered from one reading of the
// cluster.
const envBuffered = 1 << 20

// writeEnvFile answers the environment file of the cluster at p,
// credentials revealed or masked, from items (its records, as the caller
// started reading them after checking the access), as they are read
// (store.Streamer): the response never holds more than
// envBuffered bytes, whatever the size of the cluster. The header counting
// the skipped records comes before the lines, so a file larger than
// envBuffered is read twice: once to count, once to write (a record
// created, renamed or deleted in between may make the count differ from
// the lines by that record). A failure before anything was written is
// answered with its error envelope; after that, the response is aborted
// (see stream.go).
//
// With resolved, items are the records read at once with their references
// resolved (resolve.go): the second pass walks them again instead of
// reading the store.
func (rec records) writeEnvFile(w http.ResponseWriter, r *http.Request, items iter.Seq2[*store.Record, error], p store.Path, reveal, resolved bool) {
	out := &stream{w: w, r: r, bp: bufPool.Get().(*[]byte)}
	out.b = (*out.bp)[:0]
	skipped, whole := 0, true
	for it, err := range items {
		if err == nil && !isEnvName(it.Name) {
			skipped++
			continue
		}
		if err == nil && whole {
			out.b, err = rec.appendEnv(out.b, it, reveal)
			whole = len(out.b) <= envBuffered
		}
		if err != nil {
			out.fail(err)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", envContentType)
	h.Set(skippedRecordsHeader, strconv.Itoa(skipped))
	if whole {
		out.sent = true
		w.WriteHeader(http.StatusOK)
		out.flush()
		out.release()
		return
	}
	out.b = out.b[:0]
	var err error
	if !resolved {
		_, items, err = store.StreamClusterRecords(r.Context(), rec.store, p)
	}
	if err != nil {
		h.Del(skippedRecordsHeader)
		out.fail(err)
		return
	}
	out.sent = true
	w.WriteHeader(http.StatusOK)
	for it, err := range items {
		if err == nil && isEnvName(it.Name) {
			out.b, err = rec.appendEnv(out.b, it, reveal)
		}
		if err != nil {
			out.fail(err)
			return
		}
		if !out.more() {
			break
		}
	}
	out.flush()
	out.release()
}

// appendEnv appends the line of the record it, whose name is an
// environment variable name.
func (rec records) appendEnv(b []byte, it *store.Record, reveal bool) ([]byte, error) {
	v, err := rec.creds.visible(it, reveal)
	if err != nil {
		return b, err
	}
	text, err := resolve.Text(it.Type, v)
	if err != nil {
		return b, err
	}
	return appendEnvLine(b, it.Name, text), nil
}

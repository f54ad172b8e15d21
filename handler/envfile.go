package handler

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hds-go/hds/store"
)

// The environment file of a cluster, GET K?format=env (API.md section 18):
// one line NAME='value' per record whose name is an environment variable
// name, sorted by name byte-wise, in POSIX shell single quotes, so that
// `set -a; . ./file` loads every value byte for byte.

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

// envText returns the text an environment file gives a value of type t
// as a response shows it (masked or revealed): the canonical text, arrays
// as compact JSON, NULL empty.
func envText(t store.DataType, value json.RawMessage) (string, error) {
	switch {
	case t == store.Null:
		return "", nil
	case t.IsArray():
		var b bytes.Buffer
		if err := json.Compact(&b, value); err != nil {
			return "", err
		}
		return b.String(), nil
	case len(value) > 0 && value[0] == '"':
		var s string
		err := json.Unmarshal(value, &s)
		return s, err
	}
	// INTEGER, FLOAT and BOOLEAN: their JSON is their canonical text.
	return string(value), nil
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

// writeEnvFile writes the environment file of k's records, credentials
// revealed or masked.
func (rec records) writeEnvFile(w http.ResponseWriter, k *store.Cluster, reveal bool) error {
	items := k.Records
	byName := func(a, b *store.Record) int { return strings.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(items, byName) {
		items = slices.SortedFunc(slices.Values(items), byName)
	}
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:0]
	skipped := 0
	var err error
	for _, it := range items {
		if !isEnvName(it.Name) {
			skipped++
			continue
		}
		var v json.RawMessage
		if v, err = rec.creds.visible(it, reveal); err != nil {
			break
		}
		var text string
		if text, err = envText(it.Type, v); err != nil {
			break
		}
		b = appendEnvLine(b, it.Name, text)
	}
	if err == nil {
		h := w.Header()
		h.Set("Content-Type", envContentType)
		h.Set(skippedRecordsHeader, strconv.Itoa(skipped))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b) // the client went away
	}
	if cap(b) <= maxPooled {
		*bp = b
		bufPool.Put(bp)
	}
	return err
}

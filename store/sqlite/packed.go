package sqlite

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/hds-go/hds/store"
)

// A page of records is read as one text column a record (packedRecord)
// rather than eight: the driver hands each column over as a value of its
// own (a string or an integer, each boxed in an interface), some twenty
// allocations a record, where the packed one makes five (the text, its
// box, the record, its value and the copy of its short fields).

// packedRecord is the one column of hds_records as r that
// scanPacked reads: the version, the two times and the byte lengths of
// the id, name, type and updated_by, in decimal, each followed by a
// comma, then those four texts and the value, one after the other.
// (Concatenation rather than printf: SQLite's printf costs as much as
// the rest of the row.)
const packedRecord = `r.version || ',' || r.created_at || ',' || r.updated_at || ',' || octet_length(r.id) || ',' ||
	octet_length(r.name) || ',' || octet_length(r.type) || ',' || octet_length(r.updated_by) || ',' ||
	r.id || r.name || r.type || r.updated_by || r.value`

// errPacked reports a packedRecord text that is not one.
var errPacked = errors.New("sqlite: malformed packed record")

// scanPacked reads a record from its packedRecord text.
func scanPacked(s string) (*store.Record, error) {
	var n [7]int64
	for i := range n {
		end := strings.IndexByte(s, ',')
		if end < 0 {
			return nil, errPacked
		}
		v, err := strconv.ParseInt(s[:end], 10, 64)
		if err != nil {
			return nil, errPacked
		}
		n[i], s = v, s[end+1:]
	}
	short := int(n[3] + n[4] + n[5] + n[6])
	if n[3] < 0 || n[4] < 0 || n[5] < 0 || n[6] < 0 || short > len(s) {
		return nil, errPacked
	}
	// The short fields are copied out of the text, so that they do not
	// keep its value alive: the record holds its value's own copy.
	head := strings.Clone(s[:short])
	r := &store.Record{Version: n[0], CreatedAt: fromMicros(n[1]), UpdatedAt: fromMicros(n[2]),
		Value: json.RawMessage(s[short:])}
	at := 0
	field := func(l int64) string {
		f := head[at : at+int(l)]
		at += int(l)
		return f
	}
	r.ID, r.Name, r.Type, r.UpdatedBy = field(n[3]), field(n[4]), store.DataType(field(n[5])), field(n[6])
	return r, nil
}

// eachPacked calls f with each record a query of packedRecord returns.
func (t *tx) eachPacked(query string, args []any, f func(*store.Record) error) error {
	rows, err := t.rows(query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var s string
	for rows.Next() {
		if err := rows.Scan(&s); err != nil {
			return err
		}
		r, err := scanPacked(s)
		if err != nil {
			return err
		}
		if err := f(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

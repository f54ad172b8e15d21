package sqlite

import (
	"database/sql/driver"
	"strings"
	"unicode/utf8"

	sqlite "modernc.org/sqlite"

	"github.com/hds-go/hds/store"
)

// Big values are not copied into the indexes (migration 0007, issue 38:
// the file at most 3 times what the quota counts). vkey and rkey hold at
// most keyPrefix bytes: a longer key is cut there. A key is longer than
// keyPrefix only when it is a group byte followed by the record's text
// (vtext): two keys cut alike are then ordered by their texts, which
// hold the rest (keyTail). The order of a key column is thus the order
// of (the cut key, its tail); the indexes hold the cut key, and the
// tail breaks its ties (cutOrder). vtext_lower is kept only for texts of
// at most longTextChars characters (those hds_records_text holds): the longer
// ones are lower-cased when a valueContains reads them (hds_contains).
// hds_records_vtext, which value= reads, indexes the first keyPrefix
// characters of the text.

// keyPrefix is the most bytes of vkey and rkey stored (migration 0007).
const keyPrefix = 64

// cutKey returns key as stored (cut to keyPrefix bytes) and its tail:
// the text when the key was cut or is keyPrefix long, else "".
func cutKey(key []byte, text string) ([]byte, string) {
	if len(key) < keyPrefix {
		return key, ""
	}
	return key[:keyPrefix], text
}

// keyTail is the SQL expression of the tail of the key column col of
// hds_records as r (r.vkey or r.rkey): never NULL.
func keyTail(col string) string {
	return "CASE WHEN length(" + strings.TrimPrefix(col, "+") + ") >= 64 THEN r.vtext ELSE '' END"
}

// keptLower returns the lower-cased text vtext_lower holds: nil for a
// text longer than longTextChars characters.
func keptLower(text string) any {
	l := lower(text)
	if utf8.RuneCountInString(l) > longTextChars {
		return nil
	}
	return l
}

// longTextChars is the longest text, in characters, hds_records_text
// holds (migration 0003).
const longTextChars = 4096

// lowerText is the SQL expression of the lower-cased text of a record of
// hds_records as alias, for a substring filter: vtext_lower, or the text
// lower-cased as it is read.
func lowerText(alias string) string {
	return "coalesce(" + alias + ".vtext_lower, hds_lower(" + alias + ".vtext))"
}

func init() {
	// hds_lower(text) is strings.ToLower, as the *_lower columns are
	// computed: for the long texts whose vtext_lower is not kept.
	sqlite.MustRegisterDeterministicScalarFunction("hds_lower", 1,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case string:
				return lower(v), nil
			case []byte:
				return lower(string(v)), nil
			}
			return nil, nil
		})
}

// cutBound adds to l the condition that the key column col is
// within the bound key (whose text is text): at least it when min, else
// at most it, in the full key's order.
func (l *list) cutBound(col string, full []byte, text string, min bool) {
	key, tail := cutKey(full, text)
	op, strict := ">=", ">"
	if !min {
		op, strict = "<=", "<"
	}
	l.cond(col+" "+op+" ? AND ("+col+" "+strict+" ? OR "+keyTail(col)+" "+op+" ?)", key, key, tail)
}

// afterCut adds q's cursor for a list sorted by the key column col:
// only the rows after the position, whose key is full and text text,
// in the order of (key, tail) then name and id ascending.
func (l *list) afterCut(q store.ListQuery, col string, full []byte, text string) {
	key, tail := cutKey(full, text)
	pos, t := q.After, keyTail(col)
	if !q.Desc {
		l.cond(col+" >= ? AND ("+col+" > ? OR ("+t+", r.name, r.id) > (?, ?, ?))", key, key, tail, pos.Name, pos.ID)
		return
	}
	l.cond(col+" <= ? AND ("+col+" < ? OR "+t+" < ? OR ("+t+" = ? AND (r.name, r.id) > (?, ?)))",
		key, key, tail, tail, pos.Name, pos.ID)
}

// cutOrder is the ORDER BY, LIMIT and OFFSET of a list sorted by the key
// column col: exact, the tail breaking the ties of cut keys when exact,
// else in the order of the indexes, (cut key, name, id).
func cutOrder(q store.ListQuery, col string, exact bool) (string, []any) {
	dir := ""
	if q.Desc {
		dir = " DESC"
	}
	order := " ORDER BY " + col + dir
	if exact {
		order += ", " + keyTail(col) + dir
	}
	return order + ", r.name, r.id LIMIT ? OFFSET ?", []any{q.Limit, q.Offset}
}

// pageKeys returns the stored key of col (r.vkey or r.rkey) of each
// record of a page of type t (rkey: the list's type).
func pageKeys(items []*store.Record, col string, t store.DataType) [][]byte {
	keys := make([][]byte, len(items))
	for i, r := range items {
		k := store.KeyOf(r.Type, r.Value)
		full := vkey(k)
		if col == "r.rkey" {
			full = rkey(t, k)
		}
		keys[i], _ = cutKey(full, "")
	}
	return keys
}

// cutTies reports whether a page read in the indexes' order may differ
// from the exact order: two of its records share a cut key (one of
// keyPrefix bytes), or its first or last record has one that another
// record of the cluster shares (found by shared).
func cutTies(keys [][]byte, shared func(key []byte, except int) (bool, error)) (bool, error) {
	for i, k := range keys {
		if len(k) < keyPrefix {
			continue
		}
		if i > 0 && string(keys[i-1]) == string(k) {
			return true, nil
		}
		if i == 0 || i == len(keys)-1 {
			ok, err := shared(k, i)
			if ok || err != nil {
				return ok, err
			}
		}
	}
	return false, nil
}

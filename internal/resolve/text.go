package resolve

import (
	"bytes"
	"encoding/json"

	"github.com/hds-go/hds/store"
)

// Text returns the text of a value of type t, as a reference to it yields
// and as an environment file writes it (docs/api.md#environment-files):
// the canonical text, arrays as compact JSON, NULL empty. A credential's
// value must be opened first.
func Text(t store.DataType, value json.RawMessage) (string, error) {
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

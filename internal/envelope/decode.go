package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Decode reads a JSON object body into dst, a pointer to a struct whose
// fields carry json tags. It reports false, and leaves dst alone, when the
// body is empty. Field names must match the tags exactly (encoding/json
// alone would match them case-insensitively); unknown fields, malformed
// JSON, a body that is not an object, or trailing data are 400
// INVALID_REQUEST; a non-empty body whose Content-Type is not
// application/json is 415; a body over the limit set by the body-limit
// middleware is 413.
func Decode(r *http.Request, dst any) (bool, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return false, TooLarge(tooBig.Limit)
		}
		return false, BadRequest("the request body could not be read")
	}
	if len(body) == 0 {
		return false, nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false, &RequestError{Status: http.StatusUnsupportedMediaType, Message: "Unsupported media type",
			Details: "request bodies must be sent as Content-Type: application/json"}
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return false, nil
	}
	if err := DecodeJSON(body, dst, "the request body"); err != nil {
		return false, BadRequest(err.Error())
	}
	return true, nil
}

// DecodeJSON is the one strict JSON decoder of the module, used for
// request bodies and for the standalone example's configuration file. It
// decodes data, which must be one JSON object, into dst, a pointer to a
// struct. Keys must match a field's json tag exactly, at every depth
// (nested structs, and the structs inside slices and maps): encoding/json
// alone would match them in any case and ignore unknown ones. The text
// must be valid UTF-8 without unpaired surrogate escapes, which
// encoding/json would quietly turn into U+FFFD. what names the text in
// messages ("the request body"). The error, a *JSONError, never quotes
// the text, which may hold secrets.
func DecodeJSON(data []byte, dst any, what string) error {
	if data = bytes.TrimSpace(data); len(data) == 0 || data[0] != '{' {
		return &JSONError{Problem: what + " must be a JSON object"}
	}
	if !utf8.Valid(data) {
		return &JSONError{Problem: what + " is not valid UTF-8"}
	}
	if HasLoneSurrogate(data) {
		return &JSONError{Problem: what + ` holds an unpaired UTF-16 surrogate escape (\uD800 to \uDFFF)`}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return &JSONError{Problem: "malformed JSON: " + jsonProblem(err, what)}
	}
	if err := checkObject(obj, reflect.TypeOf(dst).Elem(), ""); err != nil {
		return err
	}
	if err := json.Unmarshal(data, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return &JSONError{Field: typeErr.Field, Problem: "must be " + kindName(typeErr.Type)}
		}
		return &JSONError{Problem: "malformed JSON: " + jsonProblem(err, what)}
	}
	return nil
}

// JSONError is a problem DecodeJSON found. Field, when set, is the dotted
// path of the key concerned ("security.jwt_secret", "users[0].password").
type JSONError struct {
	Field   string
	Problem string
}

// Error returns the problem, naming the field when there is one.
func (e *JSONError) Error() string {
	switch {
	case e.Field == "":
		return e.Problem
	case e.Problem == "unknown":
		return fmt.Sprintf("unknown field %q", e.Field)
	}
	return fmt.Sprintf("field %q %s", e.Field, e.Problem)
}

// checkKeys reports the first key of the JSON text raw that is not a
// field of t, by its path. It looks only inside values whose type holds a
// struct, so a large value of a plain type costs nothing here.
func checkKeys(raw json.RawMessage, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !holdsStruct(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil // a type error, reported by the decoding into dst
		}
		return checkObject(obj, t, path)
	case reflect.Slice, reflect.Array:
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil {
			return nil
		}
		for i, e := range arr {
			if err := checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := checkKeys(obj[k], t.Elem(), joinPath(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkObject checks the keys of obj, a JSON object decoded one level
// deep, against the fields of the struct type t.
func checkObject(obj map[string]json.RawMessage, t reflect.Type, path string) error {
	known := fieldTypes(t)
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		ft, ok := known[k]
		if !ok {
			return &JSONError{Field: joinPath(path, k), Problem: "unknown"}
		}
		if err := checkKeys(obj[k], ft, joinPath(path, k)); err != nil {
			return err
		}
	}
	return nil
}

// holdsStruct reports whether values of t may hold JSON objects decoded
// into struct fields, whose keys checkKeys checks.
func holdsStruct(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Slice, reflect.Array, reflect.Map:
		return holdsStruct(t.Elem())
	}
	return false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// HasLoneSurrogate reports whether a JSON text has a \uD800-\uDFFF escape
// that is not part of a high-low surrogate pair: DecodeJSON refuses it.
func HasLoneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			continue
		}
		if b[i+1] != 'u' {
			i++ // an escaped character: skip it
			continue
		}
		r := hex4(b[i+2:])
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if low := hex4(b[i+8:]); low >= 0xDC00 && low <= 0xDFFF {
					i += 11
					continue
				}
			}
			return true
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		}
		i += 5
	}
	return false
}

// hex4 reads four hex digits, or returns -1.
func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	n := 0
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			n = n*16 + int(c-'0')
		case 'a' <= c && c <= 'f':
			n = n*16 + int(c-'a'+10)
		case 'A' <= c && c <= 'F':
			n = n*16 + int(c-'A'+10)
		default:
			return -1
		}
	}
	return n
}

// TooLarge is the 413 error for a body over limit bytes.
func TooLarge(limit int64) *RequestError {
	return &RequestError{Status: http.StatusRequestEntityTooLarge, Message: "Request body too large",
		Details: fmt.Sprintf("the request body must not exceed %d bytes", limit)}
}

// jsonProblem describes a syntax error without echoing the text, which
// may hold a secret.
func jsonProblem(err error, what string) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	}
	return what + " is not valid JSON"
}

// kindName says what JSON value a Go type takes.
func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// fieldTypes returns the JSON names of the fields of the struct type t,
// each with its type: the json tag's name, or the Go name of an exported
// field without one.
func fieldTypes(t reflect.Type) map[string]reflect.Type {
	if names, ok := fieldCache.Load(t); ok {
		return names.(map[string]reflect.Type)
	}
	names := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = f.Type
	}
	fieldCache.Store(t, names)
	return names
}

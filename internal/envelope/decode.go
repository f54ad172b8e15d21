package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
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
	if body[0] != '{' {
		return false, BadRequest("the request body must be a JSON object")
	}
	// encoding/json would quietly turn both into U+FFFD; JSON text must be
	// UTF-8, and a name or value must arrive as sent or not at all.
	if !utf8.Valid(body) {
		return false, BadRequest("the request body is not valid UTF-8")
	}
	if hasLoneSurrogate(body) {
		return false, BadRequest(`the request body holds an unpaired UTF-16 surrogate escape (\uD800 to \uDFFF)`)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return false, BadRequest("malformed JSON: " + jsonProblem(err))
	}
	known := fieldNames(reflect.TypeOf(dst))
	for name := range fields {
		if _, ok := known[name]; !ok {
			return false, BadRequest(fmt.Sprintf("unknown field %q", name))
		}
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return false, BadRequest(fmt.Sprintf("field %q must be a %s", typeErr.Field, jsonKind(typeErr.Type)))
		}
		return false, BadRequest("malformed JSON: " + jsonProblem(err))
	}
	return true, nil
}

// hasLoneSurrogate reports whether a JSON text has a \uD800-\uDFFF escape
// that is not part of a high-low surrogate pair.
func hasLoneSurrogate(b []byte) bool {
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

// jsonProblem describes a syntax error without echoing the body, which may
// hold a secret.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	}
	return "the body is not valid JSON"
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "number"
}

var fieldCache sync.Map // reflect.Type -> map[string]struct{}

// fieldNames returns the JSON names of the fields of the struct *T.
func fieldNames(t reflect.Type) map[string]struct{} {
	if names, ok := fieldCache.Load(t); ok {
		return names.(map[string]struct{})
	}
	st := t.Elem()
	names := make(map[string]struct{}, st.NumField())
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names[name] = struct{}{}
		}
	}
	fieldCache.Store(t, names)
	return names
}

package handler

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/store"
)

// Record history (API.md section 14): GET R/versions, GET R?version=N
// (records.handleGet) and POST R/restore.

// parseVersion reads a version number: a positive decimal integer, digits
// only, so that 0, -1, +1, 1.0, 1e3 and abc are 400.
func parseVersion(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "" || s[0] < '0' || s[0] > '9' || n < 1 {
		return 0, envelope.BadRequest("version must be a positive decimal integer (digits only, at most 9223372036854775807)")
	}
	return n, nil
}

// parsePage reads limit and offset as section 5 does; the history list
// ignores every other list parameter.
func parsePage(v url.Values) (store.ListQuery, error) {
	q := store.NewListQuery()
	var err error
	if v.Has("limit") {
		if q.Limit, err = decimal(v.Get("limit"), "limit"); err == nil && (q.Limit < 1 || q.Limit > store.MaxLimit) {
			err = envelope.BadRequest("limit must be between 1 and 1000")
		}
		if err != nil {
			return q, err
		}
	}
	if v.Has("offset") {
		if q.Offset, err = decimal(v.Get("offset"), "offset"); err != nil {
			return q, err
		}
	}
	return q, nil
}

// handleVersions serves GET R/versions: the record's states, newest first,
// credential values masked unless reveal=true.
func (rec records) handleVersions() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		q, err := parsePage(query)
		var reveal bool
		if err == nil {
			reveal, err = parseReveal(query)
		}
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		items, total, err := rec.store.FindRecordVersions(r.Context(), pathOf(r), q)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		err = writeJSON(w, http.StatusOK, "OK", func(b []byte) ([]byte, error) {
			b = append(b, `{"items":[`...)
			for i, it := range items {
				if i > 0 {
					b = append(b, ',')
				}
				v, err := rec.creds.visible(&store.Record{ID: it.RecordID, Type: it.Type, Value: it.Value}, reveal)
				if err != nil {
					return b, err
				}
				b = appendVersion(b, it, v)
			}
			b = append(b, `],"total":`...)
			b = strconv.AppendInt(b, int64(total), 10)
			b = append(b, `,"limit":`...)
			b = strconv.AppendInt(b, int64(q.Limit), 10)
			b = append(b, `,"offset":`...)
			b = strconv.AppendInt(b, int64(q.Offset), 10)
			return append(b, '}'), nil
		})
		if err != nil {
			envelope.Error(w, r, err)
		}
	}
}

// appendVersion appends the JSON of one state of a record with the given
// (masked or revealed) value. An unknown author is null.
func appendVersion(b []byte, v *store.RecordVersion, value json.RawMessage) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, v.Version, 10)
	b = append(b, `,"name":`...)
	b = jsonstr.Append(b, v.Name)
	b = append(b, `,"type":`...)
	b = jsonstr.Append(b, string(v.Type))
	b = append(b, `,"value":`...)
	b = append(b, value...)
	b = append(b, `,"changed_at":`...)
	b = appendTime(b, v.ChangedAt)
	b = append(b, `,"changed_by":`...)
	if v.ChangedBy == "" {
		b = append(b, "null"...)
	} else {
		b = jsonstr.Append(b, v.ChangedBy)
	}
	return append(b, '}')
}

// restoreBody is the body form of POST R/restore.
type restoreBody struct {
	Version json.RawMessage `json:"version"`
}

// handleRestore serves POST R/restore: ?version=N or {"version": N} (not
// both, not neither) makes that version's type and value current again as
// a new version, under If-Match like PUT R.
func (rec records) handleRestore() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		version, err := readRestoreVersion(r, query)
		var reveal bool
		if err == nil {
			reveal, err = parseReveal(query)
		}
		var cw conditionalWrite
		if err == nil {
			cw, err = rec.pre.writeOf(r)
		}
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		restored, err := rec.store.RestoreRecord(r.Context(), pathOf(r), version, cw.Write)
		if err != nil {
			cw.fail(w, r, err)
			return
		}
		rec.respond(w, r, http.StatusOK, restored, reveal, "Record restored")
	}
}

// readRestoreVersion reads the version to restore from the body or the
// query string; exactly one of them must give it.
func readRestoreVersion(r *http.Request, query url.Values) (int64, error) {
	var body restoreBody
	present, err := envelope.Decode(r, &body)
	switch {
	case err != nil:
		return 0, err
	case present && query.Has("version"):
		return 0, envelope.BadRequest("a JSON body cannot be combined with the query parameter version: use either")
	case present && body.Version == nil:
		return 0, envelope.BadRequest(`the field "version" is required`)
	case present:
		return parseVersion(string(body.Version))
	case !query.Has("version"):
		return 0, envelope.BadRequest(`the version to restore is required: ?version=N or a body {"version": N}`)
	}
	return parseVersion(query.Get("version"))
}

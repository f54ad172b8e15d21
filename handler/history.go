package handler

import (
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/store"
)

// Record history (docs/api.md#concurrency-control-and-record-history):
// GET R/versions, GET R?version=N (records.handleGet) and POST R/restore.

// parseVersion reads a version number: a positive decimal integer, digits
// only, so that 0, -1, +1, 1.0, 1e3 and abc are 400.
func parseVersion(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "" || s[0] < '0' || s[0] > '9' || n < 1 {
		return 0, envelope.BadRequest("version must be a positive decimal integer (digits only, at most 9223372036854775807)")
	}
	return n, nil
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
			rec.rejectRevealing(w, r, query, err)
			return
		}
		total, items, err := store.StreamRecordVersions(r.Context(), rec.store, rec.revealing(pathOf(r), reveal), q)
		if err == nil && reveal && rec.audit != nil {
			var stop func()
			items, stop, err = rec.revealVersions(r, q, items)
			defer stop()
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		streamPage(w, r, total, q, items, func(out *stream, it *store.RecordVersion) error {
			v, err := rec.creds.visible(&store.Record{ID: it.RecordID, Type: it.Type, Value: it.Value}, reveal)
			if err != nil {
				return err
			}
			out.b = appendVersionHead(out.b, it)
			out.value(v)
			out.b = appendVersionTail(out.b, it)
			return nil
		}, nil)
	}
}

// revealVersions writes the credential.reveal entry of a history read
// with reveal=true, before any value leaves. The entry names the record
// as it is now, not a version of it. On the first page the first state
// is the current one (store.Store.FindRecordVersions), so it gives the
// record's id and name and the store is not asked again; a later page
// holds older states, whose name may have changed since, so the record
// is looked up. It returns the states to stream and a stop to defer.
func (rec records) revealVersions(r *http.Request, q store.ListQuery, items iter.Seq2[*store.RecordVersion, error]) (iter.Seq2[*store.RecordVersion, error], func(), error) {
	p := pathOf(r)
	stop := func() {}
	if q.Offset == 0 {
		var next func() (*store.RecordVersion, error, bool)
		next, stop = iter.Pull2(items)
		first, err, ok := next()
		if err != nil {
			return nil, stop, err
		}
		if ok {
			err := rec.revealed(r, true, p, &store.Record{ID: first.RecordID, Name: first.Name})
			return func(yield func(*store.RecordVersion, error) bool) {
				if !yield(first, nil) {
					return
				}
				for {
					v, err, ok := next()
					if !ok || !yield(v, err) {
						return
					}
				}
			}, stop, err
		}
		items = store.Items[*store.RecordVersion](nil) // nothing left to stream
	}
	cur, err := rec.store.FindRecord(r.Context(), p)
	if err == nil {
		err = rec.revealed(r, true, p, &store.Record{ID: cur.ID, Name: cur.Name})
	}
	return items, stop, err
}

// appendVersionHead appends the JSON of one state of a record up to its
// (masked or revealed) value; appendVersionTail the rest. An unknown
// author is null.
func appendVersionHead(b []byte, v *store.RecordVersion) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, v.Version, 10)
	b = append(b, `,"name":`...)
	b = jsonstr.Append(b, v.Name)
	b = append(b, `,"type":`...)
	b = jsonstr.Append(b, string(v.Type))
	return append(b, `,"value":`...)
}

// appendVersionTail appends the JSON of a state after its value.
func appendVersionTail(b []byte, v *store.RecordVersion) []byte {
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
		restored, err := rec.store.RestoreRecord(r.Context(), rec.revealing(pathOf(r), reveal), version, cw.Write)
		if err != nil {
			cw.fail(w, r, err)
			return
		}
		rec.respondWrite(w, r, http.StatusOK, restored, reveal, "Record restored")
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

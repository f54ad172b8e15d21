package handler

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"slices"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/internal/resolve"
	"github.com/hds-go/hds/store"
)

// records serves the record routes and the cluster data route.
type records struct {
	store   store.Store
	creds   credentials
	pre     preconditions
	cursors cursors
	// audit records the reveals of credentials; nil when the store keeps
	// no audit log.
	audit store.AuditLog
	// clusterTags: the store keeps store.Cluster.State, so GET K carries
	// the cluster's tag (docs/api.md#cluster-tags).
	clusterTags bool
	// maxResolved bounds the resolved text of an answer (Config.MaxResolvedBytes).
	maxResolved int64
	// keepAutomatic is how many automatic snapshots a project keeps
	// (Config.KeepAutomaticSnapshots, keepAutomatic); 0: promotes take
	// none.
	keepAutomatic int
}

// DefaultMaxResolvedBytes is the default of Config.MaxResolvedBytes, 16 MiB.
const DefaultMaxResolvedBytes = resolve.DefaultMaxResolvedBytes

// revealed records, when reveal is set, that the request returns
// credential plain text under p (docs/api.md#18-audit-log-and-change-feed):
// one credential.reveal entry per request, naming the record got (nil for
// the levels of p, down to its cluster), and one more for each credential
// record whose value it revealed through references
// (docs/api.md#20-references-between-records). It runs before anything is
// sent, so that no plain text leaves without its entries.
func (rec records) revealed(r *http.Request, reveal bool, p store.Path, got *store.Record, through ...resolve.Revealed) error {
	if !reveal || rec.audit == nil {
		return nil
	}
	also := make([]store.RevealedRecord, len(through))
	for i, t := range through {
		also[i] = store.RevealedRecord{Collection: t.Collection, Cluster: t.Cluster, Record: t.Record}
	}
	return rec.audit.RecordReveal(r.Context(), p, got, also...)
}

// respond writes one record, its value masked or revealed, with its
// entity tag.
func (rec records) respond(w http.ResponseWriter, r *http.Request, status int, got *store.Record, reveal bool, message string) {
	rec.respondTagged(w, r, status, got, got.ETag(), reveal, message)
}

// respondTagged is respond with the entity tag given.
func (rec records) respondTagged(w http.ResponseWriter, r *http.Request, status int, got *store.Record, tag string, reveal bool, message string) {
	w.Header().Set("ETag", tag)
	err := writeJSON(w, status, message, func(b []byte) ([]byte, error) {
		v, err := rec.creds.visible(got, reveal)
		return appendRecord(b, got, v), err
	})
	if err != nil {
		envelope.Error(w, r, err)
	}
}

// respondWrite is respond for the answer to a write (create, update,
// restore): with reveal set, the reveal gets its own credential.reveal
// entry, after the change's, before the plain text leaves. The change is
// made: should that entry fail, the answer stays masked rather than fail.
func (rec records) respondWrite(w http.ResponseWriter, r *http.Request, status int, got *store.Record, reveal bool, message string) {
	if reveal {
		if err := rec.revealed(r, reveal, pathOf(r), got); err != nil {
			slog.ErrorContext(r.Context(), "the reveal's audit entry failed: the answer is masked", "err", err)
			reveal = false
		}
	}
	rec.respond(w, r, status, got, reveal, message)
}

// recordBody is the body of the record routes.
type recordBody struct {
	Name  *string         `json:"name"`
	Type  *string         `json:"type"`
	Value json.RawMessage `json:"value"`
}

// recordInput is a record request in either form: the JSON body or the
// query parameters.
type recordInput struct {
	name, typ       string
	hasName, hasTyp bool
	rawValue        json.RawMessage // the body form's value (nil when left out)
	textValue       string          // the query form's value
	hasValue        bool
	fromBody        bool
}

// readRecordInput reads the record fields from the body or, when there is
// none, from the query parameters rename (as the name), type and value.
func readRecordInput(r *http.Request, query url.Values) (recordInput, error) {
	var body recordBody
	present, err := decodeBody(r, query, &body)
	if err != nil {
		return recordInput{}, err
	}
	if present {
		in := recordInput{fromBody: true, rawValue: body.Value, hasValue: body.Value != nil}
		if body.Name != nil {
			in.name, in.hasName = *body.Name, true
		}
		if body.Type != nil {
			in.typ, in.hasTyp = *body.Type, true
		}
		return in, nil
	}
	return recordInput{
		name: query.Get("rename"), hasName: query.Has("rename"),
		typ: query.Get("type"), hasTyp: query.Has("type"),
		textValue: query.Get("value"), hasValue: query.Has("value"),
	}, nil
}

// parseValue checks the input's value against t and returns it in
// canonical form, sealed for the record recordID when t is a credential
// type. A value left out is null.
func (rec records) parseValue(in recordInput, t store.DataType, recordID string) (json.RawMessage, error) {
	if t.IsCredential() && rec.creds.ring == nil {
		return nil, errNoCredentialKey
	}
	var v json.RawMessage
	var err error
	if in.fromBody {
		v, err = t.ParseJSON(in.rawValue)
	} else {
		v, err = t.ParseText(in.textValue, in.hasValue)
	}
	if err != nil {
		return nil, err
	}
	return rec.creds.seal(t, recordID, v)
}

// handleCreate serves POST R (path form, the name in the path) and, with
// nameInBody, POST K/records with {"name", "type", "value"}.
func (rec records) handleCreate(nameInBody bool) queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		p := pathOf(r)
		in, err := readRecordInput(r, query)
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		if nameInBody {
			in.hasName = in.hasName && in.fromBody
			p.Record = in.name
		}
		reveal, err := parseReveal(query)
		switch {
		case err != nil:
		case nameInBody && !in.hasName:
			err = envelope.BadRequest(`the field "name" is required`)
		case !nameInBody && in.fromBody && in.hasName && in.name != p.Record:
			err = envelope.BadRequest("the body's name differs from the name in the path")
		case !in.hasTyp:
			err = envelope.BadRequest(`the record type is required: "type" in the body or ?type=`)
		}
		var nr *store.Record
		if err == nil {
			nr, err = rec.newRecord(in, p.Record)
		}
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		created, err := rec.store.CreateRecord(r.Context(), revealing(p, reveal), nr, store.Write{})
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		rec.respondWrite(w, r, http.StatusCreated, created, reveal, "Record created")
	}
}

// newRecord checks the input of a create (POST R, POST K/records, a
// batch's create or upsert), whose type is given, and returns the record
// to create under name. Its id is chosen here so that a credential is
// sealed to it before the store sees it.
func (rec records) newRecord(in recordInput, name string) (*store.Record, error) {
	if err := store.ValidateName(name); err != nil {
		return nil, err
	}
	t, err := store.ParseType(in.typ)
	if err != nil {
		return nil, err
	}
	id := store.NewID()
	v, err := rec.parseValue(in, t, id)
	if err != nil {
		return nil, err
	}
	return &store.Record{ID: id, Type: t, Value: v}, nil
}

// checkUpdate checks the input of an update (PUT R, a batch's update)
// before the store: something to change, a valid new name, a known type,
// which it returns parsed.
func checkUpdate(in recordInput) (store.DataType, error) {
	var t store.DataType
	var err error
	switch {
	case !in.hasName && !in.hasTyp && !in.hasValue:
		err = envelope.BadRequest(`nothing to update: give a value, a type or a new name`)
	case in.hasName:
		err = store.ValidateName(in.name)
	}
	if err == nil && in.hasTyp {
		t, err = store.ParseType(in.typ)
	}
	return t, err
}

// handleGet serves GET R: the current record, or with ?version=N the
// record as it was at version N; 304 when If-None-Match matches its tag.
func (rec records) handleGet() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		reveal, err := parseReveal(query)
		var resolving bool
		if err == nil {
			resolving, err = parseResolve(query)
		}
		var version int64
		if err == nil && query.Has("version") {
			version, err = parseVersion(query.Get("version"))
			if err == nil && resolving {
				err = errResolveVersion
			}
		}
		var inm entityTags
		if err == nil {
			inm, err = parseEntityTags(r.Header, "If-None-Match")
		}
		if err != nil {
			rejectRevealing(w, r, rec.store, query, err)
			return
		}
		var got *store.Record
		if p := revealing(pathOf(r), reveal); version > 0 {
			got, err = rec.store.FindRecordVersion(r.Context(), p, version)
		} else {
			got, err = rec.store.FindRecord(r.Context(), p)
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		shown, tag := got, got.ETag()
		var through []resolve.Revealed
		if resolving {
			rv := rec.newResolver(r.Context(), revealing(pathOf(r), reveal), reveal)
			if err := rv.Resolve([]*store.Record{got}); err != nil {
				envelope.Error(w, r, resolveFailure(err))
				return
			}
			shown, tag, through = rv.Shown(got), recordTag(rv, got), rv.Revealed()
		}
		if notModified(w, inm, tag) {
			return
		}
		if err := rec.revealed(r, reveal, pathOf(r), got, through...); err != nil {
			envelope.Error(w, r, err)
			return
		}
		rec.respondTagged(w, r, http.StatusOK, shown, tag, reveal, "OK")
	}
}

// handleUpdate serves PUT R: any of value, type and a new name, applied
// together or not at all.
func (rec records) handleUpdate() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		p := pathOf(r)
		in, err := readRecordInput(r, query)
		var reveal bool
		if err == nil {
			reveal, err = parseReveal(query)
		}
		var newType store.DataType
		if err == nil {
			newType, err = checkUpdate(in)
		}
		var cw conditionalWrite
		if err == nil {
			cw, err = rec.pre.writeOf(r)
		}
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		var unchanged *store.Record
		update := rec.updater(in, newType)
		updated, err := rec.store.UpdateRecord(r.Context(), revealing(p, reveal), cw.Write, func(cur *store.Record) error {
			err := update(cur)
			if errors.Is(err, store.ErrUnchanged) {
				unchanged = cur
			}
			return err
		})
		if errors.Is(err, store.ErrUnchanged) {
			// The store returned before checking the condition: check it
			// on the state read under its lock.
			updated, err = unchanged, cw.Check(unchanged)
		}
		if err != nil {
			cw.fail(w, r, err)
			return
		}
		rec.respondWrite(w, r, http.StatusOK, updated, reveal, "Record updated")
	}
}

// updater returns the update of a record by in (PUT R, and a batch's
// update): any of a new value, type and name, checked together against
// the current record. A rename alone to the current name changes
// nothing (store.ErrUnchanged). newType is in's type, parsed.
func (rec records) updater(in recordInput, newType store.DataType) func(*store.Record) error {
	renameOnly := in.hasName && !in.hasTyp && !in.hasValue
	return func(cur *store.Record) error {
		if renameOnly && cur.Name == in.name {
			// A rename to the current name is a no-op: no new version.
			return store.ErrUnchanged
		}
		t := cur.Type
		if in.hasTyp {
			t = newType
		}
		switch {
		case in.hasValue:
			v, err := rec.parseValue(in, t, cur.ID)
			if err != nil {
				return err
			}
			cur.Value = v
		case in.hasTyp && cur.Type.IsCredential() && !t.IsCredential():
			return &store.ValidationError{Message: "changing a credential record to a non-credential type needs a new value"}
		case in.hasTyp && t != cur.Type:
			v, err := t.ParseJSON(cur.Value)
			if err != nil {
				return &store.ValidationError{Message: "the current value does not fit the new type: " + err.Error()}
			}
			if cur.Value, err = rec.creds.seal(t, cur.ID, v); err != nil {
				return err
			}
		}
		cur.Type = t
		if in.hasName {
			cur.Name = in.name
		}
		return nil
	}
}

func (rec records) handleDelete() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		cw, err := rec.pre.writeOf(r)
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		if err := rec.store.DeleteRecord(r.Context(), pathOf(r), cw.Write); err != nil {
			cw.fail(w, r, err)
			return
		}
		envelope.NoContent(w)
	}
}

func (rec records) handleList() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		q, err := parseRecordQuery(query)
		var reveal, resolving bool
		if err == nil {
			reveal, err = parseReveal(query)
		}
		if err == nil {
			resolving, err = parseResolve(query)
		}
		p := pathOf(r)
		var lc *listCursor
		if err == nil {
			lc, err = rec.cursors.open(query, &q.ListQuery, []string{"records", p.Project, p.Collection, p.Cluster}, recordFilters(q)...)
		}
		if err != nil {
			rejectRevealing(w, r, rec.store, query, err)
			return
		}
		lc.recoverText(&q.ListQuery, func(id string) *store.Record {
			at := p
			at.Record = id
			got, _ := rec.store.FindRecord(r.Context(), at)
			return got
		})
		sq := q
		sq.Limit++ // one more, to tell whether there is a next page
		total, items, err := store.StreamRecords(r.Context(), rec.store, revealing(p, reveal), sq)
		var rv *resolve.Resolver
		if err == nil && resolving {
			items, rv, err = rec.resolvePage(r.Context(), revealing(p, reveal), reveal, items, q.Limit)
		}
		var through []resolve.Revealed
		if rv != nil {
			through = rv.Revealed()
		}
		if err == nil {
			err = rec.revealed(r, reveal, p, nil, through...)
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		streamPage(w, r, total, q.ListQuery, items, func(out *stream, it *store.Record) error {
			show := it
			if rv != nil {
				// The page keeps the stored values: cursors are built
				// from them.
				show = rv.Shown(it)
			}
			v, err := rec.creds.visible(show, reveal)
			if err != nil {
				return err
			}
			out.b = appendRecordHead(out.b, it)
			out.value(v)
			out.b = appendRecordTail(out.b, it)
			return nil
		}, func(last *store.Record) string { return lc.next(store.RecordAt(q.SortBy, last)) })
	}
}

// recordFilters are the record filters of q as a cursor binds them.
func recordFilters(q store.RecordQuery) []string {
	f := []string{string(q.Type), "", "", q.ValueContains, "", ""}
	if q.HasValue {
		f[1], f[2] = "=", q.Value
	}
	if q.Min != nil {
		f[4] = "min " + q.Min.Text
	}
	if q.Max != nil {
		f[5] = "max " + q.Max.Text
	}
	return f
}

// handleClusterData serves GET K: the cluster with every record's value,
// streamed as it is read, or with ?format=env its environment file
// (envfile.go). Both carry the cluster's tag (docs/api.md#cluster-tags),
// read with the cluster before its records, so that it never names a
// state newer than the answer; 304 when If-None-Match matches it.
func (rec records) handleClusterData() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		reveal, err := parseReveal(query)
		var resolving, types bool
		if err == nil {
			resolving, err = parseResolve(query)
		}
		if err == nil {
			types, err = parseBool(query, "types")
		}
		env := query.Has("format")
		if err == nil && env && query.Get("format") != formatEnv {
			err = envelope.BadRequest("format must be env")
		}
		var inm entityTags
		if err == nil {
			inm, err = parseEntityTags(r.Header, "If-None-Match")
		}
		if err != nil {
			rejectRevealing(w, r, rec.store, query, err)
			return
		}
		p := revealing(pathOf(r), reveal)
		var k *store.Cluster
		var items iter.Seq2[*store.Record, error]
		var tag string
		var through []resolve.Revealed
		if resolving {
			// Every record is read and resolved before the first byte
			// (the first pass): a reference that does not resolve, or an
			// answer too large, fails the whole request.
			k, err = rec.store.FindCluster(r.Context(), p, true)
			var rv *resolve.Resolver
			if err == nil {
				rv, err = rec.resolveCluster(r.Context(), p, reveal, k, env)
			}
			if err == nil {
				tag, through = clusterTag(rv, k), rv.Revealed()
				items, k.Records = shownItems(rv, k.Records), nil
			}
		} else {
			k, items, err = store.StreamClusterRecords(r.Context(), rec.store, p)
			if err == nil {
				tag = k.ETag()
			}
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		if !rec.clusterTags {
			tag = "" // no tag rather than one that would not change
		}
		if tag != "" && notModified(w, inm, tag) {
			return
		}
		if err := rec.revealed(r, reveal, pathOf(r), nil, through...); err != nil {
			envelope.Error(w, r, err)
			return
		}
		if tag != "" {
			w.Header().Set("ETag", tag)
		}
		if env {
			rec.writeEnvFile(w, r, items, p, reveal, resolving)
			return
		}
		out := newStream(w, r, http.StatusOK)
		out.b = appendCluster(out.b, k)
		out.b = append(out.b, `,"data":{`...)
		// With types=true the type of every record follows the data:
		// kept as the records stream by (a name and a type each, not
		// their values).
		var typeOf []nameType
		ok := streamItems(out, items, func(out *stream, it *store.Record) error {
			v, err := rec.creds.visible(it, reveal)
			if err != nil {
				return err
			}
			out.b = jsonstr.Append(out.b, it.Name)
			out.b = append(out.b, ':')
			out.value(v)
			if types {
				typeOf = append(typeOf, nameType{it.Name, string(it.Type)})
			}
			return nil
		})
		if !ok {
			return
		}
		out.b = append(out.b, '}')
		if types {
			out.b = append(out.b, `,"types":{`...)
			for i, nt := range typeOf {
				if i > 0 {
					out.b = append(out.b, ',')
				}
				out.b = jsonstr.Append(out.b, nt.name)
				out.b = append(out.b, ':')
				out.b = jsonstr.Append(out.b, nt.typ)
				if !out.more() {
					return
				}
			}
			out.b = append(out.b, '}')
		}
		out.b = append(out.b, '}')
		out.end("OK")
	}
}

// nameType is a record's name and type name, as GET K?types=true lists
// them.
type nameType struct{ name, typ string }

// resolvePage reads items (a page of the records of the cluster of p)
// and resolves them (the first pass): it returns them as they are, in a
// sequence again, and the resolver that shows them resolved. Only the
// first limit records are resolved: the one after them only tells
// whether there is a next page.
func (rec records) resolvePage(ctx context.Context, p store.Path, reveal bool, items iter.Seq2[*store.Record, error], limit int) (iter.Seq2[*store.Record, error], *resolve.Resolver, error) {
	var page []*store.Record
	for it, err := range items {
		if err != nil {
			return nil, nil, err
		}
		page = append(page, it)
	}
	rv := rec.newResolver(ctx, p, reveal)
	if err := rv.Resolve(page[:min(len(page), limit)]); err != nil {
		return nil, nil, resolveFailure(err)
	}
	return store.Items(page), rv, nil
}

// resolveCluster resolves the references of k's records (read with its
// records). With envOnly, records that the environment file skips are
// not resolved: the records their references reach are only noted, so
// that the environment file and the JSON form have the same tag whenever
// both answer.
func (rec records) resolveCluster(ctx context.Context, p store.Path, reveal bool, k *store.Cluster, envOnly bool) (*resolve.Resolver, error) {
	rv := rec.newResolver(ctx, p, reveal)
	rv.Seed(k.Records)
	answer, skipped := k.Records, []*store.Record(nil)
	if envOnly {
		answer = make([]*store.Record, 0, len(k.Records))
		for _, it := range k.Records {
			if isEnvName(it.Name) {
				answer = append(answer, it)
			} else {
				skipped = append(skipped, it)
			}
		}
	}
	if err := rv.Resolve(answer); err != nil {
		return nil, resolveFailure(err)
	}
	for _, it := range skipped {
		if err := rv.Reach(it); err != nil {
			return nil, err
		}
	}
	return rv, nil
}

// shownItems is the sequence of recs as rv shows them, each resolved
// value made as it is sent.
func shownItems(rv *resolve.Resolver, recs []*store.Record) iter.Seq2[*store.Record, error] {
	return func(yield func(*store.Record, error) bool) {
		for _, r := range recs {
			if !yield(rv.Shown(r), nil) {
				return
			}
		}
	}
}

// recordRoutes registers the routes of records and of their history.
func (d *deps) recordRoutes(rt *router) {
	protect, protectRead, rec := d.protect, d.protectRead, d.records
	rt.handle("GET "+pathK+"/records", store.RightRead, protectRead(rec.handleList()), openapi.Operation{
		ID: "listRecords", Tag: "records", Summary: "List the records of a cluster",
		Description: "Filters combine with AND. Credential values are masked unless reveal=true, and never matched by value or valueContains.",
		Access:      openapi.Bearer, Counted: true, Query: recordQuery, Status: 200, Success: "RecordList",
		Errors: slices.Concat(underProject, []int{422}),
	})
	rt.handle("POST "+pathK+"/records", store.RightWrite, protect(rec.handleCreate(true)), openapi.Operation{
		ID: "createRecord", Tag: "records", Summary: "Create a record (body form)",
		Description: "The query parameters rename, type and value cannot accompany the body (400).",
		Access:      openapi.Bearer, Counted: true, Query: []string{"reveal"}, Body: "RecordCreate", Status: 201, Success: "Record",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("POST "+pathR, store.RightWrite, protect(rec.handleCreate(false)), openapi.Operation{
		ID: "createRecordAt", Tag: "records", Summary: "Create a record (path form)",
		Description: "The name is in the path; the type and value come from ?type=T&value=V or from a body {\"type\", \"value\"} (which may repeat the name), not both. The body is not declared here, so that a generated client's helper for this operation sends none: to send the record as a body, use createRecord (POST .../records with its name).",
		Access:      openapi.Bearer, Counted: true, Query: []string{"recordType", "recordValue", "reveal"}, Status: 201, Success: "Record",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("GET "+pathR, store.RightRead, protectRead(rec.handleGet()), openapi.Operation{
		ID: "getRecord", Tag: "records", Summary: "Get a record",
		Description: "{record} is the record's id when a record of the cluster has that id, its name otherwise. With ?version=N, the record as it was at version N (404 when that version is not kept or never reached). The ETag header names the record's state (with resolve=true, also the state of every record the answer was built from); with If-None-Match naming it (or *) the answer is 304 without a body.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"reveal", "resolve", "version"}, Headers: []string{"ifNoneMatch"}, Status: 200, Success: "Record",
		Errors: slices.Concat(underProject, []int{422}),
		Other:  map[int]string{304: "RecordNotModified"},
	})
	rt.handle("PUT "+pathR, store.RightWrite, protect(rec.handleUpdate()), openapi.Operation{
		ID: "updateRecord", Tag: "records", Summary: "Update a record's value, type or name",
		Description: "Any of ?value=V&type=T&rename=NEW, or a body with any of {\"value\", \"type\", \"name\"}, not both; all of it in one step, or nothing. Every update adds 1 to version and keeps the state it replaces in the record's history. Changing a credential to another type needs a new value. With If-Match, the update happens only when the record's ETag is among the tags (412 otherwise); without it, 428 when the server requires If-Match.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"recordValue", "recordType", "rename", "reveal"}, Headers: []string{"ifMatch"}, Body: "RecordUpdate", Status: 200, Success: "Record",
		Errors: slices.Concat(underProject, []int{409, 412, 428}),
	})
	rt.handle("DELETE "+pathR, store.RightWrite, protect(rec.handleDelete()), openapi.Operation{
		ID: "deleteRecord", Tag: "records", Summary: "Delete a record and its history",
		Description: "{record} is the record's id when a record of the cluster has that id, its name otherwise. With If-Match, the delete happens only when the record's ETag is among the tags (412 otherwise); without it, 428 when the server requires If-Match.",
		Access:      openapi.Bearer, Counted: true, Headers: []string{"ifMatch"}, Status: 204, Success: "NoContent",
		Errors: slices.Concat(underProject, []int{412, 428}),
	})
	rt.handle("GET "+pathR+"/versions", store.RightRead, protect(rec.handleVersions()), openapi.Operation{
		ID: "listRecordVersions", Tag: "records", Summary: "List a record's history",
		Description: "The record's states, newest first: the current one, then the versions its history keeps (history.max_versions). Only limit and offset apply. Credential values are masked unless reveal=true.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"limit", "offset", "reveal"}, Status: 200, Success: "RecordVersionList",
		Errors: underProject,
	})
	rt.handle("POST "+pathR+"/restore", store.RightWrite, protect(rec.handleRestore()), openapi.Operation{
		ID: "restoreRecord", Tag: "records", Summary: "Restore a version of a record",
		Description: "Makes the type and value of version N (?version=N or a body {\"version\": N}, not both) current again as a new version; the name stays. 404 when that version is not kept. If-Match as for PUT.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"restoreVersion", "reveal"}, Headers: []string{"ifMatch"}, Body: "Restore", Status: 200, Success: "Record",
		Errors: slices.Concat(underProject, []int{412, 428}),
	})
}

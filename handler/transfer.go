package handler

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/store"
)

// GET P/export and POST P/import (docs/api.md#16-batch-export-and-import):
// a whole project as one JSON document, {"format": "hds/1", "project",
// "revision", "exported_at", "collections": {NAME: {"clusters": {NAME:
// {"records": {NAME: {"type", "value"}}}}}}}.

// exportFormat is the format of the export document.
const exportFormat = "hds/1"

// handleExport serves GET P/export: the bare document (not enveloped),
// written as the store's snapshot is read. Errors found before the first
// byte (the project, the owner) are enveloped as usual; an error after it
// can only cut the response short.
func (rec records) handleExport() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		reveal, err := parseReveal(query)
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		p := revealing(pathOf(r), reveal)
		ew := &exportWriter{rw: w, r: r, creds: rec.creds, reveal: reveal, project: p.Project}
		// The reveal's entry is written first: nothing of the export may
		// leave before it.
		err = rec.revealed(r, reveal, p, nil)
		if err == nil {
			err = rec.store.ExportProject(r.Context(), p, ew.visit)
		}
		if err == nil {
			err = ew.finish()
		}
		switch {
		case err == nil:
		case !ew.started:
			envelope.Error(w, r, err)
		default:
			// The status is sent: cut the body short, so that the client
			// sees a broken document rather than a wrong one.
			reqinfo.From(r.Context()).Err = err
			panic(http.ErrAbortHandler)
		}
	}
}

// exportWriter writes the export document item by item.
type exportWriter struct {
	rw      http.ResponseWriter
	r       *http.Request
	w       *bufio.Writer
	creds   credentials
	reveal  bool
	project string
	// revision is the snapshot's (the project's item has it).
	revision int64
	started  bool
	// inCollection and inCluster say which objects are open; the first*
	// flags whether the next member of each needs a comma.
	inCollection, inCluster                    bool
	firstCollection, firstCluster, firstRecord bool
	buf                                        []byte
}

// start sends the headers and the document's head.
func (ew *exportWriter) start() {
	ew.started = true
	h := ew.rw.Header()
	h.Set("Content-Type", envelope.ContentType)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": ew.project + ".json"}))
	ew.rw.WriteHeader(http.StatusOK)
	ew.w = bufio.NewWriterSize(progressWriter{ew.rw, ew.r}, 32<<10) // each chunk moves the write deadline
	b := append(ew.buf[:0], `{"format":"`+exportFormat+`","project":`...)
	b = jsonstr.Append(b, ew.project)
	b = append(b, `,"revision":`...)
	b = strconv.AppendInt(b, ew.revision, 10)
	b = append(b, `,"exported_at":`...)
	b = appendTime(b, time.Now())
	b = append(b, `,"collections":{`...)
	ew.firstCollection = true
	ew.write(b)
}

func (ew *exportWriter) write(b []byte) {
	ew.buf = b
	_, _ = ew.w.Write(b) // a write error shows at Flush
}

// closeCluster ends the open cluster, if any.
func (ew *exportWriter) closeCluster(b []byte) []byte {
	if ew.inCluster {
		ew.inCluster = false
		b = append(b, "}}"...)
	}
	return b
}

// closeCollection ends the open collection, if any.
func (ew *exportWriter) closeCollection(b []byte) []byte {
	b = ew.closeCluster(b)
	if ew.inCollection {
		ew.inCollection = false
		b = append(b, "}}"...)
	}
	return b
}

// visit writes one item of the store's walk.
func (ew *exportWriter) visit(it store.ExportItem) error {
	if it.Collection == "" { // the project, first
		ew.revision = it.Revision
		return nil
	}
	if !ew.started {
		ew.start()
	}
	b := ew.buf[:0]
	switch {
	case it.Record != nil:
		if !ew.firstRecord {
			b = append(b, ',')
		}
		ew.firstRecord = false
		v, err := ew.creds.visible(it.Record, ew.reveal)
		if err != nil {
			return err
		}
		b = jsonstr.Append(b, it.Record.Name)
		b = append(b, `:{"type":`...)
		b = jsonstr.Append(b, string(it.Record.Type))
		b = append(b, `,"value":`...)
		b = append(b, v...)
		b = append(b, '}')
	case it.Cluster != "":
		b = ew.closeCluster(b)
		if !ew.firstCluster {
			b = append(b, ',')
		}
		ew.firstCluster, ew.inCluster, ew.firstRecord = false, true, true
		b = jsonstr.Append(b, it.Cluster)
		b = append(b, `:{"records":{`...)
	default:
		b = ew.closeCollection(b)
		if !ew.firstCollection {
			b = append(b, ',')
		}
		ew.firstCollection, ew.inCollection, ew.firstCluster = false, true, true
		b = jsonstr.Append(b, it.Collection)
		b = append(b, `:{"clusters":{`...)
	}
	ew.write(b)
	return nil
}

// finish ends the document and flushes it.
func (ew *exportWriter) finish() error {
	if !ew.started {
		ew.start()
	}
	b := ew.closeCollection(ew.buf[:0])
	ew.write(append(b, "}}\n"...))
	return ew.w.Flush()
}

// importDoc is an export document read by POST P/import. Its project,
// revision and exported_at are ignored.
type importDoc struct {
	Format      *string                     `json:"format"`
	Project     json.RawMessage             `json:"project"`
	Revision    json.RawMessage             `json:"revision"`
	ExportedAt  json.RawMessage             `json:"exported_at"`
	Collections map[string]importCollection `json:"collections"`
}

type importCollection struct {
	Clusters map[string]importCluster `json:"clusters"`
}

type importCluster struct {
	Records map[string]importRecord `json:"records"`
}

type importRecord struct {
	Type  *string         `json:"type"`
	Value json.RawMessage `json:"value"`
}

// importValue is a record of the document, checked: its type and its
// canonical plain value, or masked (a credential left as it is).
type importValue struct {
	typ    store.DataType
	value  json.RawMessage
	masked bool
}

// importChange is one entry of an import's change list.
type importChange struct {
	Action     string `json:"action"`
	Collection string `json:"collection"`
	Cluster    string `json:"cluster"`
	Record     string `json:"record"`
}

// importResult is the answer of POST P/import.
type importResult struct {
	Created   int            `json:"created"`
	Updated   int            `json:"updated"`
	Deleted   int            `json:"deleted"`
	Unchanged int            `json:"unchanged"`
	Changes   []importChange `json:"changes"`
	// Revision is the project's audit revision after the import: the
	// newest entry it wrote, or, when it wrote none (a dry run, nothing
	// to change), the revision of the snapshot it was planned on.
	Revision int64 `json:"revision"`
}

// importAttempts is how often an import is planned again when the
// project changed between its snapshot and its write.
const importAttempts = 3

// handleImport serves POST P/import?mode=merge|replace&dry_run=: the
// document is checked whole, compared with a snapshot of the project
// (store.Store.ExportProject) into a plan, and the plan is applied in one
// store.Store.Apply whose writes are conditioned on the snapshot (the
// entity tag of each record it updates or deletes). When the project
// changed meanwhile, the import is planned again.
func (rec records) handleImport() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		replace, dryRun, err := parseImportQuery(query)
		var doc importDoc
		if err == nil {
			var present bool
			present, err = envelope.Decode(r, &doc)
			if err == nil && !present {
				err = envelope.BadRequest(`the body must be an export document: {"format": "` + exportFormat + `", "collections": {...}}`)
			}
		}
		var values map[[3]string]importValue
		if err == nil {
			values, err = checkImport(&doc)
		}
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		p := pathOf(r)
		var res importResult
		for attempt := 1; ; attempt++ {
			var ops []store.Op
			res, ops, err = rec.planImport(r, p, &doc, values, replace)
			if err != nil || dryRun || len(ops) == 0 {
				break
			}
			var applied []store.OpResult
			applied, err = rec.store.Apply(r.Context(), p, store.Batch{Ops: ops, CreateParents: true,
				Write: store.Write{MaxVersions: rec.pre.maxVersions}})
			if err == nil {
				res.Revision = applied[0].Revision
			}
			var oe *store.OpError
			if errors.As(err, &oe) {
				err = oe.Err // the ops are the plan's, not the client's
			}
			raced := errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAlreadyExists)
			if !raced || attempt == importAttempts {
				break
			}
		}
		extendWriteDeadline(w, r) // a big import may take longer than the write timeout to apply
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		message := "Import applied"
		if dryRun {
			message = "Dry run: nothing changed"
		}
		envelope.OK(w, http.StatusOK, res, message)
	}
}

// parseImportQuery reads mode (merge, the default, or replace) and
// dry_run (true or false).
func parseImportQuery(query url.Values) (replace, dryRun bool, err error) {
	switch mode := query.Get("mode"); {
	case !query.Has("mode"), mode == "merge":
	case mode == "replace":
		replace = true
	default:
		return false, false, envelope.BadRequest("mode must be merge or replace")
	}
	switch v := query.Get("dry_run"); {
	case !query.Has("dry_run"), v == "false":
	case v == "true":
		dryRun = true
	default:
		return false, false, envelope.BadRequest("dry_run must be true or false")
	}
	return replace, dryRun, nil
}

// where names a place in an import document for messages.
func where(c, k, name string) string {
	switch {
	case name != "":
		return "collection " + strconv.Quote(c) + ", cluster " + strconv.Quote(k) + ", record " + strconv.Quote(name)
	case k != "":
		return "collection " + strconv.Quote(c) + ", cluster " + strconv.Quote(k)
	}
	return "collection " + strconv.Quote(c)
}

// at prefixes the details of err with the place it concerns.
func at(place string, err error) error {
	var ve *store.ValidationError
	if errors.As(err, &ve) {
		return &store.ValidationError{Message: place + ": " + ve.Message}
	}
	var re *envelope.RequestError
	if errors.As(err, &re) {
		return envelope.BadRequest(place + ": " + re.Details)
	}
	return err
}

// checkImport checks the document whole, before the store is asked
// anything: its format, that every level is there, every name
// (docs/api.md#2-data-model), every type and every value. It returns the
// records' values by collection, cluster and record name.
func checkImport(doc *importDoc) (map[[3]string]importValue, error) {
	if doc.Format == nil || *doc.Format != exportFormat {
		return nil, envelope.BadRequest(`the document's "format" must be "` + exportFormat + `"`)
	}
	if doc.Collections == nil {
		return nil, envelope.BadRequest(`the document has no "collections"`)
	}
	values := make(map[[3]string]importValue)
	for _, c := range slices.Sorted(maps.Keys(doc.Collections)) {
		if err := store.ValidateName(c); err != nil {
			return nil, at(where(c, "", ""), err)
		}
		coll := doc.Collections[c]
		if coll.Clusters == nil {
			return nil, envelope.BadRequest(where(c, "", "") + ` has no "clusters"`)
		}
		for _, k := range slices.Sorted(maps.Keys(coll.Clusters)) {
			if err := store.ValidateName(k); err != nil {
				return nil, at(where(c, k, ""), err)
			}
			clus := coll.Clusters[k]
			if clus.Records == nil {
				return nil, envelope.BadRequest(where(c, k, "") + ` has no "records"`)
			}
			for _, name := range slices.Sorted(maps.Keys(clus.Records)) {
				v, err := checkImportRecord(name, clus.Records[name])
				if err != nil {
					return nil, at(where(c, k, name), err)
				}
				values[[3]string{c, k, name}] = v
			}
		}
	}
	return values, nil
}

// checkImportRecord checks one record of the document.
func checkImportRecord(name string, in importRecord) (importValue, error) {
	if err := store.ValidateName(name); err != nil {
		return importValue{}, err
	}
	if in.Type == nil {
		return importValue{}, envelope.BadRequest(`the field "type" is required`)
	}
	t, err := store.ParseType(*in.Type)
	if err != nil {
		return importValue{}, err
	}
	if t.IsCredential() {
		masked, err := maskedValue(t, in.Value)
		if err != nil || masked {
			return importValue{typ: t, masked: masked}, err
		}
	}
	v, err := t.ParseJSON(in.Value)
	return importValue{typ: t, value: v}, err
}

// maskedValue reports whether a credential value of the document is
// masked: "********", or an array whose every element is. A partly
// masked array is refused.
func maskedValue(t store.DataType, raw json.RawMessage) (bool, error) {
	if !t.IsArray() {
		var s string
		return json.Unmarshal(raw, &s) == nil && s == sealing.Masked, nil
	}
	var elems []string
	if json.Unmarshal(raw, &elems) != nil || len(elems) == 0 {
		return false, nil
	}
	n := 0
	for _, e := range elems {
		if e == sealing.Masked {
			n++
		}
	}
	switch n {
	case 0:
		return false, nil
	case len(elems):
		return true, nil
	}
	return false, &store.ValidationError{Message: string(t) + ` value is partly masked: give every element, or mask every element ("` +
		sealing.Masked + `") to leave the value as it is`}
}

// snapshotTree is a project as ExportProject read it.
type snapshotTree map[string]map[string]map[string]*store.Record

// planImport reads the project and compares it with the document: the
// result the import has, and the ops that make it so. The result's
// Revision is the snapshot's, which applying the ops replaces.
func (rec records) planImport(r *http.Request, p store.Path, doc *importDoc, values map[[3]string]importValue,
	replace bool) (importResult, []store.Op, error) {
	tree := snapshotTree{}
	var revision int64
	err := rec.store.ExportProject(r.Context(), p, func(it store.ExportItem) error {
		switch {
		case it.Collection == "": // the project
			revision = it.Revision
		case it.Record != nil:
			tree[it.Collection][it.Cluster][it.Record.Name] = it.Record
		case it.Cluster != "":
			tree[it.Collection][it.Cluster] = map[string]*store.Record{}
		default:
			tree[it.Collection] = map[string]map[string]*store.Record{}
		}
		return nil
	})
	if err != nil {
		return importResult{}, nil, err
	}
	res := importResult{Changes: []importChange{}, Revision: revision}
	var deletes, ensures, writes []store.Op
	change := func(action, c, k, name string) {
		res.Changes = append(res.Changes, importChange{action, c, k, name})
		switch action {
		case "create":
			res.Created++
		case "update":
			res.Updated++
		case "delete":
			res.Deleted++
		}
	}
	if replace {
		for c, clusters := range tree {
			coll, keep := doc.Collections[c]
			if !keep {
				deletes = append(deletes, store.Op{Kind: store.OpDeleteCollection, Collection: c})
			}
			for k, recs := range clusters {
				clus, keepCluster := coll.Clusters[k]
				if keep && !keepCluster {
					deletes = append(deletes, store.Op{Kind: store.OpDeleteCluster, Collection: c, Cluster: k})
				}
				for name, cur := range recs {
					if _, ok := clus.Records[name]; ok {
						continue
					}
					change("delete", c, k, name)
					if keep && keepCluster {
						deletes = append(deletes, store.Op{Kind: store.OpDelete, Collection: c, Cluster: k,
							Record: cur.ID, IfMatch: []string{cur.ETag()}})
					}
				}
			}
		}
	}
	for c, coll := range doc.Collections {
		if _, ok := tree[c]; !ok {
			ensures = append(ensures, store.Op{Kind: store.OpEnsureCollection, Collection: c})
		}
		for k, clus := range coll.Clusters {
			if _, ok := tree[c][k]; !ok {
				ensures = append(ensures, store.Op{Kind: store.OpEnsureCluster, Collection: c, Cluster: k})
			}
			for name := range clus.Records {
				op, action, err := rec.importOp(c, k, name, values[[3]string{c, k, name}], tree[c][k][name])
				if err != nil {
					return importResult{}, nil, at(where(c, k, name), err)
				}
				if action == "" {
					res.Unchanged++
					continue
				}
				change(action, c, k, name)
				writes = append(writes, op)
			}
		}
	}
	slices.SortFunc(res.Changes, func(a, b importChange) int {
		return cmp.Or(strings.Compare(a.Collection, b.Collection), strings.Compare(a.Cluster, b.Cluster),
			strings.Compare(a.Record, b.Record))
	})
	return res, slices.Concat(deletes, ensures, writes), nil
}

// importOp returns the op that makes the record c/k/name what the
// document says, and its action ("create", "update", or "" when it
// holds that already). cur is the record now, or nil.
func (rec records) importOp(c, k, name string, v importValue, cur *store.Record) (store.Op, string, error) {
	op := store.Op{Collection: c, Cluster: k}
	switch {
	case cur == nil && v.masked:
		return op, "", &store.ValidationError{Message: `a masked credential ("` + sealing.Masked + `") can only leave an existing value as it is, and this record does not exist`}
	case cur == nil:
		id := store.NewID()
		sealed, err := rec.creds.seal(v.typ, id, v.value)
		if err != nil {
			return op, "", err
		}
		op.Kind, op.Record, op.New = store.OpCreate, name, &store.Record{ID: id, Type: v.typ, Value: sealed}
		return op, "create", nil
	case v.masked && cur.Type != v.typ:
		return op, "", &store.ValidationError{Message: `a masked credential ("` + sealing.Masked + `") can only leave an existing value as it is, and the record is of type ` + string(cur.Type)}
	case v.masked:
		return op, "", nil
	}
	if cur.Type == v.typ {
		now, err := rec.creds.visible(cur, true)
		if err != nil && cur.Type.IsCredential() && rec.creds.ring == nil {
			return op, "", errNoCredentialKey
		}
		if err != nil {
			return op, "", err
		}
		if sameValue(cur.Type, now, v.value) {
			return op, "", nil
		}
	}
	sealed, err := rec.creds.seal(v.typ, cur.ID, v.value)
	if err != nil {
		return op, "", err
	}
	op.Kind, op.Record, op.IfMatch = store.OpUpdate, cur.ID, []string{cur.ETag()}
	op.Update = func(r *store.Record) error {
		r.Type, r.Value = v.typ, sealed
		return nil
	}
	return op, "update", nil
}

// sameValue reports whether a and b are the same value of type t: the
// same canonical JSON or, for credentials (whose plain text may be
// escaped differently), the same strings.
func sameValue(t store.DataType, a, b json.RawMessage) bool {
	if !t.IsCredential() {
		return bytes.Equal(a, b)
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

package handler

import (
	"bufio"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/internal/reqinfo"
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

// transferRoutes registers the routes that move records in bulk: batch,
// export, import, diff and promote.
func (d *deps) transferRoutes(rt *router) {
	protect, protectImport, rec := d.protect, d.protectImport, d.records
	rt.handle("POST "+pathP+"/batch", store.RightWrite, protectImport(rec.handleBatch()), openapi.Operation{
		ID: "applyBatch", Tag: "projects", Summary: "Apply record operations, all or none",
		Description: "1 to 1000 operations (create, update, upsert, delete), applied in order in one step: either all apply (200, one result each) or none does, and the answer is the error the first failing operation would get alone, its details starting \"operation N: \" (N from 0). A body that is not a batch is 400 without that prefix. An operation may name a record an earlier one created. Updates keep history as PUT does; with require_if_match, each update and delete needs if_match (428). The body may be up to limits.max_import_bytes (16 MiB by default).",
		Access:      openapi.Bearer, Counted: true, Body: "Batch", Status: 200, Success: "BatchResults",
		Errors: slices.Concat(underProject, []int{409, 428}),
		Other:  map[int]string{412: "OpPreconditionFailed"},
	})
	rt.handle("GET "+pathP+"/export", store.RightRead, protect(rec.handleExport()), openapi.Operation{
		ID: "exportProject", Tag: "projects", Summary: "Export a whole project",
		Description: "The bare document (not enveloped), an attachment: every collection, cluster and record from one consistent snapshot, empty collections and clusters included. Credentials are masked unless reveal=true.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"reveal"}, Status: 200, Success: "ExportDocument",
		Errors: underProject,
	})
	rt.handle("POST "+pathP+"/import", store.RightWrite, protectImport(rec.handleImport()), openapi.Operation{
		ID: "importProject", Tag: "projects", Summary: "Import an export document",
		Description: "merge (default) creates and updates what the document holds and keeps what it lacks; replace also deletes what it lacks (records, clusters, collections). A masked credential leaves the existing value as it is (for a new record it is 400). All or nothing; dry_run=true changes nothing and answers what would change. The body may be up to limits.max_import_bytes (16 MiB by default).",
		Access:      openapi.Bearer, Counted: true, Query: []string{"importMode", "dryRun"}, Body: "Import", Status: 200, Success: "ImportResult",
		Errors: slices.Concat(underProject, []int{409}),
		Other:  map[int]string{412: "OpPreconditionFailed"},
	})
	rt.handle("GET "+pathP+"/diff", store.RightRead, protect(rec.handleDiff()), openapi.Operation{
		ID: "diffProject", Tag: "projects", Summary: "Compare two collections or two clusters",
		Description: "from and to are two collections (COLLECTION) or two clusters (COLLECTION/CLUSTER). Records are compared by name, as stored, in one consistent snapshot (clusters of two collections paired by name): added (only in from), removed (only in to), changed (type or value differ), unchanged (listed only with unchanged=true, always counted). Items sort by cluster, then record, byte-wise. Credentials are compared on their plain values but masked unless reveal=true (reader; audited once). revision is the project's newest audit revision the snapshot saw that changes something (credential.reveal entries not counted): a promote with that if_revision applies exactly this comparison, whoever revealed a credential meanwhile. A cluster and a collection mixed, from or to missing, or equal: 400; a side that does not exist: 404. from_snapshot=NAME instead of from compares a snapshot with to: what a rollback to it would change (from is then snapshot:NAME; both from and from_snapshot, or neither: 400; an unknown snapshot: 404).",
		Access:      openapi.Bearer, Counted: true, Query: []string{"diffFrom", "diffFromSnapshot", "diffTo", "unchanged", "reveal"}, Status: 200, Success: "Diff",
		Errors: underProject,
	})
	rt.handle("POST "+pathP+"/promote", store.RightWrite, protect(rec.handlePromote()), openapi.Operation{
		ID: "promote", Tag: "projects", Summary: "Make one collection or cluster hold what another holds",
		Description: "Applies every added and changed item of the comparison of from with to (GET diff) to to, creating the clusters a collection lacks; with delete, removes its removed records (never clusters or collections). records narrows a promote between two clusters to those names (400 for collections). All or nothing; each record changed is audited as its own record.create, record.update or record.delete; credentials are copied sealed, never shown. if_revision: when the project's newest revision that changes something (credential.reveal entries not counted) is no longer that number, 412 (details: current revision is N) and nothing changes. Quotas apply as for batch; require_if_match does not. dry_run changes nothing and answers what would change. from_snapshot instead of from promotes a snapshot (with delete: true, a rollback that puts to back exactly as the snapshot holds it; a snapshot of a collection pairs with a collection, of a cluster with a cluster, else 400; both from and from_snapshot, or neither: 400; an unknown snapshot: 404). Every promote that changes something first takes an automatic snapshot of to, named auto-N (N the revision before the promote), given in snapshot (null for a dry run or when nothing changed); the automatic snapshots beyond snapshots.keep_automatic are deleted, oldest first.",
		Access:      openapi.Bearer, Counted: true, Body: "Promote", Status: 200, Success: "PromoteResult",
		Errors: underProject,
		Other:  map[int]string{412: "RevisionPreconditionFailed"},
	})
}

package handler

import (
	"bufio"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// GET P/export and POST P/import (docs/api.md#batch-export-and-import):
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

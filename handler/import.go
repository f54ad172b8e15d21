package handler

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/store"
)

// POST P/import (docs/api.md#batch-export-and-import): the document
// (importdoc.go) is checked whole, compared with a snapshot of the
// project into a plan, and the plan applied in one store.Store.Apply. A
// big document is held once, compactly (a docTree); the plan refers to
// it, and the store makes the ops from it one at a time
// (store.Batch.Source) without keeping the records it writes
// (store.Batch.OmitRecords); the answer is written as it is made.

// importDoc is an export document as envelope.Decode reads it, for the
// documents parseDoc does not take. Its project, revision and
// exported_at are ignored.
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

// importChange is one entry of an import's change list.
type importChange struct {
	Action     string
	Collection string
	Cluster    string
	Record     string
}

// handleImport serves POST P/import?mode=merge|replace&dry_run=: the
// document is checked whole, compared with a snapshot of the project
// (store.Store.ExportProject) into a plan, and the plan is applied in one
// store.Store.Apply whose writes are conditioned on the snapshot (the
// entity tag of each record it updates or deletes). When a concurrent
// write changed what it read, the import is planned again (replan.go).
func (rec records) handleImport() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		replace, dryRun, err := parseImportQuery(query)
		var doc *docTree
		if err == nil {
			var present bool
			doc, present, err = readImport(r)
			if err == nil && !present {
				err = envelope.BadRequest(`the body must be an export document: {"format": "` + exportFormat + `", "collections": {...}}`)
			}
		}
		if err == nil {
			err = checkDoc(doc)
		}
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		p := pathOf(r)
		var pl *importPlan
		err = untilApplied(r.Context(), func() (bool, error) {
			var err error
			pl, err = rec.planImport(r, p, doc, replace)
			if err != nil || dryRun || pl.Len() == 0 {
				return false, err
			}
			applied, err := rec.store.Apply(r.Context(), p, store.Batch{Source: pl, OmitRecords: true, CreateParents: true,
				Write: store.Write{MaxVersions: rec.pre.maxVersions}})
			if err == nil {
				pl.revision = applied[0].Revision
			}
			var oe *store.OpError
			if errors.As(err, &oe) && !errors.Is(err, store.ErrUnavailable) {
				err = oe.Err // the ops are the plan's, not the client's
			}
			return raced(err), err
		})
		extendWriteDeadline(w, r) // a big import may take longer than the write timeout to apply
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		message := "Import applied"
		if dryRun {
			message = "Dry run: nothing changed"
		}
		pl.answer(w, r, message)
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

// checkDoc checks the document whole, before the store is asked
// anything: its format, that every level is there, every name
// (docs/api.md#data-model), every type and every value, in name
// order. It leaves each record its type and canonical plain value.
func checkDoc(doc *docTree) error {
	if doc.format == nil || *doc.format != exportFormat {
		return envelope.BadRequest(`the document's "format" must be "` + exportFormat + `"`)
	}
	if !doc.hasColls {
		return envelope.BadRequest(`the document has no "collections"`)
	}
	for i := range doc.colls {
		c := &doc.colls[i]
		if err := store.ValidateName(c.name); err != nil {
			return at(where(c.name, "", ""), err)
		}
		if !c.hasClusters {
			return envelope.BadRequest(where(c.name, "", "") + ` has no "clusters"`)
		}
		for j := range c.clusters {
			k := &c.clusters[j]
			if err := store.ValidateName(k.name); err != nil {
				return at(where(c.name, k.name, ""), err)
			}
			if !k.hasRecords {
				return envelope.BadRequest(where(c.name, k.name, "") + ` has no "records"`)
			}
			for n := range k.records {
				if err := checkDocRecord(&k.records[n]); err != nil {
					return at(where(c.name, k.name, k.records[n].name), err)
				}
			}
		}
	}
	return nil
}

// checkDocRecord checks one record of the document.
func checkDocRecord(r *docRec) error {
	if err := store.ValidateName(r.name); err != nil {
		return err
	}
	if !r.hasType {
		return envelope.BadRequest(`the field "type" is required`)
	}
	t, err := store.ParseType(string(r.typ))
	if err != nil {
		return err
	}
	r.typ = t
	if t.IsCredential() {
		masked, err := maskedValue(t, r.value)
		if err != nil || masked {
			r.masked, r.value = masked, nil
			return err
		}
	}
	r.value, err = t.ParseJSON(r.value)
	return err
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

// importPlan is what an import does to the project, as planned on a
// snapshot: the answer's counts and changes, and the ops (a
// store.OpSource): deletes, then the containers to create, then the
// records to create and update, which it makes from the document.
type importPlan struct {
	doc *docTree
	// revision is the snapshot's, then the one after the import.
	revision                             int64
	created, updated, deleted, unchanged int
	// gone are the records replace deletes, in name order.
	gone             []importChange
	deletes, ensures []store.Op
	// writes are the records created and updated, by index in doc.
	writes [][3]int32
	// sealed are the sealed values of the credentials written, by index.
	sealed map[[3]int32]json.RawMessage
}

// Len implements store.OpSource.
func (pl *importPlan) Len() int { return len(pl.deletes) + len(pl.ensures) + len(pl.writes) }

// Op implements store.OpSource.
func (pl *importPlan) Op(i int) store.Op {
	if i < len(pl.deletes) {
		return pl.deletes[i]
	}
	if i -= len(pl.deletes); i < len(pl.ensures) {
		return pl.ensures[i]
	}
	at := pl.writes[i-len(pl.ensures)]
	c := &pl.doc.colls[at[0]]
	k := &c.clusters[at[1]]
	r := &k.records[at[2]]
	value, ok := pl.sealed[at]
	if !ok {
		value = r.value
	}
	op := store.Op{Collection: c.name, Cluster: k.name}
	if r.state == recNew {
		op.Kind, op.Record, op.New = store.OpCreate, r.name, &store.Record{ID: r.id, Type: r.typ, Value: value}
		return op
	}
	typ := r.typ
	op.Kind, op.Record, op.IfMatch = store.OpUpdate, r.id, []string{store.ETag(r.id, r.version)}
	op.Update = func(x *store.Record) error {
		x.Type, x.Value = typ, value
		return nil
	}
	return op
}

// planImport reads the project and compares it with the document: the
// plan's counts, changes and ops. Its revision is the snapshot's, which
// applying the ops replaces.
func (rec records) planImport(r *http.Request, p store.Path, doc *docTree, replace bool) (*importPlan, error) {
	pl := &importPlan{doc: doc}
	for i := range doc.colls {
		c := &doc.colls[i]
		c.exists = false
		for j := range c.clusters {
			k := &c.clusters[j]
			k.exists = false
			for n := range k.records {
				k.records[n].state, k.records[n].id, k.records[n].version = recNew, "", 0
			}
		}
	}
	// The snapshot is compared with the document as it is read: what the
	// plan keeps of it are the ids and versions of the records to update
	// and the names of those replace deletes.
	var bad map[*docRec]error
	var coll, clus string
	var dc *docColl
	var dk *docCluster
	err := rec.store.ExportProject(r.Context(), p, func(it store.ExportItem) error {
		if it.Collection == "" { // the project
			pl.revision = it.Revision
			return nil
		}
		// The walk visits a collection before its clusters, and a cluster
		// before its records.
		cur := it.Record
		switch {
		case it.Cluster == "": // a collection
			coll, clus, dc, dk = it.Collection, "", nil, nil
			if i := findByName(doc.colls, coll, func(c *docColl) string { return c.name }); i >= 0 {
				dc = &doc.colls[i]
				dc.exists = true
			} else if replace {
				pl.deletes = append(pl.deletes, store.Op{Kind: store.OpDeleteCollection, Collection: coll})
			}
			return nil
		case cur == nil: // a cluster
			clus, dk = it.Cluster, nil
			if dc == nil {
				return nil
			}
			if i := findByName(dc.clusters, clus, func(k *docCluster) string { return k.name }); i >= 0 {
				dk = &dc.clusters[i]
				dk.exists = true
			} else if replace {
				pl.deletes = append(pl.deletes, store.Op{Kind: store.OpDeleteCluster, Collection: coll, Cluster: clus})
			}
			return nil
		}
		if dk != nil {
			if i := findByName(dk.records, cur.Name, func(r *docRec) string { return r.name }); i >= 0 {
				dr := &dk.records[i]
				if err := rec.compare(dr, cur); err != nil {
					if bad == nil {
						bad = map[*docRec]error{}
					}
					dr.state, bad[dr] = recBad, err
				}
				return nil
			}
		}
		if replace {
			pl.gone = append(pl.gone, importChange{"delete", coll, clus, cur.Name})
			if dk != nil {
				pl.deletes = append(pl.deletes, store.Op{Kind: store.OpDelete, Collection: coll, Cluster: clus,
					Record: cur.ID, IfMatch: []string{cur.ETag()}})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pl.gone, compareChanges)
	pl.deleted = len(pl.gone)
	for i := range doc.colls {
		c := &doc.colls[i]
		if !c.exists {
			pl.ensures = append(pl.ensures, store.Op{Kind: store.OpEnsureCollection, Collection: c.name})
		}
		for j := range c.clusters {
			k := &c.clusters[j]
			if !k.exists {
				pl.ensures = append(pl.ensures, store.Op{Kind: store.OpEnsureCluster, Collection: c.name, Cluster: k.name})
			}
			for n := range k.records {
				dr := &k.records[n]
				at := [3]int32{int32(i), int32(j), int32(n)}
				switch dr.state {
				case recBad:
					return nil, at2(c, k, dr, bad[dr])
				case recSame:
					pl.unchanged++
					continue
				case recNew:
					if dr.masked {
						return nil, at2(c, k, dr, &store.ValidationError{Message: `a masked credential ("` + sealing.Masked +
							`") can only leave an existing value as it is, and this record does not exist`})
					}
					if dr.typ.IsCredential() {
						dr.id = store.NewID()
					}
					pl.created++
				case recUpdate:
					pl.updated++
				}
				if dr.typ.IsCredential() {
					sealed, err := rec.creds.seal(dr.typ, dr.id, dr.value)
					if err != nil {
						return nil, at2(c, k, dr, err)
					}
					if pl.sealed == nil {
						pl.sealed = map[[3]int32]json.RawMessage{}
					}
					pl.sealed[at] = sealed
				}
				pl.writes = append(pl.writes, at)
			}
		}
	}
	return pl, nil
}

// at2 is at for the record r of cluster k of collection c.
func at2(c *docColl, k *docCluster, r *docRec, err error) error {
	return at(where(c.name, k.name, r.name), err)
}

// compare sets what the document's record r does to the project's
// record cur: nothing (recSame) or an update (recUpdate, with cur's id
// and version), or fails.
func (rec records) compare(r *docRec, cur *store.Record) error {
	switch {
	case r.masked && cur.Type != r.typ:
		return &store.ValidationError{Message: `a masked credential ("` + sealing.Masked + `") can only leave an existing value as it is, and the record is of type ` + string(cur.Type)}
	case r.masked:
		r.state = recSame
		return nil
	}
	if cur.Type == r.typ {
		now, err := rec.creds.visible(cur, true)
		if err != nil && cur.Type.IsCredential() && rec.creds.ring == nil {
			return errNoCredentialKey
		}
		if err != nil {
			return err
		}
		if sameValue(cur.Type, now, r.value) {
			r.state = recSame
			return nil
		}
	}
	if r.typ.IsCredential() && rec.creds.ring == nil {
		return errNoCredentialKey
	}
	r.state, r.id, r.version = recUpdate, cur.ID, cur.Version
	return nil
}

// compareChanges orders changes by collection, cluster and record.
func compareChanges(a, b importChange) int {
	return cmp.Or(strings.Compare(a.Collection, b.Collection), strings.Compare(a.Cluster, b.Cluster),
		strings.Compare(a.Record, b.Record))
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

// answer writes the import's answer, its changes in name order (the
// records written, merged with those replace deleted), as it makes it:
// {"created", "updated", "deleted", "unchanged", "changes", "revision"}
// in the success envelope.
func (pl *importPlan) answer(w http.ResponseWriter, r *http.Request, message string) {
	a := startAnswer(w, r, http.StatusOK)
	b := append(a.b, `{"created":`...)
	b = strconv.AppendInt(b, int64(pl.created), 10)
	b = append(b, `,"updated":`...)
	b = strconv.AppendInt(b, int64(pl.updated), 10)
	b = append(b, `,"deleted":`...)
	b = strconv.AppendInt(b, int64(pl.deleted), 10)
	b = append(b, `,"unchanged":`...)
	b = strconv.AppendInt(b, int64(pl.unchanged), 10)
	a.b = append(b, `,"changes":[`...)
	first := true
	change := func(ch importChange) {
		b := a.b
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"action":`...)
		b = jsonstr.Append(b, ch.Action)
		b = append(b, `,"collection":`...)
		b = jsonstr.Append(b, ch.Collection)
		b = append(b, `,"cluster":`...)
		b = jsonstr.Append(b, ch.Cluster)
		b = append(b, `,"record":`...)
		b = jsonstr.Append(b, ch.Record)
		a.b = append(b, '}')
		a.more()
	}
	gone := pl.gone
	for _, at := range pl.writes {
		c := &pl.doc.colls[at[0]]
		k := &c.clusters[at[1]]
		dr := &k.records[at[2]]
		ch := importChange{"update", c.name, k.name, dr.name}
		if dr.state == recNew {
			ch.Action = "create"
		}
		for len(gone) > 0 && compareChanges(gone[0], ch) < 0 {
			change(gone[0])
			gone = gone[1:]
		}
		change(ch)
	}
	for _, ch := range gone {
		change(ch)
	}
	a.b = append(a.b, `],"revision":`...)
	a.b = strconv.AppendInt(a.b, pl.revision, 10)
	a.b = append(a.b, '}')
	a.end(message)
}

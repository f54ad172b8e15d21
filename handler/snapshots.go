package handler

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/store"
)

// Snapshots and rollback (docs/api.md#snapshots-and-rollback-v13):
// POST, GET and DELETE P/snapshots; the rollback itself is a promote
// whose from side is a snapshot (compare.go).

// DefaultKeepAutomaticSnapshots is the default of
// Config.KeepAutomaticSnapshots (snapshots.keep_automatic).
const DefaultKeepAutomaticSnapshots = store.DefaultKeepAutomatic

// keepAutomatic returns how many automatic snapshots a project keeps for
// the configured n: 0 takes DefaultKeepAutomaticSnapshots, a negative
// n none (0).
func keepAutomatic(n int) int {
	switch {
	case n == 0:
		return DefaultKeepAutomaticSnapshots
	case n < 0:
		return 0
	}
	return n
}

// snapshots serves the snapshot routes.
type snapshots struct {
	rec   records
	snaps store.Snapshots
}

// snapshotRoutes registers the snapshot routes: for stores that keep
// snapshots (store.Snapshots) only.
func (d *deps) snapshotRoutes(rt *router) {
	sn, ok := d.records.store.(store.Snapshots)
	if !ok {
		return
	}
	h := snapshots{rec: d.records, snaps: sn}
	protect := d.protect
	const (
		path  = pathP + "/snapshots"
		one   = path + "/{name}"
		scope = " An API token narrowed to a collection or a cluster is 403 on every snapshot route."
	)
	rt.handle("POST "+path, store.RightWrite, protect(h.handleCreate()), openapi.Operation{
		ID: "createSnapshot", Tag: "snapshots", Summary: "Take a snapshot of a collection or a cluster",
		Description: "A named, immutable copy of every record of the collection (its clusters, empty ones included) or of the cluster, each with its version, at one revision: the project's newest audit revision before the snapshot's own snapshot.create entry. Credentials are kept sealed. name follows the name rules, is unique in the project (409 RESOURCE_EXISTS) and may not start with auto- (400 VALIDATION_ERROR: kept for the automatic snapshots promotes take); a missing collection or cluster is 404. A project holds at most limits.max_snapshots_per_project snapshots not automatic (default 100): one more is 403 QUOTA_EXCEEDED; their values count toward limits.max_bytes_per_project. Audited as snapshot.create." + scope,
		Access:      openapi.Bearer, Counted: true, Body: "SnapshotCreate", Status: 201, Success: "Snapshot",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("GET "+path, store.RightRead, protect(h.handleList()), openapi.Operation{
		ID: "listSnapshots", Tag: "snapshots", Summary: "List the snapshots of a project",
		Description: "Newest first (ties by name), without their records; limit, offset, search (on the name) and collection (the collection they were taken of, as named then) apply." + scope,
		Access:      openapi.Bearer, Counted: true, Query: []string{"limit", "offset", "search", "snapshotCollection"}, Status: 200, Success: "SnapshotList",
		Errors: underProject,
	})
	rt.handle("GET "+one, store.RightRead, protect(h.handleGet()), openapi.Operation{
		ID: "getSnapshot", Tag: "snapshots", Summary: "Read a snapshot and its records",
		Description: "The snapshot with clusters: {CLUSTER: {records: {NAME: {type, value}}}} as in an export; credentials masked unless reveal=true (reader; audited as one credential.reveal entry naming the snapshot as its target). An unknown name is 404." + scope,
		Access:      openapi.Bearer, Counted: true, Query: []string{"reveal"}, Status: 200, Success: "SnapshotData",
		Errors: underProject,
	})
	rt.handle("DELETE "+one, store.RightAdmin, protect(h.handleDelete()), openapi.Operation{
		ID: "deleteSnapshot", Tag: "snapshots", Summary: "Delete a snapshot",
		Description: "Admins and the owner only; audited as snapshot.delete. Its name may then be used again. An unknown name is 404." + scope,
		Access:      openapi.Bearer, Counted: true, Status: 204, Success: "NoContent",
		Errors: underProject,
	})
}

// snapshotBody is the body of POST P/snapshots.
type snapshotBody struct {
	Name        *string `json:"name"`
	Collection  *string `json:"collection"`
	Cluster     *string `json:"cluster"`
	Description *string `json:"description"`
}

// snapshotOut is a snapshot as the API shows it.
type snapshotOut struct {
	Name        string  `json:"name"`
	Collection  string  `json:"collection"`
	Cluster     *string `json:"cluster"`
	Description string  `json:"description"`
	Revision    int64   `json:"revision"`
	Records     int     `json:"records"`
	Automatic   bool    `json:"automatic"`
	CreatedAt   string  `json:"created_at"`
	CreatedBy   string  `json:"created_by"`
}

func snapshotJSON(s *store.Snapshot) snapshotOut {
	out := snapshotOut{Name: s.Name, Collection: s.Collection, Description: s.Description, Revision: s.Revision,
		Records: s.Records, Automatic: s.Automatic, CreatedAt: formatTime(s.CreatedAt), CreatedBy: s.CreatedBy}
	if s.Cluster != "" {
		out.Cluster = &s.Cluster
	}
	return out
}

// snapshotDataOut is a snapshot with its records, as GET P/snapshots/{name}
// answers it.
type snapshotDataOut struct {
	snapshotOut
	Clusters map[string]snapshotCluster `json:"clusters"`
}

// snapshotCluster is a cluster of a snapshot, as in an export.
type snapshotCluster struct {
	Records map[string]exportedRecord `json:"records"`
}

// exportedRecord is a record as an export holds it.
type exportedRecord struct {
	Type  store.DataType  `json:"type"`
	Value json.RawMessage `json:"value"`
}

// handleCreate serves POST P/snapshots.
func (h snapshots) handleCreate() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		var body snapshotBody
		present, err := envelope.Decode(r, &body)
		switch {
		case err != nil:
		case !present:
			err = envelope.BadRequest(`the body must be {"name", "collection"}, with "cluster" and "description" optional`)
		case body.Name == nil:
			err = envelope.BadRequest("name is required")
		case body.Collection == nil:
			err = envelope.BadRequest("collection is required")
		default:
			// An empty name is one the name rules refuse (400
			// VALIDATION_ERROR), as for every other name.
			err = store.ValidateSnapshotName(*body.Name)
			if err == nil {
				err = store.ValidateName(*body.Collection)
			}
			if err == nil && body.Cluster != nil {
				err = store.ValidateName(*body.Cluster)
			}
		}
		if err != nil {
			reject(w, r, h.rec.store, err)
			return
		}
		p := pathOf(r)
		p.Collection = *body.Collection
		if body.Cluster != nil {
			p.Cluster = *body.Cluster
		}
		var description string
		if body.Description != nil {
			description = *body.Description
		}
		got, err := h.snaps.CreateSnapshot(r.Context(), p, *body.Name, description)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusCreated, snapshotJSON(got), "Snapshot created")
	}
}

// handleList serves GET P/snapshots.
func (h snapshots) handleList() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		page, err := parsePage(query)
		q := store.SnapshotQuery{Limit: page.Limit, Offset: page.Offset}
		if err == nil && query.Has("search") {
			q.Search, err = filterText(query.Get("search"), "search", true)
		}
		if err == nil && query.Has("collection") {
			q.Collection, err = filterText(query.Get("collection"), "collection", true)
		}
		if err != nil {
			reject(w, r, h.rec.store, err)
			return
		}
		items, total, err := h.snaps.FindSnapshots(r.Context(), pathOf(r), q)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		streamPage(w, r, total, page, store.Items(items), func(out *stream, it *store.Snapshot) error {
			return appendJSONValue(out, snapshotJSON(it))
		}, nil)
	}
}

// handleGet serves GET P/snapshots/{name}: the reveal's entry is written
// before any value leaves.
func (h snapshots) handleGet() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		reveal, err := parseReveal(query)
		if err != nil {
			h.rec.rejectRevealing(w, r, query, err)
			return
		}
		p := h.rec.revealing(pathOf(r), reveal)
		name := r.PathValue("name")
		got, err := h.snaps.FindSnapshot(r.Context(), p, name)
		if err == nil && reveal && h.rec.audit != nil {
			err = h.snaps.RecordSnapshotReveal(r.Context(), p, name)
		}
		out := snapshotDataOut{Clusters: map[string]snapshotCluster{}}
		if err == nil {
			out.snapshotOut = snapshotJSON(got)
			err = h.snaps.SnapshotRecords(r.Context(), p, name, func(cluster string, rec *store.Record) error {
				k, ok := out.Clusters[cluster]
				if !ok {
					k = snapshotCluster{Records: map[string]exportedRecord{}}
					out.Clusters[cluster] = k
				}
				if rec == nil {
					return nil
				}
				v, err := h.rec.creds.visible(rec, reveal)
				k.Records[rec.Name] = exportedRecord{Type: rec.Type, Value: v}
				return err
			})
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusOK, out, "OK")
	}
}

// handleDelete serves DELETE P/snapshots/{name}.
func (h snapshots) handleDelete() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		if err := h.snaps.DeleteSnapshot(r.Context(), pathOf(r), r.PathValue("name")); err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.NoContent(w)
	}
}

// snapshotSide resolves the from_snapshot of a diff or a promote against
// to: the snapshot's side, or ErrNotFound, or 400 when its kind is not
// to's (a collection pairs with a collection, a cluster with a cluster).
func (rec records) snapshotSide(r *http.Request, p store.Path, name string, to store.Side) (store.Side, error) {
	sn, ok := rec.store.(store.Snapshots)
	if !ok {
		return store.Side{}, &store.NotFoundError{Kind: "snapshot", Name: name}
	}
	got, err := sn.FindSnapshot(r.Context(), p, name)
	if err != nil {
		return store.Side{}, err
	}
	if (got.Cluster == "") != (to.Cluster == "") {
		return store.Side{}, envelope.BadRequest("a snapshot of a collection pairs with a collection, of a cluster with a cluster")
	}
	return got.Side(), nil
}

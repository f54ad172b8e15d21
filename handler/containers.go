package handler

import (
	"context"
	"net/http"
	"net/url"
	"slices"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/store"
)

// level describes one of the three container levels (project, collection,
// cluster), which share their create, get, rename, delete and list
// handlers.
type level[T any] struct {
	title   string // "Project", for messages
	setName func(p *store.Path, name string)
	name    func(p store.Path) string
	// The store methods of the level, receiver first (method expressions).
	find   func(s store.Store, ctx context.Context, p store.Path) (T, error)
	create func(s store.Store, ctx context.Context, p store.Path) (T, error)
	rename func(s store.Store, ctx context.Context, p store.Path, name string) (T, error)
	remove func(s store.Store, ctx context.Context, p store.Path) error
	list   func(s store.Store, ctx context.Context, p store.Path, q store.ListQuery) ([]T, int, error)
	json   func(T) any
	// appendJSON appends the JSON of one item as json writes it, for
	// streamed lists.
	appendJSON func(b []byte, v T) []byte
	// position is the position of an item in a list sorted by by.
	position func(by store.SortField, v T) store.Position
}

var projects = level[*store.Project]{
	title:   "Project",
	setName: func(p *store.Path, name string) { p.Project = name },
	name:    func(p store.Path) string { return p.Project },
	find:    store.Store.FindProject,
	create:  store.Store.CreateProject,
	rename:  store.Store.RenameProject,
	remove:  store.Store.DeleteProject,
	list: func(s store.Store, ctx context.Context, p store.Path, q store.ListQuery) ([]*store.Project, int, error) {
		return s.FindProjects(ctx, p.Caller.UserID, q)
	},
	json:       func(p *store.Project) any { return projectJSON(p) },
	appendJSON: appendProject,
	position: func(by store.SortField, p *store.Project) store.Position {
		return store.At(by, p.ID, p.Name, p.CreatedAt, p.UpdatedAt)
	},
}

var collections = level[*store.Collection]{
	title:      "Collection",
	setName:    func(p *store.Path, name string) { p.Collection = name },
	name:       func(p store.Path) string { return p.Collection },
	find:       store.Store.FindCollection,
	create:     store.Store.CreateCollection,
	rename:     store.Store.RenameCollection,
	remove:     store.Store.DeleteCollection,
	list:       store.Store.FindCollections,
	json:       func(c *store.Collection) any { return collectionJSON(c) },
	appendJSON: appendCollection,
	position: func(by store.SortField, c *store.Collection) store.Position {
		return store.At(by, c.ID, c.Name, c.CreatedAt, c.UpdatedAt)
	},
}

var clusters = level[*store.Cluster]{
	title:   "Cluster",
	setName: func(p *store.Path, name string) { p.Cluster = name },
	name:    func(p store.Path) string { return p.Cluster },
	find: func(s store.Store, ctx context.Context, p store.Path) (*store.Cluster, error) {
		return s.FindCluster(ctx, p, false)
	},
	create: store.Store.CreateCluster,
	rename: store.Store.RenameCluster,
	remove: store.Store.DeleteCluster,
	list:   store.Store.FindClusters,
	json:   func(k *store.Cluster) any { return clusterJSON(k) },
	appendJSON: func(b []byte, k *store.Cluster) []byte {
		return append(appendCluster(b, k), '}')
	},
	position: func(by store.SortField, k *store.Cluster) store.Position {
		return store.At(by, k.ID, k.Name, k.CreatedAt, k.UpdatedAt)
	},
}

// nameBody is the body of the container routes.
type nameBody struct {
	Name *string `json:"name"`
}

// handleCreate serves the path form, POST P (or C, K): the name is in the
// path; a body, if any, may only repeat it.
func handleCreate[T any](s store.Store, lvl level[T]) queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		p := pathOf(r)
		var body nameBody
		present, err := decodeBody(r, query, &body)
		if err == nil && present && body.Name != nil && *body.Name != lvl.name(p) {
			err = envelope.BadRequest("the body's name differs from the name in the path")
		}
		if err == nil {
			err = store.ValidateName(lvl.name(p))
		}
		if err != nil {
			reject(w, r, s, err)
			return
		}
		created(w, r, s, lvl, p)
	}
}

// handleCreateFromBody serves the body form, POST /api/v1/projects (or
// P/collections, C/clusters) with {"name"}.
func handleCreateFromBody[T any](s store.Store, lvl level[T]) queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		p := pathOf(r)
		var body nameBody
		_, err := decodeBody(r, query, &body)
		if err == nil && body.Name == nil {
			err = envelope.BadRequest(`the field "name" is required`)
		}
		if err == nil {
			err = store.ValidateName(*body.Name)
		}
		if err != nil {
			reject(w, r, s, err)
			return
		}
		lvl.setName(&p, *body.Name)
		created(w, r, s, lvl, p)
	}
}

func created[T any](w http.ResponseWriter, r *http.Request, s store.Store, lvl level[T], p store.Path) {
	v, err := lvl.create(s, r.Context(), p)
	if err != nil {
		envelope.Error(w, r, err)
		return
	}
	envelope.OK(w, http.StatusCreated, lvl.json(v), lvl.title+" created")
}

func handleGet[T any](s store.Store, lvl level[T]) queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		v, err := lvl.find(s, r.Context(), pathOf(r))
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusOK, lvl.json(v), "OK")
	}
}

// handleRename serves PUT with ?rename=NEW or {"name": NEW}.
func handleRename[T any](s store.Store, lvl level[T]) queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		newName, err := newNameOf(r, query)
		if err == nil {
			err = store.ValidateName(newName)
		}
		if err != nil {
			reject(w, r, s, err)
			return
		}
		v, err := lvl.rename(s, r.Context(), pathOf(r), newName)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusOK, lvl.json(v), lvl.title+" updated")
	}
}

// newNameOf reads the new name of a container rename.
func newNameOf(r *http.Request, query url.Values) (string, error) {
	var body nameBody
	present, err := decodeBody(r, query, &body)
	switch {
	case err != nil:
		return "", err
	case present && body.Name != nil:
		return *body.Name, nil
	case present:
		return "", envelope.BadRequest(`the field "name" is required`)
	case query.Has("rename"):
		return query.Get("rename"), nil
	}
	return "", envelope.BadRequest(`the new name is required: ?rename=NEW or a body {"name": NEW}`)
}

func handleDelete[T any](s store.Store, lvl level[T]) queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		if err := lvl.remove(s, r.Context(), pathOf(r)); err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.NoContent(w)
	}
}

func handleList[T any](s store.Store, cur cursors, lvl level[T]) queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		q, err := parseListQuery(query, containerSortFields)
		p := pathOf(r)
		var lc *listCursor
		if err == nil {
			// A list's scope: the caller for projects, else the parent.
			lc, err = cur.open(query, &q, []string{lvl.title, p.Caller.UserID, p.Project, p.Collection})
		}
		if err != nil {
			reject(w, r, s, err)
			return
		}
		sq := q
		sq.Limit++ // one more, to tell whether there is a next page
		items, total, err := lvl.list(s, r.Context(), p, sq)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		streamPage(w, r, total, q, store.Items(items), func(out *stream, it T) error {
			out.b = lvl.appendJSON(out.b, it)
			return nil
		}, func(last T) string { return lc.next(lvl.position(q.SortBy, last)) })
	}
}

// projectRoutes registers the routes of projects: list, create, get,
// rename and delete.
func (d *deps) projectRoutes(rt *router) {
	s, cur, protect := d.cfg.Store, d.cursors, d.protect
	rt.handle("GET /api/v1/projects", noProject, protect(handleList(s, cur, projects)), openapi.Operation{
		ID: "listProjects", Tag: "projects", Summary: "List the caller's projects",
		Description: "The projects the caller owns, one page at a time: limit, offset, search (a substring of the name), sortBy and sortOrder.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Query: listQuery, Status: 200, Success: "ProjectList",
		Errors: []int{400},
	})
	rt.handle("POST /api/v1/projects", noProject, protect(handleCreateFromBody(s, projects)), openapi.Operation{
		ID: "createProject", Tag: "projects", Summary: "Create a project (body form)",
		Description: "Project names are unique across the whole service: a name anyone already uses is 409.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Body: "Name", Status: 201, Success: "Project",
		Errors: []int{400, 403, 409},
	})
	rt.handle("POST "+pathP, noProject, protect(handleCreate(s, projects)), openapi.Operation{
		ID: "createProjectAt", Tag: "projects", Summary: "Create a project (path form)",
		Description: "The name is in the path; a body, if any, may only repeat it. Project names are unique across the whole service: a name anyone already uses is 409.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Body: "PathName", Status: 201, Success: "Project",
		Errors: []int{400, 403, 409},
	})
	rt.handle("GET "+pathP, store.RightRead, protect(handleGet(s, projects)), openapi.Operation{
		ID: "getProject", Tag: "projects", Summary: "Get a project",
		Description: "The project with its collection count. A project of another user is 403.",
		Access:      openapi.Bearer, Counted: true, Status: 200, Success: "Project",
		Errors: underProject,
	})
	rt.handle("PUT "+pathP, store.RightAdmin, protect(handleRename(s, projects)), openapi.Operation{
		ID: "renameProject", Tag: "projects", Summary: "Rename a project",
		Description: "The new name comes from ?rename=NEW or from a body {\"name\": NEW}, not both. Renaming to the current name is a no-op.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"rename"}, Body: "Rename", Status: 200, Success: "Project",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("DELETE "+pathP, store.RightOwn, protect(handleDelete(s, projects)), openapi.Operation{
		ID: "deleteProject", Tag: "projects", Summary: "Delete a project and everything in it",
		Description: "Deletes the project with its collections, clusters and records, in one step.",
		Access:      openapi.Bearer, Counted: true, Status: 204, Success: "NoContent",
		Errors: underProject,
	})
}

// collectionRoutes registers the routes of collections.
func (d *deps) collectionRoutes(rt *router) {
	s, cur, protect := d.cfg.Store, d.cursors, d.protect
	rt.handle("GET "+pathP+"/collections", store.RightRead, protect(handleList(s, cur, collections)), openapi.Operation{
		ID: "listCollections", Tag: "collections", Summary: "List the collections of a project",
		Description: "The project's collections, one page at a time: limit, offset, search, sortBy and sortOrder.",
		Access:      openapi.Bearer, Counted: true, Query: listQuery, Status: 200, Success: "CollectionList",
		Errors: underProject,
	})
	rt.handle("POST "+pathP+"/collections", store.RightWrite, protect(handleCreateFromBody(s, collections)), openapi.Operation{
		ID: "createCollection", Tag: "collections", Summary: "Create a collection (body form)",
		Description: "The name is in the body. A name the project already has is 409.",
		Access:      openapi.Bearer, Counted: true, Body: "Name", Status: 201, Success: "Collection",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("POST "+pathC, store.RightWrite, protect(handleCreate(s, collections)), openapi.Operation{
		ID: "createCollectionAt", Tag: "collections", Summary: "Create a collection (path form)",
		Description: "The name is in the path; a body, if any, may only repeat it.",
		Access:      openapi.Bearer, Counted: true, Body: "PathName", Status: 201, Success: "Collection",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("GET "+pathC, store.RightRead, protect(handleGet(s, collections)), openapi.Operation{
		ID: "getCollection", Tag: "collections", Summary: "Get a collection",
		Description: "The collection with its cluster and record counts.",
		Access:      openapi.Bearer, Counted: true, Status: 200, Success: "Collection",
		Errors: underProject,
	})
	rt.handle("PUT "+pathC, store.RightWrite, protect(handleRename(s, collections)), openapi.Operation{
		ID: "renameCollection", Tag: "collections", Summary: "Rename a collection",
		Description: "The new name comes from ?rename=NEW or from a body {\"name\": NEW}, not both. Renaming to the current name is a no-op.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"rename"}, Body: "Rename", Status: 200, Success: "Collection",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("DELETE "+pathC, store.RightWrite, protect(handleDelete(s, collections)), openapi.Operation{
		ID: "deleteCollection", Tag: "collections", Summary: "Delete a collection and everything in it",
		Description: "Deletes the collection with its clusters and records, in one step.",
		Access:      openapi.Bearer, Counted: true, Status: 204, Success: "NoContent",
		Errors: underProject,
	})
}

// clusterRoutes registers the routes of clusters; GET K answers the
// cluster's data (records.go).
func (d *deps) clusterRoutes(rt *router) {
	s, cur, protect, rec := d.cfg.Store, d.cursors, d.protect, d.records
	rt.handle("GET "+pathC+"/clusters", store.RightRead, protect(handleList(s, cur, clusters)), openapi.Operation{
		ID: "listClusters", Tag: "clusters", Summary: "List the clusters of a collection",
		Description: "The collection's clusters, one page at a time: limit, offset, search, sortBy and sortOrder.",
		Access:      openapi.Bearer, Counted: true, Query: listQuery, Status: 200, Success: "ClusterList",
		Errors: underProject,
	})
	rt.handle("POST "+pathC+"/clusters", store.RightWrite, protect(handleCreateFromBody(s, clusters)), openapi.Operation{
		ID: "createCluster", Tag: "clusters", Summary: "Create a cluster (body form)",
		Description: "The name is in the body. A name the collection already has is 409.",
		Access:      openapi.Bearer, Counted: true, Body: "Name", Status: 201, Success: "Cluster",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("POST "+pathK, store.RightWrite, protect(handleCreate(s, clusters)), openapi.Operation{
		ID: "createClusterAt", Tag: "clusters", Summary: "Create a cluster (path form)",
		Description: "The name is in the path; a body, if any, may only repeat it.",
		Access:      openapi.Bearer, Counted: true, Body: "PathName", Status: 201, Success: "Cluster",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("GET "+pathK, store.RightRead, protect(rec.handleClusterData()), openapi.Operation{
		ID: "getClusterData", Tag: "clusters", Summary: "Get a cluster with the value of every record",
		Description: "data maps every record name to its value; credential values are masked unless reveal=true. With types=true, types maps every record name to its type name. With format=env, the answer is the cluster's environment file (text/plain, not enveloped): NAME='value' lines for the records whose names are environment variable names, X-Hds-Skipped-Records counting the others. The ETag header names the cluster's stored state, the same for both forms, masked or revealed (with resolve=true, also the state of every record the answer was built from); with If-None-Match naming it (or *) the answer is 304 without a body.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"reveal", "resolve", "types", "format"}, Headers: []string{"ifNoneMatch"}, Status: 200, Success: "ClusterData",
		Errors: slices.Concat(underProject, []int{422}),
		Other:  map[int]string{304: "ClusterNotModified"},
	})
	rt.handle("PUT "+pathK, store.RightWrite, protect(handleRename(s, clusters)), openapi.Operation{
		ID: "renameCluster", Tag: "clusters", Summary: "Rename a cluster",
		Description: "The new name comes from ?rename=NEW or from a body {\"name\": NEW}, not both. Renaming to the current name is a no-op.",
		Access:      openapi.Bearer, Counted: true, Query: []string{"rename"}, Body: "Rename", Status: 200, Success: "Cluster",
		Errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("DELETE "+pathK, store.RightWrite, protect(handleDelete(s, clusters)), openapi.Operation{
		ID: "deleteCluster", Tag: "clusters", Summary: "Delete a cluster and its records",
		Description: "Deletes the cluster with its records, in one step.",
		Access:      openapi.Bearer, Counted: true, Status: 204, Success: "NoContent",
		Errors: underProject,
	})
}

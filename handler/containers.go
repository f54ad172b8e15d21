package handler

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hds-go/hds/internal/envelope"
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

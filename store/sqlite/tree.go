package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/hds-go/hds/store"
)

// proj is a project row as path resolution finds it, with the caller's
// standing.
type proj struct {
	store.Project
	bytes    int64
	standing store.Standing
}

// coll is a collection row with its project.
type coll struct {
	store.Collection
	pr *proj
}

// clus is a cluster row with its collection.
type clus struct {
	store.Cluster
	c       *coll
	records int
}

// project resolves p's project and checks p.Caller's access to it
// (store.Path.Check), after the caller's deferred session check
// (resolve.go).
func (t *tx) project(p store.Path) (*proj, error) {
	r, err := t.resolve(p, toProject)
	return r.pr, err
}

// collection resolves p's collection, in one statement with its project.
func (t *tx) collection(p store.Path) (*coll, error) {
	r, err := t.resolve(p, toCollection)
	return r.c, err
}

// collectionIn finds the collection name of pr.
func (t *tx) collectionIn(pr *proj, name string) (*coll, error) {
	c := coll{pr: pr}
	var created, updated int64
	err := t.row(`SELECT id, name, created_at, updated_at FROM hds_collections WHERE project_id = ? AND name = ?`, pr.ID, name).
		Scan(&c.ID, &c.Name, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &store.NotFoundError{Kind: "collection", Name: name}
	}
	if err != nil {
		return nil, err
	}
	c.Project, c.CreatedAt, c.UpdatedAt = pr.Name, fromMicros(created), fromMicros(updated)
	return &c, nil
}

// cluster resolves p's cluster, in one statement with its project and
// collection.
func (t *tx) cluster(p store.Path) (*clus, error) {
	r, err := t.resolve(p, toCluster)
	return r.k, err
}

// clusterIn finds the cluster name of c.
func (t *tx) clusterIn(c *coll, name string) (*clus, error) {
	k := clus{c: c}
	var created, updated int64
	err := t.row(`SELECT id, name, created_at, updated_at, records, state FROM hds_clusters WHERE collection_id = ? AND name = ?`, c.ID, name).
		Scan(&k.ID, &k.Name, &created, &updated, &k.records, &k.State)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &store.NotFoundError{Kind: "cluster", Name: name}
	}
	if err != nil {
		return nil, err
	}
	k.Project, k.Collection, k.CreatedAt, k.UpdatedAt = c.pr.Name, c.Name, fromMicros(created), fromMicros(updated)
	k.RecordCount = k.records
	return &k, nil
}

// projectOut is the project as the API returns it to p.Caller.
func (t *tx) projectOut(pr *proj, p store.Path) (*store.Project, error) {
	o := pr.Project
	if err := t.row(`SELECT count(*) FROM hds_collections WHERE project_id = ?`, pr.ID).Scan(&o.CollectionCount); err != nil {
		return nil, err
	}
	o.Role = p.RoleOn(pr.standing)
	return &o, nil
}

// collectionOut is the collection with its counts.
func (t *tx) collectionOut(c *coll) (*store.Collection, error) {
	o := c.Collection
	err := t.row(`SELECT count(*), coalesce(sum(records), 0) FROM hds_clusters WHERE collection_id = ?`, c.ID).
		Scan(&o.ClusterCount, &o.RecordCount)
	return &o, err
}

// grow adds delta bytes to the project's count, or returns the
// *store.QuotaError of growing past its quota (the transaction then rolls
// back). A delta of 0 or less is never refused.
func (t *tx) grow(pr *proj, delta int64) error {
	if err := t.s.quotas.Load().CheckBytes(pr.bytes, delta); err != nil {
		return err
	}
	return t.addBytes(pr, delta)
}

// addBytes adds delta to the project's byte count without a check (in
// memory only when t.deferProject: flushProject writes it).
func (t *tx) addBytes(pr *proj, delta int64) error {
	if delta == 0 {
		return nil
	}
	pr.bytes += delta
	if t.deferProject {
		t.dirty = pr
		return nil
	}
	_, err := t.exec(`UPDATE hds_projects SET bytes = bytes + ? WHERE id = ?`, delta, pr.ID)
	return err
}

// audit writes e, made by c, as the next entry of the project's audit log:
// the project's revision moves on in the same transaction.
func (t *tx) audit(pr *proj, c store.Caller, e store.AuditEntry) error {
	if t.deferProject {
		pr.Revision++
		t.dirty = pr
	} else if err := t.row(`UPDATE hds_projects SET revision = revision + 1 WHERE id = ? RETURNING revision`, pr.ID).Scan(&pr.Revision); err != nil {
		return err
	}
	e.ProjectID, e.Project, e.Revision, e.Time = pr.ID, pr.Name, pr.Revision, t.now
	e.Stamp(c)
	var version any
	if e.Version != 0 {
		version = e.Version
	}
	if _, err := t.exec(`INSERT INTO hds_audit (project_id, revision, at, action, actor, actor_name, project,
		collection, cluster, record, record_id, version, target, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ProjectID, e.Revision, micros(e.Time), string(e.Action), nullString(e.Actor), nullString(e.ActorName), e.Project,
		nullString(e.Collection), nullString(e.Cluster), nullString(e.Record), nullString(e.RecordID), version,
		nullString(e.Target), nullString(e.RequestID)); err != nil {
		return err
	}
	t.written = append(t.written, &e)
	return t.outbox(&e)
}

// changeRevision is the project's newest revision whose entry changes
// something (not credential.reveal), 0 when none: the revision of a
// comparison and what Batch.IfRevision is checked against
// (docs/api.md#compare-and-promote). The audit table's primary key,
// (project_id, revision), is read backwards from the newest entry and
// stops at the first that is not a reveal.
func (t *tx) changeRevision(pr *proj) (int64, error) {
	var revision int64
	err := t.row(`SELECT revision FROM hds_audit WHERE project_id = ? AND action <> 'credential.reveal'
		ORDER BY revision DESC LIMIT 1`, pr.ID).Scan(&revision)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return revision, err
}

// flushProject writes the revision and byte count of the project that a
// batch (t.deferProject) changed in memory only: once, not at each op.
// Only a batch's own transaction changes the project meanwhile (there is
// one writer), so the values in memory are the project's.
func (t *tx) flushProject() error {
	if t.dirty == nil {
		return nil
	}
	pr := t.dirty
	t.dirty = nil
	_, err := t.exec(`UPDATE hds_projects SET revision = ?, bytes = ? WHERE id = ?`, pr.Revision, pr.bytes, pr.ID)
	return err
}

// size is what a name and a value count against the project's quota.
func size(name string, value []byte) int64 { return int64(len(name) + len(value)) }

// --- projects ---

// FindProjects implements store.Store. A user has at most
// limits.max_projects_per_user projects of their own, and the projects
// they are a member of: they are sorted as found.
func (s *Store) FindProjects(ctx context.Context, userID string, q store.ListQuery) ([]*store.Project, int, error) {
	var items []*store.Project
	err := s.read(ctx, func(t *tx) error {
		var l list
		l.search("p.name_lower", q.Search)
		if userID != "" {
			l.cond("(p.owner_id = ? OR m.user_id IS NOT NULL)", userID)
		}
		rows, err := t.rows(`SELECT p.id, p.name, p.owner_id, p.created_at, p.updated_at, p.revision, coalesce(m.role, ''),
			(SELECT count(*) FROM hds_collections c WHERE c.project_id = p.id)
			FROM hds_projects p LEFT JOIN hds_members m ON m.project_id = p.id AND m.user_id = ?`+l.whereClause(),
			append([]any{userID}, l.args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		caller := store.Path{Caller: store.Caller{UserID: userID}}
		for rows.Next() {
			var o store.Project
			var created, updated int64
			var role string
			if err := rows.Scan(&o.ID, &o.Name, &o.OwnerID, &created, &updated, &o.Revision, &role, &o.CollectionCount); err != nil {
				return err
			}
			o.CreatedAt, o.UpdatedAt = fromMicros(created), fromMicros(updated)
			o.Role = caller.RoleOn(store.Standing{ProjectID: o.ID, OwnerID: o.OwnerID, Member: store.Role(role)})
			if o.Role != "" {
				items = append(items, &o)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	items, total := pageProjects(items, q)
	return items, total, nil
}

// pageProjects sorts projects as q says and cuts out its page.
func pageProjects(items []*store.Project, q store.ListQuery) ([]*store.Project, int) {
	key := func(p *store.Project) store.SortKey {
		return store.SortKey{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
	}
	order := func(a, b *store.Project) int { return q.CompareKeys(key(a), key(b)) }
	total := len(items)
	if q.NoCount {
		total = store.NotCounted
	}
	if a := q.After; a != nil {
		items = slices.DeleteFunc(items, func(p *store.Project) bool { return q.CompareKeys(key(p), store.KeyAt(*a)) <= 0 })
	}
	slices.SortFunc(items, order)
	if q.Offset >= len(items) {
		return []*store.Project{}, total
	}
	items = items[q.Offset:]
	if q.Limit < len(items) {
		items = items[:q.Limit]
	}
	return items, total
}

// FindProject implements store.Store.
func (s *Store) FindProject(ctx context.Context, p store.Path) (*store.Project, error) {
	var out *store.Project
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		out, err = t.projectOut(pr, p)
		return err
	})
	return out, err
}

// CreateProject implements store.Store.
func (s *Store) CreateProject(ctx context.Context, p store.Path) (*store.Project, error) {
	if !p.Caller.CanCreateProjects() {
		return nil, store.ErrPermissionDenied
	}
	if err := store.ValidateName(p.Project); err != nil {
		return nil, err
	}
	var out *store.Project
	err := s.write(ctx, func(t *tx) error {
		var n int
		if err := t.row(`SELECT count(*) FROM hds_projects WHERE name = ?`, p.Project).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return &store.ExistsError{Kind: "project", Name: p.Project}
		}
		if err := t.row(`SELECT count(*) FROM hds_projects WHERE owner_id = ?`, p.Caller.UserID).Scan(&n); err != nil {
			return err
		}
		if err := s.quotas.Load().CheckProjects(n); err != nil {
			return err
		}
		pr := &proj{Project: store.Project{ID: store.NewID(), Name: p.Project, OwnerID: p.Caller.UserID, CreatedAt: t.now, UpdatedAt: t.now}}
		pr.standing = store.Standing{ProjectID: pr.ID, OwnerID: pr.OwnerID}
		if _, err := t.exec(`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			pr.ID, pr.Name, lower(pr.Name), pr.OwnerID, micros(t.now), micros(t.now)); err != nil {
			return err
		}
		if err := t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionProjectCreate}); err != nil {
			return err
		}
		o := pr.Project
		o.Role = store.RoleOwner
		out = &o
		return nil
	})
	return out, err
}

// RenameProject implements store.Store.
func (s *Store) RenameProject(ctx context.Context, p store.Path, newName string) (*store.Project, error) {
	if err := store.ValidateName(newName); err != nil {
		return nil, err
	}
	var out *store.Project
	err := s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if newName != pr.Name {
			var n int
			if err := t.row(`SELECT count(*) FROM hds_projects WHERE name = ?`, newName).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return &store.ExistsError{Kind: "project", Name: newName}
			}
			pr.Name, pr.UpdatedAt = newName, t.now
			if _, err := t.exec(`UPDATE hds_projects SET name = ?, name_lower = ?, updated_at = ? WHERE id = ?`,
				newName, lower(newName), micros(t.now), pr.ID); err != nil {
				return err
			}
			if err := t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionProjectRename}); err != nil {
				return err
			}
		}
		out, err = t.projectOut(pr, p)
		return err
	})
	return out, err
}

// DeleteProject implements store.Store: everything beneath the project,
// its audit log, members and tokens go with it (ON DELETE CASCADE).
func (s *Store) DeleteProject(ctx context.Context, p store.Path) error {
	return s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if _, err := t.exec(`DELETE FROM hds_projects WHERE id = ?`, pr.ID); err != nil {
			return err
		}
		t.ended = append(t.ended, pr.ID)
		return nil
	})
}

// --- collections ---

// FindCollections implements store.Store.
func (s *Store) FindCollections(ctx context.Context, p store.Path, q store.ListQuery) ([]*store.Collection, int, error) {
	var items []*store.Collection
	total := store.NotCounted
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		var l list
		l.cond("c.project_id = ?", pr.ID)
		l.search("c.name_lower", q.Search)
		if !q.NoCount {
			if err := t.row(`SELECT count(*) FROM hds_collections c`+l.whereClause(), l.args...).Scan(&total); err != nil {
				return err
			}
		}
		l.after("c", q)
		order, page := orderPage("c", q)
		rows, err := t.rows(`SELECT c.id, c.name, c.created_at, c.updated_at,
			(SELECT count(*) FROM hds_clusters k WHERE k.collection_id = c.id),
			(SELECT coalesce(sum(records), 0) FROM hds_clusters k WHERE k.collection_id = c.id)
			FROM hds_collections c`+l.whereClause()+order, append(l.args, page...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		items = []*store.Collection{}
		for rows.Next() {
			o := store.Collection{Project: pr.Name}
			var created, updated int64
			if err := rows.Scan(&o.ID, &o.Name, &created, &updated, &o.ClusterCount, &o.RecordCount); err != nil {
				return err
			}
			o.CreatedAt, o.UpdatedAt = fromMicros(created), fromMicros(updated)
			items = append(items, &o)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// FindCollection implements store.Store.
func (s *Store) FindCollection(ctx context.Context, p store.Path) (*store.Collection, error) {
	var out *store.Collection
	err := s.read(ctx, func(t *tx) error {
		c, err := t.collection(p)
		if err != nil {
			return err
		}
		out, err = t.collectionOut(c)
		return err
	})
	return out, err
}

// CreateCollection implements store.Store.
func (s *Store) CreateCollection(ctx context.Context, p store.Path) (*store.Collection, error) {
	var out *store.Collection
	err := s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		c, _, err := t.ensureCollection(pr, p.Caller, p.Collection, false)
		if err != nil {
			return err
		}
		out = &c.Collection
		return nil
	})
	return out, err
}

// ensureCollection creates the collection name of pr, by c, and returns
// it; when it exists, an *store.ExistsError, or (ensure) the collection.
func (t *tx) ensureCollection(pr *proj, c store.Caller, name string, ensure bool) (*coll, bool, error) {
	existing, err := t.collectionIn(pr, name)
	return ensureNode(t, pr, collectionNodes, pr.ID, name, ensure, existing, err, func(id string) (*coll, store.AuditEntry) {
		o := &coll{Collection: store.Collection{ID: id, Name: name, Project: pr.Name, CreatedAt: t.now, UpdatedAt: t.now}, pr: pr}
		return o, store.AuditEntry{Action: store.ActionCollectionCreate, Collection: name}
	}, c)
}

// nodes is the table of collections or of clusters: the kind its errors
// name, and the column of the parent's id.
type nodes struct {
	kind, table, parentColumn string
}

var (
	collectionNodes = nodes{kind: "collection", table: "hds_collections", parentColumn: "project_id"}
	clusterNodes    = nodes{kind: "cluster", table: "hds_clusters", parentColumn: "collection_id"}
)

// ensureNode is ensureCollection and ensureCluster: existing is the node
// name under parentID, found by its name (lookupErr matching store.ErrNotFound when there is
// none). A new node is made by made (from its new id: the node and its
// audit entry), inserted and audited, by caller, after the name's check
// and the project's byte quota; it reports whether it made one.
func ensureNode[T any](t *tx, pr *proj, n nodes, parentID, name string, ensure bool, existing T, lookupErr error,
	made func(id string) (T, store.AuditEntry), caller store.Caller) (T, bool, error) {
	var zero T
	switch {
	case lookupErr == nil && ensure:
		return existing, false, nil
	case lookupErr == nil:
		if err := store.ValidateName(name); err != nil {
			return zero, false, err
		}
		return zero, false, &store.ExistsError{Kind: n.kind, Name: name}
	case !errors.Is(lookupErr, store.ErrNotFound):
		return zero, false, lookupErr
	}
	if err := store.ValidateName(name); err != nil {
		return zero, false, err
	}
	if err := t.grow(pr, int64(len(name))); err != nil {
		return zero, false, err
	}
	id := store.NewID()
	o, entry := made(id)
	if _, err := t.exec(`INSERT INTO `+n.table+` (id, `+n.parentColumn+`, name, name_lower, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		id, parentID, name, lower(name), micros(t.now), micros(t.now)); err != nil {
		return zero, false, err
	}
	return o, true, t.audit(pr, caller, entry)
}

// renameNode renames the node id of pr, named name, to newName, when that
// is not its name already (the caller has
// checked the name): taken looks newName up among its siblings (an error
// matching store.ErrNotFound when it is free); the project's byte quota,
// the row and its audit entry, by caller, follow. It reports whether it
// renamed.
func (t *tx) renameNode(pr *proj, n nodes, id, name, newName string, taken func(name string) error,
	caller store.Caller, entry store.AuditEntry) (bool, error) {
	if newName == name {
		return false, nil
	}
	if err := taken(newName); err == nil {
		return false, &store.ExistsError{Kind: n.kind, Name: newName}
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	if err := t.grow(pr, int64(len(newName)-len(name))); err != nil {
		return false, err
	}
	if _, err := t.exec(`UPDATE `+n.table+` SET name = ?, name_lower = ?, updated_at = ? WHERE id = ?`,
		newName, lower(newName), micros(t.now), id); err != nil {
		return false, err
	}
	return true, t.audit(pr, caller, entry)
}

// RenameCollection implements store.Store.
func (s *Store) RenameCollection(ctx context.Context, p store.Path, newName string) (*store.Collection, error) {
	if err := store.ValidateName(newName); err != nil {
		return nil, err
	}
	var out *store.Collection
	err := s.write(ctx, func(t *tx) error {
		c, err := t.collection(p)
		if err != nil {
			return err
		}
		renamed, err := t.renameNode(c.pr, collectionNodes, c.ID, c.Name, newName,
			func(name string) error { _, err := t.collectionIn(c.pr, name); return err },
			p.Caller, store.AuditEntry{Action: store.ActionCollectionRename, Collection: newName})
		if err != nil {
			return err
		}
		if renamed {
			c.Name, c.UpdatedAt = newName, t.now
		}
		out, err = t.collectionOut(c)
		return err
	})
	return out, err
}

// DeleteCollection implements store.Store.
func (s *Store) DeleteCollection(ctx context.Context, p store.Path) error {
	return s.write(ctx, func(t *tx) error {
		c, err := t.collection(p)
		if err != nil {
			return err
		}
		return t.deleteCollection(c, p.Caller)
	})
}

// deleteCollection deletes c and everything beneath it, by caller.
func (t *tx) deleteCollection(c *coll, caller store.Caller) error {
	var n int64
	if err := t.row(`SELECT ? + coalesce((SELECT sum(length(CAST(k.name AS BLOB))) FROM hds_clusters k WHERE k.collection_id = ?), 0)
		+ coalesce((SELECT sum(r.bytes) FROM hds_records r JOIN hds_clusters k ON k.id = r.cluster_id WHERE k.collection_id = ?), 0)`,
		len(c.Name), c.ID, c.ID).Scan(&n); err != nil {
		return err
	}
	if _, err := t.exec(`DELETE FROM hds_collections WHERE id = ?`, c.ID); err != nil {
		return err
	}
	if err := t.addBytes(c.pr, -n); err != nil {
		return err
	}
	return t.audit(c.pr, caller, store.AuditEntry{Action: store.ActionCollectionDelete, Collection: c.Name})
}

// --- clusters ---

// FindClusters implements store.Store.
func (s *Store) FindClusters(ctx context.Context, p store.Path, q store.ListQuery) ([]*store.Cluster, int, error) {
	var items []*store.Cluster
	total := store.NotCounted
	err := s.read(ctx, func(t *tx) error {
		c, err := t.collection(p)
		if err != nil {
			return err
		}
		var l list
		l.cond("k.collection_id = ?", c.ID)
		l.search("k.name_lower", q.Search)
		if !q.NoCount {
			if err := t.row(`SELECT count(*) FROM hds_clusters k`+l.whereClause(), l.args...).Scan(&total); err != nil {
				return err
			}
		}
		l.after("k", q)
		order, page := orderPage("k", q)
		rows, err := t.rows(`SELECT k.id, k.name, k.created_at, k.updated_at, k.records, k.state FROM hds_clusters k`+
			l.whereClause()+order, append(l.args, page...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		items = []*store.Cluster{}
		for rows.Next() {
			o := store.Cluster{Project: c.pr.Name, Collection: c.Name}
			var created, updated int64
			if err := rows.Scan(&o.ID, &o.Name, &created, &updated, &o.RecordCount, &o.State); err != nil {
				return err
			}
			o.CreatedAt, o.UpdatedAt = fromMicros(created), fromMicros(updated)
			items = append(items, &o)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// KeepsClusterState implements store.ClusterStateKeeper: Cluster.State
// moves with every change of the cluster's stored state.
func (s *Store) KeepsClusterState() bool { return true }

// FindCluster implements store.Store.
func (s *Store) FindCluster(ctx context.Context, p store.Path, records bool) (*store.Cluster, error) {
	var out *store.Cluster
	read := s.read
	if !records {
		read = s.readOne // one statement
	}
	err := read(ctx, func(t *tx) error {
		k, err := t.cluster(p)
		if err != nil {
			return err
		}
		out = &k.Cluster
		if records {
			out.Records = []*store.Record{}
			return t.eachPacked(`SELECT `+packedRecord+` FROM hds_records r WHERE r.cluster_id = ? ORDER BY r.name`,
				[]any{k.ID}, func(r *store.Record) error {
					out.Records = append(out.Records, r)
					return nil
				})
		}
		return nil
	})
	return out, err
}

// CreateCluster implements store.Store.
func (s *Store) CreateCluster(ctx context.Context, p store.Path) (*store.Cluster, error) {
	var out *store.Cluster
	err := s.write(ctx, func(t *tx) error {
		c, err := t.collection(p)
		if err != nil {
			return err
		}
		k, _, err := t.ensureCluster(c, p.Caller, p.Cluster, false)
		if err != nil {
			return err
		}
		out = &k.Cluster
		return nil
	})
	return out, err
}

// ensureCluster creates the cluster name of c, by caller, and returns it;
// when it exists, an *store.ExistsError, or (ensure) the cluster.
func (t *tx) ensureCluster(c *coll, caller store.Caller, name string, ensure bool) (*clus, bool, error) {
	existing, err := t.clusterIn(c, name)
	return ensureNode(t, c.pr, clusterNodes, c.ID, name, ensure, existing, err, func(id string) (*clus, store.AuditEntry) {
		k := &clus{Cluster: store.Cluster{ID: id, Name: name, Project: c.pr.Name, Collection: c.Name, CreatedAt: t.now, UpdatedAt: t.now}, c: c}
		return k, store.AuditEntry{Action: store.ActionClusterCreate, Collection: c.Name, Cluster: name}
	}, caller)
}

// RenameCluster implements store.Store.
func (s *Store) RenameCluster(ctx context.Context, p store.Path, newName string) (*store.Cluster, error) {
	if err := store.ValidateName(newName); err != nil {
		return nil, err
	}
	var out *store.Cluster
	err := s.write(ctx, func(t *tx) error {
		k, err := t.cluster(p)
		if err != nil {
			return err
		}
		renamed, err := t.renameNode(k.c.pr, clusterNodes, k.ID, k.Name, newName,
			func(name string) error { _, err := t.clusterIn(k.c, name); return err },
			p.Caller, store.AuditEntry{Action: store.ActionClusterRename, Collection: k.c.Name, Cluster: newName})
		if err != nil {
			return err
		}
		if renamed {
			k.Name, k.UpdatedAt = newName, t.now
			k.State++ // as hds_clusters_state_rename did
		}
		out = &k.Cluster
		return nil
	})
	return out, err
}

// DeleteCluster implements store.Store.
func (s *Store) DeleteCluster(ctx context.Context, p store.Path) error {
	return s.write(ctx, func(t *tx) error {
		k, err := t.cluster(p)
		if err != nil {
			return err
		}
		return t.deleteCluster(k, p.Caller)
	})
}

// deleteCluster deletes k and its records, by caller.
func (t *tx) deleteCluster(k *clus, caller store.Caller) error {
	var n int64
	if err := t.row(`SELECT ? + coalesce((SELECT sum(bytes) FROM hds_records WHERE cluster_id = ?), 0)`, len(k.Name), k.ID).Scan(&n); err != nil {
		return err
	}
	if _, err := t.exec(`DELETE FROM hds_clusters WHERE id = ?`, k.ID); err != nil {
		return err
	}
	if err := t.addBytes(k.c.pr, -n); err != nil {
		return err
	}
	return t.audit(k.c.pr, caller, store.AuditEntry{Action: store.ActionClusterDelete, Collection: k.c.Name, Cluster: k.Name})
}

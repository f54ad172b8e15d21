package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/hds-go/hds/store"
)

// Levels of a path, for resolve.
const (
	levelProject = iota + 1
	levelCollection
	levelCluster
)

// resolved holds the ids along a path.
type resolved struct {
	project             string
	standing            store.Standing
	collection, cluster sql.NullString
}

// memberRoleSQL is the role of the member $N of project p, a column of
// the statements that resolve a path: one primary-key probe in the same
// round trip (NULL for a user who is not a member, or an API token).
func memberRoleSQL(n string) string {
	return `(SELECT m.role FROM hds_members m WHERE m.project_id = p.id AND m.user_id = $` + n + `)`
}

// resolveQuery finds a project, the caller's member role and, when they
// exist, the collection and cluster below it, in one round trip; its
// session form also checks a deferred session ($5, $6).
var resolveQuery = newPathQuery(`SELECT p.id, p.owner_id, `+memberRoleSQL("4")+`, c.id, k.id
FROM hds_projects p
LEFT JOIN hds_collections c ON c.project_id = p.id AND c.name = $2
LEFT JOIN hds_clusters k ON k.collection_id = c.id AND k.name = $3
WHERE p.name = $1`, 4)

// resolve looks the path up to depth and checks it in the order of the
// Store contract: the caller's deferred session (sessionSQL), project,
// access (store.Path.Check), then each level below.
func (q queryer) resolve(ctx context.Context, p store.Path, depth int) (resolved, error) {
	var r resolved
	var err error
	args := []any{lookupName(p.Project), lookupName(p.Collection), lookupName(p.Cluster), p.Caller.UserID}
	if r.standing, err = q.resolveRow(ctx, p, resolveQuery, args, &r.collection, &r.cluster); err != nil {
		return r, err
	}
	r.project = r.standing.ProjectID
	return r, checkPath(p, depth, r.standing, r.collection.Valid, r.cluster.Valid)
}

// findWithin runs a list of what one level of a path holds (a project's
// members, tokens, audit entries or collections, a collection's clusters,
// a cluster's records) as one call of the Store: it resolves p to depth,
// checking the caller's access, then lists with find on the pool.
func findWithin[T any](ctx context.Context, s *Store, p store.Path, depth int,
	find func(ctx context.Context, q queryer, r resolved) ([]T, int, error)) (_ []T, _ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, depth)
	if err != nil {
		return nil, 0, err
	}
	return find(ctx, q, r)
}

// inProjectTx runs change in one transaction after resolving p's
// project in it, checking the caller's access first.
func (s *Store) inProjectTx(ctx context.Context, p store.Path, change func(q queryer, r resolved) error) error {
	return s.inTx(ctx, func(q queryer) error {
		r, err := q.resolve(ctx, p, levelProject)
		if err != nil {
			return err
		}
		return change(q, r)
	})
}

// checkPath reports the first problem with a looked-up path: the
// caller's access, then the first missing level below the project.
func checkPath(p store.Path, depth int, st store.Standing, collectionFound, clusterFound bool) error {
	if err := p.Check(true, st); err != nil {
		return err
	}
	switch {
	case depth >= levelCollection && !collectionFound:
		return &store.NotFoundError{Kind: "collection", Name: p.Collection}
	case depth >= levelCluster && !clusterFound:
		return &store.NotFoundError{Kind: "cluster", Name: p.Cluster}
	}
	return nil
}

// notFoundOr maps sql.ErrNoRows to a NotFoundError and classifies the rest.
func notFoundOr(err error, kind, name string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return &store.NotFoundError{Kind: kind, Name: name}
	}
	return classify(err)
}

// orderBy builds the ORDER BY of a list: the sort field in the asked
// direction, then name and id ascending. Columns are written as given.
func orderBy(q store.ListQuery, columns map[store.SortField]string) string {
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	col := columns[q.SortBy]
	if col == "" {
		col = columns[store.SortName]
	}
	var b strings.Builder
	for i, c := range strings.Split(col, ",") {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c + dir)
	}
	b.WriteString(", name ASC, id ASC")
	return b.String()
}

var containerColumns = map[store.SortField]string{
	store.SortName:      "name",
	store.SortID:        "id",
	store.SortCreatedAt: "created_at",
	store.SortUpdatedAt: "updated_at",
}

// scanList reads rows whose last column is totalColumn, and returns the
// items and the total. When the page is empty the total is counted
// separately by count; a nil count (NoCount) answers store.NotCounted.
func scanList[T any](rows *sql.Rows, scan func(*sql.Rows, *int) (T, error), count func() (int, error)) ([]T, int, error) {
	defer rows.Close()
	items := []T{}
	total := 0
	for rows.Next() {
		it, err := scan(rows, &total)
		if err != nil {
			return nil, 0, classify(err)
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, classify(err)
	}
	if len(items) == 0 {
		if count == nil {
			return items, store.NotCounted, nil
		}
		n, err := count()
		return items, n, err
	}
	return items, total, nil
}

// totalColumn is the last column of a list statement over table where
// where holds: the number of matches, or with NoCount a constant, so that
// nothing is counted. The count is a subquery of its own (run once), not
// count(*) OVER (), which would read and keep every match in the list's
// order before the first row came out: the page stays an index range of
// LIMIT rows and the count takes the cheapest path to the number.
func totalColumn(lq store.ListQuery, table, where string) string {
	if lq.NoCount {
		return "-1" // store.NotCounted
	}
	return "(SELECT count(*) FROM " + table + " WHERE " + where + ")"
}

// emptyTotal is the total of a list known to match nothing.
func emptyTotal(lq store.ListQuery) int {
	if lq.NoCount {
		return store.NotCounted
	}
	return 0
}

// counter returns count, or nil when lq asks for no count.
func counter(lq store.ListQuery, count func() (int, error)) func() (int, error) {
	if lq.NoCount {
		return nil
	}
	return count
}

func (q queryer) count(ctx context.Context, query string, args ...any) (int, error) {
	row, err := q.row(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	var n int
	return n, classify(row.Scan(&n))
}

// insert runs an INSERT ... ON CONFLICT DO NOTHING RETURNING 1: no row
// means the name is taken; a foreign key violation means the parent was
// deleted meanwhile.
func (q queryer) insert(ctx context.Context, kind, name, parentKind, parentName, query string, args ...any) error {
	row, err := q.row(ctx, query, args...)
	if err != nil {
		return err
	}
	var one int
	switch err := row.Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return &store.ExistsError{Kind: kind, Name: name}
	case isForeignKeyViolation(err):
		return &store.NotFoundError{Kind: parentKind, Name: parentName}
	case isUniqueViolation(err):
		return &store.ExistsError{Kind: kind, Name: name}
	case err != nil:
		return classify(err)
	}
	return nil
}

// renamed maps the error of a renaming UPDATE ... RETURNING: a taken name
// is an ExistsError, no row is sql.ErrNoRows (the caller says which level
// is missing), the rest is classified.
func renamed(err error, kind, newName string) error {
	switch {
	case err == nil, errors.Is(err, sql.ErrNoRows):
		return err
	case isUniqueViolation(err):
		return &store.ExistsError{Kind: kind, Name: newName}
	}
	return classify(err)
}

// deleteByID deletes one row (and, by ON DELETE CASCADE, everything
// beneath it); a row already gone is a NotFoundError, so that of two
// concurrent deletes exactly one succeeds.
func (q queryer) deleteByID(ctx context.Context, table, id, kind, name string) error {
	return q.execOne(ctx, kind, name, `DELETE FROM `+table+` WHERE id = $1`, id)
}

// --- projects ---

const projectColumns = `p.id, p.name, p.owner_id, p.created_at, p.updated_at,
	(SELECT count(*) FROM hds_collections c WHERE c.project_id = p.id), p.revision`

func scanCollection(row interface{ Scan(...any) error }, project string, extra ...any) (*store.Collection, error) {
	c := store.Collection{Project: project}
	err := row.Scan(append([]any{&c.ID, &c.Name, &c.CreatedAt, &c.UpdatedAt, &c.ClusterCount, &c.RecordCount}, extra...)...)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c, err
}

// FindCollections implements store.Store.
func (s *Store) FindCollections(ctx context.Context, p store.Path, lq store.ListQuery) ([]*store.Collection, int, error) {
	return findWithin(ctx, s, p, levelProject, func(ctx context.Context, q queryer, r resolved) ([]*store.Collection, int, error) {
		where := `project_id = $1 AND ($2::text IS NULL OR name_lower LIKE $2 ESCAPE '\')`
		search := likePattern(lq.Search)
		return findContainers(ctx, q, lq, collectionColumns, "hds_collections c", where, []any{r.project, search},
			func(row *sql.Rows, total *int) (*store.Collection, error) {
				return scanCollection(row, p.Project, total)
			})
	})
}

// FindCollection implements store.Store.
func (s *Store) FindCollection(ctx context.Context, p store.Path) (_ *store.Collection, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.q().findCollection(ctx, p)
}

func (q queryer) findCollection(ctx context.Context, p store.Path) (*store.Collection, error) {
	r, err := q.resolve(ctx, p, levelCollection)
	if err != nil {
		return nil, err
	}
	row, err := q.row(ctx, `SELECT `+collectionColumns+` FROM hds_collections c WHERE c.id = $1`, r.collection.String)
	if err != nil {
		return nil, err
	}
	c, err := scanCollection(row, p.Project)
	if err != nil {
		return nil, notFoundOr(err, "collection", p.Collection)
	}
	return c, nil
}

// CreateCollection implements store.Store.
func (s *Store) CreateCollection(ctx context.Context, p store.Path) (_ *store.Collection, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelProject)
	if err != nil {
		return nil, err
	}
	if err := store.ValidateName(p.Collection); err != nil {
		return nil, err
	}
	now := s.now()
	c := &store.Collection{ID: store.NewID(), Name: p.Collection, Project: p.Project, CreatedAt: now, UpdatedAt: now}
	err = s.inTx(ctx, func(q queryer) error {
		if err := q.lockProject(ctx, r.project); err != nil {
			return err
		}
		err := q.insert(ctx, "collection", c.Name, "project", p.Project, `INSERT INTO hds_collections
			(id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (project_id, name) DO NOTHING RETURNING 1`,
			c.ID, r.project, c.Name, strings.ToLower(c.Name), now)
		if err != nil {
			return err
		}
		if err := q.addBytes(ctx, r.project, int64(len(c.Name)), s.currentQuotas(), p.Project); err != nil {
			return err
		}
		_, err = q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionCollectionCreate, Collection: c.Name})
		return err
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// RenameCollection implements store.Store: the UPDATE finds the
// collection by its current name, so that of concurrent renames exactly
// one succeeds and the others get ErrNotFound.
func (s *Store) RenameCollection(ctx context.Context, p store.Path, newName string) (_ *store.Collection, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if err := store.ValidateName(newName); err != nil {
		return nil, err
	}
	q := s.q()
	if newName == p.Collection {
		return q.findCollection(ctx, p)
	}
	r, err := q.resolve(ctx, p, levelCollection)
	if err != nil {
		return nil, err
	}
	var c *store.Collection
	err = s.inTx(ctx, func(q queryer) error {
		if err := q.lockProject(ctx, r.project); err != nil {
			return err
		}
		row, err := q.row(ctx, `UPDATE hds_collections c SET name = $3, name_lower = $4, updated_at = $5
			WHERE c.project_id = $1 AND c.name = $2 RETURNING `+collectionColumns,
			r.project, p.Collection, newName, strings.ToLower(newName), s.now())
		if err != nil {
			return err
		}
		c, err = scanCollection(row, p.Project)
		switch err = renamed(err, "collection", newName); {
		case errors.Is(err, sql.ErrNoRows):
			return &store.NotFoundError{Kind: "collection", Name: p.Collection}
		case err != nil:
			return err
		}
		if err := q.addBytes(ctx, r.project, int64(len(newName)-len(p.Collection)), s.currentQuotas(), p.Project); err != nil {
			return err
		}
		_, err = q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionCollectionRename, Collection: newName})
		return err
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// DeleteCollection implements store.Store.
func (s *Store) DeleteCollection(ctx context.Context, p store.Path) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelCollection)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(q queryer) error {
		if err := q.lockProject(ctx, r.project); err != nil {
			return err
		}
		_, err := q.deleteCollection(ctx, p.Caller, r.collection.String, p.Collection, r.project, p.Project)
		return err
	})
}

// deleteCollection deletes the collection with id (named name) of the
// project with projectID, by c, takes what it counted off the project's
// bytes (store.Quotas) and writes its audit entry. It returns the bytes
// taken off.
func (q queryer) deleteCollection(ctx context.Context, c store.Caller, id, name, projectID, projectName string) (int64, error) {
	// Lock what goes, so that the bytes counted are the bytes deleted.
	if _, err := q.exec(ctx, `SELECT 1 FROM hds_clusters WHERE collection_id = $1 FOR UPDATE`, id); err != nil {
		return 0, err
	}
	in := `r.cluster_id IN (SELECT id FROM hds_clusters WHERE collection_id = $1)`
	if _, err := q.exec(ctx, `SELECT 1 FROM hds_records r WHERE `+in+` FOR UPDATE`, id); err != nil {
		return 0, err
	}
	n, err := q.sum(ctx, `SELECT (`+fmt.Sprintf(bytesSQL, in, in)+`)
		+ (SELECT coalesce(sum(octet_length(name)), 0) FROM hds_clusters WHERE collection_id = $1)
		+ (SELECT coalesce(sum(octet_length(name)), 0) FROM hds_collections WHERE id = $1)`, id)
	if err != nil {
		return 0, err
	}
	if err := q.deleteByID(ctx, "hds_collections", id, "collection", name); err != nil {
		return 0, err
	}
	if err := q.addBytes(ctx, projectID, -n, store.Quotas{}, projectName); err != nil {
		return 0, err
	}
	_, err = q.audit(ctx, projectID, c, store.AuditEntry{Action: store.ActionCollectionDelete, Collection: name})
	return n, err
}

// --- clusters ---

const clusterColumns = `k.id, k.name, k.created_at, k.updated_at, k.state,
	(SELECT count(*) FROM hds_records r WHERE r.cluster_id = k.id)`

func scanCluster(row interface{ Scan(...any) error }, p store.Path, extra ...any) (*store.Cluster, error) {
	k := store.Cluster{Project: p.Project, Collection: p.Collection}
	err := row.Scan(append([]any{&k.ID, &k.Name, &k.CreatedAt, &k.UpdatedAt, &k.State, &k.RecordCount}, extra...)...)
	k.CreatedAt, k.UpdatedAt = k.CreatedAt.UTC(), k.UpdatedAt.UTC()
	return &k, err
}

// FindClusters implements store.Store.
func (s *Store) FindClusters(ctx context.Context, p store.Path, lq store.ListQuery) ([]*store.Cluster, int, error) {
	return findWithin(ctx, s, p, levelCollection, func(ctx context.Context, q queryer, r resolved) ([]*store.Cluster, int, error) {
		where := `collection_id = $1 AND ($2::text IS NULL OR name_lower LIKE $2 ESCAPE '\')`
		search := likePattern(lq.Search)
		return findContainers(ctx, q, lq, clusterColumns, "hds_clusters k", where, []any{r.collection.String, search},
			func(row *sql.Rows, total *int) (*store.Cluster, error) { return scanCluster(row, p, total) })
	})
}

// KeepsClusterState implements store.ClusterStateKeeper: Cluster.State
// moves with every change of the cluster's stored state.
func (s *Store) KeepsClusterState() bool { return true }

// FindCluster implements store.Store.
func (s *Store) FindCluster(ctx context.Context, p store.Path, withRecords bool) (_ *store.Cluster, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelCluster)
	if err != nil {
		return nil, err
	}
	k, err := q.findCluster(ctx, p, r.cluster.String)
	if err != nil || !withRecords {
		return k, err
	}
	rows, err := q.rows(ctx, `SELECT `+recordColumns+` FROM hds_records r WHERE r.cluster_id = $1 ORDER BY r.name`, k.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	k.Records = []*store.Record{}
	for rows.Next() {
		rec, err := scanRecord(rows)
		if err != nil {
			return nil, classify(err)
		}
		k.Records = append(k.Records, rec)
	}
	return k, classify(rows.Err())
}

// findCluster reads the cluster with that id, named by p.
func (q queryer) findCluster(ctx context.Context, p store.Path, id string) (*store.Cluster, error) {
	row, err := q.row(ctx, `SELECT `+clusterColumns+` FROM hds_clusters k WHERE k.id = $1`, id)
	if err != nil {
		return nil, err
	}
	k, err := scanCluster(row, p)
	if err != nil {
		return nil, notFoundOr(err, "cluster", p.Cluster)
	}
	return k, nil
}

// CreateCluster implements store.Store.
func (s *Store) CreateCluster(ctx context.Context, p store.Path) (_ *store.Cluster, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelCollection)
	if err != nil {
		return nil, err
	}
	if err := store.ValidateName(p.Cluster); err != nil {
		return nil, err
	}
	now := s.now()
	k := &store.Cluster{ID: store.NewID(), Name: p.Cluster, Project: p.Project, Collection: p.Collection, CreatedAt: now, UpdatedAt: now}
	err = s.inTx(ctx, func(q queryer) error {
		if err := q.lockProject(ctx, r.project); err != nil {
			return err
		}
		err := q.insert(ctx, "cluster", k.Name, "collection", p.Collection, `INSERT INTO hds_clusters
			(id, collection_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (collection_id, name) DO NOTHING RETURNING 1`,
			k.ID, r.collection.String, k.Name, strings.ToLower(k.Name), now)
		if err != nil {
			return err
		}
		if err := q.addBytes(ctx, r.project, int64(len(k.Name)), s.currentQuotas(), p.Project); err != nil {
			return err
		}
		_, err = q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionClusterCreate,
			Collection: p.Collection, Cluster: k.Name})
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// RenameCluster implements store.Store: the UPDATE finds the cluster by
// its current name, so that of concurrent renames exactly one succeeds
// and the others get ErrNotFound.
func (s *Store) RenameCluster(ctx context.Context, p store.Path, newName string) (_ *store.Cluster, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if err := store.ValidateName(newName); err != nil {
		return nil, err
	}
	q := s.q()
	r, err := q.resolve(ctx, p, levelCluster)
	if err != nil {
		return nil, err
	}
	if newName == p.Cluster {
		return q.findCluster(ctx, p, r.cluster.String)
	}
	var k *store.Cluster
	err = s.inTx(ctx, func(q queryer) error {
		if err := q.lockProject(ctx, r.project); err != nil {
			return err
		}
		row, err := q.row(ctx, `UPDATE hds_clusters k SET name = $3, name_lower = $4, updated_at = $5
			WHERE k.collection_id = $1 AND k.name = $2 RETURNING `+clusterColumns,
			r.collection.String, p.Cluster, newName, strings.ToLower(newName), s.now())
		if err != nil {
			return err
		}
		k, err = scanCluster(row, p)
		switch err = renamed(err, "cluster", newName); {
		case errors.Is(err, sql.ErrNoRows):
			return &store.NotFoundError{Kind: "cluster", Name: p.Cluster}
		case err != nil:
			return err
		}
		if err := q.addBytes(ctx, r.project, int64(len(newName)-len(p.Cluster)), s.currentQuotas(), p.Project); err != nil {
			return err
		}
		_, err = q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionClusterRename,
			Collection: p.Collection, Cluster: newName})
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// DeleteCluster implements store.Store.
func (s *Store) DeleteCluster(ctx context.Context, p store.Path) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelCluster)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(q queryer) error {
		if err := q.lockProject(ctx, r.project); err != nil {
			return err
		}
		_, err := q.deleteCluster(ctx, p.Caller, r.cluster.String, p.Collection, p.Cluster, r.project, p.Project)
		return err
	})
}

// deleteCluster deletes the cluster with id (named name, in the
// collection named collection) of the project with projectID, by c,
// takes what it counted off the project's bytes (store.Quotas) and writes
// its audit entry. It returns the bytes taken off.
func (q queryer) deleteCluster(ctx context.Context, c store.Caller, id, collection, name, projectID, projectName string) (int64, error) {
	// Lock what goes, so that the bytes counted are the bytes deleted.
	if err := q.lockCluster(ctx, id, name); err != nil {
		return 0, err
	}
	if _, err := q.exec(ctx, `SELECT 1 FROM hds_records WHERE cluster_id = $1 FOR UPDATE`, id); err != nil {
		return 0, err
	}
	in := `r.cluster_id = $1`
	n, err := q.sum(ctx, `SELECT (`+fmt.Sprintf(bytesSQL, in, in)+`)
		+ (SELECT coalesce(sum(octet_length(name)), 0) FROM hds_clusters WHERE id = $1)`, id)
	if err != nil {
		return 0, err
	}
	if err := q.deleteByID(ctx, "hds_clusters", id, "cluster", name); err != nil {
		return 0, err
	}
	if err := q.addBytes(ctx, projectID, -n, store.Quotas{}, projectName); err != nil {
		return 0, err
	}
	_, err = q.audit(ctx, projectID, c, store.AuditEntry{Action: store.ActionClusterDelete, Collection: collection, Cluster: name})
	return n, err
}

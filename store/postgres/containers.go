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
	project, owner      string
	collection, cluster sql.NullString
}

// resolveSQL finds a project and, when they exist, the collection and
// cluster below it, in one round trip.
const resolveSQL = `SELECT p.id, p.owner_id, c.id, k.id
FROM hds_projects p
LEFT JOIN hds_collections c ON c.project_id = p.id AND c.name = $2
LEFT JOIN hds_clusters k ON k.collection_id = c.id AND k.name = $3
WHERE p.name = $1`

// resolve looks the path up to depth and checks it in the order of the
// Store contract: project, owner, then each level below.
func (q queryer) resolve(ctx context.Context, p store.Path, depth int) (resolved, error) {
	var r resolved
	row, err := q.row(ctx, resolveSQL, lookupName(p.Project), lookupName(p.Collection), lookupName(p.Cluster))
	if err == nil {
		err = row.Scan(&r.project, &r.owner, &r.collection, &r.cluster)
	}
	if err != nil {
		return r, notFoundOr(err, "project", p.Project)
	}
	return r, checkPath(p, depth, r.owner, r.collection.Valid, r.cluster.Valid)
}

// checkPath reports the first problem with a looked-up path: the owner,
// then the first missing level below the project.
func checkPath(p store.Path, depth int, owner string, collectionFound, clusterFound bool) error {
	switch {
	case !p.Caller.IsZero() && owner != p.Caller.UserID:
		return store.ErrPermissionDenied
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

// totalColumn is the last column of a list statement: the number of
// matches, or with NoCount a constant, so that nothing is counted.
func totalColumn(lq store.ListQuery) string {
	if lq.NoCount {
		return "-1" // store.NotCounted
	}
	return "count(*) OVER ()"
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
	res, err := q.exec(ctx, `DELETE FROM `+table+` WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return classify(err)
	} else if n == 0 {
		return &store.NotFoundError{Kind: kind, Name: name}
	}
	return nil
}

// --- projects ---

const projectColumns = `p.id, p.name, p.owner_id, p.created_at, p.updated_at,
	(SELECT count(*) FROM hds_collections c WHERE c.project_id = p.id)`

func scanProject(row interface{ Scan(...any) error }, extra ...any) (*store.Project, error) {
	var p store.Project
	err := row.Scan(append([]any{&p.ID, &p.Name, &p.OwnerID, &p.CreatedAt, &p.UpdatedAt, &p.CollectionCount}, extra...)...)
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return &p, err
}

// FindProjects implements store.Store.
func (s *Store) FindProjects(ctx context.Context, owner string, lq store.ListQuery) (_ []*store.Project, _ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	where := `owner_id = $1 AND ($2::text IS NULL OR name_lower LIKE $2 ESCAPE '\')`
	search := likePattern(lq.Search)
	return findContainers(ctx, q, lq, projectColumns, "hds_projects p", where, []any{owner, search},
		func(r *sql.Rows, total *int) (*store.Project, error) { return scanProject(r, total) })
}

// FindProject implements store.Store.
func (s *Store) FindProject(ctx context.Context, p store.Path) (_ *store.Project, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.q().findProject(ctx, p)
}

func (q queryer) findProject(ctx context.Context, p store.Path) (*store.Project, error) {
	row, err := q.row(ctx, `SELECT `+projectColumns+` FROM hds_projects p WHERE p.name = $1`, lookupName(p.Project))
	if err != nil {
		return nil, err
	}
	pr, err := scanProject(row)
	if err != nil {
		return nil, notFoundOr(err, "project", p.Project)
	}
	if !p.Caller.IsZero() && pr.OwnerID != p.Caller.UserID {
		return nil, store.ErrPermissionDenied
	}
	return pr, nil
}

// CreateProject implements store.Store.
func (s *Store) CreateProject(ctx context.Context, p store.Path) (_ *store.Project, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if err := store.ValidateName(p.Project); err != nil {
		return nil, err
	}
	now := s.now()
	pr := &store.Project{ID: store.NewID(), Name: p.Project, OwnerID: p.Caller.UserID, CreatedAt: now, UpdatedAt: now}
	insert := func(q queryer) error {
		return q.insert(ctx, "project", p.Project, "", "", `INSERT INTO hds_projects
			(id, name, name_lower, owner_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (name) DO NOTHING RETURNING 1`,
			pr.ID, pr.Name, strings.ToLower(pr.Name), pr.OwnerID, now)
	}
	if quotas := s.currentQuotas(); quotas.MaxProjectsPerUser == 0 {
		err = insert(s.q())
	} else {
		err = s.inTx(ctx, func(q queryer) error {
			// The owner's projects are counted and the new one inserted
			// under a lock on the owner.
			if _, err := q.exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "hds project owner "+p.Caller.UserID); err != nil {
				return err
			}
			n, err := q.count(ctx, `SELECT count(*) FROM hds_projects WHERE owner_id = $1`, p.Caller.UserID)
			if err != nil {
				return err
			}
			if err := quotas.CheckProjects(n); err != nil {
				// A taken name is 409 first, as the insert would say.
				if err := q.nameTaken(ctx, `SELECT EXISTS (SELECT 1 FROM hds_projects WHERE name = $1)`,
					"project", p.Project, p.Project); err != nil {
					return err
				}
				return err
			}
			return insert(q)
		})
	}
	if err != nil {
		return nil, err
	}
	return pr, nil
}

// RenameProject implements store.Store, in one UPDATE that finds the
// project by its current name: of concurrent renames exactly one finds
// it, the others get ErrNotFound.
func (s *Store) RenameProject(ctx context.Context, p store.Path, newName string) (_ *store.Project, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if err := store.ValidateName(newName); err != nil {
		return nil, err
	}
	q := s.q()
	if newName == p.Project {
		return q.findProject(ctx, p)
	}
	row, err := q.row(ctx, `UPDATE hds_projects p SET name = $3, name_lower = $4, updated_at = $5
		WHERE p.name = $1 AND ($2::text = '' OR p.owner_id = $2) RETURNING `+projectColumns,
		lookupName(p.Project), p.Caller.UserID, newName, strings.ToLower(newName), s.now())
	if err != nil {
		return nil, err
	}
	pr, err := scanProject(row)
	switch err = renamed(err, "project", newName); {
	case err == nil:
		return pr, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	// No project of that name that p.Caller.UserID may rename: say why.
	if _, err := q.findProject(ctx, p); err != nil {
		return nil, err
	}
	return nil, &store.NotFoundError{Kind: "project", Name: p.Project} // it came back meanwhile
}

// DeleteProject implements store.Store.
func (s *Store) DeleteProject(ctx context.Context, p store.Path) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelProject)
	if err != nil {
		return err
	}
	return q.deleteByID(ctx, "hds_projects", r.project, "project", p.Project)
}

// --- collections ---

const collectionColumns = `c.id, c.name, c.created_at, c.updated_at,
	(SELECT count(*) FROM hds_clusters k WHERE k.collection_id = c.id),
	(SELECT count(*) FROM hds_records r JOIN hds_clusters k ON k.id = r.cluster_id WHERE k.collection_id = c.id)`

func scanCollection(row interface{ Scan(...any) error }, project string, extra ...any) (*store.Collection, error) {
	c := store.Collection{Project: project}
	err := row.Scan(append([]any{&c.ID, &c.Name, &c.CreatedAt, &c.UpdatedAt, &c.ClusterCount, &c.RecordCount}, extra...)...)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c, err
}

// FindCollections implements store.Store.
func (s *Store) FindCollections(ctx context.Context, p store.Path, lq store.ListQuery) (_ []*store.Collection, _ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelProject)
	if err != nil {
		return nil, 0, err
	}
	where := `project_id = $1 AND ($2::text IS NULL OR name_lower LIKE $2 ESCAPE '\')`
	search := likePattern(lq.Search)
	return findContainers(ctx, q, lq, collectionColumns, "hds_collections c", where, []any{r.project, search},
		func(row *sql.Rows, total *int) (*store.Collection, error) {
			return scanCollection(row, p.Project, total)
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
		err := q.insert(ctx, "collection", c.Name, "project", p.Project, `INSERT INTO hds_collections
			(id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (project_id, name) DO NOTHING RETURNING 1`,
			c.ID, r.project, c.Name, strings.ToLower(c.Name), now)
		if err != nil {
			return err
		}
		return q.addBytes(ctx, r.project, int64(len(c.Name)), s.currentQuotas(), p.Project)
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
		return q.addBytes(ctx, r.project, int64(len(newName)-len(p.Collection)), s.currentQuotas(), p.Project)
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
		return q.deleteCollection(ctx, r.collection.String, p.Collection, r.project, p.Project)
	})
}

// deleteCollection deletes the collection with id (named name) of the
// project with projectID, and takes what it counted off the project's
// bytes (store.Quotas).
func (q queryer) deleteCollection(ctx context.Context, id, name, projectID, projectName string) error {
	// Lock what goes, so that the bytes counted are the bytes deleted.
	if _, err := q.exec(ctx, `SELECT 1 FROM hds_clusters WHERE collection_id = $1 FOR UPDATE`, id); err != nil {
		return err
	}
	in := `r.cluster_id IN (SELECT id FROM hds_clusters WHERE collection_id = $1)`
	if _, err := q.exec(ctx, `SELECT 1 FROM hds_records r WHERE `+in+` FOR UPDATE`, id); err != nil {
		return err
	}
	n, err := q.sum(ctx, `SELECT (`+fmt.Sprintf(bytesSQL, in, in)+`)
		+ (SELECT coalesce(sum(octet_length(name)), 0) FROM hds_clusters WHERE collection_id = $1)
		+ (SELECT coalesce(sum(octet_length(name)), 0) FROM hds_collections WHERE id = $1)`, id)
	if err != nil {
		return err
	}
	if err := q.deleteByID(ctx, "hds_collections", id, "collection", name); err != nil {
		return err
	}
	return q.addBytes(ctx, projectID, -n, store.Quotas{}, projectName)
}

// --- clusters ---

const clusterColumns = `k.id, k.name, k.created_at, k.updated_at,
	(SELECT count(*) FROM hds_records r WHERE r.cluster_id = k.id)`

func scanCluster(row interface{ Scan(...any) error }, p store.Path, extra ...any) (*store.Cluster, error) {
	k := store.Cluster{Project: p.Project, Collection: p.Collection}
	err := row.Scan(append([]any{&k.ID, &k.Name, &k.CreatedAt, &k.UpdatedAt, &k.RecordCount}, extra...)...)
	k.CreatedAt, k.UpdatedAt = k.CreatedAt.UTC(), k.UpdatedAt.UTC()
	return &k, err
}

// FindClusters implements store.Store.
func (s *Store) FindClusters(ctx context.Context, p store.Path, lq store.ListQuery) (_ []*store.Cluster, _ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelCollection)
	if err != nil {
		return nil, 0, err
	}
	where := `collection_id = $1 AND ($2::text IS NULL OR name_lower LIKE $2 ESCAPE '\')`
	search := likePattern(lq.Search)
	return findContainers(ctx, q, lq, clusterColumns, "hds_clusters k", where, []any{r.collection.String, search},
		func(row *sql.Rows, total *int) (*store.Cluster, error) { return scanCluster(row, p, total) })
}

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
		err := q.insert(ctx, "cluster", k.Name, "collection", p.Collection, `INSERT INTO hds_clusters
			(id, collection_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (collection_id, name) DO NOTHING RETURNING 1`,
			k.ID, r.collection.String, k.Name, strings.ToLower(k.Name), now)
		if err != nil {
			return err
		}
		return q.addBytes(ctx, r.project, int64(len(k.Name)), s.currentQuotas(), p.Project)
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
		return q.addBytes(ctx, r.project, int64(len(newName)-len(p.Cluster)), s.currentQuotas(), p.Project)
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
		return q.deleteCluster(ctx, r.cluster.String, p.Cluster, r.project, p.Project)
	})
}

// deleteCluster deletes the cluster with id (named name) of the project
// with projectID, and takes what it counted off the project's bytes
// (store.Quotas).
func (q queryer) deleteCluster(ctx context.Context, id, name, projectID, projectName string) error {
	// Lock what goes, so that the bytes counted are the bytes deleted.
	if err := q.lockCluster(ctx, id, name); err != nil {
		return err
	}
	if _, err := q.exec(ctx, `SELECT 1 FROM hds_records WHERE cluster_id = $1 FOR UPDATE`, id); err != nil {
		return err
	}
	in := `r.cluster_id = $1`
	n, err := q.sum(ctx, `SELECT (`+fmt.Sprintf(bytesSQL, in, in)+`)
		+ (SELECT coalesce(sum(octet_length(name)), 0) FROM hds_clusters WHERE id = $1)`, id)
	if err != nil {
		return err
	}
	if err := q.deleteByID(ctx, "hds_clusters", id, "cluster", name); err != nil {
		return err
	}
	return q.addBytes(ctx, projectID, -n, store.Quotas{}, projectName)
}

package postgres

// Projects: find, list, create, rename and delete (store.Store).

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/hds-go/hds/store"
)

func scanProject(row interface{ Scan(...any) error }, extra ...any) (*store.Project, error) {
	var p store.Project
	err := row.Scan(append([]any{&p.ID, &p.Name, &p.OwnerID, &p.CreatedAt, &p.UpdatedAt, &p.CollectionCount, &p.Revision}, extra...)...)
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return &p, err
}

// FindProjects implements store.Store: the projects the user owns or is
// a member of (hds_members_user), each with the user's role.
func (s *Store) FindProjects(ctx context.Context, userID string, lq store.ListQuery) (_ []*store.Project, _ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	where := `(owner_id = $1 OR id IN (SELECT project_id FROM hds_members WHERE user_id = $1))
		AND ($2::text IS NULL OR name_lower LIKE $2 ESCAPE '\')`
	search := likePattern(lq.Search)
	role := `CASE WHEN p.owner_id = $1 THEN 'owner' ELSE ` + memberRoleSQL("1") + ` END`
	return findContainers(ctx, q, lq, projectColumns+`, `+role, "hds_projects p", where, []any{userID, search},
		func(r *sql.Rows, total *int) (*store.Project, error) {
			var role string
			pr, err := scanProject(r, &role, total)
			pr.Role = store.Role(role)
			return pr, err
		})
}

// FindProject implements store.Store.
func (s *Store) FindProject(ctx context.Context, p store.Path) (_ *store.Project, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.q().findProject(ctx, p)
}

func (q queryer) findProject(ctx context.Context, p store.Path) (*store.Project, error) {
	row, err := q.row(ctx, `SELECT `+projectColumns+`, `+memberRoleSQL("2")+` FROM hds_projects p WHERE p.name = $1`,
		lookupName(p.Project), p.Caller.UserID)
	if err != nil {
		return nil, err
	}
	var role sql.NullString
	pr, err := scanProject(row, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, p.Check(false, store.Standing{})
	}
	if err != nil {
		return nil, classify(err)
	}
	st := store.Standing{ProjectID: pr.ID, OwnerID: pr.OwnerID, Member: store.Role(role.String)}
	if err := p.Check(true, st); err != nil {
		return nil, err
	}
	pr.Role = p.RoleOn(st)
	return pr, nil
}

// CreateProject implements store.Store.
func (s *Store) CreateProject(ctx context.Context, p store.Path) (_ *store.Project, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if !p.Caller.CanCreateProjects() {
		return nil, store.ErrPermissionDenied
	}
	if err := store.ValidateName(p.Project); err != nil {
		return nil, err
	}
	now := s.now()
	pr := &store.Project{ID: store.NewID(), Name: p.Project, OwnerID: p.Caller.UserID, CreatedAt: now, UpdatedAt: now,
		Role: store.RoleOwner}
	insert := func(q queryer) error {
		return q.insert(ctx, "project", p.Project, "", "", `INSERT INTO hds_projects
			(id, name, name_lower, owner_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (name) DO NOTHING RETURNING 1`,
			pr.ID, pr.Name, strings.ToLower(pr.Name), pr.OwnerID, now)
	}
	quotas := s.currentQuotas()
	err = s.inTx(ctx, func(q queryer) error {
		if err := q.lockOwnerRow(ctx, p.Caller.UserID); err != nil {
			return err
		}
		if quotas.MaxProjectsPerUser > 0 {
			// The owner's projects are counted and the new one inserted
			// under a lock on the owner.
			if err := q.lockOwner(ctx, p.Caller.UserID); err != nil {
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
		}
		if err := insert(q); err != nil {
			return err
		}
		e, err := q.audit(ctx, pr.ID, p.Caller, store.AuditEntry{Action: store.ActionProjectCreate})
		if err == nil {
			pr.Revision = e.Revision
		}
		return err
	})
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
	found, err := q.findProject(ctx, p)
	if err != nil || newName == p.Project {
		return found, err
	}
	// By id and the old name: of concurrent renames exactly one finds it.
	var pr *store.Project
	err = s.inTx(ctx, func(q queryer) error {
		row, err := q.row(ctx, `UPDATE hds_projects p SET name = $3, name_lower = $4, updated_at = $5
			WHERE p.id = $1 AND p.name = $2 RETURNING `+projectColumns,
			found.ID, lookupName(p.Project), newName, strings.ToLower(newName), s.now())
		if err != nil {
			return err
		}
		pr, err = scanProject(row)
		if err = renamed(err, "project", newName); err != nil {
			return err
		}
		e, err := q.audit(ctx, pr.ID, p.Caller, store.AuditEntry{Action: store.ActionProjectRename})
		if err == nil {
			pr.Revision = e.Revision
		}
		return err
	})
	switch {
	case err == nil:
		pr.Role = found.Role
		return pr, nil
	case errors.Is(err, sql.ErrNoRows):
		return nil, &store.NotFoundError{Kind: "project", Name: p.Project}
	}
	return nil, err
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
	// The listeners hear that the project is gone (revision 0).
	row, err := q.row(ctx, `DELETE FROM hds_projects WHERE id = $1
		RETURNING pg_notify('`+eventsChannel+`', id::text || ' 0')::text`, r.project)
	if err != nil {
		return err
	}
	var notified string
	return notFoundOr(row.Scan(&notified), "project", p.Project)
}

// --- collections ---

const collectionColumns = `c.id, c.name, c.created_at, c.updated_at,
	(SELECT count(*) FROM hds_clusters k WHERE k.collection_id = c.id),
	(SELECT count(*) FROM hds_records r JOIN hds_clusters k ON k.id = r.cluster_id WHERE k.collection_id = c.id)`

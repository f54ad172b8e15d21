package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/hds-go/hds/store"
)

// TransferProject implements store.Access, in one transaction: the
// project's row is locked and its owner read again (a concurrent transfer
// may have moved it since the path was resolved), and the new owner's row
// is locked for share, so that a concurrent DeleteUser of that user
// either commits first (then the user is not found) or counts this
// project. The new owner's projects are counted against
// max_projects_per_user under the owner lock CreateProject takes.
func (s *Store) TransferProject(ctx context.Context, p store.Path, username string) (_ *store.Project, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	p.Need = store.RightOwn
	err = s.inProjectTx(ctx, p, func(q queryer, r resolved) error {
		row, err := q.row(ctx, `SELECT owner_id FROM hds_projects WHERE id = $1 FOR UPDATE`, r.project)
		if err != nil {
			return err
		}
		var prev string
		if err := row.Scan(&prev); err != nil {
			return notFoundOr(err, "project", p.Project)
		}
		st := r.standing
		st.OwnerID = prev
		if err := p.Check(true, st); err != nil {
			return err
		}
		row, err = q.row(ctx, `SELECT id FROM hds_users WHERE username = $1 AND active FOR SHARE`, lookupName(username))
		if err != nil {
			return err
		}
		var id string
		if err := row.Scan(&id); err != nil {
			return notFoundOr(err, "user", username)
		}
		if id == prev {
			return nil
		}
		// The new owner's max_projects_per_user, as for a new project:
		// counted under the lock CreateProject counts under, so that
		// concurrent creates and transfers for one user serialise.
		if quotas := s.currentQuotas(); quotas.MaxProjectsPerUser > 0 {
			if err := q.lockOwner(ctx, id); err != nil {
				return err
			}
			n, err := q.count(ctx, `SELECT count(*) FROM hds_projects WHERE owner_id = $1`, id)
			if err != nil {
				return err
			}
			if err := quotas.CheckProjects(n); err != nil {
				return err
			}
		}
		now := s.now()
		if _, err := q.exec(ctx, `DELETE FROM hds_members WHERE project_id = $1 AND user_id = $2`, r.project, id); err != nil {
			return err
		}
		// The previous owner stays as an admin member, when it is an
		// account (not the built-in anonymous user, nor a deleted one).
		if _, err := q.exec(ctx, `INSERT INTO hds_members (project_id, user_id, role, created_at)
			SELECT $1, u.id, 'admin', $3 FROM hds_users u WHERE u.id = $2
			ON CONFLICT (project_id, user_id) DO UPDATE SET role = 'admin'`, r.project, prev, now); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `UPDATE hds_projects SET owner_id = $2, updated_at = $3 WHERE id = $1`,
			r.project, id, now); err != nil {
			return err
		}
		_, err = q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionProjectTransfer, Target: username})
		return err
	})
	if err != nil {
		return nil, err
	}
	p.Caller.ServerAdmin = false // the role the caller now holds as itself
	p.Need = store.RightRead
	pr, err := s.q().findProject(ctx, p)
	if errors.Is(err, store.ErrPermissionDenied) || errors.Is(err, sql.ErrNoRows) {
		// A server administrator who is no member: the project as it is,
		// without a role.
		p.Caller = store.Caller{}
		if pr, err = s.q().findProject(ctx, p); err == nil {
			pr.Role = ""
		}
	}
	return pr, err
}

// lockOwner takes the transaction's lock on the projects owned by the
// user id: CreateProject and TransferProject count an owner's projects
// and add one under it, so two of them never both pass the quota.
func (q queryer) lockOwner(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "hds project owner "+id)
	return err
}

// lockOwnerRow locks the row of the user id for share until the
// transaction ends, when this store holds that user, so that DeleteUser
// (which locks it for update, then counts the user's projects) either
// counts the project the transaction adds or commits first. A row seen
// at the statement's start but gone once its lock was granted is a user
// deleted meanwhile: store.ErrSessionInvalid, as the request would have
// been refused a moment later. An id no user of this store has (a
// separate user directory, the anonymous user) locks nothing.
func (q queryer) lockOwnerRow(ctx context.Context, id string) error {
	if !storable(id) {
		return nil
	}
	row, err := q.row(ctx, `SELECT EXISTS (SELECT 1 FROM hds_users WHERE id = $1),
		EXISTS (SELECT 1 FROM hds_users WHERE id = $1 FOR SHARE)`, id)
	if err != nil {
		return err
	}
	var seen, locked bool
	if err := row.Scan(&seen, &locked); err != nil {
		return err
	}
	if seen && !locked {
		return store.ErrSessionInvalid
	}
	return nil
}

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
// project.
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

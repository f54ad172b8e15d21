package sqlite

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"time"

	"github.com/hds-go/hds/store"
)

var _ store.Access = (*Store)(nil)

// errOwnerEntry refuses a change of the owner's entry.
var errOwnerEntry = &store.ValidationError{Message: "the owner's entry cannot be changed or deleted"}

// FindMembers implements store.Access.
func (s *Store) FindMembers(ctx context.Context, p store.Path, q store.ListQuery) ([]*store.Member, int, error) {
	var items []*store.Member
	var total int
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		var ownerName sql.NullString
		if err := t.row(`SELECT (SELECT username FROM hds_users WHERE id = ?)`, pr.OwnerID).Scan(&ownerName); err != nil {
			return err
		}
		if !ownerName.Valid && pr.OwnerID == store.AnonymousUserID {
			ownerName.String = store.AnonymousUserID
		}
		if err := t.row(`SELECT count(*) + 1 FROM hds_members WHERE project_id = ?`, pr.ID).Scan(&total); err != nil {
			return err
		}
		rows, err := t.rows(`SELECT user_id, username, role, created_at FROM (
				SELECT ? AS user_id, ? AS username, 'owner' AS role, ? AS created_at
				UNION ALL SELECT user_id, username, role, created_at FROM hds_members WHERE project_id = ?)
			ORDER BY username, user_id LIMIT ? OFFSET ?`,
			pr.OwnerID, ownerName.String, micros(pr.CreatedAt), pr.ID, q.Limit, q.Offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		items = []*store.Member{}
		for rows.Next() {
			var m store.Member
			var role string
			var created int64
			if err := rows.Scan(&m.UserID, &m.Username, &role, &created); err != nil {
				return err
			}
			m.Role, m.CreatedAt = store.Role(role), fromMicros(created)
			items = append(items, &m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// PutMember implements store.Access.
func (s *Store) PutMember(ctx context.Context, p store.Path, m store.Member) (*store.Member, error) {
	var out *store.Member
	err := s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		switch {
		case !store.MemberRole(m.Role):
			return &store.ValidationError{Message: "role must be one of viewer, reader, editor, admin"}
		case m.UserID == pr.OwnerID:
			return errOwnerEntry
		}
		var created int64
		if err := t.row(`INSERT INTO hds_members (project_id, user_id, username, role, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (project_id, user_id) DO UPDATE SET role = excluded.role, username = excluded.username
			RETURNING created_at`, pr.ID, m.UserID, m.Username, string(m.Role), micros(t.now)).Scan(&created); err != nil {
			return err
		}
		m.CreatedAt = fromMicros(created)
		out = &m
		return t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionMemberPut, Target: m.Username})
	})
	return out, err
}

// DeleteMember implements store.Access.
func (s *Store) DeleteMember(ctx context.Context, p store.Path, userID, username string) error {
	return s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if userID == pr.OwnerID {
			return errOwnerEntry
		}
		res, err := t.exec(`DELETE FROM hds_members WHERE project_id = ? AND user_id = ?`, pr.ID, userID)
		if err := one(res, err, "member", username); err != nil {
			return err
		}
		return t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionMemberDelete, Target: username})
	})
}

// tokenCols are the columns scanToken reads.
const tokenCols = `id, project_id, name, role, collection, cluster, hash, created_at, expires_at, last_used_at, created_by`

func scanToken(row scanner) (*store.APIToken, error) {
	var tk store.APIToken
	var role string
	var created int64
	var expires, used sql.NullInt64
	if err := row.Scan(&tk.ID, &tk.ProjectID, &tk.Name, &role, &tk.Collection, &tk.Cluster, &tk.Hash, &created,
		&expires, &used, &tk.CreatedBy); err != nil {
		return nil, err
	}
	tk.Role, tk.CreatedAt = store.Role(role), fromMicros(created)
	tk.ExpiresAt, tk.LastUsedAt = timePtr(expires), timePtr(used)
	return &tk, nil
}

// scopeExists checks that the scope of an API token or a webhook names
// a collection (and a cluster of it) of pr that exists; an empty scope is
// the whole project.
func (t *tx) scopeExists(pr *proj, collection, cluster string) error {
	if collection == "" {
		return nil
	}
	c, err := t.collectionIn(pr, collection)
	if err == nil && cluster != "" {
		_, err = t.clusterIn(c, cluster)
	}
	return err
}

// CreateToken implements store.Access.
func (s *Store) CreateToken(ctx context.Context, p store.Path, in *store.APIToken) (*store.APIToken, error) {
	var out *store.APIToken
	err := s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if err := t.scopeExists(pr, in.Collection, in.Cluster); err != nil {
			return err
		}
		tk := *in
		tk.Hash = append([]byte(nil), in.Hash...)
		tk.ProjectID = pr.ID
		if tk.ID == "" {
			tk.ID = store.NewID()
		}
		tk.CreatedAt = t.now
		var n int
		if err := t.row(`SELECT count(*) FROM hds_api_tokens WHERE hash = ? OR id = ?`, tk.Hash, tk.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return &store.ExistsError{Kind: "token", Name: tk.ID}
		}
		if _, err := t.exec(`INSERT INTO hds_api_tokens (`+tokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			tk.ID, tk.ProjectID, tk.Name, string(tk.Role), tk.Collection, tk.Cluster, tk.Hash, micros(tk.CreatedAt),
			nullMicros(tk.ExpiresAt), nullMicros(tk.LastUsedAt), tk.CreatedBy); err != nil {
			return err
		}
		if tk.ExpiresAt != nil {
			e := *tk.ExpiresAt
			tk.ExpiresAt = &e
		}
		if tk.LastUsedAt != nil {
			l := *tk.LastUsedAt
			tk.LastUsedAt = &l
		}
		out = &tk
		return t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionTokenCreate, Target: tk.ID})
	})
	return out, err
}

// FindTokens implements store.Access.
func (s *Store) FindTokens(ctx context.Context, p store.Path, q store.ListQuery) ([]*store.APIToken, int, error) {
	var items []*store.APIToken
	var total int
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if err := t.row(`SELECT count(*) FROM hds_api_tokens WHERE project_id = ?`, pr.ID).Scan(&total); err != nil {
			return err
		}
		rows, err := t.rows(`SELECT `+tokenCols+` FROM hds_api_tokens WHERE project_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`,
			pr.ID, q.Limit, q.Offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		items = []*store.APIToken{}
		for rows.Next() {
			tk, err := scanToken(rows)
			if err != nil {
				return err
			}
			items = append(items, tk)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// DeleteToken implements store.Access.
func (s *Store) DeleteToken(ctx context.Context, p store.Path, id string) error {
	return s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		res, err := t.exec(`DELETE FROM hds_api_tokens WHERE id = ? AND project_id = ?`, id, pr.ID)
		if err := one(res, err, "token", id); err != nil {
			return err
		}
		return t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionTokenDelete, Target: id})
	})
}

// FindTokenByHash implements store.Access.
func (s *Store) FindTokenByHash(ctx context.Context, hash []byte) (*store.APIToken, error) {
	var out *store.APIToken
	err := s.read(ctx, func(t *tx) error {
		tk, err := scanToken(t.row(`SELECT `+tokenCols+` FROM hds_api_tokens WHERE hash = ?`, hash))
		if errors.Is(err, sql.ErrNoRows) || err == nil && subtle.ConstantTimeCompare(tk.Hash, hash) != 1 {
			return &store.NotFoundError{Kind: "token"}
		}
		out = tk
		return err
	})
	return out, err
}

// TouchToken implements store.Access.
func (s *Store) TouchToken(ctx context.Context, id string, now time.Time) error {
	now = now.UTC().Truncate(time.Microsecond)
	return s.write(ctx, func(t *tx) error {
		_, err := t.exec(`UPDATE hds_api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)`,
			micros(now), id, micros(now.Add(-store.TouchInterval)))
		return err
	})
}

// TransferProject implements store.Access.
func (s *Store) TransferProject(ctx context.Context, p store.Path, username string) (*store.Project, error) {
	p.Need = store.RightOwn
	var out *store.Project
	err := s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		var id string
		err = t.row(`SELECT id FROM hds_users WHERE username = ? AND active`, username).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return &store.NotFoundError{Kind: "user", Name: username}
		}
		if err != nil {
			return err
		}
		if id != pr.OwnerID {
			// The new owner's max_projects_per_user, as for a new project.
			var owned int
			if err := t.row(`SELECT count(*) FROM hds_projects WHERE owner_id = ?`, id).Scan(&owned); err != nil {
				return err
			}
			if err := s.quotas.Load().CheckProjects(owned); err != nil {
				return err
			}
			prev := pr.OwnerID
			var prevName sql.NullString
			if err := t.row(`SELECT (SELECT username FROM hds_users WHERE id = ?)`, prev).Scan(&prevName); err != nil {
				return err
			}
			if !prevName.Valid && prev == store.AnonymousUserID {
				prevName.String = store.AnonymousUserID
			}
			if _, err := t.exec(`DELETE FROM hds_members WHERE project_id = ? AND user_id = ?`, pr.ID, id); err != nil {
				return err
			}
			if _, err := t.exec(`INSERT INTO hds_members (project_id, user_id, username, role, created_at) VALUES (?, ?, ?, 'admin', ?)
				ON CONFLICT (project_id, user_id) DO UPDATE SET role = 'admin', created_at = excluded.created_at`,
				pr.ID, prev, prevName.String, micros(t.now)); err != nil {
				return err
			}
			if _, err := t.exec(`UPDATE hds_projects SET owner_id = ?, updated_at = ? WHERE id = ?`, id, micros(t.now), pr.ID); err != nil {
				return err
			}
			pr.OwnerID, pr.UpdatedAt = id, t.now
			if err := t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionProjectTransfer, Target: username}); err != nil {
				return err
			}
		}
		member := ""
		if p.Caller.TokenID == "" {
			if err := t.row(`SELECT coalesce((SELECT role FROM hds_members WHERE project_id = ? AND user_id = ?), '')`,
				pr.ID, p.Caller.UserID).Scan(&member); err != nil {
				return err
			}
		}
		pr.standing = store.Standing{ProjectID: pr.ID, OwnerID: pr.OwnerID, Member: store.Role(member)}
		p.Caller.ServerAdmin = false // the role the caller now holds as itself
		out, err = t.projectOut(pr, p)
		return err
	})
	return out, err
}

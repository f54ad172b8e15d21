package postgres

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

// FindMembers implements store.Access: the owner (its username from
// hds_users, "anonymous" for the built-in anonymous user, empty once the
// account is deleted) and the members, by username.
func (s *Store) FindMembers(ctx context.Context, p store.Path, lq store.ListQuery) ([]*store.Member, int, error) {
	return findWithin(ctx, s, p, levelProject, func(ctx context.Context, q queryer, r resolved) ([]*store.Member, int, error) {
		rows, err := q.rows(ctx, `SELECT user_id, username, role, created_at, count(*) OVER () FROM (
			SELECT p.owner_id AS user_id, COALESCE(u.username, CASE WHEN p.owner_id = '`+store.AnonymousUserID+`' THEN p.owner_id ELSE '' END) AS username, 'owner' AS role, p.created_at
			FROM hds_projects p LEFT JOIN hds_users u ON u.id = p.owner_id WHERE p.id = $1
			UNION ALL
			SELECT m.user_id, u.username, m.role, m.created_at
			FROM hds_members m JOIN hds_users u ON u.id = m.user_id WHERE m.project_id = $1
		) x ORDER BY username COLLATE "C", user_id LIMIT $2 OFFSET $3`, r.project, lq.Limit, lq.Offset)
		if err != nil {
			return nil, 0, err
		}
		return scanList(rows, func(rows *sql.Rows, total *int) (*store.Member, error) {
			var m store.Member
			err := rows.Scan(&m.UserID, &m.Username, &m.Role, &m.CreatedAt, total)
			m.CreatedAt = m.CreatedAt.UTC()
			return &m, err
		}, func() (int, error) {
			return q.count(ctx, `SELECT 1 + count(*) FROM hds_members WHERE project_id = $1`, r.project)
		})
	})
}

// PutMember implements store.Access, in one transaction.
func (s *Store) PutMember(ctx context.Context, p store.Path, m store.Member) (_ *store.Member, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	err = s.inProjectTx(ctx, p, func(q queryer, r resolved) error {
		switch {
		case !store.MemberRole(m.Role):
			return &store.ValidationError{Message: "role must be one of viewer, reader, editor, admin"}
		case m.UserID == r.standing.OwnerID:
			return errOwnerEntry
		}
		row, err := q.row(ctx, `INSERT INTO hds_members (project_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role RETURNING created_at`,
			r.project, m.UserID, string(m.Role), s.now())
		if err != nil {
			return err
		}
		switch err := row.Scan(&m.CreatedAt); {
		case isForeignKeyViolation(err):
			return &store.NotFoundError{Kind: "user", Name: m.Username}
		case err != nil:
			return classify(err)
		}
		m.CreatedAt = m.CreatedAt.UTC()
		_, err = q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionMemberPut, Target: m.Username})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// DeleteMember implements store.Access, in one transaction.
func (s *Store) DeleteMember(ctx context.Context, p store.Path, userID, username string) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.inProjectTx(ctx, p, func(q queryer, r resolved) error {
		if userID == r.standing.OwnerID {
			return errOwnerEntry
		}
		if err := q.execOne(ctx, "member", username, `DELETE FROM hds_members WHERE project_id = $1 AND user_id = $2`,
			r.project, userID); err != nil {
			return err
		}
		_, err := q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionMemberDelete, Target: username})
		return err
	})
}

const tokenColumns = `id, project_id, name, role, collection, cluster, hash, created_at, expires_at, last_used_at, created_by`

func scanToken(row interface{ Scan(...any) error }, extra ...any) (*store.APIToken, error) {
	var t store.APIToken
	var expires, used sql.NullTime
	err := row.Scan(append([]any{&t.ID, &t.ProjectID, &t.Name, &t.Role, &t.Collection, &t.Cluster, &t.Hash,
		&t.CreatedAt, &expires, &used, &t.CreatedBy}, extra...)...)
	t.CreatedAt = t.CreatedAt.UTC()
	t.ExpiresAt, t.LastUsedAt = utcOrNil(expires), utcOrNil(used)
	return &t, err
}

// utcOrNil returns the time of a nullable column in UTC, or nil when it
// is NULL.
func utcOrNil(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

// CreateToken implements store.Access, in one transaction.
func (s *Store) CreateToken(ctx context.Context, p store.Path, t *store.APIToken) (_ *store.APIToken, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	c := *t
	c.CreatedAt = s.now()
	if c.ID == "" {
		c.ID = store.NewID()
	}
	err = s.inTx(ctx, func(q queryer) error {
		scope, depth := p, levelProject
		scope.Collection, scope.Cluster = c.Collection, c.Cluster
		switch {
		case c.Cluster != "":
			depth = levelCluster
		case c.Collection != "":
			depth = levelCollection
		}
		r, err := q.resolve(ctx, scope, depth)
		if err != nil {
			return err
		}
		c.ProjectID = r.project
		err = q.insert(ctx, "token", c.ID, "project", p.Project, `INSERT INTO hds_api_tokens (`+tokenColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10) ON CONFLICT DO NOTHING RETURNING 1`,
			c.ID, c.ProjectID, c.Name, string(c.Role), c.Collection, c.Cluster, c.Hash, c.CreatedAt, c.ExpiresAt, c.CreatedBy)
		if err == nil {
			_, err = q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionTokenCreate, Target: c.ID})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// FindTokens implements store.Access.
func (s *Store) FindTokens(ctx context.Context, p store.Path, lq store.ListQuery) ([]*store.APIToken, int, error) {
	return findProjectList(ctx, s, p, lq, "hds_api_tokens", tokenColumns,
		func(rows *sql.Rows, total *int) (*store.APIToken, error) { return scanToken(rows, total) })
}

// findProjectList lists the rows of table (columns, then the total) that
// belong to p's project, oldest first (created_at, then id), a page as lq
// says, with their total: a project's API tokens and its webhooks.
func findProjectList[T any](ctx context.Context, s *Store, p store.Path, lq store.ListQuery, table, columns string,
	scan func(*sql.Rows, *int) (T, error)) ([]T, int, error) {
	return findWithin(ctx, s, p, levelProject, func(ctx context.Context, q queryer, r resolved) ([]T, int, error) {
		rows, err := q.rows(ctx, `SELECT `+columns+`, count(*) OVER () FROM `+table+` WHERE project_id = $1
			ORDER BY created_at, id LIMIT $2 OFFSET $3`, r.project, lq.Limit, lq.Offset)
		if err != nil {
			return nil, 0, err
		}
		return scanList(rows, scan, func() (int, error) {
			return q.count(ctx, `SELECT count(*) FROM `+table+` WHERE project_id = $1`, r.project)
		})
	})
}

// DeleteToken implements store.Access, in one transaction.
func (s *Store) DeleteToken(ctx context.Context, p store.Path, id string) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.inProjectTx(ctx, p, func(q queryer, r resolved) error {
		if _, ok := store.CanonicalUUID(id); !ok {
			return &store.NotFoundError{Kind: "token", Name: id}
		}
		if err := q.execOne(ctx, "token", id, `DELETE FROM hds_api_tokens WHERE id = $1 AND project_id = $2`, id, r.project); err != nil {
			return err
		}
		_, err := q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionTokenDelete, Target: id})
		return err
	})
}

// FindTokenByHash implements store.Access: one probe of the unique index
// on hash.
func (s *Store) FindTokenByHash(ctx context.Context, hash []byte) (_ *store.APIToken, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	row, err := s.q().row(ctx, `SELECT `+tokenColumns+` FROM hds_api_tokens WHERE hash = $1`, hash)
	if err != nil {
		return nil, err
	}
	t, err := scanToken(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, &store.NotFoundError{Kind: "token"}
	case err != nil:
		return nil, classify(err)
	case subtle.ConstantTimeCompare(t.Hash, hash) != 1:
		return nil, &store.NotFoundError{Kind: "token"}
	}
	return t, nil
}

// TouchToken implements store.Access: a conditional UPDATE, so that of
// any number of instances at most one writes per TouchInterval.
func (s *Store) TouchToken(ctx context.Context, id string, now time.Time) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	now = now.UTC().Truncate(time.Microsecond)
	_, err = s.q().exec(ctx, `UPDATE hds_api_tokens SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`, id, now, now.Add(-store.TouchInterval))
	return err
}

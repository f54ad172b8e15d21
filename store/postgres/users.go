package postgres

import (
	"context"
	"slices"

	"github.com/hds-go/hds/store"
)

const userColumns = `id, username, password_hash, active, admin, session_generation, created_at, updated_at`

func scanUser(row interface{ Scan(...any) error }) (*store.User, error) {
	var u store.User
	err := row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Active, &u.Admin, &u.SessionGeneration, &u.CreatedAt, &u.UpdatedAt)
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	return &u, err
}

// CreateUser implements store.UserDirectory.
func (s *Store) CreateUser(ctx context.Context, u *store.User) (_ *store.User, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	c := u.Clone()
	if c.ID == "" {
		c.ID = store.NewID()
	}
	c.CreatedAt = s.now()
	c.UpdatedAt = c.CreatedAt
	err = s.q().insert(ctx, "user", c.Username, "", "", `INSERT INTO hds_users (`+userColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (username) DO NOTHING RETURNING 1`,
		c.ID, c.Username, c.PasswordHash, c.Active, c.Admin, c.SessionGeneration, c.CreatedAt)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (s *Store) findUser(ctx context.Context, column, value string) (*store.User, error) {
	if !storable(value) {
		return nil, &store.NotFoundError{Kind: "user", Name: value}
	}
	row, err := s.q().row(ctx, `SELECT `+userColumns+` FROM hds_users WHERE `+column+` = $1`, value)
	if err != nil {
		return nil, err
	}
	u, err := scanUser(row)
	if err != nil {
		return nil, notFoundOr(err, "user", value)
	}
	return u, nil
}

// FindUserByName implements store.UserDirectory.
func (s *Store) FindUserByName(ctx context.Context, username string) (_ *store.User, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.findUser(ctx, "username", username)
}

// FindUserByID implements store.UserDirectory.
func (s *Store) FindUserByID(ctx context.Context, id string) (_ *store.User, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.findUser(ctx, "id", id)
}

// ListUsers implements store.UserDirectory. Without a search, the page
// and the count come from one statement; with one, the usernames are
// matched in Go (strings.ToLower, which PostgreSQL's lower() does not
// equal), over the whole table: the users of a service are few.
func (s *Store) ListUsers(ctx context.Context, lq store.ListQuery) (_ []*store.User, _ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	var limit any // NULL: no limit
	if lq.Limit > 0 && lq.Search == "" {
		limit = lq.Limit
	}
	offset := lq.Offset
	if lq.Search != "" {
		offset = 0
	}
	rows, err := s.q().rows(ctx, `SELECT `+userColumns+`, count(*) OVER () FROM hds_users
		ORDER BY `+userOrder(lq)+` LIMIT $1 OFFSET $2`, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	users := []*store.User{}
	total := 0
	for rows.Next() {
		var u store.User
		if err := rows.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Active, &u.Admin, &u.SessionGeneration,
			&u.CreatedAt, &u.UpdatedAt, &total); err != nil {
			return nil, 0, classify(err)
		}
		u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
		users = append(users, &u)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, classify(err)
	}
	if lq.Search == "" {
		if len(users) == 0 && offset > 0 { // past the end: count apart
			total, err = s.q().count(ctx, `SELECT count(*) FROM hds_users`)
		}
		return users, total, err
	}
	users = slices.DeleteFunc(users, func(u *store.User) bool { return !store.MatchesSearch(u.Username, lq.Search) })
	total = len(users)
	users = users[min(lq.Offset, total):]
	if lq.Limit > 0 && lq.Limit < len(users) {
		users = users[:lq.Limit]
	}
	return users, total, nil
}

// userOrder is the ORDER BY list of a user list sorted as
// store.CompareUsers sorts (ids compared byte-wise, as Go does).
func userOrder(lq store.ListQuery) string {
	col := "username"
	switch lq.SortBy {
	case store.SortID:
		col = `id COLLATE "C"`
	case store.SortCreatedAt:
		col = "created_at"
	case store.SortUpdatedAt:
		col = "updated_at"
	}
	if lq.Desc {
		col += " DESC"
	}
	return col + `, username, id COLLATE "C"`
}

// adminLock is the pg_advisory_xact_lock key that serialises the changes
// that may take an administrator away (the last-administrator rule), on
// every instance sharing the database.
const adminLock = 0x68647332 // "hds2"

// lockUser takes the admin lock, then reads the user username for update
// (its row locked until the transaction ends).
func (q queryer) lockUser(ctx context.Context, username string) (*store.User, error) {
	if !storable(username) {
		return nil, &store.NotFoundError{Kind: "user", Name: username}
	}
	if _, err := q.exec(ctx, `SELECT pg_advisory_xact_lock($1)`, adminLock); err != nil {
		return nil, err
	}
	row, err := q.row(ctx, `SELECT `+userColumns+` FROM hds_users WHERE username = $1 FOR UPDATE`, username)
	if err != nil {
		return nil, err
	}
	u, err := scanUser(row)
	if err != nil {
		return nil, notFoundOr(err, "user", username)
	}
	return u, nil
}

// leavesNoAdmin reports whether changing before so that it is an active
// administrator or not (stays) would leave no active administrator where
// there is one. The caller holds the admin lock.
func (q queryer) leavesNoAdmin(ctx context.Context, before *store.User, stays bool) (bool, error) {
	if !before.Admin || !before.Active || stays {
		return false, nil
	}
	others, err := q.count(ctx, `SELECT count(*) FROM hds_users WHERE admin AND active AND id <> $1`, before.ID)
	return others == 0, err
}

// UpdateUser implements store.UserDirectory, in one transaction under the
// admin lock.
func (s *Store) UpdateUser(ctx context.Context, username string, c store.UserChange) (_ *store.User, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	var out *store.User
	err = s.inTx(ctx, func(q queryer) error {
		u, err := q.lockUser(ctx, username)
		if err != nil {
			return err
		}
		after := *u
		if c.Admin != nil {
			after.Admin = *c.Admin
		}
		if c.Active != nil {
			after.Active = *c.Active
		}
		if none, err := q.leavesNoAdmin(ctx, u, after.Admin && after.Active); err != nil {
			return err
		} else if none {
			return &store.ValidationError{Message: store.LastAdminRule}
		}
		if c.Active != nil && !*c.Active {
			after.SessionGeneration++ // a disable ends every session
		}
		if c.PasswordHash != nil {
			after.PasswordHash = c.PasswordHash
			after.SessionGeneration++
		}
		row, err := q.row(ctx, `UPDATE hds_users SET admin = $2, active = $3, password_hash = $4,
			session_generation = $5, updated_at = $6 WHERE id = $1 RETURNING `+userColumns,
			u.ID, after.Admin, after.Active, after.PasswordHash, after.SessionGeneration, s.now())
		if err != nil {
			return err
		}
		out, err = scanUser(row)
		return notFoundOr(err, "user", username)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetUserActive implements store.UserDirectory.
func (s *Store) SetUserActive(ctx context.Context, username string, active bool) error {
	_, err := s.UpdateUser(ctx, username, store.UserChange{Active: &active})
	return err
}

// DeleteUser implements store.UserDirectory, in one transaction under the
// admin lock: the user's row is locked first, so that a project being
// transferred to the user (which locks it for share) commits before the
// count or finds no user. Memberships go by ON DELETE CASCADE; API tokens
// have no foreign key to the user and stay.
func (s *Store) DeleteUser(ctx context.Context, username string) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.inTx(ctx, func(q queryer) error {
		u, err := q.lockUser(ctx, username)
		if err != nil {
			return err
		}
		owned, err := q.count(ctx, `SELECT count(*) FROM hds_projects WHERE owner_id = $1`, u.ID)
		if err != nil {
			return err
		}
		if owned > 0 {
			return store.OwnsProjectsError(owned)
		}
		if none, err := q.leavesNoAdmin(ctx, u, false); err != nil {
			return err
		} else if none {
			return &store.ValidationError{Message: store.LastAdminRule}
		}
		return q.execOne(ctx, "user", username, `DELETE FROM hds_users WHERE id = $1`, u.ID)
	})
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/hds-go/hds/store"
)

var _ store.Sessions = (*Store)(nil)

// userCols are the columns scanUser reads.
const userCols = `id, username, password_hash, active, admin, session_generation, created_at, updated_at`

func scanUser(row scanner) (*store.User, error) {
	var u store.User
	var created, updated int64
	if err := row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Active, &u.Admin, &u.SessionGeneration, &created, &updated); err != nil {
		return nil, err
	}
	if u.PasswordHash == nil {
		u.PasswordHash = []byte{}
	}
	u.CreatedAt, u.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &u, nil
}

// findUser returns the user a query of userCols finds, or the
// *store.NotFoundError naming name.
func (t *tx) findUser(name, query string, args ...any) (*store.User, error) {
	u, err := scanUser(t.row(`SELECT `+userCols+` FROM hds_users WHERE `+query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &store.NotFoundError{Kind: "user", Name: name}
	}
	return u, err
}

// CreateUser implements store.UserDirectory.
func (s *Store) CreateUser(ctx context.Context, u *store.User) (*store.User, error) {
	var out *store.User
	err := s.write(ctx, func(t *tx) error {
		if _, err := t.findUser(u.Username, `username = ?`, u.Username); err == nil {
			return &store.ExistsError{Kind: "user", Name: u.Username}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		c := u.Clone()
		if c.ID == "" {
			c.ID = store.NewID()
		} else if _, err := t.findUser(c.ID, `id = ?`, c.ID); err == nil {
			return &store.ExistsError{Kind: "user id", Name: c.ID}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		c.CreatedAt, c.UpdatedAt = t.now, t.now
		if _, err := t.exec(`INSERT INTO hds_users (`+userCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.Username, c.PasswordHash, c.Active, c.Admin, c.SessionGeneration, micros(t.now), micros(t.now)); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// FindUserByName implements store.UserDirectory.
func (s *Store) FindUserByName(ctx context.Context, username string) (*store.User, error) {
	var out *store.User
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = t.findUser(username, `username = ?`, username)
		return err
	})
	return out, err
}

// FindUserByID implements store.UserDirectory.
func (s *Store) FindUserByID(ctx context.Context, id string) (*store.User, error) {
	var out *store.User
	err := s.read(ctx, func(t *tx) (err error) {
		out, err = t.findUser(id, `id = ?`, id)
		return err
	})
	return out, err
}

// ListUsers implements store.UserDirectory.
func (s *Store) ListUsers(ctx context.Context, q store.ListQuery) ([]*store.User, int, error) {
	users := []*store.User{}
	err := s.read(ctx, func(t *tx) error {
		rows, err := t.rows(`SELECT ` + userCols + ` FROM hds_users`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			u, err := scanUser(rows)
			if err != nil {
				return err
			}
			if store.MatchesSearch(u.Username, q.Search) {
				users = append(users, u)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	// The users of a service are few: sorted and paged here.
	slices.SortStableFunc(users, func(a, b *store.User) int { return store.CompareUsers(a, b, q) })
	total := len(users)
	users = users[min(q.Offset, total):]
	if q.Limit > 0 && q.Limit < len(users) {
		users = users[:q.Limit]
	}
	return users, total, nil
}

// leavesNoAdmin reports whether changing before into after (nil: deleted)
// would leave no active administrator where there is one: the
// last-administrator rule, checked in the write transaction that makes
// the change (SQLite has one writer at a time).
func (t *tx) leavesNoAdmin(before, after *store.User) (bool, error) {
	if !before.Admin || !before.Active || (after != nil && after.Admin && after.Active) {
		return false, nil
	}
	var others int
	if err := t.row(`SELECT count(*) FROM hds_users WHERE admin AND active AND id <> ?`, before.ID).Scan(&others); err != nil {
		return false, err
	}
	return others == 0, nil
}

// UpdateUser implements store.UserDirectory.
func (s *Store) UpdateUser(ctx context.Context, username string, c store.UserChange) (*store.User, error) {
	var out *store.User
	err := s.write(ctx, func(t *tx) error {
		u, err := t.findUser(username, `username = ?`, username)
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
		if last, err := t.leavesNoAdmin(u, &after); err != nil {
			return err
		} else if last {
			return &store.ValidationError{Message: store.LastAdminRule}
		}
		if c.Active != nil && !*c.Active {
			after.SessionGeneration++ // a disable ends every session
		}
		if c.PasswordHash != nil {
			after.PasswordHash = append([]byte(nil), c.PasswordHash...)
			after.SessionGeneration++
		}
		after.UpdatedAt = t.now
		if _, err := t.exec(`UPDATE hds_users SET admin = ?, active = ?, password_hash = ?, session_generation = ?,
			updated_at = ? WHERE id = ?`, after.Admin, after.Active, after.PasswordHash, after.SessionGeneration,
			micros(t.now), u.ID); err != nil {
			return err
		}
		out = &after
		return nil
	})
	return out, err
}

// SetUserActive implements store.UserDirectory.
func (s *Store) SetUserActive(ctx context.Context, username string, active bool) error {
	_, err := s.UpdateUser(ctx, username, store.UserChange{Active: &active})
	return err
}

// DeleteUser implements store.UserDirectory: the user's memberships,
// ended sessions and used tokens go with it; a user who owns projects is
// refused (store.OwnsProjectsError), and so is the last active
// administrator.
func (s *Store) DeleteUser(ctx context.Context, username string) error {
	return s.write(ctx, func(t *tx) error {
		u, err := t.findUser(username, `username = ?`, username)
		if err != nil {
			return err
		}
		var owned int
		if err := t.row(`SELECT count(*) FROM hds_projects WHERE owner_id = ?`, u.ID).Scan(&owned); err != nil {
			return err
		}
		if owned > 0 {
			return store.OwnsProjectsError(owned)
		}
		if last, err := t.leavesNoAdmin(u, nil); err != nil {
			return err
		} else if last {
			return &store.ValidationError{Message: store.LastAdminRule}
		}
		if _, err := t.exec(`DELETE FROM hds_users WHERE id = ?`, u.ID); err != nil {
			return err
		}
		_, err = t.exec(`DELETE FROM hds_members WHERE user_id = ?`, u.ID)
		return err
	})
}

// one returns the *store.NotFoundError naming name when a statement
// changed no row.
func one(res sql.Result, err error, kind, name string) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return &store.NotFoundError{Kind: kind, Name: name}
	}
	return nil
}

// userExists returns the *store.NotFoundError of an unknown user id.
func (t *tx) userExists(userID string) error {
	var n int
	if err := t.row(`SELECT count(*) FROM hds_users WHERE id = ?`, userID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return &store.NotFoundError{Kind: "user", Name: userID}
	}
	return nil
}

// FindSessionUser implements store.Sessions, in one statement.
func (s *Store) FindSessionUser(ctx context.Context, userID, sessionID string) (store.SessionUser, error) {
	var out store.SessionUser
	err := s.readOne(ctx, func(t *tx) error {
		var u store.User
		var created, updated int64
		err := t.row(`SELECT id, username, password_hash, active, admin, session_generation, created_at, updated_at,
			EXISTS (SELECT 1 FROM hds_ended_sessions e WHERE e.user_id = u.id AND e.session_id = ?)
			FROM hds_users u WHERE id = ?`, sessionID, userID).
			Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Active, &u.Admin, &u.SessionGeneration, &created, &updated, &out.Ended)
		if errors.Is(err, sql.ErrNoRows) {
			return &store.NotFoundError{Kind: "user", Name: userID}
		}
		if err != nil {
			return err
		}
		u.CreatedAt, u.UpdatedAt = fromMicros(created), fromMicros(updated)
		out.User = &u
		return nil
	})
	if err != nil {
		return store.SessionUser{}, err
	}
	return out, nil
}

// EndSession implements store.Sessions.
func (s *Store) EndSession(ctx context.Context, userID, sessionID string, until time.Time) error {
	return s.write(ctx, func(t *tx) error {
		if err := t.userExists(userID); err != nil {
			return err
		}
		if _, err := t.exec(`DELETE FROM hds_ended_sessions WHERE until < ?`, micros(t.now)); err != nil {
			return err
		}
		_, err := t.exec(`INSERT INTO hds_ended_sessions (user_id, session_id, until) VALUES (?, ?, ?)
			ON CONFLICT (user_id, session_id) DO UPDATE SET until = max(until, excluded.until)`, userID, sessionID, micros(until))
		return err
	})
}

// UseToken implements store.Sessions: the write transaction makes the
// check and the mark one step, so of concurrent uses exactly one wins.
func (s *Store) UseToken(ctx context.Context, userID, tokenID string, until time.Time) error {
	return s.write(ctx, func(t *tx) error {
		if err := t.userExists(userID); err != nil {
			return err
		}
		if _, err := t.exec(`DELETE FROM hds_used_tokens WHERE until < ?`, micros(t.now)); err != nil {
			return err
		}
		res, err := t.exec(`INSERT INTO hds_used_tokens (user_id, token_id, until) VALUES (?, ?, ?)
			ON CONFLICT (user_id, token_id) DO NOTHING`, userID, tokenID, micros(until))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		if _, err := t.exec(`UPDATE hds_used_tokens SET until = max(until, ?) WHERE user_id = ? AND token_id = ?`,
			micros(until), userID, tokenID); err != nil {
			return err
		}
		return store.ErrTokenUsed
	})
}

// SetPassword implements store.Sessions.
func (s *Store) SetPassword(ctx context.Context, userID string, hash []byte) (*store.User, error) {
	var out *store.User
	err := s.write(ctx, func(t *tx) error {
		u, err := scanUser(t.row(`UPDATE hds_users SET password_hash = ?, session_generation = session_generation + 1,
			updated_at = ? WHERE id = ? RETURNING `+userCols, hash, micros(t.now), userID))
		if errors.Is(err, sql.ErrNoRows) {
			return &store.NotFoundError{Kind: "user", Name: userID}
		}
		out = u
		return err
	})
	return out, err
}

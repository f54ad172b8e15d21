package postgres

import (
	"context"

	"github.com/hds-go/hds/store"
)

const userColumns = `id, username, password_hash, active, session_generation, created_at, updated_at`

func scanUser(row interface{ Scan(...any) error }) (*store.User, error) {
	var u store.User
	err := row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Active, &u.SessionGeneration, &u.CreatedAt, &u.UpdatedAt)
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
		VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (username) DO NOTHING RETURNING 1`,
		c.ID, c.Username, c.PasswordHash, c.Active, c.SessionGeneration, c.CreatedAt)
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

// FindUsers implements store.UserDirectory.
func (s *Store) FindUsers(ctx context.Context) (_ []*store.User, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	rows, err := s.q().rows(ctx, `SELECT `+userColumns+` FROM hds_users ORDER BY username`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	users := []*store.User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, classify(err)
		}
		users = append(users, u)
	}
	return users, classify(rows.Err())
}

// SetUserActive implements store.UserDirectory.
func (s *Store) SetUserActive(ctx context.Context, username string, active bool) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.changeUser(ctx, username, `UPDATE hds_users SET active = $2, updated_at = $3 WHERE username = $1`,
		username, active, s.now())
}

// DeleteUser implements store.UserDirectory.
func (s *Store) DeleteUser(ctx context.Context, username string) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.changeUser(ctx, username, `DELETE FROM hds_users WHERE username = $1`, username)
}

func (s *Store) changeUser(ctx context.Context, username, query string, args ...any) error {
	if !storable(username) {
		return &store.NotFoundError{Kind: "user", Name: username}
	}
	return s.q().execOne(ctx, "user", username, query, args...)
}

package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hds-go/hds/store"
)

// pruneBatch is how many expired marks a write of EndSession or UseToken
// deletes in passing: enough to keep up with the writes that add them,
// few enough to keep the statement short. Rows another statement is
// pruning are skipped (SKIP LOCKED), so pruners never wait for each other.
const pruneBatch = 16

// FindSessionUser implements store.Sessions: one statement, the user by
// its primary key and the ended-session mark by its primary key.
func (s *Store) FindSessionUser(ctx context.Context, userID, sessionID string) (_ store.SessionUser, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if !storable(userID) {
		return store.SessionUser{}, &store.NotFoundError{Kind: "user", Name: userID}
	}
	row, err := s.q().row(ctx, `SELECT `+userColumns+`, EXISTS (SELECT 1 FROM hds_ended_sessions e
		WHERE e.user_id = u.id AND e.session_id = $2) FROM hds_users u WHERE u.id = $1`, userID, lookupName(sessionID))
	if err != nil {
		return store.SessionUser{}, err
	}
	var u store.User
	var ended bool
	err = row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Active, &u.Admin, &u.SessionGeneration, &u.CreatedAt, &u.UpdatedAt, &ended)
	if err != nil {
		return store.SessionUser{}, notFoundOr(err, "user", userID)
	}
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	return store.SessionUser{User: &u, Ended: ended}, nil
}

// EndSession implements store.Sessions.
func (s *Store) EndSession(ctx context.Context, userID, sessionID string, until time.Time) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if err := markable(userID, sessionID); err != nil {
		return err
	}
	_, err = s.q().exec(ctx, `WITH pruned AS (DELETE FROM hds_ended_sessions WHERE ctid IN (
			SELECT ctid FROM hds_ended_sessions WHERE until < $4 AND NOT (user_id = $1 AND session_id = $2)
			LIMIT `+fmt.Sprint(pruneBatch)+` FOR UPDATE SKIP LOCKED))
		INSERT INTO hds_ended_sessions (user_id, session_id, until) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, session_id) DO UPDATE SET until = GREATEST(hds_ended_sessions.until, EXCLUDED.until)`,
		userID, sessionID, until.UTC(), s.now())
	if isForeignKeyViolation(err) {
		return &store.NotFoundError{Kind: "user", Name: userID}
	}
	return err
}

// UseToken implements store.Sessions: INSERT ... ON CONFLICT DO NOTHING
// on the token's primary key, so that of concurrent uses, from any
// number of instances, exactly one inserts the row.
func (s *Store) UseToken(ctx context.Context, userID, tokenID string, until time.Time) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if err := markable(userID, tokenID); err != nil {
		return err
	}
	row, err := s.q().row(ctx, `WITH pruned AS (DELETE FROM hds_used_tokens WHERE ctid IN (
			SELECT ctid FROM hds_used_tokens WHERE until < $4 AND NOT (user_id = $1 AND token_id = $2)
			LIMIT `+fmt.Sprint(pruneBatch)+` FOR UPDATE SKIP LOCKED))
		INSERT INTO hds_used_tokens (user_id, token_id, until) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, token_id) DO NOTHING RETURNING 1`,
		userID, tokenID, until.UTC(), s.now())
	if err != nil {
		return err
	}
	var one int
	switch err := row.Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrTokenUsed
	case isForeignKeyViolation(err):
		return &store.NotFoundError{Kind: "user", Name: userID}
	case err != nil:
		return classify(err)
	}
	return nil
}

// SetPassword implements store.Sessions.
func (s *Store) SetPassword(ctx context.Context, userID string, hash []byte) (_ *store.User, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if !storable(userID) {
		return nil, &store.NotFoundError{Kind: "user", Name: userID}
	}
	row, err := s.q().row(ctx, `UPDATE hds_users SET password_hash = $2, session_generation = session_generation + 1,
		updated_at = $3 WHERE id = $1 RETURNING `+userColumns, userID, hash, s.now())
	if err != nil {
		return nil, err
	}
	u, err := scanUser(row)
	if err != nil {
		return nil, notFoundOr(err, "user", userID)
	}
	return u, nil
}

// markable checks that a user id and a session or token id can be
// stored: ids the server made always can.
func markable(userID, id string) error {
	switch {
	case !storable(userID):
		return &store.NotFoundError{Kind: "user", Name: userID}
	case !storable(id):
		return &store.ValidationError{Message: "a session or token id must be valid UTF-8 without U+0000"}
	}
	return nil
}

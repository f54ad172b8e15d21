package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/hds-go/hds/store"
)

// The deferred session check (store.SessionChecker). On the read routes
// hds verifies a user's token in process and leaves the check that the
// user exists and is active and that the session is live to the store:
// the statement that resolves the path then checks it too, in the same
// round trip. Such a statement is the path's statement wrapped by
// sessionSQL, so that it always returns one row: the user's name and
// whether the session is live (NULL for an unknown user) first, then the
// path's columns (NULL when the project does not exist). The session is
// judged first, so that an ended session is refused whatever else is
// wrong with the path, as authentication refused it before.

var _ store.SessionChecker = (*Store)(nil)

// ChecksSessions implements store.SessionChecker: the store checks the
// sessions it keeps itself (the same *Store as the user directory).
func (s *Store) ChecksSessions(sessions store.Sessions) bool {
	other, ok := sessions.(*Store)
	return ok && other == s
}

// sessionSQL wraps query, a statement that resolves a path (one row, or
// none when the project does not exist), so that it also checks a
// deferred session: $user is the user id (the parameter the member role
// reads already), $session the session id and $gen the generation the
// session began in, which must not be below the user's.
func sessionSQL(query, user, session, gen string) string {
	return `SELECT u.username, u.active AND u.session_generation <= $` + gen + `
		AND NOT EXISTS (SELECT 1 FROM hds_ended_sessions e WHERE e.user_id = u.id AND e.session_id = $` + session + `), x.*
FROM (SELECT 1) one
LEFT JOIN hds_users u ON u.id = $` + user + `
LEFT JOIN LATERAL (` + query + `) x ON true`
}

// sessionDue is store.SessionCheck.DueFor for p's caller; a due check
// of a user id no user can have (not a UUID) fails at once.
func sessionDue(p store.Path) (*store.SessionCheck, error) {
	c, err := p.Caller.Session.DueFor(p.Caller.UserID)
	if c != nil && !storable(c.UserID) {
		return nil, c.Fail()
	}
	return c, err
}

// settleSession settles check from the leading columns of a sessionSQL
// row: the username and whether the session is live.
func settleSession(check *store.SessionCheck, username sql.NullString, live sql.NullBool) error {
	if !live.Valid || !live.Bool {
		return check.Fail()
	}
	check.Pass(username.String)
	return nil
}

// pathQuery is a statement that resolves a path (one row, or none when
// the project does not exist) whose first columns are the project's id,
// its owner and the caller's member role, with its sessionSQL form.
type pathQuery struct{ plain, session string }

// newPathQuery returns query and its sessionSQL form, where $user is the
// caller's user id and the two parameters after it the session's id and
// generation.
func newPathQuery(query string, user int) pathQuery {
	return pathQuery{query, sessionSQL(query, strconv.Itoa(user), strconv.Itoa(user+1), strconv.Itoa(user+2))}
}

// resolveRow runs query for p with args, in its session form when p's
// caller has a session check due. It settles the check first, then
// returns the caller's standing, with the rest of the row scanned into
// dest; when the project does not exist, p.Check's error.
func (q queryer) resolveRow(ctx context.Context, p store.Path, query pathQuery, args []any, dest ...any) (store.Standing, error) {
	check, err := sessionDue(p)
	if err != nil {
		return store.Standing{}, err
	}
	var username, project, owner, role sql.NullString
	var live sql.NullBool
	dest = append([]any{&project, &owner, &role}, dest...)
	statement := query.plain
	if check != nil {
		statement, args = query.session, append(args, lookupName(check.SessionID), check.Generation)
		dest = append([]any{&username, &live}, dest...)
	}
	row, err := q.row(ctx, statement, args...)
	if err == nil {
		err = row.Scan(dest...)
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return store.Standing{}, classify(err)
	}
	if check != nil {
		if err := settleSession(check, username, live); err != nil {
			return store.Standing{}, err
		}
	}
	if !project.Valid {
		return store.Standing{}, p.Check(false, store.Standing{})
	}
	return store.Standing{ProjectID: project.String, OwnerID: owner.String, Member: store.Role(role.String)}, nil
}

package store

import (
	"context"
	"errors"
	"time"
)

// ErrTokenUsed reports that a refresh token was already used: refresh is
// single-use (API.md section 17), and of two concurrent uses of one token
// exactly one succeeds.
var ErrTokenUsed = errors.New("token already used")

// SessionUser is a user as authentication sees it: the account, and
// whether the session a token names has ended.
type SessionUser struct {
	User *User
	// Ended is true when the session was ended (a logout) for this user.
	Ended bool
}

// Sessions keeps what ends a login session, so that a logout or a
// password change holds on every instance sharing the storage: the ended
// sessions, the refresh tokens already used, and each user's session
// generation (User.SessionGeneration), which a password change moves on.
// Nothing is recorded when a session starts: a correctly signed token of a
// session never ended is valid. The memory and PostgreSQL stores implement
// it on the same type as UserDirectory; storetest.RunSessions is its
// conformance suite. Implementations must be safe for concurrent use.
//
// A session id is the token's sid claim, or its jti for a token without
// one. Ids are opaque strings chosen by the server.
type Sessions interface {
	// FindSessionUser returns the user with id userID, as FindUserByID
	// does, and whether that user's session sessionID has ended: in one
	// lookup, since authentication makes it on every request. An unknown
	// user is ErrNotFound.
	FindSessionUser(ctx context.Context, userID, sessionID string) (SessionUser, error)
	// EndSession records that the user's session sessionID has ended.
	// Ending it again is no error. The record may be forgotten after
	// until, when no token of the session can be accepted any more. An
	// unknown user is ErrNotFound.
	EndSession(ctx context.Context, userID, sessionID string, until time.Time) error
	// UseToken records the one use of the refresh token tokenID of the
	// user: ErrTokenUsed when it was used before. Of concurrent calls for
	// one token, on one store or on several sharing a database, exactly
	// one returns nil. The record may be forgotten after until. An unknown
	// user is ErrNotFound.
	UseToken(ctx context.Context, userID, tokenID string, until time.Time) error
	// SetPassword replaces the user's password hash and adds one to the
	// user's SessionGeneration, in one step, ending every session begun
	// before; it returns the user as changed. An unknown user is
	// ErrNotFound.
	SetPassword(ctx context.Context, userID string, hash []byte) (*User, error)
}

package store

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// ErrTokenUsed reports that a refresh token was already used: refresh is
// single-use (docs/api.md#authentication), and of two concurrent
// uses of one token exactly one succeeds.
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
// session never ended is valid. The memory, SQLite and PostgreSQL stores
// implement it on the same type as UserDirectory; storetest.RunSessions is its
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

// ErrSessionInvalid reports that the session a Caller's deferred check
// names (Caller.Session) is not live: the user is unknown or disabled, or
// the session ended (a logout, or a password change since it began). A
// SessionChecker returns it before any other error of the call, as
// authentication would have refused the request before the call; the API
// answers it as it answers such a token at authentication (401 "Invalid
// or expired token").
var ErrSessionInvalid = errors.New("session not live")

// SessionChecker is a Store that makes authentication's session check
// itself, in the statement that resolves a path, so that a read of one
// record costs one round trip instead of two (the session lookup, then
// the read). hds uses it, on the read routes that make one store call,
// when the Store keeps the sessions of the service (ChecksSessions):
// authentication then verifies the token in process and leaves the check
// to the store as a SessionCheck in Path.Caller.Session.
//
// Every method that resolves a Path must then, while Caller.Session is
// Due, check it before anything else: return ErrSessionInvalid (after
// calling Fail) when the session is not live, whatever else is wrong with
// the path, and call Pass when it is. A method may also leave the check
// undone (hds then makes it on its own before anything is answered), but
// never change anything for a caller whose check failed or is due.
// The PostgreSQL and SQLite stores implement it.
type SessionChecker interface {
	Store
	// ChecksSessions reports whether the store checks Caller.Session
	// against the sessions that s keeps: true only when they are its own.
	ChecksSessions(s Sessions) bool
}

// SessionCheck is the session check of a request that authentication
// left to the store (SessionChecker): the user, the session and the
// generation a verified token names. The store settles it (Pass or Fail)
// in the first call that resolves a path; later calls of the same request
// see it settled. It is owned by one request; settling it is safe for
// concurrent use.
type SessionCheck struct {
	// UserID is the token's subject.
	UserID string
	// SessionID is the token's session: its sid claim, or its jti.
	SessionID string
	// Generation is the session generation the session began in.
	Generation int64

	username string
	state    atomic.Int32
}

// The states of a SessionCheck.
const (
	checkDue int32 = iota
	checkPassed
	checkFailed
)

// Due reports whether c is a check still to be made: false for a nil
// check (nothing deferred) and for a settled one.
func (c *SessionCheck) Due() bool { return c != nil && c.state.Load() == checkDue }

// Failed reports whether c was settled as not live.
func (c *SessionCheck) Failed() bool { return c != nil && c.state.Load() == checkFailed }

// Passed reports whether c was settled as live.
func (c *SessionCheck) Passed() bool { return c != nil && c.state.Load() == checkPassed }

// DueFor is the check a store call made for userID must make: c when
// it is still due, nil when there is none (nothing deferred, or an
// earlier call of the request passed it). A check that failed before
// fails the call, and so does a due check of another user than userID.
func (c *SessionCheck) DueFor(userID string) (*SessionCheck, error) {
	switch {
	case c.Failed():
		return nil, ErrSessionInvalid
	case c.Due() && c.UserID != userID:
		return nil, c.Fail()
	case c.Due():
		return c, nil
	}
	return nil, nil
}

// Pass settles c as live; username is the user's name (the actor name of
// audit entries).
func (c *SessionCheck) Pass(username string) {
	c.username = username
	c.state.Store(checkPassed)
}

// Fail settles c as not live and returns ErrSessionInvalid.
func (c *SessionCheck) Fail() error {
	c.state.Store(checkFailed)
	return ErrSessionInvalid
}

// Username is the user's name once c passed, "" before.
func (c *SessionCheck) Username() string {
	if !c.Passed() {
		return ""
	}
	return c.username
}

// Live reports whether su, the user and session c names as
// Sessions.FindSessionUser found them, is a live session: the user
// active, the session not ended, and begun in the user's current session
// generation (a password change ends every session begun before it).
func (c *SessionCheck) Live(su SessionUser) bool {
	return su.User != nil && su.User.Active && !su.Ended && c.Generation >= su.User.SessionGeneration
}

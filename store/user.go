package store

import (
	"fmt"
	"time"
)

// AnonymousUserID is the id of the built-in user that unauthenticated
// requests run as when authentication is not required.
const AnonymousUserID = "anonymous"

// User is an account that may log in.
type User struct {
	ID       string
	Username string
	// PasswordHash is a bcrypt hash; the password itself is never stored.
	PasswordHash []byte
	// Active is false for a disabled account, which can neither log in nor
	// use a token issued before it was disabled.
	Active bool
	// Admin is true for a server administrator
	// (docs/api.md#server-administrators-and-user-accounts-v12), who
	// manages the users and may transfer any project.
	Admin bool
	// SessionGeneration counts the user's password changes
	// (Sessions.SetPassword, UserChange.PasswordHash) and disables
	// (UserChange.Active false, SetUserActive). A token records the
	// generation it was issued in; one issued in an earlier generation is
	// refused, so a password change or a disable ends every session begun
	// before it, exactly, whatever their timestamps, and enabling the user
	// again brings none of them back.
	SessionGeneration int64
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// Clone returns a deep copy of u.
func (u *User) Clone() *User {
	c := *u
	c.PasswordHash = append([]byte(nil), u.PasswordHash...)
	return &c
}

// UserChange is what UserDirectory.UpdateUser changes: each field that is
// not nil, all of them in one step.
type UserChange struct {
	// Admin, when not nil, makes the user a server administrator or not.
	Admin *bool
	// Active, when not nil, enables or disables the user. Disabling ends
	// every session of the user (SessionGeneration + 1); enabling ends
	// none and revives none.
	Active *bool
	// PasswordHash, when not nil, replaces the password hash and ends
	// every session of the user (SessionGeneration + 1).
	PasswordHash []byte
}

// LastAdminRule is the message of the *ValidationError a UserDirectory
// returns for a change that would leave no active administrator where
// there was one (docs/api.md#server-administrators-and-user-accounts-v12):
// demoting, disabling or deleting the last active administrator.
const LastAdminRule = "at least one active administrator must remain: make another user an administrator first"

// OwnsProjectsError is the *ValidationError a UserDirectory returns when
// asked to delete a user who still owns n projects (n > 0).
func OwnsProjectsError(n int) *ValidationError {
	what := "projects"
	if n == 1 {
		what = "project"
	}
	return &ValidationError{Message: fmt.Sprintf("the user owns %d %s: transfer or delete them first, or disable the user", n, what)}
}

// CompareUsers orders a and b as a list of users sorted by q
// (ListQuery.CompareKeys, the username as the name): every
// UserDirectory.ListUsers lists in this order.
func CompareUsers(a, b *User, q ListQuery) int {
	return q.CompareKeys(userKey(a), userKey(b))
}

// userKey is the SortKey of u.
func userKey(u *User) SortKey {
	return SortKey{ID: u.ID, Name: u.Username, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// UserPosition is where a list of users sorted by q.SortBy resumes after
// u (ListQuery.After).
func UserPosition(u *User, q ListQuery) Position {
	pos := Position{Name: u.Username, ID: u.ID}
	switch q.SortBy {
	case SortCreatedAt:
		pos.Time = u.CreatedAt
	case SortUpdatedAt:
		pos.Time = u.UpdatedAt
	}
	return pos
}

// UserAfter reports whether u sorts after the position pos in q's order
// (CompareUsers): the users a page resumed at pos lists.
func UserAfter(u *User, pos Position, q ListQuery) bool {
	return q.CompareKeys(userKey(u), KeyAt(pos)) > 0
}

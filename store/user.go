package store

import "time"

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
	// SessionGeneration counts the user's password changes (Sessions.SetPassword).
	// A token records the generation it was issued in; one issued in an
	// earlier generation is refused, so a password change ends every
	// session begun before it, exactly, whatever their timestamps.
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

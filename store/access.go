package store

// Role is a caller's standing on a project (API.md section 17). Each role
// includes the rights of the ones before it.
type Role string

// The roles, weakest first. RoleOwner belongs to the project's creator
// alone; the others are given to members and API tokens (tokens: up to
// RoleEditor).
const (
	RoleViewer Role = "viewer"
	RoleReader Role = "reader"
	RoleEditor Role = "editor"
	RoleAdmin  Role = "admin"
	RoleOwner  Role = "owner"
)

// Right is what an operation needs on its project. Routes name the right
// they need; which roles hold it is the rights table below, the one place
// that maps roles to rights.
type Right int

// The rights, weakest first. The zero Right is RightRead.
const (
	// RightRead reads everything under the project, credentials masked.
	RightRead Right = iota
	// RightReveal reads credential values in plain text.
	RightReveal
	// RightWrite changes collections, clusters and records.
	RightWrite
	// RightAdmin renames the project, manages members and API tokens and
	// reads the audit log.
	RightAdmin
	// RightOwn deletes the project.
	RightOwn
)

// rights is the rights table: the strongest right each role holds. A role
// holds every right up to and including it.
var rights = map[Role]Right{
	RoleViewer: RightRead,
	RoleReader: RightReveal,
	RoleEditor: RightWrite,
	RoleAdmin:  RightAdmin,
	RoleOwner:  RightOwn,
}

// Allows reports whether role r holds right need. An unknown role holds
// nothing.
func (r Role) Allows(need Right) bool {
	top, ok := rights[r]
	return ok && need <= top
}

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool {
	_, ok := rights[r]
	return ok
}

// Caller is who runs an operation, and in which request: a user, or an
// API token acting for its project. Stores check it against the project
// (Path) and record it in what a change writes (the record's author, the
// audit entry). The zero Caller is an administrative tool: it passes every
// check.
type Caller struct {
	// UserID is the acting user's id; empty for an API token.
	UserID string
	// TokenID is the acting API token's id; empty for a user.
	TokenID string
	// Name is the username, or the token's name, for audit entries.
	Name string
	// RequestID is the request's X-Request-Id, for audit entries.
	RequestID string
}

// IsZero reports whether c names nobody (an administrative tool).
func (c Caller) IsZero() bool { return c.UserID == "" && c.TokenID == "" }

// ID is the caller's id as the audit log and record authors show it: the
// user id, or "token:<id>" for an API token.
func (c Caller) ID() string {
	if c.TokenID != "" {
		return "token:" + c.TokenID
	}
	return c.UserID
}

package store

// Role is a caller's standing on a project
// (docs/api.md#sharing-and-api-tokens). Each role includes the rights of
// the ones before it.
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

// The rights, weakest first. The zero Right is no right at all: an
// operation that does not say what it needs is allowed to no one but the
// zero Caller (Role.Allows), so a route or a caller that forgets to name
// its need is refused rather than open to every viewer.
const (
	// RightRead reads everything under the project, credentials masked.
	RightRead Right = iota + 1
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
// nothing, and no role holds the zero Right (a need not named) or one
// that is not a right.
func (r Role) Allows(need Right) bool {
	top, ok := rights[r]
	return ok && need >= RightRead && need <= top
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

	// For an API token (TokenID set), what authentication found of it:
	// ProjectID is the id of the token's project, the only one it may
	// use; Role its role (viewer, reader or editor); Collection and
	// Cluster its scope, names as the token was created with (empty: not
	// narrowed). A scope is a path of names: renaming the collection
	// takes it out of the token's reach, and a new collection of that
	// name comes into it. Empty for a user.
	ProjectID           string
	Role                Role
	Collection, Cluster string

	// ServerAdmin is true for a server administrator (User.Admin) on the
	// one operation the API lets an administrator run on any project
	// (Access.TransferProject): RoleOn then gives RoleOwner. Callers set
	// it for that operation only; it is false everywhere else.
	ServerAdmin bool

	// Session, for a user, is the session check authentication left to
	// the store (SessionChecker), nil when authentication made it. Its
	// UserID is UserID; Name is empty, and the user's name comes with the
	// check (ActorName).
	Session *SessionCheck
}

// ActorName is the caller's name as audit entries show it: Name, or for
// a user whose session check was left to the store, the username the
// check found.
func (c Caller) ActorName() string {
	if c.Name == "" && c.Session != nil {
		return c.Session.Username()
	}
	return c.Name
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

// Level is a level of the tree an operation works in, for the scope of
// an API token (docs/api.md#sharing-and-api-tokens): a token narrowed to
// a collection may run only operations that work within that collection,
// one narrowed to a cluster only those within that cluster.
type Level int

// The levels, widest first. The zero Level is LevelProject.
const (
	// LevelProject: the project itself and its list of collections
	// (listing them, creating, renaming or deleting one), and everything
	// that spans the project (batches, exports, members, tokens).
	LevelProject Level = iota
	// LevelCollection: within one collection (reading it, its list of
	// clusters: listing, creating, renaming or deleting one).
	LevelCollection
	// LevelCluster: within one cluster (reading it and its records,
	// writing its records).
	LevelCluster
)

// Standing is what path resolution found of the project a Path names:
// its id and owner, and the member role of the caller, if any. Stores
// fill it in the query that resolves the path and hand it to Path.Check.
type Standing struct {
	ProjectID string
	OwnerID   string
	// Member is the caller's role as a member of the project; empty when
	// the caller is not one (or is an API token).
	Member Role
}

// RoleOn returns the role p.Caller holds on the project s describes, for
// the part of it p names: RoleOwner for its owner, the member role of a
// member, the token's role for an API token of the project whose scope
// covers p; empty when none. The zero Caller holds RoleOwner.
func (p Path) RoleOn(s Standing) Role {
	c := p.Caller
	switch {
	case c.IsZero():
		return RoleOwner
	case c.TokenID != "":
		if s.ProjectID != c.ProjectID || !p.inScope() {
			return ""
		}
		return c.Role
	case s.OwnerID == c.UserID, c.ServerAdmin:
		return RoleOwner
	}
	return s.Member
}

// inScope reports whether an API token's scope covers the part of the
// project p names at the level p works in (p.Within).
func (p Path) inScope() bool {
	c := p.Caller
	switch {
	case c.Cluster != "":
		return p.Within >= LevelCluster && p.Collection == c.Collection && p.Cluster == c.Cluster
	case c.Collection != "":
		return p.Within >= LevelCollection && p.Collection == c.Collection
	}
	return true
}

// Check is the access check of path resolution, the one every store
// makes before it looks below the project: found reports whether the
// project p.Project exists, s what was found of it. In the order of the
// Store contract it returns a *NotFoundError for a missing project, then
// ErrPermissionDenied when p.Caller does not hold p.Need there (RoleOn):
// a p.Need left zero is held by no caller. The zero Caller, an
// administrative tool, passes whatever p.Need says. An API token is
// refused any project but its own with ErrPermissionDenied, whether the
// project exists or not, so that a token never learns which other
// projects exist.
func (p Path) Check(found bool, s Standing) error {
	switch {
	case !found && p.Caller.TokenID != "":
		return ErrPermissionDenied
	case !found:
		return &NotFoundError{Kind: "project", Name: p.Project}
	case p.Caller.IsZero():
		return nil
	case !p.RoleOn(s).Allows(p.Need):
		return ErrPermissionDenied
	}
	return nil
}

// CanCreateProjects reports whether c may create projects: users may, API
// tokens, which belong to one project, may not.
func (c Caller) CanCreateProjects() bool { return c.TokenID == "" }

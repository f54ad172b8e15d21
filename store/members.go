package store

import (
	"context"
	"time"
)

// Member is a user's role on a project
// (docs/api.md#sharing-and-api-tokens). The owner is listed as a member
// with RoleOwner.
type Member struct {
	UserID    string
	Username  string
	Role      Role
	CreatedAt time.Time
}

// APIToken is an API token of a project, as the store keeps it: its hash,
// never the token string.
type APIToken struct {
	ID        string
	ProjectID string
	Name      string
	// Role is RoleViewer, RoleReader or RoleEditor.
	Role Role
	// Collection and Cluster narrow the token's scope (empty: not
	// narrowed; a Cluster needs a Collection).
	Collection string
	Cluster    string
	// Hash is the SHA-256 of the token string.
	Hash       []byte
	CreatedAt  time.Time
	ExpiresAt  *time.Time // nil: never
	LastUsedAt *time.Time // nil: never used
	// CreatedBy is the id of the user who created it.
	CreatedBy string
}

// Expired reports whether t has expired at now.
func (t *APIToken) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// Caller returns the Caller of a request made with t.
func (t *APIToken) Caller() Caller {
	return Caller{TokenID: t.ID, Name: t.Name, ProjectID: t.ProjectID, Role: t.Role,
		Collection: t.Collection, Cluster: t.Cluster}
}

// TokenRole reports whether r is a role an API token may have.
func TokenRole(r Role) bool { return r == RoleViewer || r == RoleReader || r == RoleEditor }

// MemberRole reports whether r is a role a member may be given.
func MemberRole(r Role) bool { return r.Valid() && r != RoleOwner }

// TouchInterval is how often, at most, an API token's LastUsedAt is
// written.
const TouchInterval = time.Minute

// Access keeps who may use a project besides its owner: its members and
// its API tokens (docs/api.md#sharing-and-api-tokens). Path resolution
// of the Store on the same type reads them, so a member removed or a token
// deleted is refused on the very next request, on every instance sharing
// the storage. The memory, SQLite and PostgreSQL stores implement it on
// the same type as Store; storetest.RunAccess is its conformance suite.
// Implementations must be safe for concurrent use.
//
// Every method that takes a Path resolves it as the Store does
// (Path.Check with Path.Need), so a caller without the right gets
// ErrPermissionDenied before anything else is looked at.
type Access interface {
	// FindMembers lists the members of p.Project, the owner included
	// (RoleOwner), ordered by username, paged by q.Limit and q.Offset; the
	// int is the number of members.
	FindMembers(ctx context.Context, p Path, q ListQuery) ([]*Member, int, error)
	// PutMember gives the user m.UserID (named m.Username) the role
	// m.Role on p.Project, adding the member or changing its role (its
	// CreatedAt stays), and returns the member. A role that is not a
	// member role (MemberRole) is a *ValidationError, and so is the
	// project's owner, whose entry cannot change.
	PutMember(ctx context.Context, p Path, m Member) (*Member, error)
	// DeleteMember removes the member userID from p.Project: a
	// *ValidationError for the owner, ErrNotFound (kind "member", named
	// username) when the user is not a member.
	DeleteMember(ctx context.Context, p Path, userID, username string) error

	// CreateToken adds the API token t to p.Project (t.ProjectID is set
	// by the store; t.ID when empty, and t.CreatedAt). A scope naming a
	// collection or cluster that does not exist is ErrNotFound naming it.
	CreateToken(ctx context.Context, p Path, t *APIToken) (*APIToken, error)
	// FindTokens lists the API tokens of p.Project, oldest first, paged
	// by q.Limit and q.Offset, with the number of tokens.
	FindTokens(ctx context.Context, p Path, q ListQuery) ([]*APIToken, int, error)
	// DeleteToken revokes the API token id of p.Project: ErrNotFound
	// (kind "token") when no token of the project has that id.
	DeleteToken(ctx context.Context, p Path, id string) error
	// FindTokenByHash returns the API token whose hash is hash, found
	// by an indexed lookup and compared in constant time, or ErrNotFound.
	// Expiry is the caller's to check (APIToken.Expired).
	FindTokenByHash(ctx context.Context, hash []byte) (*APIToken, error)
	// TransferProject makes the active user username the owner of
	// p.Project (docs/api.md#server-administrators-and-user-accounts-v12;
	// p.Need is RightOwn, which a Caller.ServerAdmin holds on every
	// project) and returns the project as changed. In one atomic step: the
	// new owner's membership, if any, goes; the previous owner becomes an
	// admin member (CreatedAt the time of the transfer); the project's
	// UpdatedAt moves; and the audit entry project.transfer (Target the new
	// owner's username) is written. An unknown or disabled user is
	// ErrNotFound (kind "user", named username). Transferring to the
	// current owner changes nothing and writes no entry.
	TransferProject(ctx context.Context, p Path, username string) (*Project, error)

	// TouchToken sets the token's LastUsedAt to now, unless it was set
	// less than TouchInterval before now (by any instance); an unknown id
	// is no error.
	TouchToken(ctx context.Context, id string, now time.Time) error
}

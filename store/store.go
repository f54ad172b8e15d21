// Package store holds the domain of hds: projects, collections, clusters,
// records and users, the record type system, and the Store and
// UserDirectory interfaces that every storage implementation satisfies.
//
// The package is the contract only. It imports only the standard library
// (and internal/jsonstr, internal/timetext and internal/uuidtext, which
// import nothing else), so that a host application can implement Store
// or UserDirectory without pulling in any of hds's own dependencies;
// hds.WithStore and hds.WithUsers take a Projects and an Accounts, which
// name what hds requires of them. Implementations shipped with hds live
// in store/memory and store/postgres, and the helpers only they need
// under internal/ (sortkey, fanout, ...); store/storetest holds the
// conformance suites every implementation must pass.
//
// # Errors
//
// Methods return errors that match, with errors.Is, one of the sentinel
// errors below (ErrPreconditionFailed, as a *PreconditionError, from a
// conditional write), or a *ValidationError. Implementations may wrap them with
// context. Any other error is treated as an internal failure.
package store

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors returned by Store and UserDirectory implementations.
var (
	// ErrNotFound reports that a resource (or one of its ancestors) does
	// not exist. Stores return a *NotFoundError, which matches it.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists reports that a name is already taken by a sibling
	// (or, for projects, by any project). Stores return an *ExistsError,
	// which matches it.
	ErrAlreadyExists = errors.New("already exists")
	// ErrPermissionDenied reports that the project named by a Path is
	// one that Path.Caller may not use as Path.Need asks.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrUnavailable reports that the backing storage cannot be reached,
	// or did not answer in time. Implementations wrap their driver's
	// error with it, and only errors of that kind: any other failure is an
	// internal error.
	ErrUnavailable = errors.New("store unavailable")
)

// ErrUnchanged is for the update function of UpdateRecord that finds
// nothing to change: returning it aborts the update, and UpdateRecord
// returns it as it does any error of the function, so that the caller can
// tell "nothing to do" from a failure. Stores never return it themselves.
var ErrUnchanged = errors.New("unchanged")

// NotFoundError names the missing resource. It matches ErrNotFound.
type NotFoundError struct {
	Kind string // "project", "collection", "cluster", "record" or "user"
	Name string
}

// Error returns, for example, `collection "prod" not found`.
func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.Kind, e.Name) }

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ExistsError names the resource whose name is taken. It matches
// ErrAlreadyExists.
type ExistsError struct {
	Kind string
	Name string
}

// Error returns, for example, `project "web" already exists`.
func (e *ExistsError) Error() string { return fmt.Sprintf("%s %q already exists", e.Kind, e.Name) }

// Is reports whether target is ErrAlreadyExists.
func (e *ExistsError) Is(target error) bool { return target == ErrAlreadyExists }

// ValidationError reports input that breaks a domain rule: a bad name, a
// value that does not fit its type, an unknown type. Its message is safe to
// show to the client and never contains a credential value.
type ValidationError struct {
	Message string
}

// Error returns the message.
func (e *ValidationError) Error() string { return e.Message }

// invalid builds a *ValidationError.
func invalid(format string, args ...any) error {
	return &ValidationError{Message: fmt.Sprintf(format, args...)}
}

// Path names a resource by its own name and the names of its ancestors.
// Fields below the level an operation works on are ignored.
type Path struct {
	// Caller is who runs the operation. Unless it is the zero Caller (an
	// administrative tool, which passes every check), it must hold Need
	// on the project or the operation fails with ErrPermissionDenied,
	// before any child is looked up: as its owner, a member, or an API
	// token of the project whose scope covers the path (Path.Check).
	Caller Caller
	// Need is the right the operation needs on the project. Left zero,
	// no caller holds it (but the zero Caller, which passes every check):
	// every operation names the right it needs.
	Need Right
	// Within is the level the operation works in (LevelProject when
	// zero), which an API token's scope must cover: see Level.
	Within     Level
	Project    string
	Collection string
	Cluster    string
	// Record is a record name or id: when it is a UUID (in any case) and
	// a record with that id exists in the cluster, it names that record;
	// otherwise it is a name. Creating a record whose name is the id of a
	// record of the cluster is ErrAlreadyExists.
	Record string
}

// RecordRef is a record with the path that names it.
type RecordRef struct {
	Path   Path
	Record *Record
}

// Store keeps projects, collections, clusters and records. Implementations
// must be safe for concurrent use and must copy values in and out, so that
// a caller can never change stored state through a returned pointer.
//
// Every method that changes something also writes the change's audit
// entry (AuditEntry, docs/api.md#audit-log-and-change-feed) in the same
// atomic step, by p.Caller, with the project's next revision: project,
// collection and cluster create, rename (to another name) and delete (of a
// project: the project's log goes with it), record create, update
// (record.rename when only the name changed), delete and restore, and one
// entry per record an Apply changed.
//
// Every method that takes a Path returns, in this order of checks:
// ErrNotFound (as a *NotFoundError naming the first missing level) when
// the project is missing; ErrPermissionDenied when Path.Caller does not
// hold Path.Need on it (Path.Check); ErrNotFound naming the first missing
// level below the project. Create and rename return ErrAlreadyExists (as an
// *ExistsError) when the name is taken, and a *ValidationError when the new
// name fails ValidateName. A rename is atomic: of concurrent renames of one
// resource exactly one succeeds, and the others, finding no resource of the
// old name, get ErrNotFound. Values are validated by the caller. A name that
// could never be stored (one holding U+0000, say) is simply not found.
type Store interface {
	// FindProjects lists the projects that the user userID owns or is a
	// member of and that match q, each with the user's Role, and the
	// number of matches before paging.
	FindProjects(ctx context.Context, userID string, q ListQuery) ([]*Project, int, error)
	// FindProject returns the project p.Project.
	FindProject(ctx context.Context, p Path) (*Project, error)
	// CreateProject creates the project p.Project owned by p.Caller.UserID
	// (an API token may not: ErrPermissionDenied). Project
	// names are unique across the whole store, whoever owns them:
	// ErrAlreadyExists even when another user holds the name.
	CreateProject(ctx context.Context, p Path) (*Project, error)
	// RenameProject renames the project; renaming to the current name
	// changes nothing and returns the project.
	RenameProject(ctx context.Context, p Path, newName string) (*Project, error)
	// DeleteProject deletes the project and everything beneath it.
	DeleteProject(ctx context.Context, p Path) error

	// FindCollections lists the collections of p.Project that match q.
	FindCollections(ctx context.Context, p Path, q ListQuery) ([]*Collection, int, error)
	// FindCollection returns the collection p.Collection.
	FindCollection(ctx context.Context, p Path) (*Collection, error)
	// CreateCollection creates the collection p.Collection.
	CreateCollection(ctx context.Context, p Path) (*Collection, error)
	// RenameCollection renames the collection.
	RenameCollection(ctx context.Context, p Path, newName string) (*Collection, error)
	// DeleteCollection deletes the collection and everything beneath it.
	DeleteCollection(ctx context.Context, p Path) error

	// FindClusters lists the clusters of p.Collection that match q.
	FindClusters(ctx context.Context, p Path, q ListQuery) ([]*Cluster, int, error)
	// FindCluster returns the cluster p.Cluster; with records true it also
	// fills Cluster.Records with every record of the cluster, by name.
	FindCluster(ctx context.Context, p Path, records bool) (*Cluster, error)
	// CreateCluster creates the cluster p.Cluster.
	CreateCluster(ctx context.Context, p Path) (*Cluster, error)
	// RenameCluster renames the cluster.
	RenameCluster(ctx context.Context, p Path, newName string) (*Cluster, error)
	// DeleteCluster deletes the cluster and its records.
	DeleteCluster(ctx context.Context, p Path) error

	// FindRecords lists the records of p.Cluster that match q.
	FindRecords(ctx context.Context, p Path, q RecordQuery) ([]*Record, int, error)
	// FindRecord returns the record p.Record (a name or an id).
	FindRecord(ctx context.Context, p Path) (*Record, error)
	// CreateRecord creates a record named p.Record in p.Cluster with r's
	// Type and Value, written by p.Caller (w's fields do not apply).
	// When r.ID is empty the store assigns one; otherwise it must be a new
	// UUID (callers that seal values to the record id choose it
	// beforehand). Version starts at 1.
	CreateRecord(ctx context.Context, p Path, r *Record, w Write) (*Record, error)
	// UpdateRecord applies update to the record p.Record atomically: the
	// store passes a copy of the current record, update changes Name,
	// Type or Value of it (or returns an error, which aborts the update
	// and is returned unchanged), the store checks w's condition on the
	// current record (a *PreconditionError when it fails), and writes the
	// result with Version incremented, UpdatedAt moved and UpdatedBy set
	// to p.Caller.ID(). The state it replaces joins the record's history, which
	// is then cut to the newest w.MaxVersions versions, in the same
	// atomic step. A new name taken by a sibling is ErrAlreadyExists.
	// Preconditions come last
	// (docs/api.md#concurrency-control-and-record-history): the order of
	// errors is ErrNotFound, update's error, ErrAlreadyExists,
	// *PreconditionError. update may be called more than once (a store
	// runs the write again after PostgreSQL aborts it, or SQLite rolls
	// back its group of writes): only the outcome of its last call is
	// written.
	UpdateRecord(ctx context.Context, p Path, w Write, update func(*Record) error) (*Record, error)
	// DeleteRecord deletes the record and its history, when it passes w's
	// condition (a *PreconditionError otherwise, checked atomically with
	// the delete).
	DeleteRecord(ctx context.Context, p Path, w Write) error

	// FindRecordVersions lists the states of the record p.Record, newest
	// first: the current state, then the versions its history keeps. Only
	// q.Limit and q.Offset apply. The int is the number of states before
	// paging.
	FindRecordVersions(ctx context.Context, p Path, q ListQuery) ([]*RecordVersion, int, error)
	// FindRecordVersion returns the record p.Record as it was at version
	// (RecordVersion.At): the current record for the current version. A
	// version not kept, or never reached, is ErrNotFound (VersionNotFound).
	FindRecordVersion(ctx context.Context, p Path, version int64) (*Record, error)
	// RestoreRecord makes the type and value of the record's state at
	// version current again, as a new version (the name stays), in one
	// atomic step that also keeps history as UpdateRecord does. The order
	// of errors is: ErrNotFound for the record, ErrNotFound
	// (VersionNotFound) for a version not kept, *PreconditionError.
	RestoreRecord(ctx context.Context, p Path, version int64, w Write) (*Record, error)
	// ResealRecord rewrites the credential values of the record with that
	// id, its current value and every version its history keeps whose
	// type is CREDENTIAL or []CREDENTIAL, with what reseal returns for
	// each, in one atomic step. It is not a change: versions, timestamps,
	// authors and entity tags stay as they are. It reports whether any
	// value was rewritten; an unknown id is ErrNotFound. reseal's error
	// aborts it and is returned unchanged.
	ResealRecord(ctx context.Context, id string, reseal Resealer) (bool, error)

	// Apply runs the operations of b on the project p.Project in one
	// atomic step: all of them, in order, or none. Concurrent batches and
	// single writes never see a batch half applied. It returns one
	// OpResult per op.
	//
	// Errors: ErrNotFound (the project) and ErrPermissionDenied, as for
	// any Path, before any op runs; then the error of the first op that
	// fails, as an *OpError naming its index and wrapping the error the op
	// would get alone (in the order of that single method: ErrNotFound
	// naming the first missing level, the Update's own error,
	// *ValidationError for a bad name, ErrAlreadyExists, and last
	// *PreconditionError). When it fails, nothing of b has changed.
	Apply(ctx context.Context, p Path, b Batch) ([]OpResult, error)
	// ExportProject reads the project p.Project in one consistent
	// snapshot and calls visit with the project itself (an item with
	// Collection empty and the snapshot's Revision), then each of its
	// collections, clusters and records: every collection (in name order, byte-wise) followed by
	// each of its clusters (in name order), each cluster followed by its
	// records (in name order). Path errors are returned before the first
	// visit; visit's error stops the walk and is returned unchanged.
	// Writes that commit during the walk are not seen. The store holds no
	// lock that blocks writers while visit runs.
	ExportProject(ctx context.Context, p Path, visit func(ExportItem) error) error

	// FindCredentialRecords lists, in id order, up to limit records whose
	// current state or any kept version is of type CREDENTIAL or
	// []CREDENTIAL and whose id sorts after afterID (all of them from the
	// start when afterID is empty), each with the path that names it
	// (Path.Record is the id, Path.Caller zero). It serves administrative
	// tools such as credential key rotation (with ResealRecord), which
	// walk every credential in batches and can resume from the last id.
	FindCredentialRecords(ctx context.Context, afterID string, limit int) ([]RecordRef, error)

	// Ping reports whether the store can serve requests; it returns an
	// error matching ErrUnavailable when it cannot.
	Ping(ctx context.Context) error
}

// UserDirectory keeps the accounts that may log in. Implementations must
// be safe for concurrent use and copy values in and out.
//
// The last-administrator rule
// (docs/api.md#server-administrators-and-user-accounts-v12): once there is
// an active administrator (an Admin, Active user), a change that would
// leave none (UpdateUser, SetUserActive, DeleteUser) fails with a
// *ValidationError whose message is LastAdminRule and changes nothing;
// the check and the change are one step, so of concurrent changes that
// would together leave none, at least one fails, on one directory or on
// several sharing a database. While there is none, the rule does not
// apply. storetest.RunUsers is the conformance suite.
type UserDirectory interface {
	// CreateUser adds u (Admin and Active as given). It assigns u.ID when
	// empty and sets the timestamps; a taken username is
	// ErrAlreadyExists.
	CreateUser(ctx context.Context, u *User) (*User, error)
	// FindUserByName returns the user with that username, or ErrNotFound.
	FindUserByName(ctx context.Context, username string) (*User, error)
	// FindUserByID returns the user with that id, or ErrNotFound.
	FindUserByID(ctx context.Context, id string) (*User, error)
	// ListUsers returns the users whose username contains q.Search (as
	// ListQuery.Search matches names), in the order of CompareUsers
	// (q.SortBy: by username when unset, id, created_at or updated_at;
	// q.Desc) and paged by q.Limit and q.Offset (a Limit of 0: no limit),
	// with the number of matches. Other fields of q are ignored: the
	// zero ListQuery lists every user, by username.
	ListUsers(ctx context.Context, q ListQuery) ([]*User, int, error)
	// UpdateUser applies c to the user username in one step and returns
	// the user as changed: ErrNotFound for an unknown user, the
	// last-administrator rule's *ValidationError. Disabling or setting a
	// password ends every session of the user (User.SessionGeneration).
	UpdateUser(ctx context.Context, username string, c UserChange) (*User, error)
	// SetUserActive enables or disables the user, as UpdateUser with
	// UserChange.Active alone does, or returns ErrNotFound.
	SetUserActive(ctx context.Context, username string, active bool) error
	// DeleteUser removes the user and the user's memberships (Access), or
	// returns ErrNotFound; the API tokens the user created stay. A
	// directory that is also the Store (the memory, SQLite and PostgreSQL stores)
	// refuses, with OwnsProjectsError, a user who owns projects, so that
	// no project is left without an owner; the last-administrator rule
	// applies.
	DeleteUser(ctx context.Context, username string) error
}

package store

import (
	"cmp"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Snapshot is a named, immutable copy of one collection, or of one
// cluster, at one project revision (docs/api.md#snapshots-and-rollback-v13).
type Snapshot struct {
	Name string
	// Collection and Cluster name what it was taken of, as named then;
	// Cluster is empty for a snapshot of a collection.
	Collection  string
	Cluster     string
	Description string
	// Revision is the project's newest audit revision before the
	// snapshot's own snapshot.create entry.
	Revision int64
	// Records is the number of records it holds.
	Records int
	// Automatic marks a snapshot a promote took (named auto-N).
	Automatic bool
	CreatedAt time.Time
	// CreatedBy is the caller as an audit entry's ActorName names it.
	CreatedBy string
}

// Side returns the side of a comparison that the snapshot stands for
// (Side.Snapshot set to its name).
func (s *Snapshot) Side() Side {
	return Side{Collection: s.Collection, Cluster: s.Cluster, Snapshot: s.Name}
}

// SnapshotQuery selects snapshots of a project (GET P/snapshots): newest
// first (ties by name), Search matched on the name as ListQuery.Search
// is, Collection (when set) the collection it was taken of.
type SnapshotQuery struct {
	Limit      int
	Offset     int
	Search     string
	Collection string
}

// Matches reports whether s passes q's filters (not its paging).
func (q SnapshotQuery) Matches(s *Snapshot) bool {
	return (q.Collection == "" || s.Collection == q.Collection) &&
		strings.Contains(strings.ToLower(s.Name), strings.ToLower(q.Search))
}

// CompareSnapshots orders snapshots as lists give them: newest first
// (by Revision, then CreatedAt), ties by name.
func CompareSnapshots(a, b *Snapshot) int {
	return cmp.Or(cmp.Compare(b.Revision, a.Revision), b.CreatedAt.Compare(a.CreatedAt), strings.Compare(a.Name, b.Name))
}

// AutomaticPrefix starts the names of automatic snapshots; no other
// snapshot name may start with it.
const AutomaticPrefix = "auto-"

// AutomaticName is the name of the automatic snapshot a promote takes when
// the project's revision is revision: auto-N.
func AutomaticName(revision int64) string {
	return AutomaticPrefix + strconv.FormatInt(revision, 10)
}

// ValidateSnapshotName returns a *ValidationError for a name that fails
// ValidateName or starts with AutomaticPrefix (byte-wise).
func ValidateSnapshotName(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if strings.HasPrefix(name, AutomaticPrefix) {
		return invalid("snapshot names starting with %q are kept for automatic snapshots", AutomaticPrefix)
	}
	return nil
}

// SnapshotSize is what one record of a snapshot counts toward
// Quotas.MaxBytesPerProject: its name and value, as in a record.
func SnapshotSize(name string, value []byte) int64 { return int64(len(name) + len(value)) }

// AutoSnapshot asks Store.Apply to take an automatic snapshot of Side
// (docs/api.md#snapshots-and-rollback-v13) in the batch's atomic step,
// after Batch.IfRevision is checked and before the first op: named
// AutomaticName of the project's revision then, its Automatic set, taken
// by the path's caller. The automatic snapshots beyond Keep (the new one
// counted) are then deleted, oldest first, each audited as
// snapshot.delete by the same caller. Automatic snapshots count toward no
// quota. A dry run takes none. Stores without Snapshots ignore it.
type AutoSnapshot struct {
	Side Side
	Keep int
}

// DefaultKeepAutomatic is how many automatic snapshots a project keeps
// unless told otherwise (snapshots.keep_automatic).
const DefaultKeepAutomatic = 20

// SnapshotResealer rewrites one sealed credential value a snapshot keeps,
// as Resealer does; recordID is the id of the record it was taken from,
// to which the value is sealed.
type SnapshotResealer func(recordID string, t DataType, value json.RawMessage) (json.RawMessage, bool, error)

// Snapshots is the optional capability of stores that keep snapshots
// (docs/api.md#snapshots-and-rollback-v13); every shipped store has it,
// and storetest.RunSnapshots is its conformance suite. Path errors are
// those of any Path (p.Need is checked); names below the project are
// those of the Path.
type Snapshots interface {
	// CreateSnapshot copies every record of p.Collection (its clusters,
	// empty ones included) or, when p.Cluster is set, of that cluster,
	// each with its version, in one atomic step at one revision, and
	// writes its snapshot.create entry. Errors: a *ValidationError for a
	// name ValidateSnapshotName refuses; ErrNotFound naming the missing
	// collection or cluster; ErrAlreadyExists (an *ExistsError of kind
	// "snapshot") for a name taken; a *QuotaError for a project that has
	// Quotas.MaxSnapshotsPerProject snapshots not automatic, or whose
	// bytes would pass Quotas.MaxBytesPerProject.
	CreateSnapshot(ctx context.Context, p Path, name, description string) (*Snapshot, error)
	// FindSnapshots lists the snapshots of the project that match q, in
	// the order of CompareSnapshots, and their number before paging.
	FindSnapshots(ctx context.Context, p Path, q SnapshotQuery) ([]*Snapshot, int, error)
	// FindSnapshot returns the snapshot name, or ErrNotFound.
	FindSnapshot(ctx context.Context, p Path, name string) (*Snapshot, error)
	// SnapshotRecords calls visit with each cluster of the snapshot name
	// (record nil), in name order, each followed by its records in name
	// order, values as stored (credentials sealed to the record's ID).
	// ErrNotFound for an unknown snapshot comes before the first visit;
	// visit's error stops the walk and is returned.
	SnapshotRecords(ctx context.Context, p Path, name string, visit func(cluster string, r *Record) error) error
	// DeleteSnapshot deletes the snapshot name and writes its
	// snapshot.delete entry, or returns ErrNotFound.
	DeleteSnapshot(ctx context.Context, p Path, name string) error
	// RecordSnapshotReveal writes the credential.reveal entry of a reveal
	// of the snapshot name: its collection, cluster and, as the target,
	// its name. ErrNotFound for an unknown snapshot.
	RecordSnapshotReveal(ctx context.Context, p Path, name string) error
	// CompareSnapshot compares the snapshot from.Snapshot (the From side)
	// with to, as Comparer.CompareRecords compares two sides, in one
	// consistent read: Pairs name from.Cluster when to is a cluster.
	// Errors before the first visit: path errors, ErrNotFound for the
	// snapshot, then for the first missing level of to.
	CompareSnapshot(ctx context.Context, p Path, from, to Side, visit func(Pair) error) error
	// ResealSnapshots calls reseal with every credential value kept by a
	// snapshot of any project and writes what it returns when it asks
	// (not a change: no entry, no revision). It returns how many values
	// it rewrote; reseal's error stops it. It checks no access:
	// credentials rotate calls it.
	ResealSnapshots(ctx context.Context, reseal SnapshotResealer) (int, error)
}

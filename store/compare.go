package store

import (
	"cmp"
	"context"
	"iter"
	"strconv"
	"strings"
)

// Side names one side of a comparison (docs/api.md#21-compare-and-promote):
// a collection, or a cluster of it when Cluster is set.
type Side struct {
	Collection string
	Cluster    string
	// Snapshot, when set, makes the side that snapshot
	// (docs/api.md#snapshots-and-rollback-v13): Collection and Cluster
	// are then what it was taken of. Only a From side may be one.
	Snapshot string
}

// String returns COLLECTION or COLLECTION/CLUSTER, as the API names a side,
// or snapshot:NAME for a snapshot.
func (s Side) String() string {
	if s.Snapshot != "" {
		return "snapshot:" + s.Snapshot
	}
	if s.Cluster == "" {
		return s.Collection
	}
	return s.Collection + "/" + s.Cluster
}

// Pair is one step of a comparison (Comparer.CompareRecords): first the
// snapshot's revision alone, then every record name found on either side.
type Pair struct {
	// Revision, on the first Pair only, is the snapshot's revision: the
	// newest audit entry of the project whose change it includes, a
	// credential.reveal entry not counted (it changes nothing), so that
	// a reveal never makes a Batch.IfRevision of it stale.
	Revision int64
	// Cluster is the cluster the records are in: the same name on both
	// sides when two collections are compared (their clusters are paired
	// by name), the From side's cluster when two clusters are.
	Cluster string
	// Name is the record's name.
	Name string
	// From and To are the record of that name on each side, values as
	// stored (credentials sealed); nil on the side that lacks it.
	From, To *Record
}

// Comparer is implemented by stores that compare two collections or two
// clusters of a project in one consistent snapshot, reading both sides as
// ordered streams and merging them, so that a comparison never holds a
// whole side in memory. Compare falls back on ExportProject for stores
// without it; the shipped stores have it.
type Comparer interface {
	// CompareRecords reads the project p.Project in one consistent
	// snapshot and calls visit with a Pair holding only the snapshot's
	// Revision, then with one Pair per record name found on either side,
	// ordered by Cluster, then Name, byte-wise. from and to are both
	// collections (Cluster empty) or both clusters.
	//
	// Errors, before the first visit: those of any Path (ErrNotFound for
	// the project, ErrPermissionDenied), then ErrNotFound naming the first
	// missing level of from, then of to. visit's error stops the walk and
	// is returned unchanged. The store holds no lock that blocks writers
	// while visit runs.
	CompareRecords(ctx context.Context, p Path, from, to Side, visit func(Pair) error) error
}

// Compare runs a comparison on s: with its Comparer when it has one, else
// from ExportProject, holding both sides in memory. A from side that is a
// snapshot is compared by the store's Snapshots (ErrNotFound for a store
// without them).
func Compare(ctx context.Context, s Store, p Path, from, to Side, visit func(Pair) error) error {
	if from.Snapshot != "" {
		if sn, ok := s.(Snapshots); ok {
			return sn.CompareSnapshot(ctx, p, from, to, visit)
		}
		return &NotFoundError{Kind: "snapshot", Name: from.Snapshot}
	}
	if c, ok := s.(Comparer); ok {
		return c.CompareRecords(ctx, p, from, to, visit)
	}
	return compareExported(ctx, s, p, from, to, visit)
}

// compareExported is Compare for stores without Comparer.
func compareExported(ctx context.Context, s Store, p Path, from, to Side, visit func(Pair) error) error {
	var revision int64
	exists := map[Side]bool{}
	records := map[Side][]SideRecord{}
	err := s.ExportProject(ctx, p, func(it ExportItem) error {
		switch {
		case it.Collection == "":
			revision = cmp.Or(it.ChangeRevision, it.Revision)
		case it.Record == nil:
			exists[Side{Collection: it.Collection, Cluster: it.Cluster}] = true
		default:
			for _, side := range []Side{from, to} {
				if side.Collection == it.Collection && (side.Cluster == "" || side.Cluster == it.Cluster) {
					records[side] = append(records[side], SideRecord{it.Cluster, it.Record})
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, side := range []Side{from, to} {
		if !exists[Side{Collection: side.Collection}] {
			return &NotFoundError{Kind: "collection", Name: side.Collection}
		}
		if !exists[side] {
			return &NotFoundError{Kind: "cluster", Name: side.Cluster}
		}
	}
	if err := visit(Pair{Revision: revision}); err != nil {
		return err
	}
	return MergeSides(from, Items(records[from]), Items(records[to]), visit)
}

// SideRecord is a record of one side of a comparison, with the name of
// its cluster.
type SideRecord struct {
	Cluster string
	Record  *Record
}

// MergeSides merges the two sides of a comparison whose From side is from
// into Pairs and calls visit with each, in order: the merge step of a
// merge join. Each side yields its records ordered by cluster, then name,
// byte-wise; stores that implement Comparer read each as one ordered
// cursor. For a pair of clusters the records' cluster names are not
// compared and every Pair names from's cluster. A side's error ends the
// merge and is returned.
func MergeSides(from Side, a, b iter.Seq2[SideRecord, error], visit func(Pair) error) error {
	nextA, stopA := iter.Pull2(a)
	defer stopA()
	nextB, stopB := iter.Pull2(b)
	defer stopB()
	next := func(next func() (SideRecord, error, bool)) (SideRecord, error) {
		r, err, ok := next()
		if !ok {
			return SideRecord{}, nil
		}
		if err == nil && from.Cluster != "" {
			r.Cluster = from.Cluster
		}
		return r, err
	}
	ra, err := next(nextA)
	if err != nil {
		return err
	}
	rb, err := next(nextB)
	if err != nil {
		return err
	}
	for ra.Record != nil || rb.Record != nil {
		var c int
		switch {
		case ra.Record == nil:
			c = 1
		case rb.Record == nil:
			c = -1
		default:
			c = cmp.Or(strings.Compare(ra.Cluster, rb.Cluster), strings.Compare(ra.Record.Name, rb.Record.Name))
		}
		var pr Pair
		switch {
		case c < 0:
			pr = Pair{Cluster: ra.Cluster, Name: ra.Record.Name, From: ra.Record}
		case c > 0:
			pr = Pair{Cluster: rb.Cluster, Name: rb.Record.Name, To: rb.Record}
		default:
			pr = Pair{Cluster: ra.Cluster, Name: ra.Record.Name, From: ra.Record, To: rb.Record}
		}
		if err := visit(pr); err != nil {
			return err
		}
		if c <= 0 {
			if ra, err = next(nextA); err != nil {
				return err
			}
		}
		if c >= 0 {
			if rb, err = next(nextB); err != nil {
				return err
			}
		}
	}
	return nil
}

// RevisionError is the error of a Batch whose IfRevision is no longer the
// project's newest revision: nothing changed. It matches
// ErrPreconditionFailed.
type RevisionError struct {
	Revision int64 // the project's newest revision
}

// Error returns, for example, "current revision is 7".
func (e *RevisionError) Error() string {
	return "current revision is " + strconv.FormatInt(e.Revision, 10)
}

// Is reports whether target is ErrPreconditionFailed.
func (e *RevisionError) Is(target error) bool { return target == ErrPreconditionFailed }

// CheckRevision returns a *RevisionError when b has an IfRevision that is
// not current, the project's newest revision that changes something
// (credential.reveal entries not counted). Stores call it inside the
// atomic step that applies b, before its first op.
func (b Batch) CheckRevision(current int64) error {
	if b.IfRevision != 0 && b.IfRevision != current {
		return &RevisionError{Revision: current}
	}
	return nil
}

// Size returns about how many bytes pr holds in memory (see
// ExportItem.Size).
func (pr Pair) Size() int {
	return itemOverhead + len(pr.Cluster) + len(pr.Name) + pr.From.size() + pr.To.size()
}

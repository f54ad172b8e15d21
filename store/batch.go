package store

import (
	"strconv"
)

// OpKind names what an Op of a Batch does.
type OpKind string

// The kinds of Op. The record kinds are those of
// docs/api.md#16-batch-export-and-import's batch; the container kinds serve
// imports, which create empty collections and clusters and, in replace
// mode, delete them.
const (
	// OpCreate creates the record Op.Record (a name) from Op.New, like
	// Store.CreateRecord.
	OpCreate OpKind = "create"
	// OpUpdate changes the record Op.Record (a name or an id) with
	// Op.Update, like Store.UpdateRecord.
	OpUpdate OpKind = "update"
	// OpUpsert updates the record Op.Record with Op.Update when it
	// exists, and otherwise creates a record of that name from Op.New.
	OpUpsert OpKind = "upsert"
	// OpDelete deletes the record Op.Record, like Store.DeleteRecord.
	OpDelete OpKind = "delete"
	// OpEnsureCollection creates the collection Op.Collection unless it
	// exists (neither is an error).
	OpEnsureCollection OpKind = "ensure-collection"
	// OpEnsureCluster creates the cluster Op.Cluster, and its collection,
	// unless they exist.
	OpEnsureCluster OpKind = "ensure-cluster"
	// OpDeleteCollection deletes the collection Op.Collection and
	// everything beneath it; a missing one is ErrNotFound.
	OpDeleteCollection OpKind = "delete-collection"
	// OpDeleteCluster deletes the cluster Op.Cluster and its records; a
	// missing one is ErrNotFound.
	OpDeleteCluster OpKind = "delete-cluster"
)

// Op is one operation of a Batch, on a resource of the batch's project.
type Op struct {
	Kind OpKind
	// Collection, Cluster and Record name the resource below the project.
	// Record is a name or an id as Path.Record is (for OpCreate, and for
	// the create of an OpUpsert, the new record's name).
	Collection string
	Cluster    string
	Record     string
	// New is the record OpCreate creates, and OpUpsert when the cluster
	// has no record Record: its ID (empty for the store to choose one,
	// or a new UUID the caller sealed credentials to), Type and Value.
	New *Record
	// Update changes a copy of the current record, for OpUpdate and for
	// an OpUpsert that finds the record, as UpdateRecord's update does:
	// it changes Name, Type or Value, or returns an error that aborts the
	// whole batch. ErrUnchanged leaves the record as it is (the op still
	// checks IfMatch, and OpResult.Unchanged reports it).
	Update func(*Record) error
	// IfMatch, when not nil, conditions OpUpdate, OpDelete and OpUpsert
	// as Write.IfMatch does a single write. An OpUpsert that finds no
	// record fails a non-nil IfMatch (a *PreconditionError of Version 0).
	IfMatch []string
}

// OpResult is what one Op of an applied Batch did.
type OpResult struct {
	// Record is the record after the op; nil for OpDelete and the
	// container kinds.
	Record *Record
	// Created reports that the op created its record (OpCreate, or an
	// OpUpsert that found none) or, for the ensure kinds, the container.
	Created bool
	// Unchanged reports that Update returned ErrUnchanged.
	Unchanged bool
	// Revision is the project's audit revision once the whole batch is
	// applied: its newest entry, which the batch wrote unless it changed
	// nothing. It is the same in every OpResult of a batch, and 0 in a
	// dry run.
	Revision int64
	// Snapshot is the name of the automatic snapshot the batch took
	// (Batch.Snapshot), the same in every OpResult; empty when none.
	Snapshot string
}

// Batch is a list of operations applied in one atomic step.
type Batch struct {
	// Ops run in order; each sees what the ones before it did, so one
	// record may appear in several of them (created, then updated).
	Ops []Op
	// Source, when not nil, gives the ops instead of Ops, one at a time:
	// a caller whose big batch (an import of a whole project) has a
	// compact form of its own then never holds every Op at once. Stores
	// read the ops through Batch.Len and Batch.Op.
	Source OpSource
	// OmitRecords leaves OpResult.Record nil in the results, so that a
	// caller that needs only what each op did (an import) does not keep
	// every record it wrote in memory. Left false, results hold them.
	OmitRecords bool
	// CreateParents makes OpCreate and OpUpsert create the missing
	// collection and cluster of their record instead of failing with
	// ErrNotFound. OpUpdate and OpDelete never create anything.
	CreateParents bool
	// Write says how much history each updated record keeps; its IfMatch
	// is ignored (each Op has its own). Who makes the changes is the
	// Path's Caller.
	Write Write
	// DryRun runs the batch, with every check, and then undoes it: the
	// result (and the error) are those the batch would have, and nothing
	// changes.
	DryRun bool
	// IfRevision, when not 0, makes the batch conditional on the
	// project's newest audit revision that changes something, a
	// credential.reveal entry not counted
	// (docs/api.md#21-compare-and-promote): it applies only when that is
	// still IfRevision, checked in the same
	// atomic step before the first op; otherwise the store returns a
	// *RevisionError (not an *OpError) and nothing changes.
	IfRevision int64
	// Snapshot, when not nil, takes an automatic snapshot in the same
	// atomic step (AutoSnapshot), unless DryRun; OpResult.Snapshot names
	// it.
	Snapshot *AutoSnapshot
}

// OpError is the error of a Batch whose op Index (from 0) failed: Err is
// the error the op would get alone (from CreateRecord, UpdateRecord,
// DeleteRecord, ...), or the error of its Update, unchanged. It matches
// what Err matches.
type OpError struct {
	Index int
	Err   error
}

// Error returns "operation N: " and Err's message.
func (e *OpError) Error() string { return "operation " + strconv.Itoa(e.Index) + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *OpError) Unwrap() error { return e.Err }

// ExportItem is one resource of a project's export (Store.ExportProject):
// the project itself (Collection empty), a collection (Cluster empty,
// Record nil), a cluster (Record nil) or a record.
type ExportItem struct {
	// Revision, on the project's item, is the revision of the snapshot:
	// the newest audit entry of the project whose change it includes.
	Revision int64
	// ChangeRevision, on the project's item, is the newest revision of
	// the snapshot whose entry changes something (not credential.reveal):
	// the revision of a comparison, and what Batch.IfRevision is checked
	// against (docs/api.md#21-compare-and-promote). A store that leaves it
	// 0 checks IfRevision against Revision.
	ChangeRevision int64
	Collection     string
	Cluster        string
	// Record is the record, its value as stored (credentials sealed).
	Record *Record
}

// OpSource makes the ops of a Batch on demand (Batch.Source).
type OpSource interface {
	// Len returns the number of ops.
	Len() int
	// Op makes op i (from 0): the same op each time it is asked, as a
	// store may read an op more than once.
	Op(i int) Op
}

// Len returns the number of ops of the batch: Source's, or Ops'.
func (b *Batch) Len() int {
	if b.Source != nil {
		return b.Source.Len()
	}
	return len(b.Ops)
}

// Op returns op i (from 0) of the batch: made by Source, or Ops[i].
func (b *Batch) Op(i int) Op {
	if b.Source != nil {
		return b.Source.Op(i)
	}
	return b.Ops[i]
}

// Result returns res as the batch's results hold it: without its record
// when OmitRecords is set.
func (b *Batch) Result(res OpResult) OpResult {
	if b.OmitRecords {
		res.Record = nil
	}
	return res
}

// itemOverhead is about what an item costs in memory beyond its strings.
const itemOverhead = 128

// Size returns about how many bytes it holds in memory: what a store
// counts when it reads items ahead of its caller into a bounded buffer.
func (it ExportItem) Size() int {
	return itemOverhead + len(it.Collection) + len(it.Cluster) + it.Record.size()
}

// size is about how many bytes r holds beyond a pointer (0 for nil).
func (r *Record) size() int {
	if r == nil {
		return 0
	}
	return itemOverhead + len(r.ID) + len(r.Name) + len(r.Type) + len(r.Value) + len(r.UpdatedBy)
}

package store

import (
	"context"
	"log/slog"
	"time"
)

// Action names what an audit entry records
// (docs/api.md#18-audit-log-and-change-feed).
type Action string

// The actions of the audit log.
const (
	ActionProjectCreate    Action = "project.create"
	ActionProjectRename    Action = "project.rename"
	ActionCollectionCreate Action = "collection.create"
	ActionCollectionRename Action = "collection.rename"
	ActionCollectionDelete Action = "collection.delete"
	ActionClusterCreate    Action = "cluster.create"
	ActionClusterRename    Action = "cluster.rename"
	ActionClusterDelete    Action = "cluster.delete"
	ActionRecordCreate     Action = "record.create"
	ActionRecordUpdate     Action = "record.update"
	ActionRecordRename     Action = "record.rename"
	ActionRecordDelete     Action = "record.delete"
	ActionRecordRestore    Action = "record.restore"
	ActionCredentialReveal Action = "credential.reveal"
	ActionMemberPut        Action = "member.put"
	ActionMemberDelete     Action = "member.delete"
	ActionTokenCreate      Action = "token.create"
	ActionTokenDelete      Action = "token.delete"
	// ActionProjectTransfer (v1.2) records a change of the project's
	// owner (Access.TransferProject); Target is the new owner's username.
	ActionProjectTransfer Action = "project.transfer"
	// ActionWebhookCreate and ActionWebhookDelete (v1.2) record the
	// creation and deletion of a webhook (docs/api.md#22-webhooks);
	// Target is the webhook's id.
	ActionWebhookCreate Action = "webhook.create"
	ActionWebhookDelete Action = "webhook.delete"
	// ActionSnapshotCreate and ActionSnapshotDelete (v1.3) record the
	// creation and deletion of a snapshot
	// (docs/api.md#snapshots-and-rollback-v13), automatic ones
	// included; Target is the snapshot's name, Collection and Cluster
	// what it was taken of.
	ActionSnapshotCreate Action = "snapshot.create"
	ActionSnapshotDelete Action = "snapshot.delete"
)

// Actions lists every action, in the order
// docs/api.md#18-audit-log-and-change-feed gives them.
var Actions = []Action{
	ActionProjectCreate, ActionProjectRename,
	ActionCollectionCreate, ActionCollectionRename, ActionCollectionDelete,
	ActionClusterCreate, ActionClusterRename, ActionClusterDelete,
	ActionRecordCreate, ActionRecordUpdate, ActionRecordRename, ActionRecordDelete, ActionRecordRestore,
	ActionCredentialReveal, ActionMemberPut, ActionMemberDelete, ActionTokenCreate, ActionTokenDelete,
	ActionProjectTransfer, ActionWebhookCreate, ActionWebhookDelete,
	ActionSnapshotCreate, ActionSnapshotDelete,
}

// Valid reports whether a is one of Actions.
func (a Action) Valid() bool {
	for _, x := range Actions {
		if a == x {
			return true
		}
	}
	return false
}

// IsEvent reports whether entries of action a are events of the change
// feed (docs/api.md#18-audit-log-and-change-feed): every action but
// credential.reveal.
func (a Action) IsEvent() bool { return a != ActionCredentialReveal }

// AuditEntry is one entry of a project's audit log: who changed (or
// revealed) what, when, in which request. Empty strings and a zero
// Version are fields that do not apply. An entry never holds a value, a
// password or a token. Entries handed out by an EventSource are shared:
// never change one.
type AuditEntry struct {
	// ProjectID is the project's id; Project its name at the time.
	ProjectID string
	Project   string
	// Revision is the entry's place in its project's log: from 1, without
	// gaps, in commit order.
	Revision int64
	Time     time.Time
	Action   Action
	// Actor is Caller.ID() of who made the change; ActorName the username
	// or the API token's name.
	Actor     string
	ActorName string
	// Collection, Cluster and Record are the names after the change (for a
	// delete, before).
	Collection string
	Cluster    string
	Record     string
	RecordID   string
	// Version is the record's version after the change (the version
	// deleted, the version revealed); 0 when it does not apply.
	Version int64
	// Target is the username of member.* entries, the token id of token.*
	// entries, the new owner's username of project.transfer.
	Target    string
	RequestID string
}

// Stamp fills in who made the change and in which request, from c.
func (e *AuditEntry) Stamp(c Caller) {
	e.Actor, e.ActorName, e.RequestID = c.ID(), c.ActorName(), c.RequestID
}

// LogAttrs returns the entry's fields as slog attributes, named and
// written as the JSON fields of docs/api.md#18-audit-log-and-change-feed
// (the time in UTC with six fraction digits, as docs/api.md#1-conventions
// says; fields that do not apply nil, so that a JSON handler writes null),
// after the project's id.
func (e *AuditEntry) LogAttrs() []slog.Attr {
	attrs := make([]slog.Attr, 0, 14) // every field: one allocation (a big batch logs many)
	attrs = append(attrs,
		slog.String("project_id", e.ProjectID),
		slog.Int64("revision", e.Revision),
		slog.String("time", e.Time.UTC().Format(auditTimeLayout)),
		slog.String("action", string(e.Action)),
	)
	for _, f := range []struct{ k, v string }{
		{"actor", e.Actor}, {"actor_name", e.ActorName}, {"collection", e.Collection}, {"cluster", e.Cluster},
		{"record", e.Record}, {"record_id", e.RecordID},
	} {
		attrs = append(attrs, nullableAttr(f.k, f.v))
	}
	if e.Version != 0 {
		attrs = append(attrs, slog.Int64("version", e.Version))
	} else {
		attrs = append(attrs, slog.Any("version", nil))
	}
	return append(attrs, nullableAttr("target", e.Target), nullableAttr("request_id", e.RequestID))
}

// auditTimeLayout writes an entry's time as the API does
// (docs/api.md#1-conventions): UTC, exactly six fraction digits, Z.
const auditTimeLayout = "2006-01-02T15:04:05.000000Z"

// nullableAttr is a string attribute, nil when the string is empty.
func nullableAttr(k, v string) slog.Attr {
	if v == "" {
		return slog.Any(k, nil)
	}
	return slog.String(k, v)
}

// LogAudit writes each entry to logger (nil: nowhere) at level Info with
// the message "audit" (docs/api.md#18-audit-log-and-change-feed). Stores
// call it once the entries are committed.
func LogAudit(ctx context.Context, logger *slog.Logger, entries ...*AuditEntry) {
	if logger == nil {
		return
	}
	for _, e := range entries {
		logger.LogAttrs(ctx, slog.LevelInfo, "audit", e.LogAttrs()...)
	}
}

// AuditQuery selects entries of a project's audit log (GET P/audit):
// newest first, Offset and Limit as for lists; every filter that is set
// must match.
type AuditQuery struct {
	Limit  int
	Offset int
	// Action, when set, is the entry's action.
	Action Action
	// Actor, when set, is the entry's actor: a user id or "token:<id>".
	Actor string
	// Since and Until, when not zero, bound the entry's time (inclusive).
	Since, Until time.Time
	// After, when above 0, keeps the entries of a later revision.
	After int64
	// Before, when above 0, keeps the entries of an earlier revision
	// (where a cursor resumes the newest-first list).
	Before int64
	// NoCount asks the store not to count the matches (count=false): the
	// total returned is then NotCounted.
	NoCount bool
}

// Matches reports whether e passes q's filters.
func (q AuditQuery) Matches(e *AuditEntry) bool {
	switch {
	case q.Action != "" && e.Action != q.Action,
		q.Actor != "" && e.Actor != q.Actor,
		!q.Since.IsZero() && e.Time.Before(q.Since),
		!q.Until.IsZero() && e.Time.After(q.Until),
		e.Revision <= q.After,
		q.Before > 0 && e.Revision >= q.Before:
		return false
	}
	return true
}

// AuditLog is the audit log of the projects of a Store
// (docs/api.md#18-audit-log-and-change-feed). Every change a Store makes
// writes its entry itself, in the same atomic step; AuditLog reads the log
// and records what is not a change: the reveal of credentials. The memory
// and PostgreSQL stores implement it on the same type as Store;
// storetest.RunAudit is its conformance suite.
type AuditLog interface {
	// FindAuditEntries lists the entries of the project p.Project that
	// match q, newest first, and their number before paging. Path errors
	// are those of any Path (p.Need is checked).
	FindAuditEntries(ctx context.Context, p Path, q AuditQuery) ([]*AuditEntry, int, error)
	// RecordReveal writes a credential.reveal entry for the project
	// p.Project, by p.Caller, naming p.Collection and p.Cluster (empty for
	// a whole project), and the record r (its name, id and version) when
	// not nil; then one more for each of through, the credential records
	// the request revealed through references
	// (docs/api.md#20-references-between-records), in order, all in one
	// atomic step. Each entry takes a revision as a change does. Path
	// errors are those of any Path (nothing is written); the levels below
	// the project are only named, not looked up.
	RecordReveal(ctx context.Context, p Path, r *Record, through ...RevealedRecord) error
}

// AuditLogSetter is implemented by stores that write each committed audit
// entry to a logger (LogAudit); hds.New gives them its logger.
type AuditLogSetter interface {
	SetAuditLogger(logger *slog.Logger)
}

// UpdateAction is the action of an update that turns the record cur into
// next: record.rename when only the name changed, record.update
// otherwise.
func UpdateAction(cur, next *Record) Action {
	if next.Name != cur.Name && next.Type == cur.Type && string(next.Value) == string(cur.Value) {
		return ActionRecordRename
	}
	return ActionRecordUpdate
}

// RevealedRecord is a credential record whose value a request revealed
// through a reference: the collection and cluster that hold it, and the
// record (its name, id and the version revealed).
type RevealedRecord struct {
	Collection string
	Cluster    string
	Record     *Record
}

// RevealEntries are the credential.reveal entries of a reveal under p
// (RevealEntry) and of the records revealed through references, in order.
func RevealEntries(p Path, r *Record, through []RevealedRecord) []AuditEntry {
	out := make([]AuditEntry, 0, 1+len(through))
	out = append(out, RevealEntry(p, r))
	for _, t := range through {
		out = append(out, RevealEntry(Path{Collection: t.Collection, Cluster: t.Cluster}, t.Record))
	}
	return out
}

// RevealEntry is the credential.reveal entry of a reveal under p
// (docs/api.md#18-audit-log-and-change-feed): p.Collection and p.Cluster as
// given, and the record r when not nil.
func RevealEntry(p Path, r *Record) AuditEntry {
	e := AuditEntry{Action: ActionCredentialReveal, Collection: p.Collection, Cluster: p.Cluster}
	if r != nil {
		e.Record, e.RecordID, e.Version = r.Name, r.ID, r.Version
	}
	return e
}

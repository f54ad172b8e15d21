package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// AuditStore is what RunAudit tests: a Store and its audit log on one
// value, as every store of this module provides them.
type AuditStore interface {
	store.Store
	store.AuditLog
}

// auditCaller is the caller of the audit suite's changes.
var auditCaller = store.Caller{UserID: owner, Name: "alice-name", RequestID: "req-1"}

// auditPath is the Path, by auditCaller, of the audit suite's resources
// down to level (0 project ... 3 record).
func auditPath(level int) store.Path {
	p := store.Path{Need: store.RightRead, Caller: auditCaller, Project: projName}
	if level >= 1 {
		p.Collection = collName
	}
	if level >= 2 {
		p.Cluster = clusName
	}
	if level >= 3 {
		p.Record = recName
	}
	return p
}

// auditView is an entry without its time, comparable with assert.Equal.
type auditView struct {
	Revision                                 int64
	Action                                   store.Action
	Actor, ActorName                         string
	Collection, Cluster, Record, RecordID    string
	Version                                  int64
	Target, RequestID, Project, HasProjectID string
}

func viewAudit(e *store.AuditEntry) auditView {
	set := "no project id"
	if e.ProjectID != "" {
		set = "project id"
	}
	return auditView{e.Revision, e.Action, e.Actor, e.ActorName, e.Collection, e.Cluster, e.Record, e.RecordID,
		e.Version, e.Target, e.RequestID, e.Project, set}
}

// wantEntry is the view of an entry the audit suite's caller wrote.
func wantEntry(rev int64, action store.Action, project, coll, clus, rec, recID string, version int64) auditView {
	return auditView{rev, action, owner, "alice-name", coll, clus, rec, recID, version, "", "req-1", project, "project id"}
}

// allEntries returns the project's whole log, oldest first.
func allEntries(t *testing.T, s AuditStore, project string) []*store.AuditEntry {
	t.Helper()
	es, total, err := s.FindAuditEntries(t.Context(), store.Path{Need: store.RightRead, Caller: auditCaller, Project: project}, store.AuditQuery{Limit: 1000})
	require.NoError(t, err, "FindAuditEntries of %q", project)
	require.Len(t, es, total, "the whole log in one page")
	slices.Reverse(es)
	return es
}

func viewAll(es []*store.AuditEntry) []auditView {
	out := []auditView{}
	for _, e := range es {
		out = append(out, viewAudit(e))
	}
	return out
}

// RunAudit runs the conformance suite of the audit log (store.AuditLog
// and the entries every change of a store.Store writes,
// docs/api.md#audit-log-and-change-feed). newStore must return a fresh,
// empty store; it is called once per subtest.
func RunAudit(t *testing.T, newStore func(t *testing.T) AuditStore) {
	t.Run("EveryChange", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		before := time.Now().Add(-time.Second)
		pr, err := s.CreateProject(ctx, auditPath(0))
		require.NoError(t, err, "CreateProject")
		assert.Equal(t, int64(1), pr.Revision, "a new project is at revision 1")
		_, err = s.CreateCollection(ctx, auditPath(1))
		require.NoError(t, err, "CreateCollection")
		_, err = s.CreateCluster(ctx, auditPath(2))
		require.NoError(t, err, "CreateCluster")
		r, err := s.CreateRecord(ctx, auditPath(3), &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
		require.NoError(t, err, "CreateRecord")
		_, err = s.UpdateRecord(ctx, auditPath(3), store.Write{MaxVersions: 10}, setValue(2))
		require.NoError(t, err, "UpdateRecord value")
		_, err = s.UpdateRecord(ctx, auditPath(3), store.Write{MaxVersions: 10}, func(r *store.Record) error { r.Name = "r2"; return nil })
		require.NoError(t, err, "UpdateRecord name only")
		p := setLevel(auditPath(3), 3, r.ID) // by id: the entries name it
		_, err = s.UpdateRecord(ctx, p, store.Write{MaxVersions: 10}, func(r *store.Record) error {
			r.Name, r.Value = "r3", json.RawMessage("3")
			return nil
		})
		require.NoError(t, err, "UpdateRecord name and value")
		_, err = s.RestoreRecord(ctx, p, 1, store.Write{MaxVersions: 10})
		require.NoError(t, err, "RestoreRecord")
		require.NoError(t, s.RecordReveal(ctx, p, &store.Record{ID: r.ID, Name: "r3", Version: 5}), "RecordReveal of a record")
		require.NoError(t, s.RecordReveal(ctx, auditPath(2), nil), "RecordReveal of a cluster")
		require.NoError(t, s.RecordReveal(ctx, auditPath(0), nil), "RecordReveal of a project")
		require.NoError(t, s.DeleteRecord(ctx, p, store.Write{}), "DeleteRecord")
		_, err = s.RenameCluster(ctx, auditPath(2), "k2")
		require.NoError(t, err, "RenameCluster")
		_, err = s.RenameCollection(ctx, auditPath(1), "c2")
		require.NoError(t, err, "RenameCollection")
		pr, err = s.RenameProject(ctx, auditPath(0), "p2")
		require.NoError(t, err, "RenameProject")
		assert.Equal(t, int64(15), pr.Revision, "the renamed project's revision")
		p2 := store.Path{Need: store.RightRead, Caller: auditCaller, Project: "p2", Collection: "c2", Cluster: "k2"}
		require.NoError(t, s.DeleteCluster(ctx, p2), "DeleteCluster")
		require.NoError(t, s.DeleteCollection(ctx, p2), "DeleteCollection")
		after := time.Now().Add(time.Second)

		es := allEntries(t, s, "p2")
		want := []auditView{
			wantEntry(1, store.ActionProjectCreate, projName, "", "", "", "", 0),
			wantEntry(2, store.ActionCollectionCreate, projName, collName, "", "", "", 0),
			wantEntry(3, store.ActionClusterCreate, projName, collName, clusName, "", "", 0),
			wantEntry(4, store.ActionRecordCreate, projName, collName, clusName, recName, r.ID, 1),
			wantEntry(5, store.ActionRecordUpdate, projName, collName, clusName, recName, r.ID, 2),
			wantEntry(6, store.ActionRecordRename, projName, collName, clusName, "r2", r.ID, 3),
			wantEntry(7, store.ActionRecordUpdate, projName, collName, clusName, "r3", r.ID, 4),
			wantEntry(8, store.ActionRecordRestore, projName, collName, clusName, "r3", r.ID, 5),
			wantEntry(9, store.ActionCredentialReveal, projName, collName, clusName, "r3", r.ID, 5),
			wantEntry(10, store.ActionCredentialReveal, projName, collName, clusName, "", "", 0),
			wantEntry(11, store.ActionCredentialReveal, projName, "", "", "", "", 0),
			wantEntry(12, store.ActionRecordDelete, projName, collName, clusName, "r3", r.ID, 5),
			wantEntry(13, store.ActionClusterRename, projName, collName, "k2", "", "", 0),
			wantEntry(14, store.ActionCollectionRename, projName, "c2", "", "", "", 0),
			wantEntry(15, store.ActionProjectRename, "p2", "", "", "", "", 0),
			wantEntry(16, store.ActionClusterDelete, "p2", "c2", "k2", "", "", 0),
			wantEntry(17, store.ActionCollectionDelete, "p2", "c2", "", "", "", 0),
		}
		assert.Equal(t, want, viewAll(es), "one entry per change, in order, with who, what and the names after it")
		for _, e := range es {
			assert.Equal(t, pr.ID, e.ProjectID, "revision %d: the project's id", e.Revision)
			assert.True(t, e.Time.After(before) && e.Time.Before(after), "revision %d: the time of the change", e.Revision)
			assert.Equal(t, time.UTC, e.Time.Location(), "revision %d: in UTC", e.Revision)
		}
		got, err := s.FindProject(ctx, store.Path{Need: store.RightRead, Caller: auditCaller, Project: "p2"})
		require.NoError(t, err, "FindProject")
		assert.Equal(t, int64(17), got.Revision, "Project.Revision is the newest entry's")
	})

	t.Run("NoChangeNoEntry", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		_, err := s.CreateProject(ctx, auditPath(0))
		require.NoError(t, err, "CreateProject")
		mustCollection(t, s, auditPath(1))
		mustCluster(t, s, auditPath(2))
		r := mustRecord(t, s, auditPath(3), store.Integer, "1")
		// Renames to the current name, failures and failed preconditions
		// change nothing and write nothing.
		_, err = s.RenameProject(ctx, auditPath(0), projName)
		require.NoError(t, err, "RenameProject to its name")
		_, err = s.RenameCollection(ctx, auditPath(1), collName)
		require.NoError(t, err, "RenameCollection to its name")
		_, err = s.RenameCluster(ctx, auditPath(2), clusName)
		require.NoError(t, err, "RenameCluster to its name")
		_, err = s.CreateCollection(ctx, auditPath(1))
		assertExists(t, err, "collection", collName, "a taken name")
		_, err = s.UpdateRecord(ctx, auditPath(3), store.Write{IfMatch: []string{`"nope"`}}, setValue(5))
		assert.ErrorIs(t, err, store.ErrPreconditionFailed, "a failed precondition")
		_, err = s.UpdateRecord(ctx, auditPath(3), store.Write{}, func(*store.Record) error { return store.ErrUnchanged })
		assert.ErrorIs(t, err, store.ErrUnchanged, "an update that changes nothing")
		err = s.DeleteRecord(ctx, auditPath(3), store.Write{IfMatch: []string{`"nope"`}})
		assert.ErrorIs(t, err, store.ErrPreconditionFailed, "a failed conditional delete")
		_, err = s.RestoreRecord(ctx, auditPath(3), 9, store.Write{})
		assert.ErrorIs(t, err, store.ErrNotFound, "a missing version")
		stranger := auditPath(3)
		stranger.Caller = store.Caller{UserID: "mallory"}
		assert.ErrorIs(t, s.RecordReveal(ctx, stranger, r), store.ErrPermissionDenied, "a reveal by a stranger")
		es := allEntries(t, s, projName)
		assert.Len(t, es, 4, "only the four creates wrote entries")
		assert.Equal(t, int64(4), es[len(es)-1].Revision, "the newest revision")
	})

	t.Run("RevealThroughReferences", func(t *testing.T) {
		// docs/api.md#references-between-records (v1.3): beside the
		// request's one entry, one per credential record revealed through
		// references, naming it, in one step; a caller refused writes none.
		s := newStore(t)
		ctx := t.Context()
		_, err := s.CreateProject(ctx, auditPath(0))
		require.NoError(t, err, "CreateProject")
		mustCollection(t, s, auditPath(1))
		mustCluster(t, s, auditPath(2))
		pw := &store.Record{ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Name: "password", Version: 3}
		key := &store.Record{ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c", Name: "key", Version: 1}
		through := []store.RevealedRecord{
			{Collection: "prod", Cluster: "db", Record: pw},
			{Collection: collName, Cluster: clusName, Record: key},
		}
		stranger := auditPath(2)
		stranger.Caller = store.Caller{UserID: "mallory"}
		assert.ErrorIs(t, s.RecordReveal(ctx, stranger, nil, through...), store.ErrPermissionDenied, "a reveal by a stranger")
		require.NoError(t, s.RecordReveal(ctx, auditPath(2), nil, through...), "RecordReveal of a cluster, through references")
		es := allEntries(t, s, projName)
		assert.Equal(t, []auditView{
			wantEntry(1, store.ActionProjectCreate, projName, "", "", "", "", 0),
			wantEntry(2, store.ActionCollectionCreate, projName, collName, "", "", "", 0),
			wantEntry(3, store.ActionClusterCreate, projName, collName, clusName, "", "", 0),
			wantEntry(4, store.ActionCredentialReveal, projName, collName, clusName, "", "", 0),
			wantEntry(5, store.ActionCredentialReveal, projName, "prod", "db", "password", pw.ID, 3),
			wantEntry(6, store.ActionCredentialReveal, projName, collName, clusName, "key", key.ID, 1),
		}, viewAll(es), "the request's entry, then one per record revealed through references; none for the stranger")
	})

	t.Run("Errors", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		_, _, err := s.FindAuditEntries(ctx, auditPath(0), store.AuditQuery{Limit: 10})
		assertNotFound(t, err, "project", projName, "FindAuditEntries of a missing project")
		assertNotFound(t, s.RecordReveal(ctx, auditPath(0), nil), "project", projName, "RecordReveal in a missing project")
		mustProject(t, s, owner, projName)
		stranger := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "mallory"}, Project: projName}
		_, _, err = s.FindAuditEntries(ctx, stranger, store.AuditQuery{Limit: 10})
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "FindAuditEntries of someone else's project")
	})

	t.Run("Queries", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		_, err := s.CreateProject(ctx, auditPath(0))
		require.NoError(t, err, "CreateProject")
		mustCollection(t, s, auditPath(1))
		mustCluster(t, s, auditPath(2))
		for i := range 5 {
			mustRecord(t, s, setLevel(auditPath(3), 3, fmt.Sprintf("r%d", i)), store.Integer, "1")
		}
		anon := auditPath(0)
		anon.Caller = store.Caller{}
		require.NoError(t, s.RecordReveal(ctx, anon, nil), "a reveal by an administrative tool")
		all := allEntries(t, s, projName) // revisions 1 to 9
		require.Len(t, all, 9)
		revs := func(es []*store.AuditEntry) []int64 {
			out := []int64{}
			for _, e := range es {
				out = append(out, e.Revision)
			}
			return out
		}
		find := func(q store.AuditQuery) ([]int64, int) {
			t.Helper()
			if q.Limit == 0 {
				q.Limit = 100
			}
			es, total, err := s.FindAuditEntries(ctx, auditPath(0), q)
			require.NoError(t, err, "FindAuditEntries %+v", q)
			return revs(es), total
		}
		got, total := find(store.AuditQuery{})
		assert.Equal(t, []int64{9, 8, 7, 6, 5, 4, 3, 2, 1}, got, "newest first")
		assert.Equal(t, 9, total)
		got, total = find(store.AuditQuery{Limit: 3, Offset: 2})
		assert.Equal(t, []int64{7, 6, 5}, got, "limit and offset")
		assert.Equal(t, 9, total, "total before paging")
		got, total = find(store.AuditQuery{Action: store.ActionRecordCreate})
		assert.Equal(t, []int64{8, 7, 6, 5, 4}, got, "by action")
		assert.Equal(t, 5, total)
		got, total = find(store.AuditQuery{Limit: 3, Offset: 2, NoCount: true})
		assert.Equal(t, []int64{7, 6, 5}, got, "limit and offset, not counted")
		assert.Equal(t, store.NotCounted, total, "NoCount: the total is NotCounted")
		got, total = find(store.AuditQuery{After: 9, NoCount: true})
		assert.Empty(t, got, "an empty page, not counted")
		assert.Equal(t, store.NotCounted, total, "NoCount: an empty page is not counted either")
		got, _ = find(store.AuditQuery{Actor: owner})
		assert.Equal(t, []int64{8, 7, 6, 5, 4, 3, 2, 1}, got, "by actor")
		got, _ = find(store.AuditQuery{Actor: "token:nope"})
		assert.Empty(t, got, "an actor without entries")
		got, _ = find(store.AuditQuery{After: 6})
		assert.Equal(t, []int64{9, 8, 7}, got, "after a revision (exclusive)")
		got, _ = find(store.AuditQuery{Since: all[3].Time, Until: all[5].Time})
		assert.Subset(t, got, []int64{6, 5, 4}, "since and until are inclusive")
		for _, rev := range got {
			e := all[rev-1]
			assert.False(t, e.Time.Before(all[3].Time) || e.Time.After(all[5].Time), "revision %d is inside the range", rev)
		}
		got, _ = find(store.AuditQuery{Since: all[8].Time.Add(time.Hour)})
		assert.Empty(t, got, "since after the last entry")
		// Bounds finer than the microseconds of entry times compare
		// exactly, not rounded to a microsecond.
		last := all[8]
		got, _ = find(store.AuditQuery{Since: last.Time.Add(400 * time.Nanosecond)})
		assert.NotContains(t, got, last.Revision, "since 400 ns after an entry excludes it")
		got, _ = find(store.AuditQuery{Since: last.Time.Add(-400 * time.Nanosecond)})
		assert.Contains(t, got, last.Revision, "since 400 ns before an entry includes it")
		got, _ = find(store.AuditQuery{Until: last.Time.Add(-400 * time.Nanosecond)})
		assert.NotContains(t, got, last.Revision, "until 400 ns before an entry excludes it")
		got, _ = find(store.AuditQuery{Until: last.Time.Add(400 * time.Nanosecond)})
		assert.Contains(t, got, last.Revision, "until 400 ns after an entry includes it")
		got, _ = find(store.AuditQuery{Action: store.ActionRecordCreate, After: 6, Limit: 1})
		assert.Equal(t, []int64{8}, got, "filters combine")
		assert.Empty(t, all[8].Actor, "an administrative tool has no actor")
	})

	t.Run("DeletedWithTheProject", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		_, err := s.CreateProject(ctx, auditPath(0))
		require.NoError(t, err, "CreateProject")
		mustCollection(t, s, auditPath(1))
		require.NoError(t, s.DeleteProject(ctx, auditPath(0)), "DeleteProject")
		_, err = s.CreateProject(ctx, auditPath(0))
		require.NoError(t, err, "CreateProject again")
		es := allEntries(t, s, projName)
		assert.Equal(t, []auditView{wantEntry(1, store.ActionProjectCreate, projName, "", "", "", "", 0)}, viewAll(es),
			"a new project of the old name starts a new log")
	})

	t.Run("Batches", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		_, err := s.CreateProject(ctx, auditPath(0))
		require.NoError(t, err, "CreateProject")
		b := store.Batch{Write: keepHistory, CreateParents: true, Ops: []store.Op{
			createOp("a", 1), createOp("b", 2), updateOp("a", 3),
			{Kind: store.OpUpdate, Collection: collName, Cluster: clusName, Record: "b",
				Update: func(*store.Record) error { return store.ErrUnchanged }},
			{Kind: store.OpDelete, Collection: collName, Cluster: clusName, Record: "b"},
		}}
		dry, err := s.Apply(ctx, auditPath(0), store.Batch{Write: b.Write, CreateParents: true, DryRun: true, Ops: b.Ops})
		require.NoError(t, err, "a dry run")
		for i, r := range dry {
			assert.Zero(t, r.Revision, "a dry run's result %d has no revision", i)
		}
		assert.Len(t, allEntries(t, s, projName), 1, "a dry run writes no entry")
		failing := slices.Concat(b.Ops, []store.Op{updateOp("missing", 1)})
		_, err = s.Apply(ctx, auditPath(0), store.Batch{Write: b.Write, CreateParents: true, Ops: failing})
		require.Error(t, err, "a failing batch")
		assert.Len(t, allEntries(t, s, projName), 1, "a failing batch writes no entry")
		res, err := s.Apply(ctx, auditPath(0), b)
		require.NoError(t, err, "Apply")
		a := res[0].Record
		es := allEntries(t, s, projName)
		want := []auditView{
			wantEntry(1, store.ActionProjectCreate, projName, "", "", "", "", 0),
			wantEntry(2, store.ActionCollectionCreate, projName, collName, "", "", "", 0),
			wantEntry(3, store.ActionClusterCreate, projName, collName, clusName, "", "", 0),
			wantEntry(4, store.ActionRecordCreate, projName, collName, clusName, "a", a.ID, 1),
			wantEntry(5, store.ActionRecordCreate, projName, collName, clusName, "b", res[1].Record.ID, 1),
			wantEntry(6, store.ActionRecordUpdate, projName, collName, clusName, "a", a.ID, 2),
			wantEntry(7, store.ActionRecordDelete, projName, collName, clusName, "b", res[1].Record.ID, 1),
		}
		assert.Equal(t, want, viewAll(es), "one entry per change of the batch, in order; none for an unchanged record")
		for i, r := range res {
			assert.Equal(t, int64(7), r.Revision, "result %d: the project's revision after the batch", i)
		}
		res, err = s.Apply(ctx, auditPath(0), store.Batch{Ops: []store.Op{{Kind: store.OpUpdate, Collection: collName,
			Cluster: clusName, Record: "a", Update: func(*store.Record) error { return store.ErrUnchanged }}}})
		require.NoError(t, err, "a batch that changes nothing")
		assert.Equal(t, int64(7), res[0].Revision, "a batch that changes nothing: the revision the project is at")
	})

	t.Run("ConcurrentWriters", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		_, err := s.CreateProject(ctx, auditPath(0))
		require.NoError(t, err, "CreateProject")
		mustCollection(t, s, auditPath(1))
		mustCluster(t, s, auditPath(2))
		errs := race(racers, func(i int) error {
			p := setLevel(auditPath(3), 3, fmt.Sprintf("r%d", i))
			if _, err := s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{}); err != nil {
				return err
			}
			_, err := s.UpdateRecord(ctx, p, store.Write{MaxVersions: 1}, setValue(2))
			return err
		})
		for i, err := range errs {
			assert.NoError(t, err, "writer %d", i)
		}
		es := allEntries(t, s, projName)
		require.Len(t, es, 3+2*racers, "one entry per change")
		created := map[string]bool{}
		for i, e := range es {
			assert.Equal(t, int64(i+1), e.Revision, "revisions are 1, 2, 3, ... without gap or repeat")
			if e.Action == store.ActionRecordCreate {
				created[e.Record] = true
			}
			if e.Action == store.ActionRecordUpdate {
				assert.True(t, created[e.Record], "%s: its update comes after its create (commit order)", e.Record)
			}
		}
	})
}

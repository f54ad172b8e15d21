package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// SnapshotStore is what RunSnapshots needs of a store.
type SnapshotStore interface {
	store.Store
	store.Snapshots
	store.AuditLog
	store.QuotaSetter
}

// RunSnapshots is the conformance suite of store.Snapshots
// (docs/api.md#snapshots-and-rollback-v13): what a snapshot copies and
// at which revision, its errors, the list, deletion, the quotas, the
// comparison with a snapshot as its From side, the automatic snapshot of
// Batch.Snapshot (and its pruning, all in the batch's atomic step), and
// the re-seal of the values snapshots keep.
func RunSnapshots(t *testing.T, newStore func(t *testing.T) SnapshotStore) {
	for name, test := range map[string]func(*testing.T, SnapshotStore){
		"Copy":       testSnapshotCopy,
		"Errors":     testSnapshotErrors,
		"List":       testSnapshotList,
		"Delete":     testSnapshotDelete,
		"Quotas":     testSnapshotQuotas,
		"Compare":    testSnapshotCompare,
		"Automatic":  testSnapshotAutomatic,
		"Reseal":     testSnapshotReseal,
		"Reveal":     testSnapshotReveal,
		"NoProject":  testSnapshotProjectDeleted,
		"Permission": testSnapshotPermission,
	} {
		t.Run(name, func(t *testing.T) { test(t, newStore(t)) })
	}
}

// snapFixture makes project proj: collection app with clusters web (host,
// port, key a credential) and empty (no record), collection other with
// cluster web (one record).
func snapFixture(t *testing.T, s store.Store) store.Path {
	t.Helper()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner, Name: owner}, Project: projName}
	mustProject(t, s, owner, projName)
	at := func(c, k, r string) store.Path {
		q := p
		q.Collection, q.Cluster, q.Record = c, k, r
		return q
	}
	mustCollection(t, s, at("app", "", ""))
	mustCollection(t, s, at("other", "", ""))
	mustCluster(t, s, at("app", "web", ""))
	mustCluster(t, s, at("app", "empty", ""))
	mustCluster(t, s, at("other", "web", ""))
	mustRecord(t, s, at("app", "web", "host"), store.String, `"a.example"`)
	mustRecord(t, s, at("app", "web", "port"), store.Integer, `80`)
	mustRecord(t, s, at("app", "web", "key"), store.Credential, `"sealed-1"`)
	mustRecord(t, s, at("other", "web", "host"), store.String, `"o.example"`)
	return p
}

// in returns p narrowed to collection c and cluster k.
func in(p store.Path, c, k string) store.Path {
	p.Collection, p.Cluster = c, k
	return p
}

// snapLines reads a snapshot as lines "cluster/" (a cluster) and
// "cluster/name TYPE value vVERSION".
func snapLines(t *testing.T, s store.Snapshots, p store.Path, name string) []string {
	t.Helper()
	out := []string{}
	require.NoError(t, s.SnapshotRecords(t.Context(), p, name, func(k string, r *store.Record) error {
		if r == nil {
			out = append(out, k+"/")
			return nil
		}
		out = append(out, fmt.Sprintf("%s/%s %s %s v%d", k, r.Name, r.Type, r.Value, r.Version))
		return nil
	}))
	return out
}

// newestEntry returns the project's newest audit entry.
func newestEntry(t *testing.T, s store.AuditLog, p store.Path) *store.AuditEntry {
	t.Helper()
	es, _, err := s.FindAuditEntries(t.Context(), p, store.AuditQuery{Limit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, es)
	return es[0]
}

func testSnapshotCopy(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	_, err := s.UpdateRecord(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: projName, Collection: "app", Cluster: "web", Record: "port"},
		store.Write{}, func(r *store.Record) error { r.Value = json.RawMessage(`81`); return nil })
	require.NoError(t, err)
	before, err := s.FindProject(ctx, p)
	require.NoError(t, err)

	got, err := s.CreateSnapshot(ctx, in(p, "app", ""), "v1", "before the release")
	require.NoError(t, err)
	assert.Equal(t, "v1", got.Name)
	assert.Equal(t, "app", got.Collection)
	assert.Empty(t, got.Cluster, "a snapshot of a collection")
	assert.Equal(t, "before the release", got.Description)
	assert.Equal(t, before.Revision, got.Revision, "the revision before its own entry")
	assert.Equal(t, 3, got.Records)
	assert.False(t, got.Automatic)
	assert.Equal(t, owner, got.CreatedBy)
	assert.False(t, got.CreatedAt.IsZero())
	e := newestEntry(t, s, p)
	assert.Equal(t, store.ActionSnapshotCreate, e.Action)
	assert.Equal(t, before.Revision+1, e.Revision)
	assert.Equal(t, []string{"app", "", "", "v1"}, []string{e.Collection, e.Cluster, e.Record, e.Target})
	want := []string{"empty/", "web/", `web/host STRING "a.example" v1`, `web/key CREDENTIAL "sealed-1" v1`, "web/port INTEGER 81 v2"}
	assert.Equal(t, want, snapLines(t, s, p, "v1"), "every cluster, empty ones included, each record with its version")

	k, err := s.CreateSnapshot(ctx, in(p, "app", "web"), "web-only", "")
	require.NoError(t, err)
	assert.Equal(t, "web", k.Cluster)
	assert.Equal(t, 3, k.Records)
	assert.Equal(t, before.Revision+1, k.Revision, "after the first snapshot's entry")
	assert.Equal(t, want[1:], snapLines(t, s, p, "web-only"))
	var ids []string
	require.NoError(t, s.SnapshotRecords(ctx, p, "web-only", func(_ string, r *store.Record) error {
		if r != nil {
			ids = append(ids, r.ID)
		}
		return nil
	}))
	for _, id := range ids {
		assert.NotEmpty(t, id, "a record keeps the id its credential is sealed to")
	}

	// Immutable: changes, renames and deletes of what it was taken of
	// leave it as it is.
	_, err = s.UpdateRecord(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: projName, Collection: "app", Cluster: "web", Record: "host"},
		store.Write{}, func(r *store.Record) error { r.Value = json.RawMessage(`"b.example"`); return nil })
	require.NoError(t, err)
	_, err = s.RenameCluster(ctx, in(p, "app", "web"), "www")
	require.NoError(t, err)
	_, err = s.RenameCollection(ctx, in(p, "app", ""), "application")
	require.NoError(t, err)
	assert.Equal(t, want, snapLines(t, s, p, "v1"))
	again, err := s.FindSnapshot(ctx, p, "web-only")
	require.NoError(t, err)
	assert.Equal(t, []string{"app", "web"}, []string{again.Collection, again.Cluster}, "the names it was taken with")
	require.NoError(t, s.DeleteCollection(ctx, in(p, "application", "")))
	assert.Equal(t, want, snapLines(t, s, p, "v1"), "its collection deleted")
}

func testSnapshotErrors(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	var ve *store.ValidationError
	for _, name := range []string{"auto-1", "auto-", "", "a/b"} {
		_, err := s.CreateSnapshot(ctx, in(p, "app", ""), name, "")
		assert.ErrorAs(t, err, &ve, "name %q", name)
	}
	_, err := s.CreateSnapshot(ctx, in(p, "app", ""), "Auto-1", "")
	assert.NoError(t, err, "auto- compares byte-wise")
	_, err = s.CreateSnapshot(ctx, in(p, "gone", ""), "x", "")
	var nf *store.NotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, "collection", nf.Kind)
	_, err = s.CreateSnapshot(ctx, in(p, "app", "gone"), "x", "")
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, "cluster", nf.Kind)
	_, err = s.CreateSnapshot(ctx, in(p, "other", ""), "Auto-1", "")
	var ee *store.ExistsError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "snapshot", ee.Kind)
	_, err = s.FindSnapshot(ctx, p, "x")
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, s.SnapshotRecords(ctx, p, "x", func(string, *store.Record) error { return nil }), store.ErrNotFound)
	assert.ErrorIs(t, s.DeleteSnapshot(ctx, p, "x"), store.ErrNotFound)
	_, err = s.CreateSnapshot(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "nope", Collection: "app"}, "x", "")
	assert.ErrorIs(t, err, store.ErrNotFound, "a missing project")
	n, _, err := s.FindSnapshots(ctx, p, store.SnapshotQuery{})
	require.NoError(t, err)
	assert.Len(t, n, 1, "no failed create left anything")
}

func testSnapshotList(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	for _, n := range []struct{ name, c, k string }{{"one", "app", ""}, {"Two", "other", ""}, {"three", "app", "web"}} {
		_, err := s.CreateSnapshot(ctx, in(p, n.c, n.k), n.name, "")
		require.NoError(t, err)
	}
	names := func(q store.SnapshotQuery) ([]string, int) {
		items, total, err := s.FindSnapshots(ctx, p, q)
		require.NoError(t, err)
		out := []string{}
		for _, it := range items {
			out = append(out, it.Name)
		}
		return out, total
	}
	got, total := names(store.SnapshotQuery{})
	assert.Equal(t, []string{"three", "Two", "one"}, got, "newest first")
	assert.Equal(t, 3, total)
	got, total = names(store.SnapshotQuery{Search: "t"})
	assert.Equal(t, []string{"three", "Two"}, got, "search on the name, any case")
	assert.Equal(t, 2, total)
	got, total = names(store.SnapshotQuery{Collection: "app"})
	assert.Equal(t, []string{"three", "one"}, got)
	assert.Equal(t, 2, total)
	got, total = names(store.SnapshotQuery{Limit: 1, Offset: 1})
	assert.Equal(t, []string{"Two"}, got)
	assert.Equal(t, 3, total, "counted before paging")
}

func testSnapshotDelete(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	_, err := s.CreateSnapshot(ctx, in(p, "app", "web"), "v1", "")
	require.NoError(t, err)
	require.NoError(t, s.DeleteSnapshot(ctx, p, "v1"))
	e := newestEntry(t, s, p)
	assert.Equal(t, store.ActionSnapshotDelete, e.Action)
	assert.Equal(t, []string{"app", "web", "", "v1"}, []string{e.Collection, e.Cluster, e.Record, e.Target})
	_, err = s.FindSnapshot(ctx, p, "v1")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.CreateSnapshot(ctx, in(p, "other", ""), "v1", "")
	assert.NoError(t, err, "a deleted snapshot's name may be used again")
	assert.Equal(t, []string{"web/", `web/host STRING "o.example" v1`}, snapLines(t, s, p, "v1"))
}

func testSnapshotQuotas(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	s.SetQuotas(store.Quotas{MaxSnapshotsPerProject: 2})
	for _, n := range []string{"a", "b"} {
		_, err := s.CreateSnapshot(ctx, in(p, "app", ""), n, "")
		require.NoError(t, err)
	}
	// An automatic snapshot counts toward no quota.
	_, err := s.Apply(ctx, p, store.Batch{Ops: []store.Op{{Kind: store.OpCreate, Collection: "app", Cluster: "web", Record: "n",
		New: &store.Record{Type: store.Null, Value: json.RawMessage(`null`)}}}, Snapshot: &store.AutoSnapshot{Side: store.Side{Collection: "app"}, Keep: 5}})
	require.NoError(t, err)
	_, err = s.CreateSnapshot(ctx, in(p, "app", ""), "c", "")
	var qe *store.QuotaError
	require.ErrorAs(t, err, &qe)
	assert.Equal(t, store.QuotaSnapshotsPerProject, qe.Quota)
	assert.EqualValues(t, 2, qe.Limit)
	require.NoError(t, s.DeleteSnapshot(ctx, p, "a"))
	_, err = s.CreateSnapshot(ctx, in(p, "app", ""), "c", "")
	require.NoError(t, err, "one deleted makes room")

	// The values of a snapshot count toward the project's bytes.
	s.SetQuotas(store.Quotas{MaxSnapshotsPerProject: store.Unlimited, MaxBytesPerProject: 400})
	big := store.Path{Need: store.RightRead, Caller: p.Caller, Project: projName, Collection: "other", Cluster: "web", Record: "big"}
	mustRecord(t, s, big, store.String, `"`+string(make100('x'))+`"`)
	taken := 0
	for i := range 10 {
		_, err = s.CreateSnapshot(ctx, in(p, "other", ""), fmt.Sprintf("o%d", i), "")
		if err != nil {
			break
		}
		taken++
	}
	require.ErrorAs(t, err, &qe, "the snapshots' bytes pass the project's")
	assert.Equal(t, store.QuotaBytesPerProject, qe.Quota)
	assert.Less(t, taken, 4)
	_, err = s.Apply(ctx, p, store.Batch{Ops: []store.Op{{Kind: store.OpDelete, Collection: "other", Cluster: "web", Record: "host"}},
		Snapshot: &store.AutoSnapshot{Side: store.Side{Collection: "other"}, Keep: 5}})
	assert.NoError(t, err, "an automatic snapshot never makes a promote fail")
	require.NoError(t, s.DeleteSnapshot(ctx, p, "o0"))
	_, err = s.CreateSnapshot(ctx, in(p, "other", ""), "again", "")
	assert.NoError(t, err, "a deleted snapshot frees its bytes")
}

// make100 is 100 bytes of b.
func make100(b byte) []byte {
	out := make([]byte, 100)
	for i := range out {
		out[i] = b
	}
	return out
}

func testSnapshotCompare(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	_, err := s.CreateSnapshot(ctx, in(p, "app", ""), "v1", "")
	require.NoError(t, err)
	_, err = s.CreateSnapshot(ctx, in(p, "app", "web"), "w1", "")
	require.NoError(t, err)
	require.NoError(t, s.DeleteRecord(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: projName, Collection: "app", Cluster: "web", Record: "host"}, store.Write{}))
	mustRecord(t, s, store.Path{Need: store.RightRead, Caller: p.Caller, Project: projName, Collection: "app", Cluster: "empty", Record: "new"}, store.Boolean, `true`)
	cur, err := s.FindProject(ctx, p)
	require.NoError(t, err)
	run := func(from, to store.Side) ([]string, int64, error) {
		var lines []string
		var revision int64
		first := true
		err := store.Compare(ctx, s, p, from, to, func(pr store.Pair) error {
			if first {
				first, revision = false, pr.Revision
				return nil
			}
			lines = append(lines, paired(pr))
			return nil
		})
		return lines, revision, err
	}
	lines, revision, err := run(store.Side{Snapshot: "v1"}, store.Side{Collection: "app"})
	require.NoError(t, err)
	assert.Equal(t, cur.Revision, revision)
	assert.Equal(t, []string{`empty/new - BOOLEAN:true`, `web/host STRING:"a.example" -`, `web/key CREDENTIAL:"sealed-1" CREDENTIAL:"sealed-1"`,
		`web/port INTEGER:80 INTEGER:80`}, lines)
	lines, _, err = run(store.Side{Snapshot: "w1"}, store.Side{Collection: "other", Cluster: "web"})
	require.NoError(t, err)
	assert.Equal(t, []string{`web/host STRING:"a.example" STRING:"o.example"`, `web/key CREDENTIAL:"sealed-1" -`, `web/port INTEGER:80 -`}, lines,
		"pairs name the snapshot's cluster")
	_, _, err = run(store.Side{Snapshot: "gone"}, store.Side{Collection: "app"})
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, _, err = run(store.Side{Snapshot: "v1"}, store.Side{Collection: "gone"})
	var nf *store.NotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, "collection", nf.Kind)
	_, _, err = run(store.Side{Snapshot: "w1"}, store.Side{Collection: "app", Cluster: "gone"})
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, "cluster", nf.Kind)
}

func testSnapshotAutomatic(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	create := func(name string) store.Op {
		return store.Op{Kind: store.OpCreate, Collection: "app", Cluster: "web", Record: name,
			New: &store.Record{Type: store.Null, Value: json.RawMessage(`null`)}}
	}
	auto := &store.AutoSnapshot{Side: store.Side{Collection: "app", Cluster: "web"}, Keep: 2}

	// A dry run takes none; a failed batch leaves none.
	res, err := s.Apply(ctx, p, store.Batch{Ops: []store.Op{create("a")}, DryRun: true, Snapshot: auto})
	require.NoError(t, err)
	assert.Empty(t, res[0].Snapshot)
	_, err = s.Apply(ctx, p, store.Batch{Ops: []store.Op{create("a"), create("a")}, Snapshot: auto})
	assert.ErrorIs(t, err, store.ErrAlreadyExists)
	list, _, err := s.FindSnapshots(ctx, p, store.SnapshotQuery{})
	require.NoError(t, err)
	assert.Empty(t, list, "nothing half-written")

	var names []string
	for i, name := range []string{"a", "b", "c"} {
		before, err := s.FindProject(ctx, p)
		require.NoError(t, err)
		res, err := s.Apply(ctx, p, store.Batch{Ops: []store.Op{create(name)}, Snapshot: auto})
		require.NoError(t, err)
		assert.Equal(t, store.AutomaticName(before.Revision), res[0].Snapshot, "auto-N, N the revision before")
		names = append(names, res[0].Snapshot)
		got, err := s.FindSnapshot(ctx, p, res[0].Snapshot)
		require.NoError(t, err)
		assert.True(t, got.Automatic)
		assert.Equal(t, before.Revision, got.Revision)
		assert.Equal(t, 3+i, got.Records, "what the batch changes, before it")
		assert.Equal(t, owner, got.CreatedBy)
		es, _, err := s.FindAuditEntries(ctx, p, store.AuditQuery{After: before.Revision, Limit: 100})
		require.NoError(t, err)
		var actions []string
		for _, e := range es {
			actions = append(actions, string(e.Action)+" "+e.Target)
		}
		want := []string{"record.create ", "snapshot.create " + res[0].Snapshot}
		if i == 2 {
			want = []string{"record.create ", "snapshot.delete " + names[0], "snapshot.create " + res[0].Snapshot}
		}
		assert.Equal(t, want, actions, "newest first: the snapshot before the ops, the oldest beyond keep deleted")
		assert.Equal(t, before.Revision+int64(len(want)), res[0].Revision)
	}
	list, _, err = s.FindSnapshots(ctx, p, store.SnapshotQuery{})
	require.NoError(t, err)
	var kept []string
	for _, it := range list {
		kept = append(kept, it.Name)
	}
	assert.Equal(t, []string{names[2], names[1]}, kept, "keep 2")
	assert.Equal(t, []string{"web/", `web/a NULL null v1`, `web/b NULL null v1`, `web/host STRING "a.example" v1`,
		`web/key CREDENTIAL "sealed-1" v1`, "web/port INTEGER 80 v1"}, snapLines(t, s, p, names[2]))

	// An if_revision that fails takes none.
	_, err = s.Apply(ctx, p, store.Batch{Ops: []store.Op{create("d")}, IfRevision: 1, Snapshot: auto})
	assert.ErrorIs(t, err, store.ErrPreconditionFailed)
	after, _, err := s.FindSnapshots(ctx, p, store.SnapshotQuery{})
	require.NoError(t, err)
	assert.Len(t, after, 2)
}

func testSnapshotReseal(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	_, err := s.CreateSnapshot(ctx, in(p, "app", ""), "v1", "")
	require.NoError(t, err)
	_, err = s.CreateSnapshot(ctx, in(p, "app", "web"), "w1", "")
	require.NoError(t, err)
	before, err := s.FindProject(ctx, p)
	require.NoError(t, err)
	var seen []string
	n, err := s.ResealSnapshots(ctx, func(id string, typ store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
		seen = append(seen, string(typ)+" "+string(v))
		assert.NotEmpty(t, id)
		return json.RawMessage(`"sealed-2"`), true, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, n, "one credential value in each snapshot")
	assert.Equal(t, []string{`CREDENTIAL "sealed-1"`, `CREDENTIAL "sealed-1"`}, seen)
	assert.Contains(t, snapLines(t, s, p, "v1"), `web/key CREDENTIAL "sealed-2" v1`)
	assert.Contains(t, snapLines(t, s, p, "w1"), `web/key CREDENTIAL "sealed-2" v1`)
	after, err := s.FindProject(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, before.Revision, after.Revision, "not a change")
	n, err = s.ResealSnapshots(ctx, func(string, store.DataType, json.RawMessage) (json.RawMessage, bool, error) {
		return nil, false, nil
	})
	require.NoError(t, err)
	assert.Zero(t, n)
	boom := errors.New("boom")
	_, err = s.ResealSnapshots(ctx, func(string, store.DataType, json.RawMessage) (json.RawMessage, bool, error) {
		return nil, false, boom
	})
	assert.ErrorIs(t, err, boom)
}

func testSnapshotReveal(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	_, err := s.CreateSnapshot(ctx, in(p, "app", "web"), "w1", "")
	require.NoError(t, err)
	require.NoError(t, s.RecordSnapshotReveal(ctx, p, "w1"))
	e := newestEntry(t, s, p)
	assert.Equal(t, store.ActionCredentialReveal, e.Action)
	assert.Equal(t, []string{"app", "web", "", "w1"}, []string{e.Collection, e.Cluster, e.Record, e.Target})
	assert.ErrorIs(t, s.RecordSnapshotReveal(ctx, p, "gone"), store.ErrNotFound)
}

func testSnapshotProjectDeleted(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	_, err := s.CreateSnapshot(ctx, in(p, "app", ""), "v1", "")
	require.NoError(t, err)
	require.NoError(t, s.DeleteProject(ctx, p))
	mustProject(t, s, owner, projName)
	list, total, err := s.FindSnapshots(ctx, p, store.SnapshotQuery{})
	require.NoError(t, err)
	assert.Empty(t, list, "deleting the project deletes its snapshots")
	assert.Zero(t, total)
	n, err := s.ResealSnapshots(ctx, func(string, store.DataType, json.RawMessage) (json.RawMessage, bool, error) {
		return json.RawMessage(`"x"`), true, nil
	})
	require.NoError(t, err)
	assert.Zero(t, n, "nothing of them is left")
}

func testSnapshotPermission(t *testing.T, s SnapshotStore) {
	ctx := t.Context()
	p := snapFixture(t, s)
	_, err := s.CreateSnapshot(ctx, in(p, "app", ""), "v1", "")
	require.NoError(t, err)
	bob := store.Path{Caller: store.Caller{UserID: "bob", Name: "bob"}, Need: store.RightRead, Project: projName}
	_, err = s.FindSnapshot(ctx, bob, "v1")
	assert.ErrorIs(t, err, store.ErrPermissionDenied)
	_, _, err = s.FindSnapshots(ctx, bob, store.SnapshotQuery{})
	assert.ErrorIs(t, err, store.ErrPermissionDenied)
	bob.Need = store.RightWrite
	_, err = s.CreateSnapshot(ctx, in(bob, "app", ""), "v2", "")
	assert.ErrorIs(t, err, store.ErrPermissionDenied)
	bob.Need = store.RightAdmin
	assert.ErrorIs(t, s.DeleteSnapshot(ctx, bob, "v1"), store.ErrPermissionDenied)
}

package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// The rules of Store.Apply (docs/api.md#batch-export-and-import's batch,
// and the writes of an import) and Store.ExportProject.

// keepHistory is the Write of the batches of this suite.
var keepHistory = store.Write{MaxVersions: store.DefaultMaxVersions}

// createOp returns an OpCreate of the INTEGER n under the fixture's
// cluster.
func createOp(name string, n int) store.Op {
	return store.Op{Kind: store.OpCreate, Collection: collName, Cluster: clusName, Record: name,
		New: &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(n))}}
}

// updateOp returns an OpUpdate setting the INTEGER n.
func updateOp(name string, n int) store.Op {
	return store.Op{Kind: store.OpUpdate, Collection: collName, Cluster: clusName, Record: name, Update: setValue(n)}
}

// assertOpError checks that err is an *OpError of index i and returns
// the error it wraps.
func assertOpError(t *testing.T, err error, i int, what string) error {
	t.Helper()
	var oe *store.OpError
	if !assert.ErrorAs(t, err, &oe, "%s: an *store.OpError", what) {
		return err
	}
	assert.Equal(t, i, oe.Index, "%s: names the first failing op", what)
	assert.Equal(t, "operation "+strconv.Itoa(i)+": "+oe.Err.Error(), oe.Error(), "%s: message", what)
	return oe.Err
}

// recordValue returns the value of the record name of the fixture's
// cluster, or "" when it does not exist.
func (f *fixture) recordValue(t *testing.T, name string) string {
	t.Helper()
	r, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, name))
	if errors.Is(err, store.ErrNotFound) {
		return ""
	}
	require.NoError(t, err, "FindRecord %q", name)
	return string(r.Value)
}

func testBatches(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("PathErrors", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		b := store.Batch{Ops: []store.Op{createOp("a", 1)}, Write: keepHistory}
		_, err := f.s.Apply(f.ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "missing"}, b)
		assertNotFound(t, err, "project", "missing", "Apply on a missing project")
		var oe *store.OpError
		assert.False(t, errors.As(err, &oe), "a missing project is no op's error")
		_, err = f.s.Apply(f.ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: stranger}, Project: projName}, b)
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "Apply on someone else's project")
		assert.Empty(t, f.recordValue(t, "a"), "nothing created")
	})

	t.Run("AppliesInOrder", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{
			createOp("a", 1),
			updateOp("a", 2),
			updateOp(recName, 5),
			{Kind: store.OpDelete, Collection: collName, Cluster: clusName, Record: "a"},
			createOp("a", 3),
		}})
		require.NoError(t, err, "Apply")
		require.Len(t, res, 5, "one result per op")
		assert.True(t, res[0].Created, "a create is Created")
		assert.Equal(t, int64(2), res[1].Record.Version, "the update sees the create before it")
		assert.Equal(t, "2", string(res[1].Record.Value), "the update's value")
		assert.Equal(t, owner, res[1].Record.UpdatedBy, "the update's author is the batch's actor")
		assert.Equal(t, int64(2), res[2].Record.Version, "the fixture's record is updated")
		assert.Nil(t, res[3].Record, "a delete has no record")
		assert.Equal(t, int64(1), res[4].Record.Version, "the record created again starts at 1")
		assert.NotEqual(t, res[0].Record.ID, res[4].Record.ID, "the record created again has a new id")
		assert.Equal(t, "3", f.recordValue(t, "a"), "a holds the last value")
		assert.Equal(t, "5", f.recordValue(t, recName), "rec updated")
		vs := versionsOf(t, f.s, f.path(3))
		assert.Equal(t, []string{"5", "1"}, versionValues(vs), "the batch's update keeps history as UpdateRecord does")
	})

	t.Run("AllOrNothing", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		mustCollection(t, f.s, setLevel(f.path(1), 1, "gone"))
		_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, CreateParents: true, Ops: []store.Op{
			createOp("a", 1),
			updateOp(recName, 7),
			{Kind: store.OpCreate, Collection: "newc", Cluster: "newk", Record: "x",
				New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}},
			{Kind: store.OpDeleteCollection, Collection: "gone"},
			{Kind: store.OpEnsureCollection, Collection: "other"},
			createOp(recName, 2),
			updateOp("missing", 1),
		}})
		assertExists(t, assertOpError(t, err, 5, "a taken name"), "record", recName, "the failing op's own error")
		f.assertRecordUnchanged(t, "after a failed batch")
		assert.Empty(t, f.recordValue(t, "a"), "the created record is gone")
		assertProjectCount(t, f.s, projName, 2, "the created collections are gone, the deleted one is back")
		_, err = f.s.FindCollection(f.ctx, setLevel(f.path(1), 1, "gone"))
		assert.NoError(t, err, "the deleted collection is back")
		assert.Len(t, versionsOf(t, f.s, f.path(3)), 1, "no history was kept")
	})

	t.Run("FirstFailingOp", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		cases := []struct {
			name  string
			ops   []store.Op
			index int
			check func(t *testing.T, err error)
		}{
			{"missing record", []store.Op{updateOp(recName, 2), updateOp("nope", 1)}, 1,
				func(t *testing.T, err error) { assertNotFound(t, err, "record", "nope", "update") }},
			{"missing collection", []store.Op{{Kind: store.OpCreate, Collection: "nope", Cluster: clusName, Record: "x",
				New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}}}, 0,
				func(t *testing.T, err error) { assertNotFound(t, err, "collection", "nope", "create") }},
			{"missing cluster", []store.Op{{Kind: store.OpDelete, Collection: collName, Cluster: "nope", Record: recName}}, 0,
				func(t *testing.T, err error) { assertNotFound(t, err, "cluster", "nope", "delete") }},
			{"bad name", []store.Op{createOp("ok", 1), createOp("bad/name", 1)}, 1,
				func(t *testing.T, err error) {
					var ve *store.ValidationError
					assert.ErrorAs(t, err, &ve, "a bad name is a *ValidationError")
				}},
			{"rename onto a taken name", []store.Op{createOp("a", 1), {Kind: store.OpUpdate, Collection: collName, Cluster: clusName,
				Record: "a", Update: func(r *store.Record) error { r.Name = recName; return nil }}}, 1,
				func(t *testing.T, err error) { assertExists(t, err, "record", recName, "rename") }},
			{"update's own error", []store.Op{createOp("a", 1), {Kind: store.OpUpdate, Collection: collName, Cluster: clusName,
				Record: recName, Update: func(*store.Record) error { return errBoom }}}, 1,
				func(t *testing.T, err error) { assert.Same(t, errBoom, err, "the update's error, unchanged") }},
		}
		for _, c := range cases {
			_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: c.ops})
			c.check(t, assertOpError(t, err, c.index, c.name))
			f.assertUnchanged(t, c.name)
			assert.Empty(t, f.recordValue(t, "a"), "%s: nothing created", c.name)
			assert.Empty(t, f.recordValue(t, "ok"), "%s: nothing created", c.name)
		}
	})

	t.Run("IfMatch", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		stale := []string{store.ETag(f.rec.ID, 7)}
		for _, kind := range []store.OpKind{store.OpUpdate, store.OpDelete, store.OpUpsert} {
			op := updateOp(recName, 9)
			op.Kind, op.IfMatch = kind, stale
			op.New = &store.Record{Type: store.Integer, Value: json.RawMessage("9")}
			_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{createOp("a", 1), op}})
			assertPrecondition(t, assertOpError(t, err, 1, string(kind)), f.rec, string(kind)+" with a stale tag")
			f.assertUnchanged(t, string(kind)+" with a stale tag")
		}
		_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{
			{Kind: store.OpUpsert, Collection: collName, Cluster: clusName, Record: "fresh", IfMatch: []string{f.rec.ETag()},
				New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, Update: setValue(1)},
		}})
		var pe *store.PreconditionError
		if assert.ErrorAs(t, assertOpError(t, err, 0, "conditional upsert"), &pe, "a conditional upsert of a missing record") {
			assert.Equal(t, int64(0), pe.Version, "version 0: no record")
			assert.Equal(t, "the record does not exist", pe.Error(), "message")
		}
		op := updateOp(recName, 9)
		op.IfMatch = []string{stale[0], f.rec.ETag()}
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{op}})
		require.NoError(t, err, "an update with the current tag")
		del := store.Op{Kind: store.OpDelete, Collection: collName, Cluster: clusName, Record: recName, IfMatch: []string{res[0].Record.ETag()}}
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{del}})
		require.NoError(t, err, "a delete with the current tag")
		assert.Empty(t, f.recordValue(t, recName), "deleted")
	})

	t.Run("Upsert", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		up := func(name string, n int) store.Op {
			return store.Op{Kind: store.OpUpsert, Collection: collName, Cluster: clusName, Record: name,
				New: &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(n))}, Update: setValue(n)}
		}
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{up(recName, 4), up("b", 5)}})
		require.NoError(t, err, "upserts")
		assert.False(t, res[0].Created, "an existing record is updated")
		assert.Equal(t, int64(2), res[0].Record.Version, "updated: version 2")
		assert.Equal(t, f.rec.ID, res[0].Record.ID, "same record")
		assert.True(t, res[1].Created, "a missing record is created")
		assert.Equal(t, int64(1), res[1].Record.Version, "created: version 1")
		byID := up(f.rec.ID, 6)
		res, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{byID}})
		require.NoError(t, err, "upsert by id")
		assert.Equal(t, recName, res[0].Record.Name, "the id names the record")
		assert.Equal(t, "6", f.recordValue(t, recName), "updated through its id")
	})

	t.Run("Unchanged", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		same := store.Op{Kind: store.OpUpdate, Collection: collName, Cluster: clusName, Record: recName,
			Update: func(*store.Record) error { return store.ErrUnchanged }}
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{same}})
		require.NoError(t, err, "an update that changes nothing")
		assert.True(t, res[0].Unchanged, "reported Unchanged")
		assert.Equal(t, int64(1), res[0].Record.Version, "no new version")
		f.assertUnchanged(t, "after an unchanged update")
		same.IfMatch = []string{`"other"`}
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{same}})
		assertPrecondition(t, assertOpError(t, err, 0, "unchanged, stale tag"), f.rec, "an unchanged update still checks its tag")
	})

	t.Run("CreateParents", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		op := store.Op{Kind: store.OpCreate, Collection: "c2", Cluster: "k2", Record: "x",
			New: &store.Record{Type: store.String, Value: json.RawMessage(`"v"`)}}
		_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{op}})
		assertNotFound(t, assertOpError(t, err, 0, "without CreateParents"), "collection", "c2", "a missing collection")
		up := op
		up.Kind, up.Collection, up.Update = store.OpUpsert, collName, setValue(1)
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{up}})
		assertNotFound(t, assertOpError(t, err, 0, "upsert without CreateParents"), "cluster", "k2", "a missing cluster")
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, CreateParents: true, Ops: []store.Op{op, up}})
		require.NoError(t, err, "with CreateParents")
		assert.True(t, res[0].Created && res[1].Created, "both created")
		assertCollectionCounts(t, f.s, setLevel(f.path(1), 1, "c2"), 1, 1, "the new collection")
		assertCollectionCounts(t, f.s, f.path(1), 2, 2, "the cluster added to the fixture's collection")
		upd := updateOp("x", 1)
		upd.Cluster = "k3"
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, CreateParents: true, Ops: []store.Op{upd}})
		assertNotFound(t, assertOpError(t, err, 0, "update with CreateParents"), "cluster", "k3", "an update creates no parent")
		bad := op
		bad.Collection = "bad/name"
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, CreateParents: true, Ops: []store.Op{bad}})
		var ve *store.ValidationError
		assert.ErrorAs(t, assertOpError(t, err, 0, "bad parent name"), &ve, "a parent of a bad name is a *ValidationError")
	})

	t.Run("Containers", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{
			{Kind: store.OpEnsureCollection, Collection: collName},
			{Kind: store.OpEnsureCollection, Collection: "c2"},
			{Kind: store.OpEnsureCluster, Collection: "c3", Cluster: "k3"},
			{Kind: store.OpEnsureCluster, Collection: collName, Cluster: clusName},
			{Kind: store.OpEnsureCluster, Collection: collName, Cluster: "k2"},
			{Kind: store.OpDeleteCluster, Collection: collName, Cluster: "k2"},
		}})
		require.NoError(t, err, "ensure and delete")
		created := []bool{}
		for _, r := range res {
			created = append(created, r.Created)
		}
		assert.Equal(t, []bool{false, true, true, false, true, false}, created, "Created says what was created")
		assertProjectCount(t, f.s, projName, 3, "collections")
		assertCollectionCounts(t, f.s, setLevel(f.path(1), 1, "c3"), 1, 0, "c3 with its cluster")
		assertCollectionCounts(t, f.s, f.path(1), 1, 1, "the fixture's collection, k2 deleted")
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{
			{Kind: store.OpDeleteCollection, Collection: "c2"},
			{Kind: store.OpDeleteCluster, Collection: collName, Cluster: "nope"},
		}})
		assertNotFound(t, assertOpError(t, err, 1, "delete a missing cluster"), "cluster", "nope", "a missing cluster")
		assertProjectCount(t, f.s, projName, 3, "c2 not deleted")
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{
			{Kind: store.OpDeleteCollection, Collection: collName},
		}})
		require.NoError(t, err, "delete a collection")
		_, err = f.s.FindRecord(f.ctx, f.path(3))
		assertNotFound(t, err, "collection", collName, "the records went with the collection")
	})

	t.Run("DryRun", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, DryRun: true, CreateParents: true, Ops: []store.Op{
			createOp("a", 1), updateOp(recName, 2), {Kind: store.OpEnsureCluster, Collection: "c2", Cluster: "k2"},
		}})
		require.NoError(t, err, "a dry run")
		assert.Equal(t, int64(2), res[1].Record.Version, "the result says what would happen")
		f.assertUnchanged(t, "after a dry run")
		assert.Empty(t, f.recordValue(t, "a"), "nothing created")
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, DryRun: true, Ops: []store.Op{createOp(recName, 1)}})
		assertExists(t, assertOpError(t, err, 0, "a failing dry run"), "record", recName, "the error it would have")
	})

	t.Run("OneRecordManyOps", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		rename := func(from, to string, n int) store.Op {
			return store.Op{Kind: store.OpUpdate, Collection: collName, Cluster: clusName, Record: from,
				Update: func(r *store.Record) error { r.Name, r.Value = to, json.RawMessage(strconv.Itoa(n)); return nil }}
		}
		del := func(name string) store.Op {
			return store.Op{Kind: store.OpDelete, Collection: collName, Cluster: clusName, Record: name}
		}
		byID := store.NewID()
		withID := createOp("a", 20)
		withID.New.ID = byID
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: store.Write{MaxVersions: 2}, Ops: []store.Op{
			updateOp(recName, 2), updateOp(recName, 3), updateOp(recName, 4), // the history cut within the batch
			createOp("a", 10), rename("a", "b", 11), // created, then renamed
			withID,                      // the name the rename freed
			del("b"), createOp("b", 30), // deleted, and its name taken again
			updateOp(byID, 21), // a record created by the batch, named by its id
		}})
		require.NoError(t, err, "Apply")
		assert.Equal(t, int64(4), res[2].Record.Version, "three updates of one record")
		assert.Equal(t, []string{"4", "3", "2"}, versionValues(versionsOf(t, f.s, f.path(3))),
			"two versions kept besides the current one: version 1 dropped in the batch")
		assert.Equal(t, "b", res[4].Record.Name, "renamed")
		assert.Equal(t, int64(2), res[4].Record.Version, "the rename is version 2")
		assert.Equal(t, byID, res[5].Record.ID, "the create's own id")
		assert.NotEqual(t, res[3].Record.ID, res[7].Record.ID, "b made again is another record")
		assert.Equal(t, "30", f.recordValue(t, "b"), "b holds the last create's value")
		assert.Equal(t, "21", f.recordValue(t, "a"), "a updated through its id")
		assert.Equal(t, []string{"21", "20"}, versionValues(versionsOf(t, f.s, setLevel(f.path(3), 3, "a"))),
			"a record created and updated in one batch keeps its first version")
		_, err = f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, res[3].Record.ID))
		assertNotFound(t, err, "record", res[3].Record.ID, "the record deleted in the batch is gone")
		assertCollectionCounts(t, f.s, f.path(1), 1, 3, "rec, a and b")

		// Names swapped through a third one; the last op reads what the
		// first two made.
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{
			rename("a", "tmp", 1), rename("b", "a", 2), rename("tmp", "b", 3),
		}})
		require.NoError(t, err, "swap two names")
		assert.Equal(t, "2", f.recordValue(t, "a"), "a is the former b")
		assert.Equal(t, "3", f.recordValue(t, "b"), "b is the former a")
		r, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, "b"))
		require.NoError(t, err, "FindRecord b")
		assert.Equal(t, byID, r.ID, "b has the former a's id")
		assert.Empty(t, f.recordValue(t, "tmp"), "tmp is gone")
	})

	t.Run("NameIsAnID", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{createOp("a", 1), createOp(f.rec.ID, 1)}})
		assertExists(t, assertOpError(t, err, 1, "a name that is a record's id"), "record", f.rec.ID, "create")
		fresh := createOp("b", 1)
		fresh.New.ID = store.NewID()
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{fresh,
			{Kind: store.OpUpdate, Collection: collName, Cluster: clusName, Record: recName,
				Update: func(r *store.Record) error { r.Name = fresh.New.ID; return nil }}}})
		assertExists(t, assertOpError(t, err, 1, "a rename to the id of a record made by the batch"), "record", fresh.New.ID, "rename")
		f.assertUnchanged(t, "after the refused batches")
		assert.Empty(t, f.recordValue(t, "b"), "nothing created")
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{
			{Kind: store.OpUpdate, Collection: collName, Cluster: clusName, Record: recName,
				Update: func(r *store.Record) error { r.Name = f.rec.ID; return nil }}}})
		require.NoError(t, err, "a record may take its own id as its name")
		assert.Equal(t, f.rec.ID, res[0].Record.Name, "renamed to its id")
	})

	t.Run("Concurrent", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		mustRecord(t, f.s, setLevel(f.path(3), 3, "b"), store.Integer, "1")
		res := make([][]store.OpResult, racers)
		errs := race(racers, func(i int) error {
			var err error
			res[i], err = f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{
				updateOp(recName, i), updateOp("b", i), createOp(fmt.Sprintf("n%d", i), i),
			}})
			return err
		})
		seen := map[int64]bool{}
		for i, err := range errs {
			if !assert.NoError(t, err, "batch %d", i) {
				continue
			}
			assert.Equal(t, res[i][0].Record.Version, res[i][1].Record.Version,
				"batch %d: both records at the same version: no batch interleaves with another", i)
			assert.False(t, seen[res[i][0].Record.Version], "batch %d: a version of its own", i)
			seen[res[i][0].Record.Version] = true
		}
		a, b := f.recordValue(t, recName), f.recordValue(t, "b")
		assert.Equal(t, a, b, "both records hold the value of the last batch")
		r, err := f.s.FindRecord(f.ctx, f.path(3))
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, int64(racers+1), r.Version, "every batch updated the record once")
		assertCollectionCounts(t, f.s, f.path(1), 1, 2+racers, "every batch created its record")

		cur := r.ETag()
		errs = race(racers, func(i int) error {
			op := updateOp(recName, 100+i)
			op.IfMatch = []string{cur}
			_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Write: keepHistory, Ops: []store.Op{createOp(fmt.Sprintf("m%d", i), i), op}})
			return err
		})
		wins := 0
		for i, err := range errs {
			if err == nil {
				wins++
				continue
			}
			assert.ErrorIs(t, assertOpError(t, err, 1, "a losing batch"), store.ErrPreconditionFailed, "batch %d", i)
		}
		assert.Equal(t, 1, wins, "of batches with the same tag exactly one wins")
		assertCollectionCounts(t, f.s, f.path(1), 1, 3+racers, "only the winner's create is kept")
	})
}

// errBoom is an error of a caller's function.
var errBoom = errors.New("boom")

// exported is one ExportItem as a line: "c", "c/k" or "c/k/r=type:value".
func exported(it store.ExportItem) string {
	switch {
	case it.Collection == "":
		return "project"
	case it.Record != nil:
		return it.Collection + "/" + it.Cluster + "/" + it.Record.Name + "=" + string(it.Record.Type) + ":" + string(it.Record.Value)
	case it.Cluster != "":
		return it.Collection + "/" + it.Cluster
	}
	return it.Collection
}

func testExports(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Tree", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		p := f.path(1)
		for _, c := range []string{"b", "a", "Z", "é"} {
			mustCollection(t, f.s, setLevel(p, 1, c))
		}
		mustCluster(t, f.s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "b", Cluster: "y"})
		mustCluster(t, f.s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "b", Cluster: "x"})
		mustCluster(t, f.s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "a", Cluster: "x"})
		mustRecord(t, f.s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "b", Cluster: "y", Record: "r2"}, store.String, `"two"`)
		mustRecord(t, f.s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "b", Cluster: "y", Record: "R1"}, store.Null, `null`)
		mustRecord(t, f.s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "a", Cluster: "x", Record: "r"}, store.Boolean, `true`)
		other := mustProject(t, f.s, owner, "other")
		mustCollection(t, f.s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: other.Name, Collection: "elsewhere"})
		var got []string
		err := f.s.ExportProject(f.ctx, f.path(0), func(it store.ExportItem) error {
			got = append(got, exported(it))
			return nil
		})
		require.NoError(t, err, "ExportProject")
		assert.Equal(t, []string{
			"project",
			"Z",
			"a", "a/x", "a/x/r=BOOLEAN:true",
			"b", "b/x", "b/y", "b/y/R1=NULL:null", `b/y/r2=STRING:"two"`,
			collName, collName + "/" + clusName, collName + "/" + clusName + "/" + recName + "=INTEGER:1",
			"é",
		}, got, "every collection, cluster and record, in name order, empty ones included")
	})

	t.Run("Records", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		var recs []*store.Record
		err := f.s.ExportProject(f.ctx, f.path(0), func(it store.ExportItem) error {
			if it.Record != nil {
				recs = append(recs, it.Record)
			}
			return nil
		})
		require.NoError(t, err, "ExportProject")
		if assert.Len(t, recs, 1, "one record") {
			assert.Equal(t, viewRecord(f.rec), viewRecord(recs[0]), "the record as FindRecord has it")
			recs[0].Value[0] = '9'
			assert.Equal(t, "1", f.recordValue(t, recName), "the visited record is a copy")
		}
	})

	t.Run("Errors", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		calls := 0
		visit := func(store.ExportItem) error { calls++; return nil }
		assertNotFound(t, f.s.ExportProject(f.ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "missing"}, visit), "project", "missing", "a missing project")
		assert.ErrorIs(t, f.s.ExportProject(f.ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: stranger}, Project: projName}, visit), store.ErrPermissionDenied, "someone else's project")
		assert.Zero(t, calls, "no visit on error")
		err := f.s.ExportProject(f.ctx, f.path(0), func(store.ExportItem) error { calls++; return errBoom })
		assert.Same(t, errBoom, err, "visit's error, unchanged")
		assert.Equal(t, 1, calls, "the walk stops at visit's error")
		empty := mustProject(t, f.s, owner, "empty")
		err = f.s.ExportProject(f.ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: empty.Name}, func(store.ExportItem) error { calls++; return nil })
		assert.NoError(t, err, "an empty project")
		assert.Equal(t, 2, calls, "only the project to visit")
	})

	t.Run("Snapshot", func(t *testing.T) {
		// A write while the walk is under way (from inside visit) is not
		// seen, and is not blocked by it.
		f := newFixture(t, newStore(t))
		mustRecord(t, f.s, setLevel(f.path(3), 3, "z"), store.Integer, "1")
		before, err := f.s.FindProject(f.ctx, f.path(0))
		require.NoError(t, err, "FindProject")
		var got []string
		var revision int64
		wrote := false
		err = f.s.ExportProject(f.ctx, f.path(0), func(it store.ExportItem) error {
			if it.Collection == "" {
				revision = it.Revision
			}
			if !wrote {
				wrote = true
				_, err := f.s.UpdateRecord(f.ctx, setLevel(f.path(3), 3, "z"), keepHistory, setValue(2))
				require.NoError(t, err, "a write during the walk")
				mustRecord(t, f.s, setLevel(f.path(3), 3, "y"), store.Integer, "1")
			}
			got = append(got, exported(it))
			return nil
		})
		require.NoError(t, err, "ExportProject")
		assert.Equal(t, []string{"project", collName, collName + "/" + clusName, collName + "/" + clusName + "/" + recName + "=INTEGER:1",
			collName + "/" + clusName + "/z=INTEGER:1"}, got, "the snapshot as it was when the walk began")
		if _, audited := f.s.(store.AuditLog); audited {
			assert.Positive(t, revision, "the snapshot's revision")
		}
		assert.Equal(t, before.Revision, revision, "the project's revision when the walk began, not the writes during it")
	})
}

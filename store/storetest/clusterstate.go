package storetest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// testClusterState checks store.Cluster.State, what the cluster tags of
// GET K are made of (docs/api.md#cluster-tags): it grows with every
// create, update (to the same value too), rename, restore and delete of a
// record of the cluster, by single writes and by batches, and with every
// rename of the cluster, its collection or its project to another name;
// reads, key rotation, failed or dry-run writes, no-op renames and
// changes elsewhere leave it as it is. Each state's ETag is new.
func testClusterState(t *testing.T, newStore func(t *testing.T) store.Store) {
	f := newFixture(t, newStore(t))
	s, ctx := f.s, f.ctx
	require.True(t, store.KeepsClusterState(s), "the store says it keeps Cluster.State (store.ClusterStateKeeper), so that hds serves cluster tags")
	hist := store.Write{MaxVersions: 10}
	// Elsewhere: a second cluster of the collection, and a second
	// collection with a cluster of the fixture cluster's name.
	other := setLevel(f.path(2), 2, "other")
	mustCluster(t, s, other)
	mustRecord(t, s, setLevel(setLevel(f.path(3), 2, "other"), 3, "o"), store.Integer, "1")
	coll2 := setLevel(f.path(1), 1, "coll2")
	mustCollection(t, s, coll2)
	mustCluster(t, s, setLevel(coll2, 2, clusName))
	mustRecord(t, s, setLevel(setLevel(setLevel(f.path(3), 1, "coll2"), 2, clusName), 3, "o"), store.Integer, "1")
	cred := setLevel(f.path(3), 3, "pw")
	credRec := mustRecord(t, s, cred, store.Credential, `"sealed-1"`)

	// path names the fixture's cluster (its names change below).
	path := f.path(2)
	read := func(what string) *store.Cluster {
		t.Helper()
		k, err := s.FindCluster(ctx, path, false)
		require.NoError(t, err, "%s: FindCluster", what)
		withRecords, err := s.FindCluster(ctx, path, true)
		require.NoError(t, err, "%s: FindCluster with records", what)
		assert.Equal(t, k.State, withRecords.State, "%s: FindCluster with records has the same state", what)
		streamed, _, err := store.StreamClusterRecords(ctx, s, path)
		require.NoError(t, err, "%s: StreamClusterRecords", what)
		assert.Equal(t, k.State, streamed.State, "%s: StreamClusterRecords has the same state", what)
		assert.Equal(t, k.ETag(), streamed.ETag(), "%s: the same tag", what)
		return k
	}
	otherState := func() [2]int64 {
		t.Helper()
		a, err := s.FindCluster(ctx, other, false)
		require.NoError(t, err)
		b, err := s.FindCluster(ctx, setLevel(coll2, 2, clusName), false)
		require.NoError(t, err)
		return [2]int64{a.State, b.State}
	}

	cur := read("start")
	seen := map[string]string{cur.ETag(): "start"}
	elsewhere := otherState()
	assert.NotEqual(t, cur.ETag(), mustFind(t, s, other).ETag(), "another cluster never has this cluster's tag")

	changes := func(what string, do func() error) {
		t.Helper()
		require.NoError(t, do(), what)
		got := read(what)
		assert.Greater(t, got.State, cur.State, "%s changes the cluster's state", what)
		if prev, dup := seen[got.ETag()]; dup {
			t.Errorf("%s: tag %s was already the tag after %s", what, got.ETag(), prev)
		}
		seen[got.ETag()] = what
		cur = got
	}
	keeps := func(what string, do func() error, wantErr bool) {
		t.Helper()
		err := do()
		if wantErr {
			require.Error(t, err, what)
		} else {
			require.NoError(t, err, what)
		}
		got := read(what)
		assert.Equal(t, cur.State, got.State, "%s leaves the cluster's state", what)
		assert.Equal(t, cur.ETag(), got.ETag(), "%s leaves the cluster's tag", what)
	}
	update := func(p store.Path, set func(*store.Record)) func() error {
		return func() error {
			_, err := s.UpdateRecord(ctx, p, hist, func(r *store.Record) error { set(r); return nil })
			return err
		}
	}
	rec := f.path(3)

	changes("CreateRecord", func() error {
		_, err := s.CreateRecord(ctx, setLevel(rec, 3, "new"), &store.Record{Type: store.String, Value: json.RawMessage(`"x"`)}, store.Write{})
		return err
	})
	changes("UpdateRecord to the same value", update(rec, func(*store.Record) {}))
	changes("UpdateRecord to another value", update(rec, func(r *store.Record) { r.Value = json.RawMessage("2") }))
	changes("UpdateRecord renaming the record", update(rec, func(r *store.Record) { r.Name = "renamed" }))
	rec = setLevel(rec, 3, "renamed")
	changes("RestoreRecord", func() error { _, err := s.RestoreRecord(ctx, rec, 1, hist); return err })
	changes("DeleteRecord", func() error { return s.DeleteRecord(ctx, setLevel(rec, 3, "new"), store.Write{}) })
	changes("a batch creating, updating and deleting", func() error {
		_, err := s.Apply(ctx, f.path(0), store.Batch{Write: hist, Ops: []store.Op{
			createOp("b1", 1), updateOp("renamed", 5),
			{Kind: store.OpDelete, Collection: collName, Cluster: clusName, Record: "b1"}}})
		return err
	})
	changes("a batch with one update to the same value", func() error {
		_, err := s.Apply(ctx, f.path(0), store.Batch{Write: hist, Ops: []store.Op{updateOp("renamed", 5)}})
		return err
	})
	changes("a batch upserting", func() error {
		_, err := s.Apply(ctx, f.path(0), store.Batch{Write: hist, Ops: []store.Op{{Kind: store.OpUpsert,
			Collection: collName, Cluster: clusName, Record: "up", New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}}}})
		return err
	})

	keeps("reads", func() error {
		if _, err := s.FindRecord(ctx, rec); err != nil {
			return err
		}
		if _, _, err := s.FindRecords(ctx, path, store.RecordQuery{ListQuery: store.NewListQuery()}); err != nil {
			return err
		}
		_, _, err := s.FindRecordVersions(ctx, rec, store.NewListQuery())
		return err
	}, false)
	keeps("an export", func() error {
		return s.ExportProject(ctx, f.path(0), func(store.ExportItem) error { return nil })
	}, false)
	keeps("key rotation (ResealRecord)", func() error {
		changed, err := s.ResealRecord(ctx, credRec.ID, func(_ store.DataType, _ json.RawMessage) (json.RawMessage, bool, error) {
			return json.RawMessage(`"sealed-2"`), true, nil
		})
		if err == nil && !changed {
			t.Error("ResealRecord reports the credential rewritten")
		}
		return err
	}, false)
	keeps("an update whose If-Match fails", func() error {
		_, err := s.UpdateRecord(ctx, rec, store.Write{IfMatch: []string{`"nope"`}}, func(r *store.Record) error { return nil })
		return err
	}, true)
	keeps("an update that finds nothing to change", func() error {
		_, err := s.UpdateRecord(ctx, rec, hist, func(*store.Record) error { return store.ErrUnchanged })
		if err == nil || err == store.ErrUnchanged {
			return nil
		}
		return err
	}, false)
	keeps("a batch failing at its last op", func() error {
		_, err := s.Apply(ctx, f.path(0), store.Batch{Write: hist, Ops: []store.Op{
			createOp("b2", 1), updateOp("renamed", 7), updateOp("missing", 1)}})
		return err
	}, true)
	keeps("a dry-run batch", func() error {
		_, err := s.Apply(ctx, f.path(0), store.Batch{Write: hist, DryRun: true, Ops: []store.Op{
			createOp("b3", 1), updateOp("renamed", 8)}})
		return err
	}, false)
	keeps("renaming the cluster to its own name", func() error { _, err := s.RenameCluster(ctx, path, clusName); return err }, false)
	keeps("renaming the collection to its own name", func() error { _, err := s.RenameCollection(ctx, path, collName); return err }, false)
	keeps("renaming the project to its own name", func() error { _, err := s.RenameProject(ctx, path, projName); return err }, false)
	keeps("changes in other clusters", func() error {
		op := setLevel(setLevel(f.path(3), 2, "other"), 3, "o")
		if _, err := s.UpdateRecord(ctx, op, hist, func(r *store.Record) error { return nil }); err != nil {
			return err
		}
		if _, err := s.CreateRecord(ctx, setLevel(op, 3, "p"), &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{}); err != nil {
			return err
		}
		if err := s.DeleteRecord(ctx, op, store.Write{}); err != nil {
			return err
		}
		if _, err := s.RenameCluster(ctx, other, "other2"); err != nil {
			return err
		}
		if _, err := s.RenameCollection(ctx, coll2, "coll3"); err != nil {
			return err
		}
		_, err := s.Apply(ctx, f.path(0), store.Batch{Write: hist, Ops: []store.Op{{Kind: store.OpCreate, Collection: "coll3",
			Cluster: clusName, Record: "q", New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}}}})
		return err
	}, false)
	other, coll2 = setLevel(other, 2, "other2"), setLevel(coll2, 1, "coll3")
	assert.NotEqual(t, elsewhere, otherState(), "the changes elsewhere changed those clusters' states")

	rename := func(level int, name string) func() error {
		return func() error {
			var err error
			switch level {
			case 0:
				_, err = s.RenameProject(ctx, path, name)
			case 1:
				_, err = s.RenameCollection(ctx, path, name)
			default:
				_, err = s.RenameCluster(ctx, path, name)
			}
			path = setLevel(path, level, name)
			return err
		}
	}
	changes("renaming the cluster", rename(2, "b"))
	changes("renaming the cluster back", rename(2, clusName))
	changes("renaming the collection", rename(1, "c2"))
	changes("renaming the collection back", rename(1, collName))
	changes("renaming the project", rename(0, "p2"))
	changes("renaming the project back", rename(0, projName))

	k, err := s.RenameCluster(ctx, path, "last")
	require.NoError(t, err)
	path = setLevel(path, 2, "last")
	assert.Equal(t, read("RenameCluster's answer").State, k.State, "RenameCluster answers the cluster in its new state")
}

// mustFind returns the cluster p names.
func mustFind(t *testing.T, s store.Store, p store.Path) *store.Cluster {
	t.Helper()
	k, err := s.FindCluster(t.Context(), p, false)
	require.NoError(t, err, "FindCluster %q", p.Cluster)
	return k
}

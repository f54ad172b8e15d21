package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

func testRecords(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CreateFillsFields", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		v := mustValue(t, store.ArrayOf(store.String), `["a", "b"]`)
		r, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, "list"), &store.Record{Type: store.ArrayOf(store.String), Value: v}, store.Write{})
		require.NoError(t, err, "CreateRecord")
		assertID(t, r.ID, "record")
		assert.Equal(t, "list", r.Name, "record Name is Path.Record")
		assert.Equal(t, store.ArrayOf(store.String), r.Type, "record Type")
		assert.Equal(t, `["a","b"]`, string(r.Value), "record Value is stored as given")
		assert.Equal(t, int64(1), r.Version, "Version starts at 1")
		assertCreateStamps(t, r.CreatedAt, r.UpdatedAt, "record")
		got, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, "list"))
		if assert.NoError(t, err, "FindRecord") {
			assert.Equal(t, viewRecord(r), viewRecord(got), "FindRecord returns the created record")
		}
		assert.NotEqual(t, f.rec.ID, r.ID, "two records have different ids")
		assertCollectionCounts(t, f.s, f.path(1), 1, 2, "after creating a second record")
	})

	t.Run("CreateWithGivenID", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		id := store.NewID()
		r, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, "given"), &store.Record{ID: id, Type: store.Null, Value: json.RawMessage("null")}, store.Write{})
		require.NoError(t, err, "CreateRecord with an id")
		assert.Equal(t, id, r.ID, "CreateRecord uses the id it is given")
		got, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, id))
		if assert.NoError(t, err, "FindRecord by the given id") {
			assert.Equal(t, "given", got.Name, "the record is found by the given id")
		}
	})

	t.Run("SameNameUnderDifferentClusters", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		mustCluster(t, f.s, setLevel(f.path(2), 2, "other"))
		r, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 2, "other"), &store.Record{Type: store.Integer, Value: json.RawMessage("2")}, store.Write{})
		require.NoError(t, err, "a record name may repeat in another cluster")
		assert.NotEqual(t, f.rec.ID, r.ID, "the two records have different ids")
		got, err := f.s.FindRecord(f.ctx, f.path(3))
		if assert.NoError(t, err, "FindRecord of the first record") {
			assert.Equal(t, viewRecord(f.rec), viewRecord(got), "the first record is unchanged")
		}
		got, err = f.s.FindRecord(f.ctx, setLevel(f.path(3), 2, "other"))
		if assert.NoError(t, err, "FindRecord of the second record") {
			assert.Equal(t, viewRecord(r), viewRecord(got), "each cluster has its own record of that name")
		}
		assertCollectionCounts(t, f.s, f.path(1), 2, 2, "two clusters of one record each")
	})

	t.Run("CopiesInput", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		in := &store.Record{Type: store.String, Value: mustValue(t, store.String, `"abc"`)}
		r, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, "in"), in, store.Write{})
		require.NoError(t, err, "CreateRecord")
		want := viewRecord(r)
		in.Value[1] = 'X'
		in.Type, in.Name, in.ID = store.Integer, "changed", "changed"
		got, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, "in"))
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, want, viewRecord(got), "changing the *Record given to CreateRecord afterwards changes nothing")
		assert.Equal(t, `"abc"`, string(got.Value), "the stored value is the one given")

		var kept *store.Record
		r, err = f.s.UpdateRecord(f.ctx, setLevel(f.path(3), 3, "in"), store.Write{}, func(r *store.Record) error {
			kept = r
			r.Value = json.RawMessage(`"def"`)
			return nil
		})

		require.NoError(t, err, "UpdateRecord")
		want = viewRecord(r)
		kept.Value[1] = 'X'
		kept.Name, kept.Version = "changed", 99
		got, err = f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, "in"))
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, want, viewRecord(got), "changing the *Record given to the update func afterwards changes nothing")
	})

	t.Run("ReturnedValuesAreCopies", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		mutate := func(r *store.Record) {
			r.Value[0] = '7'
			r.Name, r.Type, r.Version = "changed", store.String, 99
		}
		created := f.rec.Clone()
		mutate(f.rec) // returned by CreateRecord
		f.rec = created
		r, err := f.s.FindRecord(f.ctx, f.path(3))
		require.NoError(t, err, "FindRecord")
		mutate(r)
		rs, _, err := f.s.FindRecords(f.ctx, f.path(2), store.RecordQuery{ListQuery: store.NewListQuery()})
		require.NoError(t, err, "FindRecords")
		require.Len(t, rs, 1, "FindRecords")
		mutate(rs[0])
		k, err := f.s.FindCluster(f.ctx, f.path(2), true)
		require.NoError(t, err, "FindCluster")
		require.Len(t, k.Records, 1, "FindCluster records")
		mutate(k.Records[0])
		f.assertUnchanged(t, "after changing records returned by CreateRecord, FindRecord, FindRecords and FindCluster")

		u, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
			r.Value = json.RawMessage("5")
			return nil
		})
		require.NoError(t, err, "UpdateRecord")
		want := viewRecord(u)
		mutate(u)
		got, err := f.s.FindRecord(f.ctx, f.path(3))
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, want, viewRecord(got), "changing the record returned by UpdateRecord changes nothing")
	})

	t.Run("Update", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		tick()
		var seen *store.Record
		r, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
			seen = r.Clone()
			r.Value = json.RawMessage("2")
			return nil
		})
		require.NoError(t, err, "UpdateRecord")
		if assert.NotNil(t, seen, "the update func is called") {
			assert.Equal(t, viewRecord(f.rec), viewRecord(seen), "the update func gets the current record")
		}
		assert.Equal(t, f.rec.ID, r.ID, "update keeps the id")
		assert.Equal(t, recName, r.Name, "update keeps the name")
		assert.Equal(t, store.Integer, r.Type, "update keeps the type")
		assert.Equal(t, "2", string(r.Value), "update sets the value")
		assert.Equal(t, int64(2), r.Version, "update increments Version")
		assert.True(t, f.rec.CreatedAt.Equal(r.CreatedAt), "update keeps CreatedAt")
		assert.True(t, r.UpdatedAt.After(f.rec.UpdatedAt), "update moves UpdatedAt")
		assertStamp(t, r.UpdatedAt, "record UpdatedAt after update")
		got, err := f.s.FindRecord(f.ctx, f.path(3))
		if assert.NoError(t, err, "FindRecord after update") {
			assert.Equal(t, viewRecord(r), viewRecord(got), "FindRecord returns what UpdateRecord returned")
		}

		tick()
		r2, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
			assert.Equal(t, int64(2), r.Version, "the second update sees Version 2")
			assert.Equal(t, "2", string(r.Value), "the second update sees the first update's value")
			r.Type = store.String
			r.Value = json.RawMessage(`"two"`)
			return nil
		})
		require.NoError(t, err, "UpdateRecord changing the type")
		assert.Equal(t, store.String, r2.Type, "update sets the type")
		assert.Equal(t, `"two"`, string(r2.Value), "update sets the value with the type")
		assert.Equal(t, int64(3), r2.Version, "every update increments Version")
		assert.True(t, r2.UpdatedAt.After(r.UpdatedAt), "every update moves UpdatedAt")

		r3, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error { return nil })
		require.NoError(t, err, "UpdateRecord changing nothing")
		assert.Equal(t, int64(4), r3.Version, "an update that changes nothing still counts as an update")
		assertCollectionCounts(t, f.s, f.path(1), 1, 1, "updates do not add records")
	})

	t.Run("UpdateRename", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		tick()
		r, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
			r.Name = "renamed"
			return nil
		})
		require.NoError(t, err, "UpdateRecord renaming the record")
		assert.Equal(t, "renamed", r.Name, "update renames")
		assert.Equal(t, f.rec.ID, r.ID, "rename keeps the id")
		assert.Equal(t, string(f.rec.Value), string(r.Value), "rename keeps the value")
		assert.Equal(t, int64(2), r.Version, "a rename counts as an update")
		assert.True(t, r.UpdatedAt.After(f.rec.UpdatedAt), "a rename moves UpdatedAt")
		_, err = f.s.FindRecord(f.ctx, f.path(3))
		assertNotFound(t, err, "record", recName, "the old name is gone")
		got, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, "renamed"))
		if assert.NoError(t, err, "FindRecord under the new name") {
			assert.Equal(t, viewRecord(r), viewRecord(got), "the renamed record")
		}
		got, err = f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, f.rec.ID))
		if assert.NoError(t, err, "FindRecord by id after rename") {
			assert.Equal(t, "renamed", got.Name, "the record's id still finds it")
		}
		mustRecord(t, f.s, f.path(3), store.Null, "null")
	})

	t.Run("UpdateErrorChangesNothing", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		sentinel := errors.New("update refused")
		r, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
			r.Value[0] = '9' // in place: the func got a copy
			r.Name = "changed"
			r.Type = store.String
			return fmt.Errorf("wrapped: %w", sentinel)
		})
		assert.ErrorIs(t, err, sentinel, "UpdateRecord returns the update func's error")
		assert.Nil(t, r, "UpdateRecord returns no record when the func fails")
		f.assertUnchanged(t, "after a failed update")

		verr := &store.ValidationError{Message: "bad value"}
		_, err = f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error { return verr })
		var got *store.ValidationError
		if assert.ErrorAs(t, err, &got, "UpdateRecord returns the func's *ValidationError") {
			assert.Same(t, verr, got, "UpdateRecord returns the func's error itself")
		}
		f.assertUnchanged(t, "after a failed update")
	})

	t.Run("UpdateMissingRecordDoesNotCallFunc", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		called := false
		_, err := f.s.UpdateRecord(f.ctx, setLevel(f.path(3), 3, "missing"), store.Write{}, func(r *store.Record) error {
			called = true
			return nil
		})

		assertNotFound(t, err, "record", "missing", "UpdateRecord of a missing record")
		assert.False(t, called, "the update func is not called for a missing record")
	})

	t.Run("AddressByID", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		byID := setLevel(f.path(3), 3, f.rec.ID)
		got, err := f.s.FindRecord(f.ctx, byID)
		if assert.NoError(t, err, "FindRecord by id") {
			assert.Equal(t, viewRecord(f.rec), viewRecord(got), "FindRecord by id")
		}
		u, err := f.s.UpdateRecord(f.ctx, byID, store.Write{}, func(r *store.Record) error {
			r.Value = json.RawMessage("3")
			return nil
		})
		if assert.NoError(t, err, "UpdateRecord by id") {
			assert.Equal(t, f.rec.ID, u.ID, "UpdateRecord by id updates that record")
			assert.Equal(t, "3", string(u.Value), "UpdateRecord by id sets the value")
		}
		assert.NoError(t, f.s.DeleteRecord(f.ctx, byID, store.Write{}), "DeleteRecord by id")
		_, err = f.s.FindRecord(f.ctx, f.path(3))
		assertNotFound(t, err, "record", recName, "the record deleted by id is gone")
		_, err = f.s.FindRecord(f.ctx, byID)
		assertNotFound(t, err, "record", f.rec.ID, "the deleted record's id is not found")
	})

	t.Run("AddressByUpperCaseID", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		upper := setLevel(f.path(3), 3, strings.ToUpper(f.rec.ID))
		got, err := f.s.FindRecord(f.ctx, upper)
		if assert.NoError(t, err, "FindRecord by the id in upper case") {
			assert.Equal(t, f.rec.ID, got.ID, "a UUID in any case names the record with that id")
		}
	})

	t.Run("CreateNamedAfterExistingID", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		for _, id := range []string{f.rec.ID, strings.ToUpper(f.rec.ID)} {
			_, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, id), &store.Record{Type: store.Null, Value: json.RawMessage("null")}, store.Write{})
			assert.ErrorIs(t, err, store.ErrAlreadyExists, "creating a record whose name is the id %s of a record of the cluster", id)
		}
		f.assertUnchanged(t, "after the refused creates")
	})

	t.Run("UUIDLookingNameIsAName", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		name := store.NewID()
		r := mustRecord(t, f.s, setLevel(f.path(3), 3, name), store.String, `"uuid name"`)
		assert.NotEqual(t, name, r.ID, "the record's id is not its name")
		p := setLevel(f.path(3), 3, name)
		got, err := f.s.FindRecord(f.ctx, p)
		if assert.NoError(t, err, "FindRecord by a UUID-looking name that is no record's id") {
			assert.Equal(t, r.ID, got.ID, "the record is found by name")
		}
		u, err := f.s.UpdateRecord(f.ctx, p, store.Write{}, func(r *store.Record) error {
			r.Value = json.RawMessage(`"changed"`)
			return nil
		})
		if assert.NoError(t, err, "UpdateRecord by a UUID-looking name") {
			assert.Equal(t, r.ID, u.ID, "UpdateRecord finds the record by name")
		}
		assert.NoError(t, f.s.DeleteRecord(f.ctx, p, store.Write{}), "DeleteRecord by a UUID-looking name")
		_, err = f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, r.ID))
		assertNotFound(t, err, "record", r.ID, "the record deleted by name is gone")
		f.assertUnchanged(t, "after working on another record")
	})

	t.Run("IDOfRecordInAnotherClusterIsAName", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		other := setLevel(f.path(3), 2, "other")
		mustCluster(t, f.s, other)
		p := setLevel(other, 3, f.rec.ID)
		_, err := f.s.FindRecord(f.ctx, p)
		assertNotFound(t, err, "record", f.rec.ID, "another cluster's record id does not find it")
		_, err = f.s.UpdateRecord(f.ctx, p, store.Write{}, func(r *store.Record) error { return nil })
		assertNotFound(t, err, "record", f.rec.ID, "UpdateRecord with another cluster's record id")
		err = f.s.DeleteRecord(f.ctx, p, store.Write{})
		assertNotFound(t, err, "record", f.rec.ID, "DeleteRecord with another cluster's record id")
		got, err := f.s.FindRecord(f.ctx, f.path(3))
		if assert.NoError(t, err, "FindRecord in its own cluster") {
			assert.Equal(t, viewRecord(f.rec), viewRecord(got), "the record is unchanged after being addressed from another cluster")
		}

		named := mustRecord(t, f.s, p, store.Boolean, "false")
		assert.NotEqual(t, f.rec.ID, named.ID, "a record named after another cluster's record id gets its own id")
		got, err = f.s.FindRecord(f.ctx, p)
		if assert.NoError(t, err, "FindRecord by a name equal to another cluster's record id") {
			assert.Equal(t, named.ID, got.ID, "the segment is read as a name in this cluster")
		}
		got, err = f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, f.rec.ID))
		if assert.NoError(t, err, "FindRecord by id in its own cluster") {
			assert.Equal(t, f.rec.ID, got.ID, "the id still finds its own record")
		}
	})

	t.Run("IDTakesPrecedenceOverName", func(t *testing.T) {
		// A record named like an id that no record has yet, then a record
		// given that very id (callers may choose ids).
		f := newFixture(t, newStore(t))
		segment := store.NewID()
		named := mustRecord(t, f.s, setLevel(f.path(3), 3, segment), store.String, `"named like an id"`)
		withID, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, "has the id"), &store.Record{ID: segment, Type: store.Null, Value: json.RawMessage("null")}, store.Write{})

		require.NoError(t, err, "CreateRecord with a chosen id")
		got, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, segment))
		if assert.NoError(t, err, "FindRecord by a segment that is both an id and a name") {
			assert.Equal(t, withID.ID, got.ID, "the record with that id wins over the record with that name")
		}
		got, err = f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, named.ID))
		if assert.NoError(t, err, "FindRecord of the other record by its own id") {
			assert.Equal(t, segment, got.Name, "the other record is found by its id")
		}
	})

	t.Run("RenameOntoAnID", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		sib := mustRecord(t, f.s, setLevel(f.path(3), 3, "sibling"), store.Integer, "5")
		_, err := f.s.UpdateRecord(f.ctx, setLevel(f.path(3), 3, "sibling"), store.Write{}, func(r *store.Record) error {
			r.Name = strings.ToUpper(f.rec.ID)
			return nil
		})

		assert.ErrorIs(t, err, store.ErrAlreadyExists, "renaming onto the id of another record of the cluster")
		got, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, "sibling"))
		if assert.NoError(t, err, "the sibling keeps its name") {
			assert.Equal(t, viewRecord(sib), viewRecord(got), "the sibling is unchanged")
		}
	})

	t.Run("Delete", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		sib := mustRecord(t, f.s, setLevel(f.path(3), 3, "sibling"), store.Integer, "5")
		require.NoError(t, f.s.DeleteRecord(f.ctx, f.path(3), store.Write{}), "DeleteRecord")
		_, err := f.s.FindRecord(f.ctx, f.path(3))
		assertNotFound(t, err, "record", recName, "FindRecord after delete")
		err = f.s.DeleteRecord(f.ctx, f.path(3), store.Write{})
		assertNotFound(t, err, "record", recName, "deleting a deleted record again")
		got, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, "sibling"))
		if assert.NoError(t, err, "the sibling is untouched") {
			assert.Equal(t, viewRecord(sib), viewRecord(got), "the sibling is unchanged")
		}
		assertCollectionCounts(t, f.s, f.path(1), 1, 1, "after deleting one of two records")
		r := mustRecord(t, f.s, f.path(3), store.Integer, "1")
		assert.NotEqual(t, f.rec.ID, r.ID, "a re-created record has a new id")
		assert.Equal(t, int64(1), r.Version, "a re-created record starts at Version 1")
	})

	t.Run("EveryType", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		samples := map[store.DataType]string{
			store.String: `"a \"quoted\" <b>&"`, store.Integer: "-9223372036854775808", store.Float: "1e-300",
			store.Boolean: "false", store.Date: `"2026-02-28"`, store.Time: `"23:59:59.123456789"`,
			store.DateTime: `"2026-11-22T09:18:19.500+01:00"`, store.UUID: `"0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"`,
			store.Null: "null", store.Credential: `"sealed:opaque"`,
		}
		for _, typ := range store.Types {
			js, ok := samples[typ]
			if typ.IsArray() {
				js, ok = "["+samples[typ.Elem()]+","+samples[typ.Elem()]+"]", true
			}
			require.True(t, ok, "a sample for %s", typ)
			v := mustValue(t, typ, js)
			name := "t " + string(typ)
			r, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, name), &store.Record{Type: typ, Value: v}, store.Write{})
			if !assert.NoError(t, err, "CreateRecord of type %s", typ) {
				continue
			}
			got, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, name))
			if assert.NoError(t, err, "FindRecord of type %s", typ) {
				assert.Equal(t, typ, got.Type, "the type %s is kept", typ)
				assert.Equal(t, string(v), string(got.Value), "a %s value is kept byte for byte", typ)
				assert.Equal(t, viewRecord(r), viewRecord(got), "FindRecord of type %s", typ)
			}
		}
	})
}

package storetest

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// credFixture is a store holding credential and other records spread over
// two projects of two owners, with ids chosen so that id order differs
// from creation order and from project order.
type credFixture struct {
	s store.Store
	// creds are the CREDENTIAL and []CREDENTIAL records by id, with the
	// path that names them (Owner empty, Record the id).
	creds map[string]store.RecordRef
	// others are the paths (Owner empty, Record the id) of every other
	// record, by id.
	others map[string]store.Path
}

// credIDs returns the ids of the fixture's credential records in order.
func (f *credFixture) credIDs() []string {
	ids := make([]string, 0, len(f.creds))
	for id := range f.creds {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func newCredFixture(t *testing.T, s store.Store) *credFixture {
	t.Helper()
	f := &credFixture{s: s, creds: map[string]store.RecordRef{}, others: map[string]store.Path{}}
	ctx := t.Context()
	type spot struct{ owner, proj, coll, clus string }
	spots := []spot{
		{owner, "cred-a", "c1", "k1"},
		{owner, "cred-a", "c1", "k2"},
		{owner, "cred-a", "c2", "k1"},
		{bob, "cred-b", "c1", "k1"},
	}
	for _, sp := range spots {
		p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: sp.owner}, Project: sp.proj, Collection: sp.coll, Cluster: sp.clus}
		if _, err := s.FindProject(ctx, p); err != nil {
			mustProject(t, s, sp.owner, sp.proj)
		}
		if _, err := s.FindCollection(ctx, p); err != nil {
			mustCollection(t, s, p)
		}
		mustCluster(t, s, p)
	}
	type rec struct {
		at   int // index into spots
		name string
		typ  store.DataType
		js   string
	}
	recs := []rec{
		{0, "pw", store.Credential, `"sealed-1"`},
		{0, "plain", store.String, `"CREDENTIAL"`},
		{1, "keys", store.ArrayOf(store.Credential), `["sealed-2","sealed-3"]`},
		{3, "bob-pw", store.Credential, `"sealed-4"`},
		{2, "n", store.Integer, `7`},
		{3, "list", store.ArrayOf(store.String), `["CREDENTIAL"]`},
		{2, "empty", store.ArrayOf(store.Credential), `[]`},
		{1, "null", store.Null, `null`},
		{0, "pw2", store.Credential, `"sealed-5"`},
		{3, "bob-keys", store.ArrayOf(store.Credential), `["sealed-6"]`},
	}
	// Fresh ids, handed out in reverse so that the first record created
	// has the greatest id.
	ids := make([]string, len(recs))
	for i := range ids {
		ids[i] = store.NewID()
	}
	slices.Reverse(ids)
	for i, r := range recs {
		sp := spots[r.at]
		p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: sp.owner}, Project: sp.proj, Collection: sp.coll, Cluster: sp.clus, Record: r.name}
		got, err := s.CreateRecord(ctx, p, &store.Record{ID: ids[i], Type: r.typ, Value: mustValue(t, r.typ, r.js)}, store.Write{})
		require.NoError(t, err, "CreateRecord %s", r.name)
		require.Equal(t, ids[i], got.ID, "CreateRecord keeps the given id")
		// The listed Path names the record for an administrative tool:
		// no caller, no need.
		p.Caller.UserID, p.Need, p.Record = "", 0, got.ID
		if r.typ.IsCredential() {
			f.creds[got.ID] = store.RecordRef{Path: p, Record: got}
		} else {
			f.others[got.ID] = p
		}
	}
	return f
}

// refIDs lists the record ids of refs.
func refIDs(refs []store.RecordRef) []string {
	ids := []string{}
	for _, r := range refs {
		if r.Record != nil {
			ids = append(ids, r.Record.ID)
		}
	}
	return ids
}

// testCredentialRecords checks FindCredentialRecords.
func testCredentialRecords(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("EmptyStore", func(t *testing.T) {
		s := newStore(t)
		refs, err := s.FindCredentialRecords(t.Context(), "", 10)
		require.NoError(t, err, "FindCredentialRecords on an empty store")
		assert.Empty(t, refs, "an empty store has no credential records")
		newFixture(t, s) // one INTEGER record
		refs, err = s.FindCredentialRecords(t.Context(), "", 10)
		require.NoError(t, err, "FindCredentialRecords on a store without credentials")
		assert.Empty(t, refs, "a store without credential records lists none")
	})

	t.Run("OnlyCredentialsInIDOrder", func(t *testing.T) {
		f := newCredFixture(t, newStore(t))
		refs, err := f.s.FindCredentialRecords(t.Context(), "", 100)
		require.NoError(t, err, "FindCredentialRecords")
		assert.Equal(t, f.credIDs(), refIDs(refs),
			"every CREDENTIAL and []CREDENTIAL record, of every project and owner, in id order, and nothing else")
		for _, ref := range refs {
			want, ok := f.creds[ref.Record.ID]
			if !assert.True(t, ok, "listed record %s is a credential record", ref.Record.ID) {
				continue
			}
			assert.Equal(t, want.Path, ref.Path, "Path of %s: its names, Record the id, Owner empty", ref.Record.Name)
			assert.Equal(t, viewRecord(want.Record), viewRecord(ref.Record), "the listed record %s is the stored one", ref.Record.Name)
			got, err := f.s.FindRecord(t.Context(), ref.Path)
			if assert.NoError(t, err, "the listed Path of %s finds the record", ref.Record.Name) {
				assert.Equal(t, ref.Record.ID, got.ID, "the listed Path of %s names that record", ref.Record.Name)
			}
		}
	})

	t.Run("Paging", func(t *testing.T) {
		f := newCredFixture(t, newStore(t))
		all := f.credIDs()
		for _, size := range []int{1, 2, 3, len(all), len(all) + 1} {
			var got []string
			after := ""
			for range len(all) + 2 {
				refs, err := f.s.FindCredentialRecords(t.Context(), after, size)
				require.NoError(t, err, "FindCredentialRecords after %q, limit %d", after, size)
				assert.LessOrEqual(t, len(refs), size, "at most limit records (limit %d)", size)
				if len(refs) == 0 {
					break
				}
				got = append(got, refIDs(refs)...)
				after = refs[len(refs)-1].Record.ID
			}
			assert.Equal(t, all, got, "pages of %d, each after the last id of the one before, list every credential once", size)
		}
		for i, id := range all {
			refs, err := f.s.FindCredentialRecords(t.Context(), id, 100)
			require.NoError(t, err, "FindCredentialRecords after %s", id)
			want := append([]string{}, all[i+1:]...)
			assert.Equal(t, want, refIDs(refs), "after the id of credential %d: only the ones with greater ids", i)
		}
		// afterID need not be the id of a credential record.
		for id := range f.others {
			var want []string
			for _, c := range all {
				if c > id {
					want = append(want, c)
				}
			}
			refs, err := f.s.FindCredentialRecords(t.Context(), id, 100)
			require.NoError(t, err, "FindCredentialRecords after the non-credential record %s", id)
			assert.Equal(t, append([]string{}, want...), refIDs(refs), "after a non-credential record's id")
		}
		refs, err := f.s.FindCredentialRecords(t.Context(), "00000000-0000-0000-0000-000000000000", 100)
		require.NoError(t, err, "FindCredentialRecords after the nil UUID")
		assert.Equal(t, all, refIDs(refs), "after an id that sorts before all: everything")
		refs, err = f.s.FindCredentialRecords(t.Context(), "ffffffff-ffff-ffff-ffff-ffffffffffff", 100)
		require.NoError(t, err, "FindCredentialRecords after the max UUID")
		assert.Empty(t, refs, "after an id that sorts after all: nothing")
		refs, err = f.s.FindCredentialRecords(t.Context(), "", 2)
		require.NoError(t, err, "FindCredentialRecords, limit 2")
		assert.Equal(t, all[:2], refIDs(refs), "limit 2 from the start: the two smallest ids")
	})

	t.Run("FollowsChanges", func(t *testing.T) {
		f := newCredFixture(t, newStore(t))
		ctx := t.Context()
		all := f.credIDs()
		// A credential turned into a STRING is no longer listed; a STRING
		// turned into a CREDENTIAL is; a deleted one is gone; so is one under
		// a deleted cluster.
		gone := map[string]bool{}
		turned := f.creds[all[0]]
		_, err := f.s.UpdateRecord(ctx, turned.Path, store.Write{}, func(r *store.Record) error {
			r.Type, r.Value = store.String, json.RawMessage(`"now plain"`)
			return nil
		})
		require.NoError(t, err, "UpdateRecord CREDENTIAL -> STRING")
		gone[all[0]] = true
		deleted := f.creds[all[1]]
		require.NoError(t, f.s.DeleteRecord(ctx, deleted.Path, store.Write{}), "DeleteRecord")
		gone[all[1]] = true

		var newCred string
		for id, p := range f.others {
			_, err := f.s.UpdateRecord(ctx, p, store.Write{}, func(r *store.Record) error {
				r.Type, r.Value = store.Credential, json.RawMessage(`"sealed-new"`)
				return nil
			})
			require.NoError(t, err, "UpdateRecord -> CREDENTIAL")
			newCred = id
			break
		}

		want := []string{newCred}
		for _, id := range all {
			if !gone[id] {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		refs, err := f.s.FindCredentialRecords(ctx, "", 100)
		require.NoError(t, err, "FindCredentialRecords")
		assert.Equal(t, want, refIDs(refs), "after type changes and a delete")
		for _, ref := range refs {
			if ref.Record.ID == newCred {
				assert.Equal(t, store.Credential, ref.Record.Type, "the new type is listed")
				assert.Equal(t, `"sealed-new"`, string(ref.Record.Value), "the new value is listed")
				assert.Equal(t, int64(2), ref.Record.Version, "the new version is listed")
			}
		}

		// Deleting a cluster takes its credentials out of the list.
		remaining := 0
		for _, ref := range refs {
			if ref.Path.Project != "cred-b" {
				remaining++
			}
		}
		bobs := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: bob}, Project: "cred-b", Collection: "c1", Cluster: "k1"}
		require.NoError(t, f.s.DeleteCluster(ctx, bobs), "DeleteCluster")
		refs, err = f.s.FindCredentialRecords(ctx, "", 100)
		require.NoError(t, err, "FindCredentialRecords")
		for _, ref := range refs {
			assert.NotEqual(t, "cred-b", ref.Path.Project, "a credential of a deleted cluster is listed: %s", ref.Record.Name)
		}
		assert.Len(t, refs, remaining, "bob's credentials went with their cluster, the others stay")
	})

	t.Run("ReturnedValuesAreCopies", func(t *testing.T) {
		f := newCredFixture(t, newStore(t))
		ctx := t.Context()
		refs, err := f.s.FindCredentialRecords(ctx, "", 100)
		require.NoError(t, err, "FindCredentialRecords")
		require.NotEmpty(t, refs)
		before := map[string]recordView{}
		paths := map[string]store.Path{}
		for _, ref := range refs {
			before[ref.Record.ID] = viewRecord(ref.Record)
			paths[ref.Record.ID] = ref.Path
			if len(ref.Record.Value) > 1 {
				ref.Record.Value[1] = 'X'
			}
			ref.Record.Name, ref.Record.Type, ref.Record.Version = "changed", store.String, 99
			ref.Path.Project = "changed"
		}
		again, err := f.s.FindCredentialRecords(ctx, "", 100)
		require.NoError(t, err, "FindCredentialRecords")
		assert.Len(t, again, len(before), "changing listed records changes what is listed")
		for _, ref := range again {
			assert.Equal(t, before[ref.Record.ID], viewRecord(ref.Record),
				"changing a listed record changes nothing stored (%s)", ref.Record.ID)
			assert.Equal(t, paths[ref.Record.ID], ref.Path, "changing a listed Path changes nothing (%s)", ref.Record.ID)
		}
		for id, p := range paths {
			got, err := f.s.FindRecord(ctx, p)
			if assert.NoError(t, err, "FindRecord %s", id) {
				assert.Equal(t, before[id], viewRecord(got), "the stored record is unchanged (%s)", id)
			}
		}
	})
}

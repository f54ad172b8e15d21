package storetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

func testProjects(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CreateFillsFields", func(t *testing.T) {
		s := newStore(t)
		p, err := s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web"})
		require.NoError(t, err, "CreateProject")
		assertID(t, p.ID, "project")
		assert.Equal(t, "web", p.Name, "project Name")
		assert.Equal(t, owner, p.OwnerID, "project OwnerID is Path.Owner")
		assert.Equal(t, 0, p.CollectionCount, "a new project has no collections")
		assertCreateStamps(t, p.CreatedAt, p.UpdatedAt, "project")

		q, err := s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "api"})
		require.NoError(t, err, "CreateProject of a second project")
		assert.NotEqual(t, p.ID, q.ID, "two projects have different ids")
	})

	t.Run("FindReturnsWhatCreateReturned", func(t *testing.T) {
		s := newStore(t)
		p := mustProject(t, s, owner, "web")
		for _, who := range []string{owner, ""} {
			got, err := s.FindProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: who}, Project: "web"})
			if assert.NoError(t, err, "FindProject with Owner %q", who) {
				assert.Equal(t, viewProject(p), viewProject(got), "FindProject with Owner %q returns the created project", who)
			}
		}
	})

	t.Run("NamesAreCaseSensitive", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "web")
		_, err := s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "Web"})
		assert.NoError(t, err, "a project name differing only in case is a different name")
		_, err = s.FindProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "WEB"})
		assertNotFound(t, err, "project", "WEB", "FindProject does not fold case")
		_, err = s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "caf\u00e9"})
		require.NoError(t, err, "CreateProject café (precomposed)")
		_, err = s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "cafe\u0301"})
		assert.NoError(t, err, "names are not Unicode-normalized: café (decomposed) is another name")
	})

	t.Run("CollectionCount", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "web")
		for _, c := range []string{"a", "b", "c"} {
			mustCollection(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: c})
		}
		assertProjectCount(t, s, "web", 3, "after three collections")
		require.NoError(t, s.DeleteCollection(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: "b"}), "DeleteCollection")
		assertProjectCount(t, s, "web", 2, "after deleting one of three collections")
		ps, _, err := s.FindProjects(t.Context(), owner, store.NewListQuery())
		if assert.NoError(t, err, "FindProjects") && assert.Len(t, ps, 1, "FindProjects") {
			assert.Equal(t, 2, ps[0].CollectionCount, "FindProjects fills CollectionCount")
		}
	})

	t.Run("Rename", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		p := mustProject(t, s, owner, "old")
		c := mustCollection(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "old", Collection: "c"})
		k := mustCluster(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "old", Collection: "c", Cluster: "k"})
		r := mustRecord(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "old", Collection: "c", Cluster: "k", Record: "r"}, store.String, `"v"`)
		tick()
		got, err := s.RenameProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "old"}, "new")
		require.NoError(t, err, "RenameProject")
		assert.Equal(t, p.ID, got.ID, "rename keeps the project id")
		assert.Equal(t, "new", got.Name, "rename returns the new name")
		assert.Equal(t, owner, got.OwnerID, "rename keeps the owner")
		assert.True(t, p.CreatedAt.Equal(got.CreatedAt), "rename keeps CreatedAt")
		assert.True(t, got.UpdatedAt.After(p.UpdatedAt), "rename moves UpdatedAt (%v, was %v)", got.UpdatedAt, p.UpdatedAt)
		assertStamp(t, got.UpdatedAt, "project UpdatedAt after rename")
		assert.Equal(t, 1, got.CollectionCount, "rename keeps the collections")

		found, err := s.FindProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "new"})
		if assert.NoError(t, err, "FindProject under the new name") {
			assert.Equal(t, viewProject(got), viewProject(found), "FindProject returns what RenameProject returned")
		}
		_, err = s.FindProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "old"})
		assertNotFound(t, err, "project", "old", "the old name is gone")

		np := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "new", Collection: "c", Cluster: "k", Record: "r"}
		gc, err := s.FindCollection(ctx, np)
		if assert.NoError(t, err, "FindCollection under the renamed project") {
			assert.Equal(t, c.ID, gc.ID, "the collection keeps its id")
			assert.Equal(t, "new", gc.Project, "the collection names the project's new name")
		}
		gk, err := s.FindCluster(ctx, np, false)
		if assert.NoError(t, err, "FindCluster under the renamed project") {
			assert.Equal(t, k.ID, gk.ID, "the cluster keeps its id")
			assert.Equal(t, "new", gk.Project, "the cluster names the project's new name")
		}
		gr, err := s.FindRecord(ctx, np)
		if assert.NoError(t, err, "FindRecord under the renamed project") {
			assert.Equal(t, viewRecord(r), viewRecord(gr), "the record is unchanged by a project rename")
		}

		// The old name is free again.
		q, err := s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: bob}, Project: "old"})
		if assert.NoError(t, err, "the old name can be used again") {
			assert.NotEqual(t, p.ID, q.ID, "a new project under the old name has a new id")
		}
	})

	t.Run("RenameToCurrentName", func(t *testing.T) {
		s := newStore(t)
		p := mustProject(t, s, owner, "web")
		mustCollection(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: "c"})
		tick()
		got, err := s.RenameProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web"}, "web")
		require.NoError(t, err, "renaming a project to its current name succeeds")
		want := *p
		want.CollectionCount = 1
		assert.Equal(t, viewProject(&want), viewProject(got), "renaming to the current name changes nothing")
	})

	t.Run("DeleteCascades", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		f := newFixture(t, s)
		other := mustProject(t, s, owner, "other")
		mustCollection(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "other", Collection: collName})
		require.NoError(t, s.DeleteProject(ctx, f.path(0)), "DeleteProject")

		_, err := s.FindProject(ctx, f.path(0))
		assertNotFound(t, err, "project", projName, "FindProject after delete")
		_, err = s.FindCollection(ctx, f.path(1))
		assertNotFound(t, err, "project", projName, "FindCollection under a deleted project")
		_, err = s.FindCluster(ctx, f.path(2), true)
		assertNotFound(t, err, "project", projName, "FindCluster under a deleted project")
		_, err = s.FindRecord(ctx, f.path(3))
		assertNotFound(t, err, "project", projName, "FindRecord under a deleted project")
		err = s.DeleteProject(ctx, f.path(0))
		assertNotFound(t, err, "project", projName, "deleting a deleted project again")

		ps, n, err := s.FindProjects(ctx, owner, store.NewListQuery())
		if assert.NoError(t, err, "FindProjects after delete") {
			assert.Equal(t, 1, n, "the deleted project is not counted")
			assert.Equal(t, []string{"other"}, projectNames(ps), "only the other project is left")
		}
		got, err := s.FindProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "other"})
		if assert.NoError(t, err, "the other project is untouched") {
			assert.Equal(t, other.ID, got.ID, "the other project keeps its id")
			assert.Equal(t, 1, got.CollectionCount, "the other project keeps its collection")
		}

		// Re-creating the same names gives new, empty resources.
		p := mustProject(t, s, owner, projName)
		assert.NotEqual(t, f.proj.ID, p.ID, "a re-created project has a new id")
		assert.Equal(t, 0, p.CollectionCount, "a re-created project is empty")
		_, err = s.FindCollection(ctx, f.path(1))
		assertNotFound(t, err, "collection", collName, "the re-created project does not see the old collection")
		c := mustCollection(t, s, f.path(1))
		assert.NotEqual(t, f.coll.ID, c.ID, "a re-created collection has a new id")
		assert.Equal(t, 0, c.ClusterCount, "a re-created collection is empty")
		assert.Equal(t, 0, c.RecordCount, "a re-created collection has no records")
		k := mustCluster(t, s, f.path(2))
		assert.NotEqual(t, f.clus.ID, k.ID, "a re-created cluster has a new id")
		assert.Equal(t, 0, k.RecordCount, "a re-created cluster is empty")
		_, err = s.FindRecord(ctx, f.path(3))
		assertNotFound(t, err, "record", recName, "the old record is gone")
		_, err = s.FindRecord(ctx, setLevel(f.path(3), 3, f.rec.ID))
		assertNotFound(t, err, "record", f.rec.ID, "the old record's id is gone")
	})

	t.Run("ReturnedValuesAreCopies", func(t *testing.T) {
		s := newStore(t)
		p := mustProject(t, s, owner, "web")
		want := viewProject(p)
		p.Name, p.OwnerID, p.ID, p.CollectionCount = "changed", "changed", "changed", 99
		got, err := s.FindProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web"})
		require.NoError(t, err, "FindProject")
		assert.Equal(t, want, viewProject(got), "changing the project returned by CreateProject changes nothing")
		got.Name, got.OwnerID = "changed", "changed"
		ps, _, err := s.FindProjects(t.Context(), owner, store.NewListQuery())
		require.NoError(t, err, "FindProjects")
		require.Len(t, ps, 1, "FindProjects")
		assert.Equal(t, want, viewProject(ps[0]), "changing the project returned by FindProject changes nothing")
		ps[0].Name = "changed"
		got, err = s.FindProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web"})
		require.NoError(t, err, "FindProject")
		assert.Equal(t, want, viewProject(got), "changing a project returned by FindProjects changes nothing")
	})
}

func testCollections(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CreateFillsFields", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "web")
		c, err := s.CreateCollection(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod"})
		require.NoError(t, err, "CreateCollection")
		assertID(t, c.ID, "collection")
		assert.Equal(t, "prod", c.Name, "collection Name")
		assert.Equal(t, "web", c.Project, "collection Project is the project's name")
		assert.Equal(t, 0, c.ClusterCount, "a new collection has no clusters")
		assert.Equal(t, 0, c.RecordCount, "a new collection has no records")
		assertCreateStamps(t, c.CreatedAt, c.UpdatedAt, "collection")
		got, err := s.FindCollection(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod"})
		if assert.NoError(t, err, "FindCollection") {
			assert.Equal(t, viewCollection(c), viewCollection(got), "FindCollection returns the created collection")
		}
	})

	t.Run("SameNameUnderDifferentProjects", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "a")
		mustProject(t, s, owner, "b")
		ca := mustCollection(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "a", Collection: "prod"})
		cb, err := s.CreateCollection(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "b", Collection: "prod"})
		require.NoError(t, err, "a collection name may repeat in another project")
		assert.NotEqual(t, ca.ID, cb.ID, "the two collections have different ids")
		assert.Equal(t, "b", cb.Project, "the second collection names its own project")
		_, err = s.CreateCollection(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "a", Collection: "a"})
		assert.NoError(t, err, "a collection may have its project's name")
	})

	t.Run("Counts", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "web")
		base := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod"}
		mustCollection(t, s, base)
		for i, k := range []string{"k1", "k2", "k3"} {
			kp := base
			kp.Cluster = k
			mustCluster(t, s, kp)
			for j := range i + 1 {
				rp := kp
				rp.Record = fmt.Sprintf("r%d", j)
				mustRecord(t, s, rp, store.Integer, fmt.Sprint(j))
			}
		}
		assertCollectionCounts(t, s, base, 3, 6, "three clusters holding 1, 2 and 3 records")
		require.NoError(t, s.DeleteRecord(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod", Cluster: "k3", Record: "r0"}, store.Write{}), "DeleteRecord")
		assertCollectionCounts(t, s, base, 3, 5, "after deleting a record")
		require.NoError(t, s.DeleteCluster(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod", Cluster: "k2"}), "DeleteCluster")
		assertCollectionCounts(t, s, base, 2, 3, "after deleting a cluster of two records")
		cs, _, err := s.FindCollections(t.Context(), base, store.NewListQuery())
		if assert.NoError(t, err, "FindCollections") && assert.Len(t, cs, 1, "FindCollections") {
			assert.Equal(t, 2, cs[0].ClusterCount, "FindCollections fills ClusterCount")
			assert.Equal(t, 3, cs[0].RecordCount, "FindCollections fills RecordCount")
		}
	})

	t.Run("Rename", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		f := newFixture(t, s)
		tick()
		got, err := s.RenameCollection(ctx, f.path(1), "renamed")
		require.NoError(t, err, "RenameCollection")
		assert.Equal(t, f.coll.ID, got.ID, "rename keeps the collection id")
		assert.Equal(t, "renamed", got.Name, "rename returns the new name")
		assert.Equal(t, projName, got.Project, "rename keeps the project")
		assert.True(t, f.coll.CreatedAt.Equal(got.CreatedAt), "rename keeps CreatedAt")
		assert.True(t, got.UpdatedAt.After(f.coll.UpdatedAt), "rename moves UpdatedAt")
		assertStamp(t, got.UpdatedAt, "collection UpdatedAt after rename")
		assert.Equal(t, 1, got.ClusterCount, "rename keeps the clusters")
		assert.Equal(t, 1, got.RecordCount, "rename keeps the records")

		_, err = s.FindCollection(ctx, f.path(1))
		assertNotFound(t, err, "collection", collName, "the old name is gone")
		np := setLevel(f.path(3), 1, "renamed")
		gk, err := s.FindCluster(ctx, np, false)
		if assert.NoError(t, err, "FindCluster under the renamed collection") {
			assert.Equal(t, f.clus.ID, gk.ID, "the cluster keeps its id")
			assert.Equal(t, "renamed", gk.Collection, "the cluster names the collection's new name")
		}
		gr, err := s.FindRecord(ctx, np)
		if assert.NoError(t, err, "FindRecord under the renamed collection") {
			assert.Equal(t, viewRecord(f.rec), viewRecord(gr), "the record is unchanged by a collection rename")
		}
		mustCollection(t, s, f.path(1))
	})

	t.Run("RenameToCurrentName", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		tick()
		got, err := f.s.RenameCollection(f.ctx, f.path(1), collName)
		require.NoError(t, err, "renaming a collection to its current name succeeds")
		want := *f.coll
		want.ClusterCount, want.RecordCount = 1, 1
		assert.Equal(t, viewCollection(&want), viewCollection(got), "renaming to the current name changes nothing")
		f.assertUnchanged(t, "after renaming the collection to its own name")
	})

	t.Run("DeleteCascades", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		f := newFixture(t, s)
		sib := mustCollection(t, s, setLevel(f.path(1), 1, "sibling"))
		require.NoError(t, s.DeleteCollection(ctx, f.path(1)), "DeleteCollection")
		_, err := s.FindCollection(ctx, f.path(1))
		assertNotFound(t, err, "collection", collName, "FindCollection after delete")
		_, err = s.FindCluster(ctx, f.path(2), false)
		assertNotFound(t, err, "collection", collName, "FindCluster under a deleted collection")
		_, err = s.FindRecord(ctx, f.path(3))
		assertNotFound(t, err, "collection", collName, "FindRecord under a deleted collection")
		err = s.DeleteCollection(ctx, f.path(1))
		assertNotFound(t, err, "collection", collName, "deleting a deleted collection again")
		assertProjectCount(t, s, projName, 1, "after deleting one of two collections")
		got, err := s.FindCollection(ctx, setLevel(f.path(1), 1, "sibling"))
		if assert.NoError(t, err, "the sibling collection is untouched") {
			assert.Equal(t, sib.ID, got.ID, "the sibling keeps its id")
		}
		c := mustCollection(t, s, f.path(1))
		assert.NotEqual(t, f.coll.ID, c.ID, "a re-created collection has a new id")
		assert.Equal(t, 0, c.ClusterCount, "a re-created collection is empty")
		_, err = s.FindCluster(ctx, f.path(2), false)
		assertNotFound(t, err, "cluster", clusName, "the old cluster is gone")
	})

	t.Run("ReturnedValuesAreCopies", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		created := *f.coll
		f.coll.Name, f.coll.Project, f.coll.ID, f.coll.ClusterCount = "changed", "changed", "changed", 99
		c, err := f.s.FindCollection(f.ctx, f.path(1))
		require.NoError(t, err, "FindCollection")
		c.Name, c.Project, c.ID, c.ClusterCount = "changed", "changed", "changed", 99
		cs, _, err := f.s.FindCollections(f.ctx, f.path(0), store.NewListQuery())
		require.NoError(t, err, "FindCollections")
		require.Len(t, cs, 1, "FindCollections")
		cs[0].Name, cs[0].RecordCount = "changed", 99
		*f.coll = created
		f.assertUnchanged(t, "after changing collections returned by CreateCollection, FindCollection and FindCollections")
	})
}

func testClusters(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CreateFillsFields", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "web")
		mustCollection(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod"})
		p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod", Cluster: "db"}
		k, err := s.CreateCluster(t.Context(), p)
		require.NoError(t, err, "CreateCluster")
		assertID(t, k.ID, "cluster")
		assert.Equal(t, "db", k.Name, "cluster Name")
		assert.Equal(t, "web", k.Project, "cluster Project is the project's name")
		assert.Equal(t, "prod", k.Collection, "cluster Collection is the collection's name")
		assert.Equal(t, 0, k.RecordCount, "a new cluster has no records")
		assert.Nil(t, k.Records, "CreateCluster leaves Records nil")
		assertCreateStamps(t, k.CreatedAt, k.UpdatedAt, "cluster")
		got, err := s.FindCluster(t.Context(), p, false)
		if assert.NoError(t, err, "FindCluster") {
			assert.Equal(t, viewCluster(k), viewCluster(got), "FindCluster returns the created cluster")
		}
	})

	t.Run("SameNameUnderDifferentCollections", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		mustCollection(t, f.s, setLevel(f.path(1), 1, "other"))
		k, err := f.s.CreateCluster(f.ctx, setLevel(f.path(2), 1, "other"))
		require.NoError(t, err, "a cluster name may repeat in another collection")
		assert.NotEqual(t, f.clus.ID, k.ID, "the two clusters have different ids")
		assert.Equal(t, "other", k.Collection, "the new cluster names its own collection")
	})

	t.Run("FindClusterRecords", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		want := map[string]*store.Record{recName: f.rec}
		for _, name := range []string{"b", "a", "B", "\u00e9", "Z", "a b", "ab"} {
			r := mustRecord(t, f.s, setLevel(f.path(3), 3, name), store.String, fmt.Sprintf("%q", "value of "+name))
			want[name] = r
		}
		k, err := f.s.FindCluster(f.ctx, f.path(2), true)
		require.NoError(t, err, "FindCluster with records")
		assert.Equal(t, 8, k.RecordCount, "RecordCount")
		wantOrder := []string{"B", "Z", "a", "a b", "ab", "b", recName, "\u00e9"}
		var got []string
		for _, r := range k.Records {
			got = append(got, r.Name)
			if w, ok := want[r.Name]; assert.True(t, ok, "unexpected record %q", r.Name) {
				assert.Equal(t, viewRecord(w), viewRecord(r), "FindCluster returns record %q as created", r.Name)
			}
		}
		assert.Equal(t, wantOrder, got, "FindCluster returns every record, by name byte-wise")

		k, err = f.s.FindCluster(f.ctx, f.path(2), false)
		require.NoError(t, err, "FindCluster without records")
		assert.Nil(t, k.Records, "FindCluster with records=false leaves Records nil")
		assert.Equal(t, 8, k.RecordCount, "RecordCount without records")

		ks, _, err := f.s.FindClusters(f.ctx, f.path(1), store.NewListQuery())
		if assert.NoError(t, err, "FindClusters") && assert.Len(t, ks, 1, "FindClusters") {
			assert.Equal(t, 8, ks[0].RecordCount, "FindClusters fills RecordCount")
			assert.Nil(t, ks[0].Records, "FindClusters leaves Records nil")
		}
	})

	t.Run("Rename", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		f := newFixture(t, s)
		tick()
		got, err := s.RenameCluster(ctx, f.path(2), "renamed")
		require.NoError(t, err, "RenameCluster")
		assert.Equal(t, f.clus.ID, got.ID, "rename keeps the cluster id")
		assert.Equal(t, "renamed", got.Name, "rename returns the new name")
		assert.Equal(t, projName, got.Project, "rename keeps the project")
		assert.Equal(t, collName, got.Collection, "rename keeps the collection")
		assert.True(t, f.clus.CreatedAt.Equal(got.CreatedAt), "rename keeps CreatedAt")
		assert.True(t, got.UpdatedAt.After(f.clus.UpdatedAt), "rename moves UpdatedAt")
		assertStamp(t, got.UpdatedAt, "cluster UpdatedAt after rename")
		assert.Equal(t, 1, got.RecordCount, "rename keeps the records")

		_, err = s.FindCluster(ctx, f.path(2), false)
		assertNotFound(t, err, "cluster", clusName, "the old name is gone")
		gr, err := s.FindRecord(ctx, setLevel(f.path(3), 2, "renamed"))
		if assert.NoError(t, err, "FindRecord under the renamed cluster") {
			assert.Equal(t, viewRecord(f.rec), viewRecord(gr), "the record is unchanged by a cluster rename")
		}
		gr, err = s.FindRecord(ctx, setLevel(setLevel(f.path(3), 2, "renamed"), 3, f.rec.ID))
		if assert.NoError(t, err, "FindRecord by id under the renamed cluster") {
			assert.Equal(t, f.rec.ID, gr.ID, "the record is found by id after a cluster rename")
		}
		assertCollectionCounts(t, s, f.path(1), 1, 1, "after renaming the cluster")
	})

	t.Run("RenameToCurrentName", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		tick()
		got, err := f.s.RenameCluster(f.ctx, f.path(2), clusName)
		require.NoError(t, err, "renaming a cluster to its current name succeeds")
		want := *f.clus
		want.RecordCount = 1
		assert.Equal(t, viewCluster(&want), viewCluster(got), "renaming to the current name changes nothing")
		f.assertUnchanged(t, "after renaming the cluster to its own name")
	})

	t.Run("DeleteCascades", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		f := newFixture(t, s)
		sibPath := setLevel(f.path(3), 2, "sibling")
		mustCluster(t, s, sibPath)
		sibRec := mustRecord(t, s, sibPath, store.Boolean, "true")
		require.NoError(t, s.DeleteCluster(ctx, f.path(2)), "DeleteCluster")
		_, err := s.FindCluster(ctx, f.path(2), true)
		assertNotFound(t, err, "cluster", clusName, "FindCluster after delete")
		_, err = s.FindRecord(ctx, f.path(3))
		assertNotFound(t, err, "cluster", clusName, "FindRecord under a deleted cluster")
		err = s.DeleteCluster(ctx, f.path(2))
		assertNotFound(t, err, "cluster", clusName, "deleting a deleted cluster again")
		assertCollectionCounts(t, s, f.path(1), 1, 1, "after deleting one of two clusters")
		got, err := s.FindRecord(ctx, sibPath)
		if assert.NoError(t, err, "the sibling cluster's record is untouched") {
			assert.Equal(t, viewRecord(sibRec), viewRecord(got), "the sibling's record is unchanged")
		}
		k := mustCluster(t, s, f.path(2))
		assert.NotEqual(t, f.clus.ID, k.ID, "a re-created cluster has a new id")
		assert.Equal(t, 0, k.RecordCount, "a re-created cluster is empty")
		_, err = s.FindRecord(ctx, f.path(3))
		assertNotFound(t, err, "record", recName, "the old record is gone")
		_, err = s.FindRecord(ctx, setLevel(f.path(3), 3, f.rec.ID))
		assertNotFound(t, err, "record", f.rec.ID, "the old record's id is gone")
		r := mustRecord(t, s, f.path(3), store.Integer, "1")
		assert.NotEqual(t, f.rec.ID, r.ID, "a re-created record has a new id")
	})

	t.Run("ReturnedValuesAreCopies", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		created := *f.clus
		f.clus.Name, f.clus.Collection, f.clus.RecordCount = "changed", "changed", 99
		f.clus.Records = []*store.Record{{Name: "extra"}}
		k, err := f.s.FindCluster(f.ctx, f.path(2), true)
		require.NoError(t, err, "FindCluster")
		k.Name, k.Project, k.Collection, k.RecordCount = "changed", "changed", "changed", 99
		require.Len(t, k.Records, 1, "FindCluster records")
		k.Records[0].Name = "changed"
		k.Records[0].Value[0] = '9'
		k.Records = append(k.Records, &store.Record{Name: "extra"})
		ks, _, err := f.s.FindClusters(f.ctx, f.path(1), store.NewListQuery())
		require.NoError(t, err, "FindClusters")
		require.Len(t, ks, 1, "FindClusters")
		ks[0].Name = "changed"
		*f.clus = created
		f.assertUnchanged(t, "after changing clusters and records returned by CreateCluster, FindCluster and FindClusters")
	})
}

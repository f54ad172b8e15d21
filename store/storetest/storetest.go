// Package storetest holds the conformance suites of hds's storage
// interfaces. Every implementation of store.Store runs Run, and every
// implementation of store.UserDirectory runs RunUsers, from an ordinary
// test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return mystore.New(...) })
//	}
//
// The suites check the error contract first (which sentinel error, and
// which *store.NotFoundError or *store.ExistsError, each failure gives),
// then behaviour (fields, counts, renames, cascades, copies, and the
// sorting, filtering and paging rules of API.md section 5), then
// concurrency. Each subtest asks the constructor for a fresh, empty store.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// The owners used by the suite: owner owns the fixture; stranger owns
// nothing of it.
const (
	owner    = "alice"
	stranger = "mallory"
	bob      = "bob"
)

// The names of the fixture's resources.
const (
	projName = "proj"
	collName = "coll"
	clusName = "clus"
	recName  = "rec"
)

// Kinds named by *store.NotFoundError and *store.ExistsError, by level.
var kinds = []string{"project", "collection", "cluster", "record"}

// Run runs the conformance suite of store.Store. newStore must return a
// fresh, empty store each time it is called; it is called once per
// subtest.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Errors", func(t *testing.T) { testErrors(t, newStore) })
	t.Run("Projects", func(t *testing.T) { testProjects(t, newStore) })
	t.Run("Collections", func(t *testing.T) { testCollections(t, newStore) })
	t.Run("Clusters", func(t *testing.T) { testClusters(t, newStore) })
	t.Run("Records", func(t *testing.T) { testRecords(t, newStore) })
	t.Run("Lists", func(t *testing.T) { testLists(t, newStore) })
	t.Run("RecordLists", func(t *testing.T) { testRecordLists(t, newStore) })
	t.Run("ListsV11", func(t *testing.T) { testListsV11(t, newStore) })
	t.Run("Cursors", func(t *testing.T) { testCursors(t, newStore) })
	t.Run("CredentialRecords", func(t *testing.T) { testCredentialRecords(t, newStore) })
	t.Run("LargeValues", func(t *testing.T) { testLargeValues(t, newStore) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, newStore) })
	t.Run("Preconditions", func(t *testing.T) { testPreconditions(t, newStore) })
	t.Run("History", func(t *testing.T) { testHistory(t, newStore) })
	t.Run("Batches", func(t *testing.T) { testBatches(t, newStore) })
	t.Run("Exports", func(t *testing.T) { testExports(t, newStore) })
	t.Run("Streaming", func(t *testing.T) { testStreaming(t, newStore) })
	t.Run("Ping", func(t *testing.T) {
		assert.NoError(t, newStore(t).Ping(t.Context()), "Ping on a healthy store")
	})
}

// fixture is a store holding one project (owned by owner) with one
// collection, one cluster and one INTEGER record of value 1.
type fixture struct {
	s    store.Store
	ctx  context.Context
	proj *store.Project
	coll *store.Collection
	clus *store.Cluster
	rec  *store.Record
}

func newFixture(t *testing.T, s store.Store) *fixture {
	t.Helper()
	f := &fixture{s: s, ctx: t.Context()}
	f.proj = mustProject(t, s, owner, projName)
	f.coll = mustCollection(t, s, f.path(1))
	f.clus = mustCluster(t, s, f.path(2))
	f.rec = mustRecord(t, s, f.path(3), store.Integer, "1")
	return f
}

// path returns the Path, with Owner set to owner, of the fixture's
// resource at level 0 (project) to 3 (record); the fields below the level
// are left empty.
func (f *fixture) path(level int) store.Path {
	p := store.Path{Caller: store.Caller{UserID: owner}, Project: projName}
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

// assertUnchanged checks that the fixture is exactly as newFixture made
// it: same names, ids, timestamps, counts and record.
func (f *fixture) assertUnchanged(t *testing.T, msg string) {
	t.Helper()
	admin := f.path(3)
	admin.Caller.UserID = ""
	p, err := f.s.FindProject(f.ctx, admin)
	if assert.NoError(t, err, "%s: project still found", msg) {
		want := *f.proj
		want.CollectionCount = 1
		assert.Equal(t, viewProject(&want), viewProject(p), "%s: project unchanged", msg)
	}
	c, err := f.s.FindCollection(f.ctx, admin)
	if assert.NoError(t, err, "%s: collection still found", msg) {
		want := *f.coll
		want.ClusterCount, want.RecordCount = 1, 1
		assert.Equal(t, viewCollection(&want), viewCollection(c), "%s: collection unchanged", msg)
	}
	k, err := f.s.FindCluster(f.ctx, admin, true)
	if assert.NoError(t, err, "%s: cluster still found", msg) {
		want := *f.clus
		want.RecordCount = 1
		want.Records = []*store.Record{f.rec}
		assert.Equal(t, viewCluster(&want), viewCluster(k), "%s: cluster and its records unchanged", msg)
	}
	r, err := f.s.FindRecord(f.ctx, admin)
	if assert.NoError(t, err, "%s: record still found", msg) {
		assert.Equal(t, viewRecord(f.rec), viewRecord(r), "%s: record unchanged", msg)
	}
	ps, n, err := f.s.FindProjects(f.ctx, owner, store.NewListQuery())
	if assert.NoError(t, err, "%s: FindProjects", msg) {
		assert.Equal(t, 1, n, "%s: owner still has exactly one project", msg)
		assert.Equal(t, []string{projName}, projectNames(ps), "%s: owner's projects", msg)
	}
}

// pathOp is one Store method that takes a Path, reduced to its error.
type pathOp struct {
	name string
	// level is the deepest Path field the method reads: 0 project,
	// 1 collection, 2 cluster, 3 record.
	level int
	// create is true when the method creates the resource at level, so
	// that only the levels above it must exist.
	create bool
	do     func(ctx context.Context, s store.Store, p store.Path) error
}

var pathOps = []pathOp{
	{"FindProject", 0, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.FindProject(ctx, p)
		return err
	}},
	{"RenameProject", 0, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.RenameProject(ctx, p, "renamed")
		return err
	}},
	{"DeleteProject", 0, false, func(ctx context.Context, s store.Store, p store.Path) error {
		return s.DeleteProject(ctx, p)
	}},
	{"FindCollections", 0, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, _, err := s.FindCollections(ctx, p, store.NewListQuery())
		return err
	}},
	{"CreateCollection", 1, true, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.CreateCollection(ctx, p)
		return err
	}},
	{"FindCollection", 1, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.FindCollection(ctx, p)
		return err
	}},
	{"RenameCollection", 1, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.RenameCollection(ctx, p, "renamed")
		return err
	}},
	{"DeleteCollection", 1, false, func(ctx context.Context, s store.Store, p store.Path) error {
		return s.DeleteCollection(ctx, p)
	}},
	{"FindClusters", 1, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, _, err := s.FindClusters(ctx, p, store.NewListQuery())
		return err
	}},
	{"CreateCluster", 2, true, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.CreateCluster(ctx, p)
		return err
	}},
	{"FindCluster", 2, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.FindCluster(ctx, p, false)
		return err
	}},
	{"FindClusterWithRecords", 2, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.FindCluster(ctx, p, true)
		return err
	}},
	{"RenameCluster", 2, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.RenameCluster(ctx, p, "renamed")
		return err
	}},
	{"DeleteCluster", 2, false, func(ctx context.Context, s store.Store, p store.Path) error {
		return s.DeleteCluster(ctx, p)
	}},
	{"FindRecords", 2, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, _, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: store.NewListQuery()})
		return err
	}},
	{"CreateRecord", 3, true, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("2")}, store.Write{})
		return err
	}},
	{"FindRecord", 3, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.FindRecord(ctx, p)
		return err
	}},
	{"UpdateRecord", 3, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.UpdateRecord(ctx, p, store.Write{}, func(r *store.Record) error {
			r.Value = json.RawMessage("2")
			return nil
		})
		return err
	}},
	{"DeleteRecord", 3, false, func(ctx context.Context, s store.Store, p store.Path) error {
		return s.DeleteRecord(ctx, p, store.Write{})
	}},
}

// setLevel returns p with the name at level replaced by name.
func setLevel(p store.Path, level int, name string) store.Path {
	switch level {
	case 0:
		p.Project = name
	case 1:
		p.Collection = name
	case 2:
		p.Cluster = name
	case 3:
		p.Record = name
	}
	return p
}

// opPath returns the fixture path an operation works on: the fixture's
// resource, or for a create a new name under the fixture's parents.
func (f *fixture) opPath(op pathOp) store.Path {
	p := f.path(op.level)
	if op.create {
		p = setLevel(p, op.level, "fresh")
	}
	return p
}

// missingNames are names that no store holds: a plain one, and one with
// U+0000, which a store can never hold.
var missingNames = []string{"missing", "nul\x00name"}

func testErrors(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("MissingProject", func(t *testing.T) {
		for _, op := range pathOps {
			t.Run(op.name, func(t *testing.T) {
				f := newFixture(t, newStore(t))
				for _, who := range []string{owner, stranger, ""} {
					for _, name := range missingNames {
						p := setLevel(f.opPath(op), 0, name)
						p.Caller.UserID = who
						err := op.do(f.ctx, f.s, p)
						assertNotFound(t, err, "project", name,
							"%s with Owner %q on missing project %q", op.name, who, name)
					}
				}
				f.assertUnchanged(t, op.name+" on a missing project")
			})
		}
	})

	t.Run("MissingLevelBelowProject", func(t *testing.T) {
		for _, op := range pathOps {
			if op.level == 0 {
				continue
			}
			t.Run(op.name, func(t *testing.T) {
				f := newFixture(t, newStore(t))
				for _, who := range []string{owner, ""} {
					for level := 1; level <= op.level; level++ {
						if op.create && level == op.level {
							continue
						}
						for _, name := range missingNames {
							p := setLevel(f.opPath(op), level, name)
							p.Caller.UserID = who
							err := op.do(f.ctx, f.s, p)
							assertNotFound(t, err, kinds[level], name,
								"%s with Owner %q and missing %s %q: the first missing level is named",
								op.name, who, kinds[level], name)
						}
					}
				}
				f.assertUnchanged(t, op.name+" on a missing resource")
			})
		}
	})

	t.Run("NotOwnerIsPermissionDenied", func(t *testing.T) {
		for _, op := range pathOps {
			t.Run(op.name, func(t *testing.T) {
				f := newFixture(t, newStore(t))
				p := f.opPath(op)
				p.Caller.UserID = stranger
				err := op.do(f.ctx, f.s, p)
				assert.ErrorIs(t, err, store.ErrPermissionDenied, "%s by a user who does not own the project", op.name)
				assert.NotErrorIs(t, err, store.ErrNotFound, "%s by a non-owner is not ErrNotFound", op.name)
				f.assertUnchanged(t, op.name+" denied")
			})
		}
	})

	t.Run("PermissionCheckedBeforeChildLookup", func(t *testing.T) {
		for _, op := range pathOps {
			if op.level == 0 {
				continue
			}
			t.Run(op.name, func(t *testing.T) {
				f := newFixture(t, newStore(t))
				for level := 1; level <= op.level; level++ {
					if op.create && level == op.level {
						continue
					}
					for _, name := range missingNames {
						p := setLevel(f.opPath(op), level, name)
						p.Caller.UserID = stranger
						err := op.do(f.ctx, f.s, p)
						assert.ErrorIs(t, err, store.ErrPermissionDenied,
							"%s by a non-owner with missing %s %q: ErrPermissionDenied comes first", op.name, kinds[level], name)
						assert.NotErrorIs(t, err, store.ErrNotFound,
							"%s by a non-owner with missing %s %q is not ErrNotFound", op.name, kinds[level], name)
					}
				}
				f.assertUnchanged(t, op.name+" denied")
			})
		}
	})

	t.Run("OwnerAndEmptyOwnerAreAllowed", func(t *testing.T) {
		for _, op := range pathOps {
			for _, who := range []string{owner, ""} {
				t.Run(fmt.Sprintf("%s/Owner=%q", op.name, who), func(t *testing.T) {
					f := newFixture(t, newStore(t))
					p := f.opPath(op)
					p.Caller.UserID = who
					assert.NoError(t, op.do(f.ctx, f.s, p), "%s with Owner %q on the owner's project", op.name, who)
				})
			}
		}
	})

	t.Run("DuplicateNames", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		_, err := f.s.CreateProject(f.ctx, store.Path{Caller: store.Caller{UserID: owner}, Project: projName})
		assertExists(t, err, "project", projName, "CreateProject with the owner's existing name")
		_, err = f.s.CreateProject(f.ctx, store.Path{Caller: store.Caller{UserID: bob}, Project: projName})
		assertExists(t, err, "project", projName, "CreateProject by another user with a name already in use")
		_, err = f.s.CreateCollection(f.ctx, f.path(1))
		assertExists(t, err, "collection", collName, "CreateCollection with an existing name")
		_, err = f.s.CreateCluster(f.ctx, f.path(2))
		assertExists(t, err, "cluster", clusName, "CreateCluster with an existing name")
		_, err = f.s.CreateRecord(f.ctx, f.path(3), &store.Record{Type: store.String, Value: mustValue(t, store.String, `"x"`)}, store.Write{})
		assertExists(t, err, "record", recName, "CreateRecord with an existing name")
		f.assertUnchanged(t, "after failed duplicate creates")
	})

	t.Run("RenameOntoSibling", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		mustProject(t, f.s, owner, "proj2")
		mustProject(t, f.s, bob, "bobs")
		p2 := f.path(1)
		p2.Collection = "coll2"
		mustCollection(t, f.s, p2)
		k2 := f.path(2)
		k2.Cluster = "clus2"
		mustCluster(t, f.s, k2)
		r2 := f.path(3)
		r2.Record = "rec2"
		rec2 := mustRecord(t, f.s, r2, store.String, `"two"`)

		_, err := f.s.RenameProject(f.ctx, f.path(0), "proj2")
		assertExists(t, err, "project", "proj2", "RenameProject onto the owner's other project")
		_, err = f.s.RenameProject(f.ctx, f.path(0), "bobs")
		assertExists(t, err, "project", "bobs", "RenameProject onto another user's project name")
		_, err = f.s.RenameCollection(f.ctx, f.path(1), "coll2")
		assertExists(t, err, "collection", "coll2", "RenameCollection onto a sibling")
		_, err = f.s.RenameCluster(f.ctx, f.path(2), "clus2")
		assertExists(t, err, "cluster", "clus2", "RenameCluster onto a sibling")
		_, err = f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
			r.Name = "rec2"
			r.Value = json.RawMessage("42")
			return nil
		})
		assertExists(t, err, "record", "rec2", "UpdateRecord renaming onto a sibling")

		r, err := f.s.FindRecord(f.ctx, f.path(3))
		if assert.NoError(t, err, "FindRecord after failed rename") {
			assert.Equal(t, viewRecord(f.rec), viewRecord(r), "failed rename changes nothing of the record")
		}
		r, err = f.s.FindRecord(f.ctx, r2)
		if assert.NoError(t, err, "FindRecord of the sibling after failed rename") {
			assert.Equal(t, viewRecord(rec2), viewRecord(r), "failed rename changes nothing of the sibling")
		}
		gp, err := f.s.FindProject(f.ctx, f.path(0))
		if assert.NoError(t, err, "the project keeps its name after a failed rename") {
			assert.Equal(t, f.proj.ID, gp.ID, "the project keeps its id")
			assert.True(t, f.proj.UpdatedAt.Equal(gp.UpdatedAt), "a failed rename does not move the project's UpdatedAt")
		}
		gc, err := f.s.FindCollection(f.ctx, f.path(1))
		if assert.NoError(t, err, "the collection keeps its name after a failed rename") {
			assert.Equal(t, f.coll.ID, gc.ID, "the collection keeps its id")
			assert.True(t, f.coll.UpdatedAt.Equal(gc.UpdatedAt), "a failed rename does not move the collection's UpdatedAt")
		}
		gk, err := f.s.FindCluster(f.ctx, f.path(2), false)
		if assert.NoError(t, err, "the cluster keeps its name after a failed rename") {
			assert.Equal(t, f.clus.ID, gk.ID, "the cluster keeps its id")
			assert.True(t, f.clus.UpdatedAt.Equal(gk.UpdatedAt), "a failed rename does not move the cluster's UpdatedAt")
		}
		for _, name := range []string{"proj2", "bobs"} {
			_, err := f.s.FindProject(f.ctx, store.Path{Project: name})
			assert.NoError(t, err, "project %q is still there", name)
		}
	})

	t.Run("InvalidNames", func(t *testing.T) { testInvalidNames(t, newStore) })

	t.Run("NULNameIsNeverStored", func(t *testing.T) {
		const bad = "bad\x00name"
		for _, tc := range []struct {
			name  string
			level int // of the resource the bad name would name
			do    func(f *fixture) error
		}{
			{"CreateProject", 0, func(f *fixture) error {
				_, err := f.s.CreateProject(f.ctx, store.Path{Caller: store.Caller{UserID: owner}, Project: bad})
				return err
			}},
			{"CreateCollection", 1, func(f *fixture) error {
				_, err := f.s.CreateCollection(f.ctx, setLevel(f.path(1), 1, bad))
				return err
			}},
			{"CreateCluster", 2, func(f *fixture) error {
				_, err := f.s.CreateCluster(f.ctx, setLevel(f.path(2), 2, bad))
				return err
			}},
			{"CreateRecord", 3, func(f *fixture) error {
				_, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, bad), &store.Record{Type: store.Null, Value: json.RawMessage("null")}, store.Write{})
				return err
			}},
			{"RenameProject", 0, func(f *fixture) error {
				_, err := f.s.RenameProject(f.ctx, f.path(0), bad)
				return err
			}},
			{"RenameCollection", 1, func(f *fixture) error {
				_, err := f.s.RenameCollection(f.ctx, f.path(1), bad)
				return err
			}},
			{"RenameCluster", 2, func(f *fixture) error {
				_, err := f.s.RenameCluster(f.ctx, f.path(2), bad)
				return err
			}},
			{"UpdateRecordRename", 3, func(f *fixture) error {
				_, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
					r.Name = bad
					return nil
				})
				return err
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := newFixture(t, newStore(t))
				var ve *store.ValidationError
				assert.ErrorAs(t, tc.do(f), &ve, "%s with a name containing U+0000 is a *store.ValidationError", tc.name)
				p := setLevel(f.path(tc.level), tc.level, bad)
				var err error
				switch tc.level {
				case 0:
					_, err = f.s.FindProject(f.ctx, p)
				case 1:
					_, err = f.s.FindCollection(f.ctx, p)
				case 2:
					_, err = f.s.FindCluster(f.ctx, p, false)
				case 3:
					_, err = f.s.FindRecord(f.ctx, p)
				}
				assertNotFound(t, err, kinds[tc.level], bad, "find the %s whose name contains U+0000 after %s", kinds[tc.level], tc.name)
				f.assertUnchanged(t, "after "+tc.name+" with U+0000 in the name")
			})
		}
	})
}

func testProjects(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CreateFillsFields", func(t *testing.T) {
		s := newStore(t)
		p, err := s.CreateProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "web"})
		require.NoError(t, err, "CreateProject")
		assertID(t, p.ID, "project")
		assert.Equal(t, "web", p.Name, "project Name")
		assert.Equal(t, owner, p.OwnerID, "project OwnerID is Path.Owner")
		assert.Equal(t, 0, p.CollectionCount, "a new project has no collections")
		assertCreateStamps(t, p.CreatedAt, p.UpdatedAt, "project")

		q, err := s.CreateProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "api"})
		require.NoError(t, err, "CreateProject of a second project")
		assert.NotEqual(t, p.ID, q.ID, "two projects have different ids")
	})

	t.Run("FindReturnsWhatCreateReturned", func(t *testing.T) {
		s := newStore(t)
		p := mustProject(t, s, owner, "web")
		for _, who := range []string{owner, ""} {
			got, err := s.FindProject(t.Context(), store.Path{Caller: store.Caller{UserID: who}, Project: "web"})
			if assert.NoError(t, err, "FindProject with Owner %q", who) {
				assert.Equal(t, viewProject(p), viewProject(got), "FindProject with Owner %q returns the created project", who)
			}
		}
	})

	t.Run("NamesAreCaseSensitive", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "web")
		_, err := s.CreateProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "Web"})
		assert.NoError(t, err, "a project name differing only in case is a different name")
		_, err = s.FindProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "WEB"})
		assertNotFound(t, err, "project", "WEB", "FindProject does not fold case")
		_, err = s.CreateProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "caf\u00e9"})
		require.NoError(t, err, "CreateProject café (precomposed)")
		_, err = s.CreateProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "cafe\u0301"})
		assert.NoError(t, err, "names are not Unicode-normalized: café (decomposed) is another name")
	})

	t.Run("CollectionCount", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "web")
		for _, c := range []string{"a", "b", "c"} {
			mustCollection(t, s, store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: c})
		}
		assertProjectCount(t, s, "web", 3, "after three collections")
		require.NoError(t, s.DeleteCollection(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: "b"}), "DeleteCollection")
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
		c := mustCollection(t, s, store.Path{Caller: store.Caller{UserID: owner}, Project: "old", Collection: "c"})
		k := mustCluster(t, s, store.Path{Caller: store.Caller{UserID: owner}, Project: "old", Collection: "c", Cluster: "k"})
		r := mustRecord(t, s, store.Path{Caller: store.Caller{UserID: owner}, Project: "old", Collection: "c", Cluster: "k", Record: "r"}, store.String, `"v"`)
		tick()
		got, err := s.RenameProject(ctx, store.Path{Caller: store.Caller{UserID: owner}, Project: "old"}, "new")
		require.NoError(t, err, "RenameProject")
		assert.Equal(t, p.ID, got.ID, "rename keeps the project id")
		assert.Equal(t, "new", got.Name, "rename returns the new name")
		assert.Equal(t, owner, got.OwnerID, "rename keeps the owner")
		assert.True(t, p.CreatedAt.Equal(got.CreatedAt), "rename keeps CreatedAt")
		assert.True(t, got.UpdatedAt.After(p.UpdatedAt), "rename moves UpdatedAt (%v, was %v)", got.UpdatedAt, p.UpdatedAt)
		assertStamp(t, got.UpdatedAt, "project UpdatedAt after rename")
		assert.Equal(t, 1, got.CollectionCount, "rename keeps the collections")

		found, err := s.FindProject(ctx, store.Path{Caller: store.Caller{UserID: owner}, Project: "new"})
		if assert.NoError(t, err, "FindProject under the new name") {
			assert.Equal(t, viewProject(got), viewProject(found), "FindProject returns what RenameProject returned")
		}
		_, err = s.FindProject(ctx, store.Path{Caller: store.Caller{UserID: owner}, Project: "old"})
		assertNotFound(t, err, "project", "old", "the old name is gone")

		np := store.Path{Caller: store.Caller{UserID: owner}, Project: "new", Collection: "c", Cluster: "k", Record: "r"}
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
		q, err := s.CreateProject(ctx, store.Path{Caller: store.Caller{UserID: bob}, Project: "old"})
		if assert.NoError(t, err, "the old name can be used again") {
			assert.NotEqual(t, p.ID, q.ID, "a new project under the old name has a new id")
		}
	})

	t.Run("RenameToCurrentName", func(t *testing.T) {
		s := newStore(t)
		p := mustProject(t, s, owner, "web")
		mustCollection(t, s, store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: "c"})
		tick()
		got, err := s.RenameProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "web"}, "web")
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
		mustCollection(t, s, store.Path{Caller: store.Caller{UserID: owner}, Project: "other", Collection: collName})
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
		got, err := s.FindProject(ctx, store.Path{Caller: store.Caller{UserID: owner}, Project: "other"})
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
		got, err := s.FindProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "web"})
		require.NoError(t, err, "FindProject")
		assert.Equal(t, want, viewProject(got), "changing the project returned by CreateProject changes nothing")
		got.Name, got.OwnerID = "changed", "changed"
		ps, _, err := s.FindProjects(t.Context(), owner, store.NewListQuery())
		require.NoError(t, err, "FindProjects")
		require.Len(t, ps, 1, "FindProjects")
		assert.Equal(t, want, viewProject(ps[0]), "changing the project returned by FindProject changes nothing")
		ps[0].Name = "changed"
		got, err = s.FindProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "web"})
		require.NoError(t, err, "FindProject")
		assert.Equal(t, want, viewProject(got), "changing a project returned by FindProjects changes nothing")
	})
}

func testCollections(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CreateFillsFields", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "web")
		c, err := s.CreateCollection(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod"})
		require.NoError(t, err, "CreateCollection")
		assertID(t, c.ID, "collection")
		assert.Equal(t, "prod", c.Name, "collection Name")
		assert.Equal(t, "web", c.Project, "collection Project is the project's name")
		assert.Equal(t, 0, c.ClusterCount, "a new collection has no clusters")
		assert.Equal(t, 0, c.RecordCount, "a new collection has no records")
		assertCreateStamps(t, c.CreatedAt, c.UpdatedAt, "collection")
		got, err := s.FindCollection(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod"})
		if assert.NoError(t, err, "FindCollection") {
			assert.Equal(t, viewCollection(c), viewCollection(got), "FindCollection returns the created collection")
		}
	})

	t.Run("SameNameUnderDifferentProjects", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "a")
		mustProject(t, s, owner, "b")
		ca := mustCollection(t, s, store.Path{Caller: store.Caller{UserID: owner}, Project: "a", Collection: "prod"})
		cb, err := s.CreateCollection(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "b", Collection: "prod"})
		require.NoError(t, err, "a collection name may repeat in another project")
		assert.NotEqual(t, ca.ID, cb.ID, "the two collections have different ids")
		assert.Equal(t, "b", cb.Project, "the second collection names its own project")
		_, err = s.CreateCollection(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "a", Collection: "a"})
		assert.NoError(t, err, "a collection may have its project's name")
	})

	t.Run("Counts", func(t *testing.T) {
		s := newStore(t)
		mustProject(t, s, owner, "web")
		base := store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod"}
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
		require.NoError(t, s.DeleteRecord(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod", Cluster: "k3", Record: "r0"}, store.Write{}), "DeleteRecord")
		assertCollectionCounts(t, s, base, 3, 5, "after deleting a record")
		require.NoError(t, s.DeleteCluster(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod", Cluster: "k2"}), "DeleteCluster")
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
		mustCollection(t, s, store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod"})
		p := store.Path{Caller: store.Caller{UserID: owner}, Project: "web", Collection: "prod", Cluster: "db"}
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

// assertID checks that id is a lowercase canonical UUID version 7.
func assertID(t *testing.T, id, what string) {
	t.Helper()
	c, ok := store.CanonicalUUID(id)
	if !assert.True(t, ok, "%s id %q is a UUID", what, id) {
		return
	}
	assert.Equal(t, c, id, "%s id is in lowercase canonical form", what)
	assert.Equal(t, "7", id[14:15], "%s id %q is a version 7 UUID", what, id)
	assert.Contains(t, "89ab", id[19:20], "%s id %q has the RFC 9562 variant", what, id)
}

// assertCreateStamps checks the timestamps of a resource just created.
func assertCreateStamps(t *testing.T, created, updated time.Time, what string) {
	t.Helper()
	assertStamp(t, created, what+" CreatedAt")
	assertStamp(t, updated, what+" UpdatedAt")
	assert.True(t, created.Equal(updated), "%s: CreatedAt (%v) equals UpdatedAt (%v) on create", what, created, updated)
}

// assertStamp checks that ts is a current time, in UTC, truncated to
// microseconds.
func assertStamp(t *testing.T, ts time.Time, what string) {
	t.Helper()
	assert.False(t, ts.IsZero(), "%s is set", what)
	assert.True(t, ts.Location() == time.UTC, "%s (%v) is in UTC", what, ts)
	assert.True(t, ts.Equal(ts.Truncate(time.Microsecond)), "%s (%v) is truncated to microseconds", what, ts)
	assert.WithinDuration(t, time.Now(), ts, time.Minute, "%s is the current time", what)
}

// assertNotFound checks that err is ErrNotFound, as a *store.NotFoundError
// naming kind and name.
func assertNotFound(t *testing.T, err error, kind, name string, msgAndArgs ...any) {
	t.Helper()
	msg := message(msgAndArgs)
	if !assert.ErrorIs(t, err, store.ErrNotFound, "%s: want ErrNotFound", msg) {
		return
	}
	var nf *store.NotFoundError
	if assert.ErrorAs(t, err, &nf, "%s: want a *store.NotFoundError", msg) {
		assert.Equal(t, kind, nf.Kind, "%s: NotFoundError.Kind names the first missing level", msg)
		assert.Equal(t, name, nf.Name, "%s: NotFoundError.Name", msg)
	}
}

// assertExists checks that err is ErrAlreadyExists, as a
// *store.ExistsError naming kind and name.
func assertExists(t *testing.T, err error, kind, name string, msgAndArgs ...any) {
	t.Helper()
	msg := message(msgAndArgs)
	if !assert.ErrorIs(t, err, store.ErrAlreadyExists, "%s: want ErrAlreadyExists", msg) {
		return
	}
	var ee *store.ExistsError
	if assert.ErrorAs(t, err, &ee, "%s: want a *store.ExistsError", msg) {
		assert.Equal(t, kind, ee.Kind, "%s: ExistsError.Kind", msg)
		assert.Equal(t, name, ee.Name, "%s: ExistsError.Name is the taken name", msg)
	}
}

func message(msgAndArgs []any) string {
	if len(msgAndArgs) == 0 {
		return ""
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return fmt.Sprint(msgAndArgs...)
}

func assertProjectCount(t *testing.T, s store.Store, name string, collections int, msg string) {
	t.Helper()
	p, err := s.FindProject(t.Context(), store.Path{Caller: store.Caller{UserID: owner}, Project: name})
	if assert.NoError(t, err, "%s: FindProject", msg) {
		assert.Equal(t, collections, p.CollectionCount, "%s: CollectionCount", msg)
	}
}

func assertCollectionCounts(t *testing.T, s store.Store, p store.Path, clusters, records int, msg string) {
	t.Helper()
	c, err := s.FindCollection(t.Context(), p)
	if assert.NoError(t, err, "%s: FindCollection", msg) {
		assert.Equal(t, clusters, c.ClusterCount, "%s: ClusterCount", msg)
		assert.Equal(t, records, c.RecordCount, "%s: RecordCount counts the records of every cluster", msg)
	}
}

// tick returns once the clock has moved two microseconds (stores keep
// microseconds, and PostgreSQL rounds rather than truncates): a write
// after tick has a later timestamp than every write before it. It
// watches the clock rather than sleeping a guess.
func tick() {
	until := time.Now().Truncate(time.Microsecond).Add(2 * time.Microsecond)
	for time.Now().Before(until) {
		runtime.Gosched()
	}
}

func mustValue(t *testing.T, typ store.DataType, js string) json.RawMessage {
	t.Helper()
	v, err := typ.ParseJSON([]byte(js))
	require.NoError(t, err, "%s.ParseJSON(%s)", typ, js)
	return v
}

func mustProject(t *testing.T, s store.Store, who, name string) *store.Project {
	t.Helper()
	p, err := s.CreateProject(t.Context(), store.Path{Caller: store.Caller{UserID: who}, Project: name})
	require.NoError(t, err, "CreateProject %q", name)
	return p
}

func mustCollection(t *testing.T, s store.Store, p store.Path) *store.Collection {
	t.Helper()
	c, err := s.CreateCollection(t.Context(), p)
	require.NoError(t, err, "CreateCollection %q/%q", p.Project, p.Collection)
	return c
}

func mustCluster(t *testing.T, s store.Store, p store.Path) *store.Cluster {
	t.Helper()
	c, err := s.CreateCluster(t.Context(), p)
	require.NoError(t, err, "CreateCluster %q/%q/%q", p.Project, p.Collection, p.Cluster)
	return c
}

// mustRecord creates the record p.Record of type typ with the JSON value
// js (made canonical with typ.ParseJSON).
func mustRecord(t *testing.T, s store.Store, p store.Path, typ store.DataType, js string) *store.Record {
	t.Helper()
	r, err := s.CreateRecord(t.Context(), p, &store.Record{Type: typ, Value: mustValue(t, typ, js)}, store.Write{})
	require.NoError(t, err, "CreateRecord %q/%q/%q/%q", p.Project, p.Collection, p.Cluster, p.Record)
	return r
}

// Views of the domain types, comparable with assert.Equal whatever the
// time.Time values' locations or monotonic readings.

type projectView struct {
	ID, Name, OwnerID, CreatedAt, UpdatedAt string
	CollectionCount                         int
}

func viewProject(p *store.Project) projectView {
	if p == nil {
		return projectView{}
	}
	return projectView{p.ID, p.Name, p.OwnerID, stamp(p.CreatedAt), stamp(p.UpdatedAt), p.CollectionCount}
}

type collectionView struct {
	ID, Name, Project, CreatedAt, UpdatedAt string
	ClusterCount, RecordCount               int
}

func viewCollection(c *store.Collection) collectionView {
	if c == nil {
		return collectionView{}
	}
	return collectionView{c.ID, c.Name, c.Project, stamp(c.CreatedAt), stamp(c.UpdatedAt), c.ClusterCount, c.RecordCount}
}

type clusterView struct {
	ID, Name, Project, Collection, CreatedAt, UpdatedAt string
	RecordCount                                         int
	Records                                             []recordView
}

func viewCluster(c *store.Cluster) clusterView {
	if c == nil {
		return clusterView{}
	}
	v := clusterView{c.ID, c.Name, c.Project, c.Collection, stamp(c.CreatedAt), stamp(c.UpdatedAt), c.RecordCount, nil}
	for _, r := range c.Records {
		v.Records = append(v.Records, viewRecord(r))
	}
	return v
}

type recordView struct {
	ID, Name             string
	Type                 store.DataType
	Value                string
	Version              int64
	CreatedAt, UpdatedAt string
	UpdatedBy            string
}

func viewRecord(r *store.Record) recordView {
	if r == nil {
		return recordView{}
	}
	return recordView{r.ID, r.Name, r.Type, string(r.Value), r.Version, stamp(r.CreatedAt), stamp(r.UpdatedAt), r.UpdatedBy}
}

func stamp(ts time.Time) string { return ts.UTC().Format(time.RFC3339Nano) }

func projectNames(ps []*store.Project) []string {
	names := []string{}
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

func recordNames(rs []*store.Record) []string {
	names := []string{}
	for _, r := range rs {
		names = append(names, r.Name)
	}
	return names
}

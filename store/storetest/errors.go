package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/store"
)

// pathOp is one Store method that takes a Path, reduced to its error.
type pathOp struct {
	name string
	// level is the deepest Path field the method reads: 0 project,
	// 1 collection, 2 cluster, 3 record.
	level int
	// create is true when the method creates the resource at level, so
	// that only the levels above it must exist.
	create bool
	do     opFunc
}

// opFunc is the do of a pathOp.
type opFunc = func(ctx context.Context, s store.Store, p store.Path) error

// result is the pathOp of a method that returns a value and an error.
func result[T any](m func(store.Store, context.Context, store.Path) (T, error)) opFunc {
	return func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := m(s, ctx, p)
		return err
	}
}

// errorOf is the pathOp of a method that returns an error alone.
func errorOf(m func(store.Store, context.Context, store.Path) error) opFunc {
	return func(ctx context.Context, s store.Store, p store.Path) error { return m(s, ctx, p) }
}

// listOf is the pathOp of a list method, with the default query.
func listOf[T any](m func(store.Store, context.Context, store.Path, store.ListQuery) ([]T, int, error)) opFunc {
	return func(ctx context.Context, s store.Store, p store.Path) error {
		_, _, err := m(s, ctx, p, store.NewListQuery())
		return err
	}
}

// renameOf is the pathOp of a rename method, to "renamed".
func renameOf[T any](m func(store.Store, context.Context, store.Path, string) (T, error)) opFunc {
	return func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := m(s, ctx, p, "renamed")
		return err
	}
}

var pathOps = []pathOp{
	{"FindProject", 0, false, result(store.Store.FindProject)},
	{"RenameProject", 0, false, renameOf(store.Store.RenameProject)},
	{"DeleteProject", 0, false, errorOf(store.Store.DeleteProject)},
	{"FindCollections", 0, false, listOf(store.Store.FindCollections)},
	{"CreateCollection", 1, true, result(store.Store.CreateCollection)},
	{"FindCollection", 1, false, result(store.Store.FindCollection)},
	{"RenameCollection", 1, false, renameOf(store.Store.RenameCollection)},
	{"DeleteCollection", 1, false, errorOf(store.Store.DeleteCollection)},
	{"FindClusters", 1, false, listOf(store.Store.FindClusters)},
	{"CreateCluster", 2, true, result(store.Store.CreateCluster)},
	{"FindCluster", 2, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.FindCluster(ctx, p, false)
		return err
	}},
	{"FindClusterWithRecords", 2, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.FindCluster(ctx, p, true)
		return err
	}},
	{"RenameCluster", 2, false, renameOf(store.Store.RenameCluster)},
	{"DeleteCluster", 2, false, errorOf(store.Store.DeleteCluster)},
	{"FindRecords", 2, false, func(ctx context.Context, s store.Store, p store.Path) error {
		_, _, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: store.NewListQuery()})
		return err
	}},
	{"CreateRecord", 3, true, func(ctx context.Context, s store.Store, p store.Path) error {
		_, err := s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("2")}, store.Write{})
		return err
	}},
	{"FindRecord", 3, false, result(store.Store.FindRecord)},
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
		_, err := f.s.CreateProject(f.ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName})
		assertExists(t, err, "project", projName, "CreateProject with the owner's existing name")
		_, err = f.s.CreateProject(f.ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: bob}, Project: projName})
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
				_, err := f.s.CreateProject(f.ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: bad})
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

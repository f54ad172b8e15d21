package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/store"
)

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
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName}
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

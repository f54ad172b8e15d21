package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// The rules of store.Comparer (docs/api.md#compare-and-promote) and of
// Batch.IfRevision. Every comparison runs twice: through the store's own
// CompareRecords, and through store.Compare's fallback on ExportProject
// (the store hidden behind a type without CompareRecords), which must
// agree.

// exportOnly hides every optional capability of a store, Comparer
// included.
type exportOnly struct{ store.Store }

// comparers are the ways a comparison is run on s.
func comparers(s store.Store) map[string]func(ctx context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
	return map[string]func(context.Context, store.Path, store.Side, store.Side, func(store.Pair) error) error{
		"Comparer": func(ctx context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
			c, ok := s.(store.Comparer)
			if !ok {
				return errors.New("the store does not implement store.Comparer")
			}
			return c.CompareRecords(ctx, p, from, to, visit)
		},
		"Fallback": func(ctx context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
			return store.Compare(ctx, exportOnly{s}, p, from, to, visit)
		},
	}
}

// paired is one Pair as a line: "cluster/name a=TYPE:value b=TYPE:value",
// "-" for a side that lacks the record.
func paired(pr store.Pair) string {
	side := func(r *store.Record) string {
		if r == nil {
			return "-"
		}
		return string(r.Type) + ":" + string(r.Value)
	}
	return pr.Cluster + "/" + pr.Name + " " + side(pr.From) + " " + side(pr.To)
}

// compareFixture makes the project of the comparisons: collections
// staging and prod, and a third collection empty.
func compareFixture(t *testing.T, s store.Store) store.Path {
	t.Helper()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName}
	mustProject(t, s, owner, projName)
	at := func(c, k, r string) store.Path {
		q := p
		q.Collection, q.Cluster, q.Record = c, k, r
		return q
	}
	for _, c := range []string{"staging", "prod", "empty"} {
		mustCollection(t, s, at(c, "", ""))
	}
	for _, ck := range [][2]string{{"staging", "web"}, {"staging", "api"}, {"staging", "void"}, {"prod", "web"}, {"prod", "db"}, {"prod", "web2"}} {
		mustCluster(t, s, at(ck[0], ck[1], ""))
	}
	for _, r := range []struct{ c, k, name, typ, value string }{
		{"staging", "web", "host", "STRING", `"s.example"`},
		{"staging", "web", "port", "INTEGER", `80`},
		{"staging", "web", "B", "BOOLEAN", `true`},
		{"staging", "web", "é", "NULL", `null`},
		{"staging", "web", "same", "STRING", `"x"`},
		{"staging", "api", "key", "INTEGER", `1`},
		{"prod", "web", "host", "STRING", `"p.example"`},
		{"prod", "web", "port", "STRING", `"80"`},
		{"prod", "web", "same", "STRING", `"x"`},
		{"prod", "web", "extra", "NULL", `null`},
		{"prod", "db", "url", "STRING", `"pg"`},
		{"prod", "web2", "host", "STRING", `"p2"`},
	} {
		mustRecord(t, s, at(r.c, r.k, r.name), store.DataType(r.typ), r.value)
	}
	return p
}

func testComparisons(t *testing.T, newStore func(t *testing.T) store.Store) {
	for name, how := range map[string]string{"Comparer": "Comparer", "Fallback": "Fallback"} {
		t.Run(name, func(t *testing.T) {
			testCompare(t, newStore, how)
		})
	}
	t.Run("IfRevision", func(t *testing.T) { testIfRevision(t, newStore) })
	t.Run("RevealChangesNothing", func(t *testing.T) { testRevealChangesNothing(t, newStore) })
}

func testCompare(t *testing.T, newStore func(t *testing.T) store.Store, how string) {
	collect := func(t *testing.T, s store.Store, p store.Path, from, to store.Side) (int64, []string) {
		t.Helper()
		var revision int64
		var got []string
		first := true
		err := comparers(s)[how](t.Context(), p, from, to, func(pr store.Pair) error {
			if first {
				first = false
				assert.Equal(t, "/ - -", paired(pr), "the first pair holds the revision alone")
				revision = pr.Revision
				return nil
			}
			assert.Zero(t, pr.Revision, "only the first pair holds the revision")
			got = append(got, paired(pr))
			return nil
		})
		require.NoError(t, err, "compare %s with %s", from, to)
		return revision, got
	}

	t.Run("Collections", func(t *testing.T) {
		s := newStore(t)
		p := compareFixture(t, s)
		proj, err := s.FindProject(t.Context(), p)
		require.NoError(t, err)
		revision, got := collect(t, s, p, store.Side{Collection: "staging"}, store.Side{Collection: "prod"})
		assert.Equal(t, proj.Revision, revision, "the snapshot's revision is the project's newest")
		assert.Equal(t, []string{
			"api/key INTEGER:1 -",
			`db/url - STRING:"pg"`,
			"web/B BOOLEAN:true -",
			"web/extra - NULL:null",
			`web/host STRING:"s.example" STRING:"p.example"`,
			`web/port INTEGER:80 STRING:"80"`,
			`web/same STRING:"x" STRING:"x"`,
			"web/é NULL:null -",
			`web2/host - STRING:"p2"`,
		}, got, "clusters paired by name, every record of either side, by cluster then name, byte-wise; empty clusters add nothing")
		_, got = collect(t, s, p, store.Side{Collection: "prod"}, store.Side{Collection: "empty"})
		assert.Len(t, got, 6, "a collection compared with an empty one: every record on one side")
	})

	t.Run("Clusters", func(t *testing.T) {
		s := newStore(t)
		p := compareFixture(t, s)
		_, got := collect(t, s, p, store.Side{Collection: "staging", Cluster: "web"}, store.Side{Collection: "prod", Cluster: "web2"})
		assert.Equal(t, []string{
			"web/B BOOLEAN:true -",
			`web/host STRING:"s.example" STRING:"p2"`,
			`web/port INTEGER:80 -`,
			`web/same STRING:"x" -`,
			"web/é NULL:null -",
		}, got, "two clusters of other names: records paired by name, each pair naming the from side's cluster")
		_, got = collect(t, s, p, store.Side{Collection: "prod", Cluster: "web2"}, store.Side{Collection: "staging", Cluster: "void"})
		assert.Equal(t, []string{`web2/host STRING:"p2" -`}, got, "an empty cluster on the to side")
	})

	t.Run("Records", func(t *testing.T) {
		s := newStore(t)
		p := compareFixture(t, s)
		want, err := s.FindRecord(t.Context(), store.Path{Need: store.RightRead, Caller: p.Caller, Project: projName, Collection: "prod", Cluster: "web", Record: "host"})
		require.NoError(t, err)
		var got *store.Record
		err = comparers(s)[how](t.Context(), p, store.Side{Collection: "staging", Cluster: "web"}, store.Side{Collection: "prod", Cluster: "web"},
			func(pr store.Pair) error {
				if pr.Name == "host" {
					got = pr.To
				}
				return nil
			})
		require.NoError(t, err)
		if assert.NotNil(t, got, "host on the to side") {
			assert.Equal(t, viewRecord(want), viewRecord(got), "the record as FindRecord has it")
		}
	})

	t.Run("Snapshot", func(t *testing.T) {
		s := newStore(t)
		p := compareFixture(t, s)
		var got []string
		first := true
		err := comparers(s)[how](t.Context(), p, store.Side{Collection: "staging", Cluster: "api"}, store.Side{Collection: "prod", Cluster: "db"},
			func(pr store.Pair) error {
				if first {
					first = false
					// A write that commits after the snapshot began.
					mustRecord(t, s, store.Path{Need: store.RightRead, Caller: p.Caller, Project: projName, Collection: "staging", Cluster: "api", Record: "late"}, store.Integer, "2")
					return nil
				}
				got = append(got, paired(pr))
				return nil
			})
		require.NoError(t, err)
		assert.Equal(t, []string{"api/key INTEGER:1 -", `api/url - STRING:"pg"`}, got, "a write committed during the walk is not seen")
	})

	t.Run("Errors", func(t *testing.T) {
		s := newStore(t)
		p := compareFixture(t, s)
		compare := comparers(s)[how]
		calls := 0
		visit := func(store.Pair) error { calls++; return nil }
		side := func(c, k string) store.Side { return store.Side{Collection: c, Cluster: k} }
		missing := p
		missing.Project = "missing"
		assertNotFound(t, compare(t.Context(), missing, side("staging", ""), side("prod", ""), visit), "project", "missing", "a missing project")
		other := p
		other.Caller = store.Caller{UserID: stranger}
		assert.ErrorIs(t, compare(t.Context(), other, side("staging", ""), side("prod", ""), visit), store.ErrPermissionDenied, "someone else's project")
		assertNotFound(t, compare(t.Context(), p, side("nope", ""), side("gone", ""), visit), "collection", "nope", "from's collection first")
		assertNotFound(t, compare(t.Context(), p, side("staging", ""), side("gone", ""), visit), "collection", "gone", "to's collection")
		assertNotFound(t, compare(t.Context(), p, side("staging", "nope"), side("prod", "gone"), visit), "cluster", "nope", "from's cluster first")
		assertNotFound(t, compare(t.Context(), p, side("staging", "web"), side("prod", "gone"), visit), "cluster", "gone", "to's cluster")
		assertNotFound(t, compare(t.Context(), p, side("staging", "web"), side("gone", "web"), visit), "collection", "gone", "to's collection of a cluster")
		assert.Zero(t, calls, "no visit on error")
		err := compare(t.Context(), p, side("staging", ""), side("prod", ""), func(pr store.Pair) error {
			calls++
			if calls == 2 {
				return errBoom
			}
			return nil
		})
		assert.Same(t, errBoom, err, "visit's error, unchanged")
		assert.Equal(t, 2, calls, "the walk stops at visit's error")
	})
}

func testIfRevision(t *testing.T, newStore func(t *testing.T) store.Store) {
	f := newFixture(t, newStore(t))
	proj, err := f.s.FindProject(f.ctx, f.path(0))
	require.NoError(t, err)
	stale := proj.Revision
	_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Ops: []store.Op{createOp("a", 1)}, Write: keepHistory, IfRevision: stale})
	require.NoError(t, err, "a batch on the current revision applies")
	assert.Equal(t, "1", f.recordValue(t, "a"), "applied")
	for _, dry := range []bool{false, true} {
		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Ops: []store.Op{createOp("b", 2)}, Write: keepHistory, IfRevision: stale, DryRun: dry})
		var re *store.RevisionError
		if assert.ErrorAs(t, err, &re, "dry run %v: a stale revision is a *store.RevisionError", dry) {
			assert.Equal(t, stale+1, re.Revision, "it names the current revision")
			assert.Equal(t, "current revision is "+jsonInt(stale+1), re.Error(), "message")
		}
		assert.ErrorIs(t, err, store.ErrPreconditionFailed, "it matches ErrPreconditionFailed")
		var oe *store.OpError
		assert.False(t, errors.As(err, &oe), "not the error of an op")
		assert.Empty(t, f.recordValue(t, "b"), "nothing changed")
	}
	_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Ops: []store.Op{createOp("c", 3)}, Write: keepHistory})
	assert.NoError(t, err, "IfRevision 0: no condition")
}

// testRevealChangesNothing: a credential.reveal entry moves the project's
// revision, but neither a comparison's revision nor what IfRevision is
// checked against (API.md section 22, v1.3): a person who reviewed a
// comparison can promote it after someone else revealed a credential.
func testRevealChangesNothing(t *testing.T, newStore func(t *testing.T) store.Store) {
	f := newFixture(t, newStore(t))
	al, ok := f.s.(store.AuditLog)
	require.True(t, ok, "the store implements store.AuditLog")
	mustCluster(t, f.s, setLevel(f.path(2), 2, "other"))
	from, to := store.Side{Collection: collName, Cluster: clusName}, store.Side{Collection: collName, Cluster: "other"}
	revisions := func(what string) map[string]int64 {
		t.Helper()
		out := map[string]int64{}
		for how, compare := range comparers(f.s) {
			err := compare(f.ctx, f.path(0), from, to, func(pr store.Pair) error {
				out[how] = pr.Revision
				return errFirstPair
			})
			require.ErrorIs(t, err, errFirstPair, "%s: compare %s", how, what)
		}
		return out
	}
	projectRevision := func() int64 {
		t.Helper()
		proj, err := f.s.FindProject(f.ctx, f.path(0))
		require.NoError(t, err)
		return proj.Revision
	}
	reveal := func() {
		t.Helper()
		before := projectRevision()
		require.NoError(t, al.RecordReveal(f.ctx, f.path(2), nil), "RecordReveal")
		require.Equal(t, before+1, projectRevision(), "a reveal takes a revision")
	}

	reviewed := projectRevision()
	both := func(n int64) map[string]int64 { return map[string]int64{"Comparer": n, "Fallback": n} }
	assert.Equal(t, both(reviewed), revisions("before the reveal"), "with no reveal, the comparison's revision is the project's")
	reveal()
	reveal()
	assert.Equal(t, both(reviewed), revisions("after two reveals"), "a reveal does not move the comparison's revision")

	for _, dry := range []bool{true, false} {
		_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Ops: []store.Op{createOp("a", 1)}, Write: keepHistory, IfRevision: reviewed, DryRun: dry})
		require.NoError(t, err, "dry run %v: IfRevision of the comparison applies after reveals", dry)
	}
	assert.Equal(t, "1", f.recordValue(t, "a"), "applied")
	changed := projectRevision()
	assert.Equal(t, both(changed), revisions("after a change"), "a change moves the comparison's revision")

	reveal()
	for _, dry := range []bool{true, false} {
		_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Ops: []store.Op{createOp("b", 2)}, Write: keepHistory, IfRevision: reviewed, DryRun: dry})
		var re *store.RevisionError
		if assert.ErrorAs(t, err, &re, "dry run %v: a change made the revision stale", dry) {
			assert.Equal(t, changed, re.Revision, "it names the newest revision that changes something, not the reveal's")
			assert.Equal(t, "current revision is "+jsonInt(changed), re.Error(), "message")
		}
	}
	assert.Empty(t, f.recordValue(t, "b"), "nothing changed")
	_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Ops: []store.Op{createOp("b", 2)}, Write: keepHistory, IfRevision: changed})
	require.NoError(t, err, "the revision it names applies, the reveal after it notwithstanding")
	assert.Equal(t, "2", f.recordValue(t, "b"), "applied")
}

// errFirstPair ends a comparison at its first Pair, the revision.
var errFirstPair = errors.New("first pair")

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

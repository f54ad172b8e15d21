package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// RunQuotas runs the conformance suite of store.Quotas
// (docs/api.md#limits-rate-limits-and-quotas):
// every quota at its boundary, writes refused with a *store.QuotaError that
// change nothing, space given back by deletes, and concurrent writes at
// the boundary (exactly the allowed number succeed). newStore must return
// a fresh, empty store that enforces q.Effective() (WithQuotas or
// SetQuotas of the store applies it).
func RunQuotas(t *testing.T, newStore func(t *testing.T, q store.Quotas) store.Store) {
	t.Run("RecordsPerCluster", func(t *testing.T) {
		s := newStore(t, store.Quotas{MaxRecordsPerCluster: 3})
		f := &fixture{s: s, ctx: t.Context()}
		f.proj = mustProject(t, s, owner, projName)
		f.coll = mustCollection(t, s, f.path(1))
		f.clus = mustCluster(t, s, f.path(2))
		other := mustCluster(t, s, setLevel(f.path(2), 2, "other"))
		for i := range 3 {
			mustRecord(t, s, setLevel(f.path(3), 3, fmt.Sprint("r", i)), store.Integer, "1")
		}
		_, err := s.CreateRecord(f.ctx, setLevel(f.path(3), 3, "r3"), &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
		assertQuota(t, err, store.QuotaRecordsPerCluster, 3, "the 4th record of a cluster")
		_, err = s.CreateRecord(f.ctx, setLevel(f.path(3), 3, "r0"), &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
		assertExists(t, err, "record", "r0", "a taken name at the quota is ErrAlreadyExists first")
		_, err = s.FindRecord(f.ctx, setLevel(f.path(3), 3, "r3"))
		assert.ErrorIs(t, err, store.ErrNotFound, "the refused record was not created")
		mustRecord(t, s, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: collName, Cluster: other.Name, Record: "r0"}, store.Integer, "1")
		require.NoError(t, s.DeleteRecord(f.ctx, setLevel(f.path(3), 3, "r0"), store.Write{}))
		mustRecord(t, s, setLevel(f.path(3), 3, "r3"), store.Integer, "1")
	})

	t.Run("ProjectsPerUser", func(t *testing.T) {
		s := newStore(t, store.Quotas{MaxProjectsPerUser: 2})
		mustProject(t, s, owner, "a")
		mustProject(t, s, owner, "b")
		_, err := s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "c"})
		assertQuota(t, err, store.QuotaProjectsPerUser, 2, "a 3rd project")
		_, err = s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "a"})
		assertExists(t, err, "project", "a", "a taken name at the quota is ErrAlreadyExists first")
		_, err = s.FindProject(t.Context(), store.Path{Project: "c"})
		assert.ErrorIs(t, err, store.ErrNotFound, "the refused project was not created")
		mustProject(t, s, bob, "c") // another owner
		require.NoError(t, s.DeleteProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "a"}))
		mustProject(t, s, owner, "d")
	})

	t.Run("BytesPerProject", func(t *testing.T) {
		// The project counts names of collections, clusters and records,
		// values as stored, and kept versions.
		s := newStore(t, store.Quotas{MaxBytesPerProject: 100})
		ctx := t.Context()
		base := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "c1", Cluster: "k1"}
		mustProject(t, s, owner, projName)
		mustCollection(t, s, base) // 2
		mustCluster(t, s, base)    // 4
		rec := base
		rec.Record = "r"
		big := `"` + strings.Repeat("x", 90) + `"`
		mustRecord(t, s, rec, store.String, big) // 1 + 92: 97
		s1 := base
		s1.Record = "s"
		_, err := s.CreateRecord(ctx, s1, &store.Record{Type: store.String, Value: json.RawMessage(`"ab"`)}, store.Write{})
		assertQuota(t, err, store.QuotaBytesPerProject, 100, "a record of 5 bytes onto 97")
		mustRecord(t, s, s1, store.Integer, "12") // 3: 100, exactly the quota

		// An update that keeps the old state in the history grows by the
		// new state; one that keeps no history by the difference.
		_, err = s.UpdateRecord(ctx, s1, store.Write{MaxVersions: 10}, func(r *store.Record) error {
			r.Value = json.RawMessage("1")
			return nil
		})
		assertQuota(t, err, store.QuotaBytesPerProject, 100, "an update whose old state joins the history")
		got, err := s.FindRecord(ctx, s1)
		require.NoError(t, err)
		assert.Equal(t, "12", string(got.Value), "the refused update changed nothing")
		assert.Equal(t, int64(1), got.Version, "the refused update changed nothing")
		_, err = s.UpdateRecord(ctx, s1, store.Write{}, func(r *store.Record) error {
			r.Value = json.RawMessage("1")
			return nil
		})
		require.NoError(t, err, "a shrinking update without history") // 99
		_, err = s.RenameCollection(ctx, base, "c12")
		require.NoError(t, err, "a rename to 1 byte more") // 100
		base.Collection, rec.Collection, s1.Collection = "c12", "c12", "c12"
		_, err = s.RenameCluster(ctx, base, "k12")
		assertQuota(t, err, store.QuotaBytesPerProject, 100, "a rename of the cluster to 1 byte more")
		_, err = s.CreateCluster(ctx, setLevel(base, 2, "k"))
		assertQuota(t, err, store.QuotaBytesPerProject, 100, "a new cluster")
		_, err = s.CreateCollection(ctx, setLevel(base, 1, "c"))
		assertQuota(t, err, store.QuotaBytesPerProject, 100, "a new collection")
		_, err = s.UpdateRecord(ctx, rec, store.Write{}, func(r *store.Record) error {
			r.Name = "rr"
			return nil
		})
		assertQuota(t, err, store.QuotaBytesPerProject, 100, "a record rename to 1 byte more")

		// Deletes give the space back.
		require.NoError(t, s.DeleteRecord(ctx, rec, store.Write{})) // 7
		mustRecord(t, s, rec, store.String, big)                    // 100
		require.NoError(t, s.DeleteCluster(ctx, base))              // 3
		mustCluster(t, s, base)                                     // 6
		mustRecord(t, s, rec, store.String, big)                    // 99
		require.NoError(t, s.DeleteCollection(ctx, base))           // 0
		mustCollection(t, s, base)
		mustCluster(t, s, base)
		mustRecord(t, s, rec, store.String, big) // 99
		// Another project has its own count.
		mustProject(t, s, owner, "other")
		other := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "other", Collection: "c12", Cluster: "k12", Record: "r"}
		mustCollection(t, s, other)
		mustCluster(t, s, other)
		mustRecord(t, s, other, store.String, big)
	})

	t.Run("UnlimitedMeansNone", func(t *testing.T) {
		s := newStore(t, store.NoQuotas)
		f := newFixture(t, s)
		for i := range 5 {
			mustProject(t, s, owner, fmt.Sprint("p", i))
			mustRecord(t, s, setLevel(f.path(3), 3, fmt.Sprint("r", i)), store.String, `"`+strings.Repeat("z", 1000)+`"`)
		}
	})

	// store.Unlimited lifts only its own bound: with records per cluster
	// unlimited, projects per user at 2 and the bytes quota left 0 (its
	// default, store.Quotas.Effective; store/quota_test.go), records
	// pass and the 3rd project is refused.
	t.Run("UnlimitedLiftsOnlyItsBound", func(t *testing.T) {
		s := newStore(t, store.Quotas{MaxRecordsPerCluster: store.Unlimited, MaxProjectsPerUser: 2})
		f := newFixture(t, s)
		for i := range 5 {
			mustRecord(t, s, setLevel(f.path(3), 3, fmt.Sprint("r", i)), store.String, `"`+strings.Repeat("z", 1000)+`"`)
		}
		mustProject(t, s, owner, "second")
		_, err := s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "third"})
		assertQuota(t, err, store.QuotaProjectsPerUser, 2, "a 3rd project at MaxProjectsPerUser 2")
	})

	t.Run("ConcurrentAtBoundary", func(t *testing.T) {
		s := newStore(t, store.Quotas{MaxRecordsPerCluster: 5, MaxProjectsPerUser: 3, MaxBytesPerProject: 2 + 2 + 4*(3+10)})
		ctx := t.Context()
		const n = 12
		count := func(f func(i int) error) (ok, refused int) {
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { errs[i] = f(i) })
			}
			wg.Wait()
			for i, err := range errs {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, store.ErrQuotaExceeded):
					refused++
				default:
					t.Errorf("write %d: %v", i, err)
				}
			}
			return ok, refused
		}
		ok, refused := count(func(i int) error {
			_, err := s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: fmt.Sprint("p", i)})
			return err
		})
		assert.Equal(t, 3, ok, "concurrent projects created at the quota of 3")
		assert.Equal(t, n-3, refused, "concurrent projects refused")

		// Bytes: "c0" + "k0" + records of 3-byte names and 10-byte values:
		// room for exactly 4 of them.
		p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "p0", Collection: "c0", Cluster: "k0"}
		_, err := s.FindProject(ctx, store.Path{Project: "p0"})
		if err != nil { // p0 may have lost: use a project that won
			for i := range n {
				if _, err := s.FindProject(ctx, store.Path{Project: fmt.Sprint("p", i)}); err == nil {
					p.Project = fmt.Sprint("p", i)
					break
				}
			}
		}
		mustCollection(t, s, p)
		mustCluster(t, s, p)
		ok, refused = count(func(i int) error {
			r := p
			r.Record = fmt.Sprintf("b%02d", i)
			_, err := s.CreateRecord(ctx, r, &store.Record{Type: store.String, Value: json.RawMessage(`"12345678"`)}, store.Write{})
			return err
		})
		assert.Equal(t, 4, ok, "concurrent records created at the byte quota")
		assert.Equal(t, n-4, refused, "concurrent records refused by the byte quota")

		// Records, in a store without the other quotas.
		s2 := newStore(t, store.Quotas{MaxRecordsPerCluster: 5})
		q := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "q", Collection: "c", Cluster: "k"}
		mustProject(t, s2, owner, q.Project)
		mustCollection(t, s2, q)
		mustCluster(t, s2, q)
		ok, refused = count(func(i int) error {
			r := q
			r.Record = fmt.Sprint("r", i)
			_, err := s2.CreateRecord(ctx, r, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
			return err
		})
		assert.Equal(t, 5, ok, "concurrent records created at the quota of 5")
		assert.Equal(t, n-5, refused, "concurrent records refused")
	})

	testBatchQuotas(t, newStore)
	t.Run("BytesAfterRaces", func(t *testing.T) { testBytesAfterRaces(t, newStore) })

	t.Run("ProjectsPerUserOnTransfer", func(t *testing.T) { testTransferQuota(t, newStore) })

	t.Run("SetQuotas", func(t *testing.T) {
		s := newStore(t, store.NoQuotas)
		qs, ok := s.(store.QuotaSetter)
		if !ok {
			return // the quotas come from the constructor only
		}
		mustProject(t, s, owner, "a")
		qs.SetQuotas(store.Quotas{MaxProjectsPerUser: 1})
		_, err := s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "b"})
		assertQuota(t, err, store.QuotaProjectsPerUser, 1, "after SetQuotas")
	})
}

// assertQuota checks that err is the *store.QuotaError of quota at limit.
func assertQuota(t *testing.T, err error, quota string, limit int64, what string) {
	t.Helper()
	var qe *store.QuotaError
	if assert.ErrorAs(t, err, &qe, "%s: want a *store.QuotaError", what) {
		assert.ErrorIs(t, err, store.ErrQuotaExceeded, what)
		assert.Equal(t, quota, qe.Quota, "%s: the quota", what)
		assert.Equal(t, limit, qe.Limit, "%s: the limit", what)
	}
}

// testBatchQuotas checks the quotas inside Store.Apply
// (docs/api.md#limits-rate-limits-and-quotas and
// docs/api.md#batch-export-and-import): a batch whose op would pass one
// fails as a whole with a *store.OpError of that op wrapping the
// *store.QuotaError and changes nothing, and the project's byte count stays
// exact through batches that create, update and delete records, clusters
// and collections, fail or only try (dry run).
func testBatchQuotas(t *testing.T, newStore func(t *testing.T, q store.Quotas) store.Store) {
	t.Run("BatchRecordsPerCluster", func(t *testing.T) {
		s := newStore(t, store.Quotas{MaxRecordsPerCluster: 3})
		f := newFixture(t, s) // 1 record
		create := func(coll, clus, name string) store.Op {
			return store.Op{Kind: store.OpCreate, Collection: coll, Cluster: clus, Record: name,
				New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}}
		}
		_, err := s.Apply(f.ctx, f.path(0), store.Batch{Ops: []store.Op{
			create(collName, clusName, "a"), create(collName, clusName, "b"), create(collName, clusName, "c"),
			create(collName, clusName, "d"),
		}})
		assertOpQuota(t, err, 2, store.QuotaRecordsPerCluster, 3, "the 3rd create of a batch onto 1 record")
		f.assertUnchanged(t, "after the refused batch")

		// A new cluster made by the batch counts from 0, a delete earlier
		// in the batch makes room.
		_, err = s.Apply(f.ctx, f.path(0), store.Batch{CreateParents: true, Ops: []store.Op{
			create("new", "k", "a"), create("new", "k", "b"), create("new", "k", "c"), create("new", "k", "d"),
		}})
		assertOpQuota(t, err, 3, store.QuotaRecordsPerCluster, 3, "the 4th create into a cluster the batch made")
		_, err = s.FindCollection(f.ctx, setLevel(f.path(1), 1, "new"))
		assert.ErrorIs(t, err, store.ErrNotFound, "the refused batch made no collection")
		f.assertUnchanged(t, "after the refused batch with parents")
		_, err = s.Apply(f.ctx, f.path(0), store.Batch{Ops: []store.Op{
			create(collName, clusName, "a"), create(collName, clusName, "b"),
			{Kind: store.OpDelete, Collection: collName, Cluster: clusName, Record: "a"},
			create(collName, clusName, "c"),
		}})
		require.NoError(t, err, "a delete in the batch makes room for the next create")
		_, err = s.CreateRecord(f.ctx, setLevel(f.path(3), 3, "e"), &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
		assertQuota(t, err, store.QuotaRecordsPerCluster, 3, "the cluster is full after the batch")
	})

	t.Run("BatchHistoryBytes", func(t *testing.T) {
		const limit = 100
		s := newStore(t, store.Quotas{MaxBytesPerProject: limit})
		ctx := t.Context()
		pp := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName}
		k1 := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "c1", Cluster: "k1"}
		mustProject(t, s, owner, projName)
		mustCollection(t, s, k1)
		mustCluster(t, s, k1) // 4
		set := func(value string) store.Op {
			return store.Op{Kind: store.OpUpdate, Collection: "c1", Cluster: "k1", Record: "a",
				Update: func(r *store.Record) error { r.Value = json.RawMessage(value); return nil }}
		}
		_, err := s.Apply(ctx, pp, store.Batch{Write: store.Write{MaxVersions: 1}, Ops: []store.Op{
			{Kind: store.OpCreate, Collection: "c1", Cluster: "k1", Record: "a",
				New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}}, // a1: 6
			set("22"),  // a22, a1 kept: 9
			set("333"), // a333, a22 kept, a1 dropped: 11
		}})
		require.NoError(t, err, "create and update twice, one version kept")
		assertRoom(t, s, k1, limit, limit-11, "the history cut within the batch")
		a := k1
		a.Record = "a"
		assert.Equal(t, []string{"333", "22"}, versionValues(versionsOf(t, s, a)), "one version kept")
		_, err = s.Apply(ctx, pp, store.Batch{Write: store.Write{MaxVersions: 1}, Ops: []store.Op{
			set("4444"), // a4444, a333 kept, a22 dropped: 13
			set(strings.Repeat("5", limit)),
		}})
		assertOpQuota(t, err, 1, store.QuotaBytesPerProject, limit, "the second update passes the quota")
		assertRoom(t, s, k1, limit, limit-11, "after the refused batch")
		_, err = s.Apply(ctx, pp, store.Batch{Ops: []store.Op{set("4444"),
			{Kind: store.OpDelete, Collection: "c1", Cluster: "k1", Record: "a"}}})
		require.NoError(t, err, "update without history, then delete")
		assertRoom(t, s, k1, limit, limit-4, "the record and its history given back")
	})

	t.Run("BatchBytesAcrossDeletes", func(t *testing.T) { testBatchBytesAcrossDeletes(t, newStore) })
	t.Run("BatchBytesPerProject", func(t *testing.T) {
		const limit = 100
		s := newStore(t, store.Quotas{MaxBytesPerProject: limit})
		ctx := t.Context()
		pp := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName}
		k1 := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "c1", Cluster: "k1"}
		mustProject(t, s, owner, projName)
		mustCollection(t, s, k1)
		mustCluster(t, s, k1) // 4
		assertRoom(t, s, k1, limit, limit-4, "the start")
		rec := func(kind store.OpKind, coll, clus, name string, typ store.DataType, value string) store.Op {
			return store.Op{Kind: kind, Collection: coll, Cluster: clus, Record: name,
				New: &store.Record{Type: typ, Value: json.RawMessage(value)}}
		}
		set := func(coll, clus, name, value string) store.Op {
			return store.Op{Kind: store.OpUpdate, Collection: coll, Cluster: clus, Record: name,
				Update: func(r *store.Record) error { r.Value = json.RawMessage(value); return nil }}
		}

		_, err := s.Apply(ctx, pp, store.Batch{CreateParents: true, Ops: []store.Op{
			rec(store.OpCreate, "c2", "k2", "a", store.String, `"abc"`),    // c2 2 + k2 2 + a 1+5: 14
			rec(store.OpUpsert, "c1", "k1", "b", store.Integer, "12"),      // 3: 17
			{Kind: store.OpEnsureCollection, Collection: "c3"},             // 19
			{Kind: store.OpEnsureCluster, Collection: "c3", Cluster: "k3"}, // 21
		}})
		require.NoError(t, err, "a batch of creates")
		assertRoom(t, s, k1, limit, limit-21, "after a batch of creates")

		_, err = s.Apply(ctx, pp, store.Batch{Write: store.Write{MaxVersions: 10}, Ops: []store.Op{
			set("c1", "k1", "b", "123"), // b/12 joins the history, b/123: 25
			{Kind: store.OpDelete, Collection: "c2", Cluster: "k2", Record: "a"}, // 19
			{Kind: store.OpDeleteCluster, Collection: "c3", Cluster: "k3"},       // 17
		}})
		require.NoError(t, err, "a batch of updates and deletes")
		assertRoom(t, s, k1, limit, limit-17, "after a batch of updates and deletes")

		// Failed and dry-run batches give back exactly what they took.
		grow := []store.Op{
			rec(store.OpCreate, "c1", "k1", "x", store.String, `"xyz"`),
			{Kind: store.OpEnsureCollection, Collection: "c4"},
			{Kind: store.OpEnsureCluster, Collection: "c4", Cluster: "k4"},
			rec(store.OpCreate, "c4", "k4", "y", store.Integer, "7"),
			set("c1", "k1", "b", "1234"),
			{Kind: store.OpDelete, Collection: "c1", Cluster: "k1", Record: "b"},
			{Kind: store.OpDeleteCollection, Collection: "c2"},
		}
		tooBig := rec(store.OpCreate, "c1", "k1", "z", store.String, `"`+strings.Repeat("z", limit)+`"`)
		_, err = s.Apply(ctx, pp, store.Batch{CreateParents: true, Write: store.Write{MaxVersions: 10}, Ops: append(slices.Clone(grow), tooBig)})
		assertOpQuota(t, err, len(grow), store.QuotaBytesPerProject, limit, "a batch whose last create passes the byte quota")
		assertRoom(t, s, k1, limit, limit-17, "after a batch refused by the byte quota")
		_, err = s.Apply(ctx, pp, store.Batch{CreateParents: true, Write: store.Write{MaxVersions: 10},
			Ops: append(slices.Clone(grow), store.Op{Kind: store.OpDelete, Collection: "c1", Cluster: "k1", Record: "missing"})})
		assertNotFound(t, err, "record", "missing", "a batch whose last op fails otherwise")
		assertRoom(t, s, k1, limit, limit-17, "after a batch refused by a missing record")
		_, err = s.Apply(ctx, pp, store.Batch{DryRun: true, CreateParents: true, Write: store.Write{MaxVersions: 10}, Ops: grow})
		require.NoError(t, err, "a dry run")
		assertRoom(t, s, k1, limit, limit-17, "after a dry run")

		_, err = s.Apply(ctx, pp, store.Batch{Ops: []store.Op{
			{Kind: store.OpDeleteCollection, Collection: "c2"}, // c2 2 + k2 2: 13
			{Kind: store.OpDeleteCollection, Collection: "c3"}, // 11
		}})
		require.NoError(t, err, "a batch of collection deletes")
		assertRoom(t, s, k1, limit, limit-11, "after a batch of collection deletes")
		_, err = s.Apply(ctx, pp, store.Batch{Ops: []store.Op{
			{Kind: store.OpDelete, Collection: "c1", Cluster: "k1", Record: "b"}, // b and its history: 4
		}})
		require.NoError(t, err, "a batch deleting a record with history")
		assertRoom(t, s, k1, limit, limit-4, "after deleting a record with history")

		// A batch may fill the project exactly, and no byte more.
		fill := func(extra int) []store.Op {
			return []store.Op{
				rec(store.OpCreate, "c1", "k1", "f", store.String, `"`+strings.Repeat("f", limit-4-1-2-11+extra)+`"`),
				rec(store.OpCreate, "c1", "k1", "g", store.String, `"12345678"`), // 1 + 10
			}
		}
		_, err = s.Apply(ctx, pp, store.Batch{Ops: fill(1)})
		assertOpQuota(t, err, 1, store.QuotaBytesPerProject, limit, "a batch one byte over")
		_, err = s.Apply(ctx, pp, store.Batch{Ops: fill(0)})
		require.NoError(t, err, "a batch filling the project exactly")
		_, err = s.CreateCluster(ctx, setLevel(k1, 2, "k"))
		assertQuota(t, err, store.QuotaBytesPerProject, limit, "a full project")
	})
}

// testBatchBytesAcrossDeletes: a batch whose container deletes come
// between record writes counts the project's bytes through all of them:
// what the writes before a delete added and what the delete freed.
func testBatchBytesAcrossDeletes(t *testing.T, newStore func(t *testing.T, q store.Quotas) store.Store) {
	const limit = 100
	s := newStore(t, store.Quotas{MaxBytesPerProject: limit})
	ctx := t.Context()
	pp := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName}
	k1 := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName, Collection: "c1", Cluster: "k1"}
	k2 := setLevel(setLevel(k1, 1, "c2"), 2, "k2")
	k3 := setLevel(setLevel(k1, 1, "c3"), 2, "k3")
	mustProject(t, s, owner, projName)
	for _, k := range []store.Path{k1, k2, k3} {
		mustCollection(t, s, k)
		mustCluster(t, s, k)
	} // 12
	mustRecord(t, s, setLevel(k2, 3, "a"), store.String, `"abcdefgh"`) // 1 + 10: 23
	create := func(name string, size int) store.Op {
		return store.Op{Kind: store.OpCreate, Collection: "c1", Cluster: "k1", Record: name,
			New: &store.Record{Type: store.String, Value: json.RawMessage(`"` + strings.Repeat("v", size-len(name)-2) + `"`)}}
	}
	batch := func(extraY, extraZ int) store.Batch {
		return store.Batch{Ops: []store.Op{
			create("x", 8), // 31
			{Kind: store.OpDeleteCluster, Collection: "c2", Cluster: "k2"}, // k2 2 + a 11: 18
			create("y", limit-18+extraY),                                   // 100: full
			{Kind: store.OpDeleteCollection, Collection: "c3"},             // c3 2 + k3 2: 96
			create("z", 4+extraZ),                                          // 100: full again
		}}
	}
	_, err := s.Apply(ctx, pp, batch(1, 0))
	assertOpQuota(t, err, 2, store.QuotaBytesPerProject, limit, "a create one byte past what the delete before it freed")
	_, err = s.Apply(ctx, pp, batch(0, 1))
	assertOpQuota(t, err, 4, store.QuotaBytesPerProject, limit, "a create one byte past what the second delete freed")
	assertRoom(t, s, k1, limit, limit-23, "after the refused batches")
	_, err = s.Apply(ctx, pp, batch(0, 0))
	require.NoError(t, err, "creates that use exactly what the deletes before them freed")
	_, err = s.CreateCluster(ctx, setLevel(k1, 2, "k"))
	assertQuota(t, err, store.QuotaBytesPerProject, limit, "a full project")
}

// assertRoom checks that the project of k (an existing cluster) has room
// for exactly room more bytes (at least 3): a record of room+1 bytes is
// refused, one of room bytes created, then deleted.
func assertRoom(t *testing.T, s store.Store, k store.Path, limit, room int64, what string) {
	t.Helper()
	r := k
	r.Record = "z" // 1 byte, its value room-1 bytes
	value := func(n int64) *store.Record {
		return &store.Record{Type: store.String, Value: json.RawMessage(`"` + strings.Repeat("r", int(n-3)) + `"`)}
	}
	_, err := s.CreateRecord(t.Context(), r, value(room+1), store.Write{})
	assertQuota(t, err, store.QuotaBytesPerProject, limit, what+": one byte more than the room")
	_, err = s.CreateRecord(t.Context(), r, value(room), store.Write{})
	if assert.NoError(t, err, "%s: exactly the room of %d bytes", what, room) {
		require.NoError(t, s.DeleteRecord(t.Context(), r, store.Write{}), "%s: delete the probe", what)
	}
}

// assertOpQuota checks that err is the *store.OpError of op index
// wrapping the *store.QuotaError of quota at limit.
func assertOpQuota(t *testing.T, err error, index int, quota string, limit int64, what string) {
	t.Helper()
	var oe *store.OpError
	if assert.ErrorAs(t, err, &oe, "%s: want a *store.OpError", what) {
		assert.Equal(t, index, oe.Index, "%s: the index of the failing op", what)
	}
	assertQuota(t, err, quota, limit, what)
}

// testTransferQuota checks max_projects_per_user on Access.TransferProject
// (docs/api.md#server-administrators-and-user-accounts-v12): a transfer that
// would give the new owner one project more than the quota is refused with
// the quota's *store.QuotaError and changes nothing; below it, it passes.
func testTransferQuota(t *testing.T, newStore func(t *testing.T, q store.Quotas) store.Store) {
	s := newStore(t, store.Quotas{MaxProjectsPerUser: 1})
	dir, ok := s.(store.UserDirectory)
	require.True(t, ok, "the store keeps users")
	acc, ok := s.(store.Access)
	require.True(t, ok, "the store keeps access")
	ctx := t.Context()
	carol, err := dir.CreateUser(ctx, &store.User{Username: "carol", PasswordHash: []byte("h"), Active: true})
	require.NoError(t, err)
	before := mustProject(t, s, owner, "a")
	mustProject(t, s, carol.ID, "c1")
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: "a"}
	_, err = acc.TransferProject(ctx, p, "carol")
	assertQuota(t, err, store.QuotaProjectsPerUser, 1, "a transfer to a user at the quota")
	after, err := s.FindProject(ctx, store.Path{Project: "a"})
	require.NoError(t, err)
	assert.Equal(t, owner, after.OwnerID, "the refused transfer changed no owner")
	assert.Equal(t, before.Revision, after.Revision, "the refused transfer wrote no entry")
	members, _, err := acc.FindMembers(ctx, p, store.NewListQuery())
	require.NoError(t, err)
	assert.Len(t, members, 1, "the refused transfer added no member (the owner alone is listed)")

	require.NoError(t, s.DeleteProject(ctx, store.Path{Caller: store.Caller{UserID: carol.ID}, Need: store.RightOwn, Project: "c1"}))
	pr, err := acc.TransferProject(ctx, p, "carol")
	require.NoError(t, err, "below the quota")
	assert.Equal(t, carol.ID, pr.OwnerID)
}

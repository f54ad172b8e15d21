package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// The creates of a batch are written set-based, in runs (bulk.go): a
// batch of many creates must still fail at the first failing op, with
// the error a single create gives, and write nothing, wherever in a run
// the conflict is and however it is found (the database, the batch
// itself, a quota).
func TestBulkCreatesFailAtTheFirstFailingOp(t *testing.T) {
	s := open(t)
	s.SetQuotas(store.NoQuotas)
	ctx := context.Background()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k"}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	existing := make([]*store.Record, 10)
	var ops []store.Op
	for i := range existing {
		ops = append(ops, intCreate("k", "r"+strconv.Itoa(i), i))
	}
	res, err := s.Apply(ctx, p, store.Batch{Ops: ops, CreateParents: true})
	require.NoError(t, err)
	for i := range existing {
		existing[i] = res[i].Record
	}
	revision := res[0].Revision

	// batch is 600 creates of n0..n599 in cluster, with op i changed by
	// change.
	batch := func(cluster string, i int, change func(*store.Op)) []store.Op {
		ops := []store.Op{{Kind: store.OpEnsureCluster, Collection: "c", Cluster: cluster}}
		for j := range 600 {
			ops = append(ops, intCreate(cluster, "n"+strconv.Itoa(j), j))
		}
		change(&ops[i])
		return ops
	}
	cases := []struct {
		name    string
		ops     []store.Op
		quotas  store.Quotas
		index   int
		message string
	}{
		{"a name the cluster holds", batch("k", 401, func(op *store.Op) { op.Record = "r5" }), store.NoQuotas,
			401, `record "r5" already exists`},
		{"an id the database holds", batch("k", 301, func(op *store.Op) { op.New.ID = existing[3].ID }), store.NoQuotas,
			301, `record id "` + existing[3].ID + `" already exists`},
		{"a name that is a record's id", batch("k", 501, func(op *store.Op) { op.Record = existing[2].ID }), store.NoQuotas,
			501, `record "` + existing[2].ID + `" already exists`},
		{"a name the batch created", batch("k", 451, func(op *store.Op) { op.Record = "n10" }), store.NoQuotas,
			451, `record "n10" already exists`},
		{"a name the batch created in a new cluster", batch("new", 591, func(op *store.Op) { op.Record = "n3" }), store.NoQuotas,
			591, `record "n3" already exists`},
		{"a name that is an id the batch gave", batch("new", 300, func(op *store.Op) { op.Record = "0f8fad5b-d9cb-469f-a165-70867728950e" }),
			store.NoQuotas, 300, `record "0f8fad5b-d9cb-469f-a165-70867728950e" already exists`},
		{"the records quota", batch("k", 1, func(*store.Op) {}),
			store.Quotas{MaxRecordsPerCluster: 360, MaxBytesPerProject: store.Unlimited, MaxProjectsPerUser: store.Unlimited},
			351, "max_records_per_cluster: at most 360 records per cluster"},
		{"an invalid id", batch("k", 201, func(op *store.Op) { op.New.ID = "not-a-uuid" }), store.NoQuotas,
			201, `record id "not-a-uuid" is not a UUID`},
	}
	// The id case: op 299 gives the id that op 300 takes as its name.
	cases[5].ops[299].New.ID = "0f8fad5b-d9cb-469f-a165-70867728950e"
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.SetQuotas(c.quotas)
			defer s.SetQuotas(store.NoQuotas)
			_, err := s.Apply(ctx, p, store.Batch{Ops: c.ops})
			var oe *store.OpError
			require.True(t, errors.As(err, &oe), "an *store.OpError: %v", err)
			assert.Equal(t, c.index, oe.Index, "the first failing op")
			assert.Equal(t, c.message, oe.Err.Error())
			k, err := s.FindCluster(ctx, p, false)
			require.NoError(t, err)
			assert.Equal(t, 10, k.RecordCount, "nothing written")
			_, err = s.FindCluster(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "p", Collection: "c", Cluster: "new"}, false)
			assert.ErrorIs(t, err, store.ErrNotFound, "nothing written")
			entries, _, err := s.FindAuditEntries(ctx, p, store.AuditQuery{Limit: 1})
			require.NoError(t, err)
			assert.Equal(t, revision, entries[0].Revision, "no audit entry written")
		})
	}
}

// A batch mixing held creates with other ops runs them in order: an
// update of a record created earlier in the batch sees it, and the audit
// entries follow the ops.
func TestBulkCreatesKeepTheOrderOfOps(t *testing.T) {
	s := open(t)
	s.SetQuotas(store.NoQuotas)
	ctx := context.Background()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k"}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	var ops []store.Op
	for i := range 300 {
		ops = append(ops, intCreate("k", "n"+strconv.Itoa(i), i))
	}
	ops = append(ops, store.Op{Kind: store.OpUpdate, Collection: "c", Cluster: "k", Record: "n299",
		Update: func(r *store.Record) error { r.Value = json.RawMessage("-1"); return nil }})
	ops = append(ops, intCreate("k", "after", 7))
	res, err := s.Apply(ctx, p, store.Batch{Ops: ops, CreateParents: true})
	require.NoError(t, err)
	require.Len(t, res, 302)
	assert.True(t, res[0].Created)
	assert.Equal(t, "n0", res[0].Record.Name)
	assert.Equal(t, int64(2), res[300].Record.Version, "the update saw the record the batch created")
	r, err := s.FindRecord(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "p", Collection: "c", Cluster: "k", Record: "n299"})
	require.NoError(t, err)
	assert.JSONEq(t, "-1", string(r.Value))
	entries, total, err := s.FindAuditEntries(ctx, p, store.AuditQuery{Limit: 4})
	require.NoError(t, err)
	require.GreaterOrEqual(t, total, 304) // project, collection, cluster, 300 creates, update, create
	assert.Equal(t, []string{"after", "n299", "n299", "n298"},
		[]string{entries[0].Record, entries[1].Record, entries[2].Record, entries[3].Record})
	assert.Equal(t, []store.Action{store.ActionRecordCreate, store.ActionRecordUpdate, store.ActionRecordCreate, store.ActionRecordCreate},
		[]store.Action{entries[0].Action, entries[1].Action, entries[2].Action, entries[3].Action})
	for i := 1; i < 4; i++ {
		assert.Equal(t, entries[i-1].Revision-1, entries[i].Revision, "consecutive revisions")
	}
}

// intCreate is the create of the INTEGER n named name in cluster of
// collection c.
func intCreate(cluster, name string, n int) store.Op {
	return store.Op{Kind: store.OpCreate, Collection: "c", Cluster: cluster, Record: name,
		New: &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(n))}}
}

package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// Big batches (issue 24 item 6): ops given by a Batch.Source, results
// without records (Batch.OmitRecords), more ops than the PostgreSQL
// store writes in one set-based run, all or nothing.

// opList is an OpSource over a slice, counting what it was asked.
type opList struct {
	ops   []store.Op
	asked int
}

func (l *opList) Len() int { return len(l.ops) }

func (l *opList) Op(i int) store.Op {
	l.asked++
	return l.ops[i]
}

// cancelAt is an OpSource over ops that cancels the call's context when
// op at is asked: the call's deadline passing in the middle of a batch.
type cancelAt struct {
	opList
	at     int
	cancel context.CancelFunc
}

func (c *cancelAt) Op(i int) store.Op {
	if i == c.at {
		c.cancel()
	}
	return c.opList.Op(i)
}

// bigOps returns an OpEnsureCluster of cluster k and n creates of
// INTEGER records r00000... in it.
func bigOps(k string, n int) []store.Op {
	ops := []store.Op{{Kind: store.OpEnsureCluster, Collection: collName, Cluster: k}}
	for i := range n {
		ops = append(ops, store.Op{Kind: store.OpCreate, Collection: collName, Cluster: k, Record: fmt.Sprintf("r%05d", i),
			New: &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(i))}})
	}
	return ops
}

// clusterRecords returns the records of the cluster k of the fixture's
// collection by name, as the export has them (nil: no such cluster).
func (f *fixture) clusterRecords(t *testing.T, k string) map[string]string {
	t.Helper()
	var out map[string]string
	err := f.s.ExportProject(f.ctx, f.path(0), func(it store.ExportItem) error {
		switch {
		case it.Collection != collName || it.Cluster != k:
		case it.Record == nil:
			out = map[string]string{}
		default:
			out[it.Record.Name] = string(it.Record.Value)
		}
		return nil
	})
	require.NoError(t, err, "ExportProject")
	return out
}

// auditTotal returns the number of audit entries of the fixture's
// project, or -1 when the store keeps no audit log.
func (f *fixture) auditTotal(t *testing.T) int {
	t.Helper()
	al, ok := f.s.(store.AuditLog)
	if !ok {
		return -1
	}
	_, total, err := al.FindAuditEntries(f.ctx, f.path(0), store.AuditQuery{Limit: 1})
	require.NoError(t, err, "FindAuditEntries")
	return total
}

func testBatchSource(t *testing.T, newStore func(t *testing.T) store.Store) {
	const n = 1_200 // more than two set-based runs of the PostgreSQL store under test
	t.Run("Source", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		audited := f.auditTotal(t)
		ops := append(bigOps("big", n),
			store.Op{Kind: store.OpUpdate, Collection: collName, Cluster: "big", Record: "r00007", Update: setValue(-1)},
			store.Op{Kind: store.OpDelete, Collection: collName, Cluster: "big", Record: "r00008"},
			store.Op{Kind: store.OpUpsert, Collection: collName, Cluster: "big", Record: "new",
				New: &store.Record{Type: store.Integer, Value: json.RawMessage("5")}, Update: setValue(6)})
		src := &opList{ops: ops}
		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Source: src, OmitRecords: true, Write: keepHistory})
		require.NoError(t, err, "Apply of a Source")
		require.Len(t, res, len(ops), "one result per op of the Source")
		assert.GreaterOrEqual(t, src.asked, len(ops), "every op asked of the Source")
		for i, r := range res {
			assert.Nil(t, r.Record, "OmitRecords: no record in result %d", i)
			assert.Equal(t, res[0].Revision, r.Revision, "one revision for the batch")
			assert.Equal(t, i <= n || i == n+3, r.Created, "result %d: Created", i)
		}
		recs := f.clusterRecords(t, "big")
		assert.Len(t, recs, n, "the creates, less a delete, and the upsert")
		assert.Equal(t, "-1", recs["r00007"], "updated by an op after the creates")
		assert.NotContains(t, recs, "r00008", "deleted by an op after the creates")
		assert.Equal(t, "5", recs["new"], "the upsert created")
		assert.Equal(t, strconv.Itoa(n-1), recs[fmt.Sprintf("r%05d", n-1)], "the last create")
		if audited >= 0 {
			assert.Equal(t, audited+len(ops), f.auditTotal(t), "one audit entry per op")
		}

		// Without OmitRecords, a Source batch answers the records.
		res, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Source: &opList{ops: []store.Op{
			{Kind: store.OpUpsert, Collection: collName, Cluster: "big", Record: "new", Update: setValue(7)},
		}}, Write: keepHistory})
		require.NoError(t, err, "Apply of a small Source")
		require.NotNil(t, res[0].Record, "the record")
		assert.Equal(t, "7", string(res[0].Record.Value), "the upserted value")
	})

	t.Run("AllOrNothing", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		audited := f.auditTotal(t)
		ops := append(bigOps("big", n), createOp(recName, 2),
			store.Op{Kind: store.OpCreate, Collection: collName, Cluster: "big", Record: "r00003",
				New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}})
		_, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Source: &opList{ops: ops}, OmitRecords: true, Write: keepHistory})
		assertExists(t, assertOpError(t, err, n+1, "a create of a taken name"), "record", recName, "the first failing op")
		assert.Nil(t, f.clusterRecords(t, "big"), "the cluster the batch created is gone")
		f.assertUnchanged(t, "a failed batch")
		if audited >= 0 {
			assert.Equal(t, audited, f.auditTotal(t), "no audit entry of a failed batch")
		}

		res, err := f.s.Apply(f.ctx, f.path(0), store.Batch{Source: &opList{ops: bigOps("big", n)}, OmitRecords: true, DryRun: true,
			Write: keepHistory})
		require.NoError(t, err, "a dry run")
		assert.Len(t, res, n+1, "its results")
		assert.Nil(t, f.clusterRecords(t, "big"), "a dry run creates nothing")
		f.assertUnchanged(t, "a dry run")
	})

	// A call whose context ends in the middle of a big batch (its
	// deadline on a loaded machine) fails as unavailable and leaves
	// nothing of the batch, or, for a store that does not stop, writes
	// all of it: never a part. The store then writes as before.
	t.Run("CancelledMidway", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		audited := f.auditTotal(t)
		ctx, cancel := context.WithCancel(f.ctx)
		defer cancel()
		src := &cancelAt{opList: opList{ops: bigOps("big", n)}, at: n / 2, cancel: cancel}
		_, err := f.s.Apply(ctx, f.path(0), store.Batch{Source: src, OmitRecords: true, Write: keepHistory})
		if err != nil {
			assert.True(t, errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.Canceled),
				"a batch cut off by its context: unavailable, not %v", err)
			assert.Nil(t, f.clusterRecords(t, "big"), "nothing of the batch cut off: no cluster")
			f.assertUnchanged(t, "a batch cut off")
			if audited >= 0 {
				assert.Equal(t, audited, f.auditTotal(t), "no audit entry of a batch cut off")
			}
		} else {
			assert.Len(t, f.clusterRecords(t, "big"), n, "a batch not cut off wrote every record")
		}

		_, err = f.s.Apply(f.ctx, f.path(0), store.Batch{Source: &opList{ops: bigOps("after", 10)}, OmitRecords: true, Write: keepHistory})
		require.NoError(t, err, "a batch after the one cut off")
		assert.Len(t, f.clusterRecords(t, "after"), 10, "the batch after the one cut off")
	})
}

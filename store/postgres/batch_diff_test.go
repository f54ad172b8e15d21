package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/postgres"
)

// TestApplyMatchesMemory applies the same random batches to a PostgreSQL
// and a memory store (small quotas, a short history) and checks that
// every batch has the same outcome on both (its error, or each op's
// result) and leaves the same project behind (records, their versions
// and history, the audit log; the byte count shows through the quota
// errors): the
// set-based batch of PostgreSQL keeps the semantics of applying the ops
// one by one, which the memory store does. The batches are made of few
// names, so that ops meet each other's records: created, renamed, updated
// and deleted in one batch, taken names, missing parents. HDS_BATCH_SEED
// picks another sequence of batches.
func TestApplyMatchesMemory(t *testing.T) {
	ctx := t.Context()
	quotas := store.Quotas{MaxRecordsPerCluster: 5, MaxBytesPerProject: 260}
	stores := []store.Store{postgres.New(pgtest.New(t), postgres.WithQuotas(quotas)), memory.New(memory.WithQuotas(quotas))}
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "owner"}, Project: "p"}
	for _, s := range stores {
		_, err := s.CreateProject(ctx, p)
		require.NoError(t, err)
	}
	seed, _ := strconv.ParseUint(os.Getenv("HDS_BATCH_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(15, seed))
	ok := 0
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	for round := range rounds {
		b := randomBatch(rng)
		var outcomes [2]string
		for i, s := range stores {
			res, err := s.Apply(ctx, p, b)
			outcomes[i] = outcome(res, err)
		}
		if !strings.HasPrefix(outcomes[0], "error") {
			ok++
		}
		require.Equal(t, outcomes[1], outcomes[0], "round %d: the batch's outcome (postgres, then memory)\n%s", round, describe(b))
		require.Equal(t, projectState(t, stores[1], p), projectState(t, stores[0], p), "round %d: the project after the batch\n%s", round, describe(b))
	}
	t.Logf("%d of %d batches applied", ok, rounds)
}

// randomBatch returns 1 to 6 ops on names of small pools.
func randomBatch(rng *rand.Rand) store.Batch {
	pick := func(names ...string) string { return names[rng.IntN(len(names))] }
	b := store.Batch{CreateParents: rng.IntN(2) == 0, DryRun: rng.IntN(10) == 0,
		Write: store.Write{MaxVersions: rng.IntN(3)}}
	for range 1 + rng.IntN(6) {
		op := store.Op{Collection: pick("c", "d"), Cluster: pick("k1", "k2"), Record: pick("a", "b", "c", "d")}
		n := rng.IntN(100)
		value := json.RawMessage(strconv.Itoa(n * n * n))
		op.New = &store.Record{Type: store.Integer, Value: value}
		switch rng.IntN(4) {
		case 0:
			op.Update = func(r *store.Record) error { r.Type, r.Value = store.Integer, value; return nil }
		case 1:
			to := pick("a", "b", "c", "d", "e")
			op.Update = func(r *store.Record) error { r.Name = to; return nil }
		case 2:
			op.Update = func(r *store.Record) error {
				r.Type, r.Value = store.String, json.RawMessage(`"`+r.Name+`"`)
				return nil
			}
		default:
			op.Update = func(*store.Record) error { return store.ErrUnchanged }
		}
		if rng.IntN(20) == 0 {
			op.IfMatch = []string{}
		}
		switch k := rng.IntN(40); {
		case k < 6:
			op.Kind = store.OpCreate
		case k < 22:
			op.Kind = store.OpUpsert
		case k < 30:
			op.Kind = store.OpUpdate
		case k < 36:
			op.Kind = store.OpDelete
		case k < 37:
			op.Kind, op.Record = store.OpEnsureCollection, ""
		case k < 38:
			op.Kind, op.Record = store.OpEnsureCluster, ""
		default:
			op.Kind, op.Record = store.OpDeleteCluster, ""
		}
		b.Ops = append(b.Ops, op)
	}
	return b
}

// describe lists b's ops, for a failure's message.
func describe(b store.Batch) string {
	s := fmt.Sprintf("create_parents=%v dry_run=%v max_versions=%d\n", b.CreateParents, b.DryRun, b.Write.MaxVersions)
	for i, op := range b.Ops {
		var probe *store.Record
		if op.Update != nil {
			probe = &store.Record{Name: op.Record}
			if err := op.Update(probe); err != nil {
				probe = nil
			}
		}
		s += fmt.Sprintf("%d: %s %s/%s/%s if_match=%v new=%s update->%+v\n", i, op.Kind, op.Collection, op.Cluster, op.Record,
			op.IfMatch, op.New.Value, probe)
	}
	return s
}

// outcome is what a batch did, without ids and times.
func outcome(res []store.OpResult, err error) string {
	if err != nil {
		var oe *store.OpError
		if errors.As(err, &oe) {
			return fmt.Sprintf("error at %d: %T %v", oe.Index, oe.Err, err)
		}
		return "error: " + err.Error()
	}
	s := ""
	for i, r := range res {
		s += fmt.Sprintf("%d: created=%v unchanged=%v", i, r.Created, r.Unchanged)
		if r.Record != nil {
			s += fmt.Sprintf(" %s %s %s v%d", r.Record.Name, r.Record.Type, r.Record.Value, r.Record.Version)
		}
		s += "\n"
	}
	return s
}

// projectState lists the project's tree, each record with its history.
func projectState(t *testing.T, s store.Store, p store.Path) []string {
	t.Helper()
	var items []store.ExportItem
	require.NoError(t, s.ExportProject(context.Background(), p, func(it store.ExportItem) error {
		items = append(items, it)
		return nil
	}), "ExportProject")
	var out []string
	es, _, err := s.(store.AuditLog).FindAuditEntries(context.Background(), p, store.AuditQuery{Limit: 1000})
	require.NoError(t, err, "FindAuditEntries")
	for _, e := range es[:min(len(es), 40)] { // the newest
		out = append(out, fmt.Sprintf("audit %d %s %s/%s/%s v%d", e.Revision, e.Action, e.Collection, e.Cluster, e.Record, e.Version))
	}
	for _, it := range items {
		line := it.Collection + "/" + it.Cluster
		if r := it.Record; r != nil {
			line += fmt.Sprintf("/%s %s %s v%d", r.Name, r.Type, r.Value, r.Version)
			q := store.NewListQuery()
			q.Limit = store.MaxLimit
			rp := p
			rp.Collection, rp.Cluster, rp.Record = it.Collection, it.Cluster, r.Name
			vs, _, err := s.FindRecordVersions(context.Background(), rp, q)
			require.NoError(t, err, "FindRecordVersions %s", line)
			for _, v := range vs {
				line += fmt.Sprintf(" [%d %s %s %s %s]", v.Version, v.Name, v.Type, v.Value, v.ChangedBy)
			}
		}
		out = append(out, line)
	}
	return out
}

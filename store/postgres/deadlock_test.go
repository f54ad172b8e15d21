package postgres_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestNoDeadlocksBetweenWritesAndBatches races single-record writes
// (creates, updates, deletes) against batches on the same records of one
// cluster: every call succeeds or fails as the contract says, and
// PostgreSQL detected no deadlock at all (the writes take their locks in
// one order; a retry is not what saves them).
func TestNoDeadlocksBetweenWritesAndBatches(t *testing.T) {
	url := pgtest.NewURL(t)
	db, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	db.SetMaxOpenConns(8)
	s := postgres.New(db)
	ctx := t.Context()
	k := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "proj", Collection: "coll", Cluster: "clus"}
	pp := store.Path{Need: store.RightRead, Caller: k.Caller, Project: k.Project}
	_, err = s.CreateProject(ctx, k)
	require.NoError(t, err)
	_, err = s.CreateCollection(ctx, k)
	require.NoError(t, err)
	_, err = s.CreateCluster(ctx, k)
	require.NoError(t, err)
	const n = 8
	rec := func(i int) store.Path { r := k; r.Record = fmt.Sprint("r", i); return r }
	for i := range n {
		_, err = s.CreateRecord(ctx, rec(i), &store.Record{Type: store.Integer, Value: json.RawMessage("0")}, store.Write{})
		require.NoError(t, err)
	}
	set := func(v int) func(r *store.Record) error {
		return func(r *store.Record) error { r.Value = json.RawMessage(fmt.Sprint(v)); return nil }
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 6 {
		wg.Go(func() {
			for j := range 25 {
				var err error
				if g%2 == 0 { // single writes, up the names
					for i := range n {
						if _, err = s.UpdateRecord(ctx, rec(i), store.Write{}, set(j)); err != nil {
							break
						}
					}
				} else { // batches, down the names, with a create and a delete
					ops := []store.Op{}
					for i := n - 1; i >= 0; i-- {
						ops = append(ops, store.Op{Kind: store.OpUpdate, Collection: k.Collection, Cluster: k.Cluster, Record: fmt.Sprint("r", i), Update: set(j)})
					}
					name := fmt.Sprintf("b%d-%d", g, j)
					ops = append(ops, store.Op{Kind: store.OpCreate, Collection: k.Collection, Cluster: k.Cluster, Record: name,
						New: &store.Record{Type: store.Integer, Value: json.RawMessage("1")}},
						store.Op{Kind: store.OpDelete, Collection: k.Collection, Cluster: k.Cluster, Record: name})
					_, err = s.Apply(ctx, pp, store.Batch{Ops: ops})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	require.NoError(t, db.Close(), "the backends end, and report their statistics")
	check, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	defer check.Close()
	var deadlocks int64
	require.Eventually(t, func() bool {
		var others int
		require.NoError(t, check.Get(&others, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`))
		return others == 0
	}, faultBound, 10*time.Millisecond, "the store's backends have ended")
	require.NoError(t, check.Get(&deadlocks, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`))
	assert.Zero(t, deadlocks, "deadlocks PostgreSQL detected")
}

package postgres_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestBigBatchWithinTimeout applies a batch of 30,000 creates (an import
// of a few MB) on a store whose timeout is 500 ms: the batch is given
// time for its ops, each of its statements a bounded part of them, and
// it succeeds whole.
func TestBigBatchWithinTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("a big batch")
	}
	s := postgres.New(pgtest.New(t), postgres.WithTimeout(500*time.Millisecond), postgres.WithQuotas(store.NoQuotas))
	ctx := t.Context()
	pp := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "proj"}
	_, err := s.CreateProject(ctx, pp)
	require.NoError(t, err)
	const n = 30_000
	ops := make([]store.Op, n)
	for i := range ops {
		ops[i] = store.Op{Kind: store.OpCreate, Collection: "c", Cluster: fmt.Sprint("k", i%3), Record: fmt.Sprintf("record-%06d", i),
			New: &store.Record{Type: store.Integer, Value: json.RawMessage(fmt.Sprint(i))}}
	}
	res, err := s.Apply(ctx, pp, store.Batch{Ops: ops, CreateParents: true})
	require.NoError(t, err, "a batch of %d creates", n)
	assert.Len(t, res, n)
	_, total, err := s.FindRecords(ctx, store.Path{Need: store.RightRead, Caller: pp.Caller, Project: "proj", Collection: "c", Cluster: "k2"},
		store.RecordQuery{ListQuery: store.NewListQuery()})
	require.NoError(t, err)
	assert.Equal(t, n/3, total, "every record of a cluster was created")
}

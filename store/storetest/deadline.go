package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// RunApplyDeadline checks the deadline of Apply on a store whose calls
// have one (the SQL stores' WithTimeout; docs/api.md#batch-export-and-import):
// a batch that keeps making progress is not cut off however long it
// takes in all, and one that stops making progress for the timeout fails
// as unavailable, leaving nothing. newStore returns an empty store whose
// calls have the given timeout.
func RunApplyDeadline(t *testing.T, newStore func(t *testing.T, timeout time.Duration) store.Store) {
	t.Run("FollowsWork", func(t *testing.T) {
		// More than twice the timeout plus a millisecond an op, the
		// fixed allowance a batch had before (a loaded CI machine ran
		// out of it in the conformance suite).
		const timeout = 2 * time.Second
		s := newStore(t, timeout)
		p := deadlineProject(t, s)
		src := &slowSource{n: 500, each: 8 * time.Millisecond} // 4 s of waiting
		start := time.Now()
		res, err := s.Apply(t.Context(), p, store.Batch{Source: src, OmitRecords: true, CreateParents: true})
		require.NoError(t, err, "a batch making progress, after %v", time.Since(start))
		assert.Len(t, res, src.Len(), "every op applied")
		k, err := s.FindCluster(t.Context(), store.Path{Need: store.RightRead, Caller: p.Caller, Project: "p", Collection: "c", Cluster: "k"}, false)
		require.NoError(t, err)
		assert.Equal(t, src.n, k.RecordCount, "every record written")
	})
	t.Run("Stalled", func(t *testing.T) {
		const timeout = 300 * time.Millisecond
		s := newStore(t, timeout)
		p := deadlineProject(t, s)
		src := &slowSource{n: 20, stallAt: 10, stall: 5 * timeout}
		_, err := s.Apply(t.Context(), p, store.Batch{Source: src, OmitRecords: true, CreateParents: true})
		require.Error(t, err, "a stalled batch")
		assert.ErrorIs(t, err, store.ErrUnavailable, "a stalled batch")
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "a stalled batch ran out of time: %v", err)
		_, err = s.FindCollection(t.Context(), store.Path{Need: store.RightRead, Caller: p.Caller, Project: "p", Collection: "c"})
		assert.ErrorIs(t, err, store.ErrNotFound, "nothing of the stalled batch")
	})
}

// deadlineProject makes the project p of a test of Apply's deadline. The
// store's deadline is short, so a loaded machine may make the creation
// run out of it: that is not what the test is about, and it tries again
// (for a minute at most) while the store answers ErrUnavailable.
func deadlineProject(t *testing.T, s store.Store) store.Path {
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p"}
	var err error
	for start := time.Now(); time.Since(start) < time.Minute; {
		if _, err = s.CreateProject(t.Context(), p); !errors.Is(err, store.ErrUnavailable) {
			break
		}
	}
	require.NoError(t, err)
	return p
}

// slowSource is an OpSource of an OpEnsureCluster and n creates of
// INTEGER records in cluster k of collection c, which waits each before
// making op i (as an import parsing its body on a loaded machine), and
// stall before making op stallAt (0: never).
type slowSource struct {
	n, stallAt  int
	each, stall time.Duration
}

func (s *slowSource) Len() int { return s.n + 1 }

func (s *slowSource) Op(i int) store.Op {
	time.Sleep(s.each)
	if i == s.stallAt && s.stallAt > 0 {
		time.Sleep(s.stall)
	}
	if i == 0 {
		return store.Op{Kind: store.OpEnsureCluster, Collection: "c", Cluster: "k"}
	}
	return store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: "r" + strconv.Itoa(i),
		New: &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(i))}}
}

package sqlite_test

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
	"github.com/hds-go/hds/store/sqlite"
)

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

// deadlineProject makes the project p of a test of Apply's deadline.
func deadlineProject(t *testing.T, s *sqlite.Store) store.Path {
	p := store.Path{Caller: store.Caller{UserID: "u"}, Project: "p"}
	_, err := s.CreateProject(context.Background(), p)
	require.NoError(t, err)
	return p
}

// TestApplyDeadlineFollowsWork checks that a batch that keeps making
// progress is not cut off, however long it takes in all: here twice the
// timeout plus a millisecond an op, the fixed allowance it had before (a
// loaded CI machine ran out of it in the conformance suite).
func TestApplyDeadlineFollowsWork(t *testing.T) {
	const timeout = 2 * time.Second
	s := open(t, sqlite.WithTimeout(timeout))
	p := deadlineProject(t, s)
	src := &slowSource{n: 500, each: 8 * time.Millisecond} // 4 s of waiting
	start := time.Now()
	res, err := s.Apply(context.Background(), p, store.Batch{Source: src, OmitRecords: true, CreateParents: true})
	require.NoError(t, err, "a batch making progress, after %v", time.Since(start))
	assert.Len(t, res, src.Len(), "every op applied")
	k, err := s.FindCluster(context.Background(), store.Path{Caller: p.Caller, Project: "p", Collection: "c", Cluster: "k"}, false)
	require.NoError(t, err)
	assert.Equal(t, src.n, k.RecordCount, "every record written")
}

// TestApplyDeadlineStalled checks that a batch that stops making
// progress for the timeout fails as unavailable, leaving nothing.
func TestApplyDeadlineStalled(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s := open(t, sqlite.WithTimeout(timeout))
	p := deadlineProject(t, s)
	src := &slowSource{n: 20, stallAt: 10, stall: 5 * timeout}
	_, err := s.Apply(context.Background(), p, store.Batch{Source: src, OmitRecords: true, CreateParents: true})
	require.Error(t, err, "a stalled batch")
	assert.ErrorIs(t, err, store.ErrUnavailable, "a stalled batch")
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "a stalled batch ran out of time: %v", err)
	_, err = s.FindCollection(context.Background(), store.Path{Caller: p.Caller, Project: "p", Collection: "c"})
	assert.ErrorIs(t, err, store.ErrNotFound, "nothing of the stalled batch")
}

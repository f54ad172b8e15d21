package hds_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// TestRotateCredentialsReachesSnapshots: a rotation re-seals the values
// snapshots keep (docs/api.md#snapshots-and-rollback-v13), and its
// final check counts those it could not.
func TestRotateCredentialsReachesSnapshots(t *testing.T) {
	ctx := t.Context()
	k1, k2, k3 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 32)
	old, err := sealing.NewKeyring(k1)
	require.NoError(t, err)
	s := memory.New()
	p := store.Path{Project: "web"}
	_, err = s.CreateProject(ctx, p)
	require.NoError(t, err)
	p.Collection = "prod"
	_, err = s.CreateCollection(ctx, p)
	require.NoError(t, err)
	p.Cluster = "app"
	_, err = s.CreateCluster(ctx, p)
	require.NoError(t, err)
	id := store.NewID()
	sealed, err := old.SealValue(store.Credential, id, json.RawMessage(`"s3cret"`))
	require.NoError(t, err)
	p.Record = "pw"
	_, err = s.CreateRecord(ctx, p, &store.Record{ID: id, Type: store.Credential, Value: sealed}, store.Write{})
	require.NoError(t, err)
	p.Record = ""
	_, err = s.CreateSnapshot(ctx, p, "v1", "")
	require.NoError(t, err)
	require.NoError(t, s.DeleteRecord(ctx, store.Path{Project: "web", Collection: "prod", Cluster: "app", Record: "pw"}, store.Write{}))

	got, err := hds.RotateCredentials(ctx, s, hds.Rotation{Primary: k2, Previous: [][]byte{k1}})
	require.NoError(t, err)
	assert.Equal(t, 1, got.SnapshotsResealed, "the value the snapshot keeps, its record deleted")
	assert.Zero(t, got.SnapshotsRemaining)
	ring, err := sealing.NewKeyring(k2)
	require.NoError(t, err)
	var value json.RawMessage
	require.NoError(t, s.SnapshotRecords(ctx, store.Path{Project: "web"}, "v1", func(_ string, r *store.Record) error {
		if r != nil {
			value, err = ring.OpenValue(r.Type, r.ID, r.Value)
		}
		return err
	}))
	assert.JSONEq(t, `"s3cret"`, string(value), "opens with the new key alone")

	again, err := hds.RotateCredentials(ctx, s, hds.Rotation{Primary: k2})
	require.NoError(t, err)
	assert.Zero(t, again.SnapshotsResealed, "already under the primary key")

	// A value no key given opens stops the rotation, naming its record.
	_, err = hds.RotateCredentials(ctx, s, hds.Rotation{Primary: k3})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a snapshot's value of record "+id+" does not open with any key given")
	assert.False(t, errors.Is(err, hds.ErrRotationIncomplete))
	assert.NotContains(t, err.Error(), "s3cret")
}

// lostWrites is a store whose snapshots never take what a re-seal writes,
// as if a server still sealing with the old key wrote them again.
type lostWrites struct{ *memory.Store }

func (l lostWrites) ResealSnapshots(ctx context.Context, reseal store.SnapshotResealer) (int, error) {
	return l.Store.ResealSnapshots(ctx, func(id string, t store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
		_, _, err := reseal(id, t, v)
		return nil, false, err
	})
}

// TestRotateCredentialsCountsStaleSnapshots: the final check counts the
// snapshot values still under another key, and the rotation is then
// incomplete.
func TestRotateCredentialsCountsStaleSnapshots(t *testing.T) {
	ctx := t.Context()
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	old, err := sealing.NewKeyring(k1)
	require.NoError(t, err)
	s := memory.New()
	p := store.Path{Project: "web", Collection: "prod", Cluster: "app"}
	_, err = s.Apply(ctx, p, store.Batch{CreateParents: true, Ops: []store.Op{{Kind: store.OpEnsureCollection, Collection: "prod"}}})
	require.ErrorIs(t, err, store.ErrNotFound, "no project yet")
	_, err = s.CreateProject(ctx, store.Path{Project: "web"})
	require.NoError(t, err)
	id := store.NewID()
	sealed, err := old.SealValue(store.Credential, id, json.RawMessage(`"s3cret"`))
	require.NoError(t, err)
	_, err = s.Apply(ctx, p, store.Batch{CreateParents: true, Ops: []store.Op{{Kind: store.OpCreate, Collection: "prod", Cluster: "app",
		Record: "pw", New: &store.Record{ID: id, Type: store.Credential, Value: sealed}}}})
	require.NoError(t, err)
	_, err = s.CreateSnapshot(ctx, p, "v1", "")
	require.NoError(t, err)
	got, err := hds.RotateCredentials(ctx, lostWrites{s}, hds.Rotation{Primary: k2, Previous: [][]byte{k1}})
	require.ErrorIs(t, err, hds.ErrRotationIncomplete)
	assert.Equal(t, 1, got.SnapshotsRemaining)
	assert.Zero(t, got.Remaining, "the record itself was re-sealed")
	assert.Contains(t, err.Error(), "1 snapshot values")
}

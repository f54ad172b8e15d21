package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/store"
)

// rotationTree is a store with credential records sealed by old, spread
// over projects, collections and clusters that the tests rename.
type rotationTree struct {
	st       store.Store
	old, new []byte
	ids      []string
}

// newRotationTree makes projects rp0..rp(np-1), each with collections c0
// and c1, each with clusters k0 and k1, each with perCluster CREDENTIAL
// records sealed by a fresh old key.
func newRotationTree(t *testing.T, kind storeKind, np, perCluster int) *rotationTree {
	t.Helper()
	st, _ := kind.new(t)
	rt := &rotationTree{st: st, old: credKey(t), new: credKey(t)}
	ring, err := sealing.NewKeyring(rt.old)
	require.NoError(t, err)
	ctx := t.Context()
	for p := range np {
		path := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "owner"}, Project: fmt.Sprintf("rp%d", p)}
		_, err := st.CreateProject(ctx, path)
		require.NoError(t, err, "CreateProject")
		for c := range 2 {
			path.Collection = fmt.Sprintf("c%d", c)
			_, err := st.CreateCollection(ctx, path)
			require.NoError(t, err, "CreateCollection")
			for k := range 2 {
				path.Cluster = fmt.Sprintf("k%d", k)
				_, err := st.CreateCluster(ctx, path)
				require.NoError(t, err, "CreateCluster")
				for r := range perCluster {
					id := store.NewID()
					v, err := ring.SealValue(store.Credential, id, []byte(credJSON(credSecret("r"))))
					require.NoError(t, err, "SealValue")
					path.Record = fmt.Sprintf("r%d", r)
					_, err = st.CreateRecord(ctx, path, &store.Record{ID: id, Type: store.Credential, Value: v}, store.Write{})
					require.NoError(t, err, "CreateRecord")
					rt.ids = append(rt.ids, id)
				}
			}
		}
	}
	return rt
}

// underOld counts the credential records whose value the new key alone
// does not open (still sealed by the old key).
func (rt *rotationTree) underOld(t *testing.T) int {
	t.Helper()
	ring, err := sealing.NewKeyring(rt.new)
	require.NoError(t, err)
	refs, err := rt.st.FindCredentialRecords(t.Context(), "", len(rt.ids)+100)
	require.NoError(t, err, "FindCredentialRecords")
	n := 0
	for _, ref := range refs {
		if _, err := ring.OpenValue(ref.Record.Type, ref.Record.ID, ref.Record.Value); err != nil {
			n++
		}
	}
	return n
}

// renameAfterListing is a store that renames the project, collection or
// cluster (in turn) of the records a FindCredentialRecords call returns,
// right after listing them, on every other call: the rotation then finds
// the paths of its batch stale, as when the names change while it runs.
type renameAfterListing struct {
	store.Store
	t     *testing.T
	calls int
	seq   int
}

func (s *renameAfterListing) FindCredentialRecords(ctx context.Context, afterID string, limit int) ([]store.RecordRef, error) {
	refs, err := s.Store.FindCredentialRecords(ctx, afterID, limit)
	if err != nil || len(refs) == 0 {
		return refs, err
	}
	s.calls++
	if s.calls%2 == 0 {
		return refs, nil
	}
	p := refs[len(refs)-1].Path // the batch's last record: the walk meets its new name last
	s.seq++
	var rerr error
	switch s.seq % 3 {
	case 0:
		_, rerr = s.Store.RenameProject(ctx, p, fmt.Sprintf("%s-%d", p.Project, s.seq))
	case 1:
		_, rerr = s.Store.RenameCollection(ctx, p, fmt.Sprintf("%s-%d", p.Collection, s.seq))
	case 2:
		_, rerr = s.Store.RenameCluster(ctx, p, fmt.Sprintf("%s-%d", p.Cluster, s.seq))
	}
	require.NoError(s.t, rerr, "rename after listing")
	return refs, nil
}

// TestRotateCredentialsFollowsRenames: projects, collections and clusters
// renamed between the listing of a batch and the re-sealing of its records
// leave nothing under the old key (issue 10 finding 3: the rotation used to
// take the records it no longer found by name for deleted).
func TestRotateCredentialsFollowsRenames(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		rt := newRotationTree(t, kind, 3, 4) // 48 records
		st := &renameAfterListing{Store: rt.st, t: t}
		p, err := hds.RotateCredentials(t.Context(), st, hds.Rotation{Primary: rt.new, Previous: [][]byte{rt.old}, BatchSize: 5})
		require.NoError(t, err, "RotateCredentials")
		assert.Greater(t, st.seq, 3, "renames made during the rotation")
		assert.Equal(t, hds.RotationProgress{Seen: len(rt.ids), Resealed: len(rt.ids), LastID: maxID(rt.ids)}, p, "progress")
		assert.Zero(t, rt.underOld(t), "records left under the old key")
	})
}

// TestRotateCredentialsConcurrentRenames: with projects, collections and
// clusters renamed by another goroutine all along, the rotation either
// re-seals everything or says how many remain (ErrRotationIncomplete);
// never does it report success with values left under the old key.
func TestRotateCredentialsConcurrentRenames(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		rt := newRotationTree(t, kind, 2, 25) // 200 records
		ctx := t.Context()
		var stop atomic.Bool
		var wg sync.WaitGroup
		var renames atomic.Int64
		for p := range 2 {
			wg.Go(func() {
				// Rename back and forth, at every level in turn.
				name := fmt.Sprintf("rp%d", p)
				for i := 0; !stop.Load(); i++ {
					base := store.Path{Project: name, Collection: "c0", Cluster: "k0"}
					var err error
					switch i % 6 {
					case 0:
						_, err = rt.st.RenameProject(ctx, base, name+"-x")
						base.Project = name + "-x"
						if err == nil {
							_, err = rt.st.RenameProject(ctx, base, name)
						}
					case 1, 2:
						_, err = rt.st.RenameCollection(ctx, base, "c0-x")
						base.Collection = "c0-x"
						if err == nil {
							_, err = rt.st.RenameCollection(ctx, base, "c0")
						}
					default:
						_, err = rt.st.RenameCluster(ctx, base, "k0-x")
						base.Cluster = "k0-x"
						if err == nil {
							_, err = rt.st.RenameCluster(ctx, base, "k0")
						}
					}
					if !assert.NoError(t, err, "rename") {
						return
					}
					renames.Add(2)
				}
			})
		}
		p, err := hds.RotateCredentials(ctx, rt.st, hds.Rotation{Primary: rt.new, Previous: [][]byte{rt.old}, BatchSize: 7})
		stop.Store(true)
		wg.Wait()
		left := rt.underOld(t)
		t.Logf("%d renames during the rotation; %+v, %v; %d left under the old key", renames.Load(), p, err, left)
		switch {
		case err == nil:
			assert.Zero(t, left, "RotateCredentials succeeded with records left under the old key")
			assert.Zero(t, p.Remaining, "Remaining after success")
		case errors.Is(err, hds.ErrRotationIncomplete):
			assert.Positive(t, p.Remaining, "Remaining with ErrRotationIncomplete")
			// Without renames, a second run finishes the work.
			_, err = hds.RotateCredentials(ctx, rt.st, hds.Rotation{Primary: rt.new, Previous: [][]byte{rt.old}, BatchSize: 7})
			require.NoError(t, err, "the second RotateCredentials")
			assert.Zero(t, rt.underOld(t), "records left under the old key after the second run")
		default:
			require.NoError(t, err, "RotateCredentials")
		}
	})
}

// TestRotateCredentialsFinalCheck: a value sealed with the old key after
// the walk has passed its id (a server not yet sealing with the new key)
// is found by the final check: ErrRotationIncomplete, Remaining 1. Once
// it is re-sealed, the rotation succeeds.
func TestRotateCredentialsFinalCheck(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		rt := newRotationTree(t, kind, 1, 3) // 12 records
		ctx := t.Context()
		ring, err := sealing.NewKeyring(rt.old)
		require.NoError(t, err)
		const lowID = "00000000-0000-4000-8000-000000000001" // before every id the walk meets
		written := false
		p, err := hds.RotateCredentials(ctx, rt.st, hds.Rotation{Primary: rt.new, Previous: [][]byte{rt.old}, BatchSize: 5,
			Progress: func(hds.RotationProgress) {
				if written {
					return
				}
				written = true
				v, err := ring.SealValue(store.Credential, lowID, []byte(`"late"`))
				require.NoError(t, err, "SealValue")
				_, err = rt.st.CreateRecord(ctx, store.Path{Project: "rp0", Collection: "c0", Cluster: "k0", Record: "late"},
					&store.Record{ID: lowID, Type: store.Credential, Value: v}, store.Write{})
				require.NoError(t, err, "CreateRecord behind the walk")
			}})
		require.ErrorIs(t, err, hds.ErrRotationIncomplete, "RotateCredentials with a value written behind it under the old key")
		assert.Equal(t, 1, p.Remaining, "Remaining")
		assert.Equal(t, len(rt.ids), p.Resealed, "Resealed")
		assert.Contains(t, err.Error(), "1 records", "the error says how many remain")

		p, err = hds.RotateCredentials(ctx, rt.st, hds.Rotation{Primary: rt.new, Previous: [][]byte{rt.old}, BatchSize: 5})
		require.NoError(t, err, "the second RotateCredentials")
		assert.Equal(t, 1, p.Resealed, "Resealed by the second run")
		assert.Zero(t, rt.underOld(t), "records left under the old key")
	})
}

func maxID(ids []string) string {
	m := ""
	for _, id := range ids {
		m = max(m, id)
	}
	return m
}

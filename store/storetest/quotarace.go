package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// testBytesAfterRaces: the byte count of a project
// (docs/api.md#limits-rate-limits-and-quotas) equals a recount of what it
// holds after creates of clusters and records (single writes and batches)
// race deletes, re-creates and renames of their collection and deletes of
// their clusters; and deleting every collection then leaves nothing
// counted.
func testBytesAfterRaces(t *testing.T, newStore func(t *testing.T, q store.Quotas) store.Store) {
	const limit = 50_000
	const rounds = 60
	s := newStore(t, store.Quotas{MaxBytesPerProject: limit})
	ctx := t.Context()
	mustProject(t, s, owner, projName)
	pp := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: projName}
	coll := func(name string) store.Path { p := pp; p.Collection = name; return p }
	clus := func(c, k string) store.Path { p := coll(c); p.Cluster = k; return p }
	mustCollection(t, s, coll("c"))

	value := &store.Record{Type: store.String, Value: json.RawMessage(`"0123456789"`)}
	// expected: the errors a write may meet when its parent goes meanwhile.
	expected := func(err error) error {
		if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAlreadyExists) {
			return nil
		}
		return err
	}
	errs := race(5, func(i int) error {
		for j := range rounds {
			var err error
			switch i {
			case 0: // the parent goes and comes back, under another name for a while
				if err = expected(s.DeleteCollection(ctx, coll("c"))); err == nil {
					_, err = s.CreateCollection(ctx, coll("c"))
					if err = expected(err); err == nil && j%3 == 0 {
						_, err = s.RenameCollection(ctx, coll("c"), "cc")
						if err = expected(err); err == nil {
							_, err = s.RenameCollection(ctx, coll("cc"), "c")
							err = expected(err)
						}
					}
				}
			case 1, 2: // clusters, with a record each
				k := fmt.Sprintf("k%d-%d", i, j)
				if _, err = s.CreateCluster(ctx, clus("c", k)); expected(err) == nil {
					r := clus("c", k)
					r.Record = "r"
					_, err = s.CreateRecord(ctx, r, value, store.Write{})
				}
				err = expected(err)
			case 3: // batches that create their parents
				_, err = s.Apply(ctx, pp, store.Batch{CreateParents: true, Ops: []store.Op{
					{Kind: store.OpCreate, Collection: "c", Cluster: fmt.Sprint("b", j), Record: "r1", New: value},
					{Kind: store.OpCreate, Collection: "c", Cluster: "k1-0", Record: fmt.Sprint("b", j), New: value},
				}})
				err = expected(err)
			case 4: // clusters deleted as they come
				err = expected(s.DeleteCluster(ctx, clus("c", fmt.Sprintf("k2-%d", j))))
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	for i, err := range errs {
		require.NoError(t, err, "racer %d", i)
	}

	held := recountBytes(t, s, pp)
	mustCollection(t, s, coll("probe"))
	mustCluster(t, s, clus("probe", "k")) // 6 bytes
	assertRoom(t, s, clus("probe", "k"), limit, limit-held-6, fmt.Sprintf("after the race, holding %d bytes by recount", held))

	cs, _, err := s.FindCollections(ctx, pp, store.ListQuery{Limit: store.MaxLimit, SortBy: store.SortName})
	require.NoError(t, err)
	for _, c := range cs {
		require.NoError(t, s.DeleteCollection(ctx, coll(c.Name)))
	}
	mustCollection(t, s, coll("probe"))
	mustCluster(t, s, clus("probe", "k"))
	assertRoom(t, s, clus("probe", "k"), limit, limit-6, "after deleting every collection")
}

// recountBytes counts what docs/api.md#limits-rate-limits-and-quotas
// counts in the project of pp, through the Store's lists: names of
// collections, clusters and records, and values (the records it walks keep
// no versions).
func recountBytes(t *testing.T, s store.Store, pp store.Path) int64 {
	t.Helper()
	ctx := t.Context()
	lq := store.ListQuery{Limit: store.MaxLimit, SortBy: store.SortName}
	var n int64
	cs, total, err := s.FindCollections(ctx, pp, lq)
	require.NoError(t, err)
	require.Len(t, cs, total, "one page holds every collection")
	for _, c := range cs {
		n += int64(len(c.Name))
		cp := pp
		cp.Collection = c.Name
		ks, total, err := s.FindClusters(ctx, cp, lq)
		require.NoError(t, err)
		require.Len(t, ks, total, "one page holds every cluster")
		for _, k := range ks {
			n += int64(len(k.Name))
			kp := cp
			kp.Cluster = k.Name
			rs, total, err := s.FindRecords(ctx, kp, store.RecordQuery{ListQuery: lq})
			require.NoError(t, err)
			require.Len(t, rs, total, "one page holds every record")
			for _, r := range rs {
				assert.Equal(t, int64(1), r.Version, "the race keeps no versions")
				n += int64(len(r.Name) + len(r.Value))
			}
		}
	}
	return n
}

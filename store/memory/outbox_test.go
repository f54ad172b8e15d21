package memory

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// TestWebhookQueuesFootprint: 20 webhooks whose receivers never answer,
// past full (10,000 pending each, store.DefaultMaxPending, and the 1,000
// newest failed ones kept), add at most 200 MB of heap to the memory
// store (docs/api.md#webhooks), and the queues stay at their bound.
// The heap is compared with the same writes on a store without webhooks.
func TestWebhookQueuesFootprint(t *testing.T) {
	const hooks, writes = 20, store.DefaultMaxPending + 2*KeptDeliveries
	heap := func(withHooks bool) (int64, *Store) {
		ctx := context.Background()
		base := liveHeap()
		s := New(WithQuotas(store.NoQuotas))
		p := store.Path{Project: "p", Collection: "c", Cluster: "k", Need: store.RightAdmin}
		_, err := s.CreateProject(ctx, p)
		require.NoError(t, err)
		_, err = s.CreateCollection(ctx, p)
		require.NoError(t, err)
		_, err = s.CreateCluster(ctx, p)
		require.NoError(t, err)
		if withHooks {
			for range hooks {
				_, err := s.CreateWebhook(ctx, p, &store.Webhook{URL: "https://hooks.example/in",
					Actions: []store.Action{store.ActionRecordCreate}, Secret: []byte("0123456789abcdef")})
				require.NoError(t, err)
			}
		}
		for i := range writes {
			p.Record = fmt.Sprintf("r%05d", i)
			_, err := s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: []byte("1")}, store.Write{})
			require.NoError(t, err)
		}
		return liveHeap() - base, s
	}
	without, s0 := heap(false)
	with, s := heap(true)
	added := with - without
	t.Logf("%d webhooks with full queues add %.1f MiB (%.0f B per delivery kept)", hooks, float64(added)/(1<<20),
		float64(added)/float64(hooks*(store.DefaultMaxPending+KeptDeliveries)))
	assert.Less(t, added, int64(200<<20), "20 full queues add at most 200 MB")
	pr := s.projects["p"]
	for _, h := range pr.hooks {
		assert.Equal(t, store.DefaultMaxPending, len(h.events)+len(h.pings), "pending at the bound")
		assert.Equal(t, KeptDeliveries, len(h.finished), "the newest finished ones")
	}
	runtime.KeepAlive(s0)
	runtime.KeepAlive(s)
}

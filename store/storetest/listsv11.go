package storetest

// The v1.1 list queries of API.md section 5: NoCount (count=false) and the
// range filters.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

func testListsV11(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("NoCount", func(t *testing.T) {
		for _, l := range listers {
			t.Run(l.kind, func(t *testing.T) {
				sc := l.setup(t, newStore(t))
				for _, name := range []string{"one", "two", "three"} {
					sc.create(t, name)
				}
				q := store.NewListQuery()
				q.Limit = 2
				want, n, err := sc.list(t, q)
				require.NoError(t, err)
				assert.Equal(t, 3, n, "counted")
				q.NoCount = true
				got, n, err := sc.list(t, q)
				require.NoError(t, err)
				assert.Equal(t, store.NotCounted, n, "NoCount: the total is NotCounted")
				assert.Equal(t, entryNames(want), entryNames(got), "NoCount: the same page")
				q.Offset = 10
				got, n, err = sc.list(t, q)
				require.NoError(t, err)
				assert.Equal(t, store.NotCounted, n, "NoCount past the end: the total is NotCounted")
				assert.Empty(t, got, "NoCount past the end: nothing")
			})
		}
		t.Run("StreamRecords", func(t *testing.T) {
			f := newRecordFixture(t, newStore(t), valueRecords)
			q := recordQuery()
			q.NoCount, q.Limit = true, 3
			n, seq, err := store.StreamRecords(t.Context(), f.s, f.in, q)
			require.NoError(t, err)
			assert.Equal(t, store.NotCounted, n, "StreamRecords with NoCount")
			var names []string
			for r, err := range seq {
				require.NoError(t, err)
				names = append(names, r.Name)
			}
			assert.Equal(t, []string{"a", "b", "c"}, names)
		})
	})
}

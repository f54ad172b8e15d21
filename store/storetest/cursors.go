package storetest

// Cursors (docs/api.md#list-queries, v1.1): ListQuery.After resumes a
// list after an item, in any order, with any filter, and a walk by cursor
// never repeats an item nor skips one that exists for the whole walk, while
// other items are inserted and deleted.

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// sortCases are the orders every list is walked in.
var sortCases = []struct {
	by   store.SortField
	desc bool
}{
	{store.SortName, false}, {store.SortName, true},
	{store.SortID, false}, {store.SortID, true},
	{store.SortCreatedAt, false}, {store.SortCreatedAt, true},
	{store.SortUpdatedAt, false}, {store.SortUpdatedAt, true},
}

// recordSortCases add the orders of record lists.
var recordSortCases = append([]struct {
	by   store.SortField
	desc bool
}{{store.SortValue, false}, {store.SortValue, true}, {store.SortType, false}, {store.SortType, true}}, sortCases...)

func testCursors(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Containers", func(t *testing.T) {
		for _, l := range listers {
			t.Run(l.kind, func(t *testing.T) {
				sc := l.setup(t, newStore(t))
				for i := range 7 {
					sc.create(t, fmt.Sprintf("item-%d", (i*5)%7))
				}
				sc.outside(t, "item-x")
				sc.rename(t, "item-3", "item-33") // updated_at differs from created_at
				for _, c := range sortCases {
					q := store.NewListQuery()
					q.SortBy, q.Desc, q.Limit = c.by, c.desc, 1000
					all, _, err := sc.list(t, q)
					require.NoError(t, err)
					q.Limit = 3
					var walked []entry
					for range 10 {
						page, n, err := sc.list(t, q)
						require.NoError(t, err)
						assert.Equal(t, 7, n, "%s %v: the total counts every match", c.by, c.desc)
						walked = append(walked, page...)
						if len(page) < q.Limit {
							break
						}
						last := page[len(page)-1]
						pos := store.At(c.by, last.ID, last.Name, last.CreatedAt, last.UpdatedAt)
						q.After = &pos
					}
					assert.Equal(t, entryIDs(all), entryIDs(walked), "%s desc=%v: pages by cursor are the list", c.by, c.desc)
				}
			})
		}
	})

	t.Run("Records", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), valueRecords)
		for _, filtered := range []bool{false, true} {
			for _, c := range recordSortCases {
				q := recordQuery()
				q.SortBy, q.Desc, q.Limit = c.by, c.desc, 1000
				if filtered {
					q.Search = "" // every name is one letter: filter by value instead
					q.ValueContains = "a"
				}
				all, total, err := f.find(t, q)
				require.NoError(t, err)
				for _, limit := range []int{1, 2, 5} {
					q.Limit, q.After = limit, nil
					var walked []*store.Record
					for range 30 {
						page, n, err := f.find(t, q)
						require.NoError(t, err)
						assert.Equal(t, total, n, "the total counts every match")
						walked = append(walked, page...)
						if len(page) < q.Limit {
							break
						}
						pos := store.RecordAt(c.by, page[len(page)-1])
						q.After = &pos
					}
					assert.Equal(t, recordNames(all), recordNames(walked), "%s desc=%v limit %d filtered=%v: pages by cursor are the list",
						c.by, c.desc, limit, filtered)
				}
			}
		}
	})

	t.Run("NoCount", func(t *testing.T) {
		f := newRecordFixture(t, newStore(t), valueRecords)
		q := recordQuery()
		q.Limit, q.NoCount = 2, true
		page, _, err := f.find(t, q)
		require.NoError(t, err)
		pos := store.RecordAt(q.SortBy, page[1])
		q.After = &pos
		page, n, err := f.find(t, q)
		require.NoError(t, err)
		assert.Equal(t, store.NotCounted, n)
		assert.Equal(t, []string{"c", "d"}, recordNames(page))
	})

	t.Run("LongTexts", func(t *testing.T) {
		// Texts longer than the prefix a store may index, equal in it.
		long := make([]byte, 600)
		for i := range long {
			long[i] = 'x'
		}
		var cases []valueCase
		for i, tail := range []string{"b", "a", "c", "a"} {
			cases = append(cases, valueCase{fmt.Sprintf("r%d", i), store.String, `"` + string(long) + tail + `"`})
		}
		f := newRecordFixture(t, newStore(t), cases)
		for _, desc := range []bool{false, true} {
			q := recordQuery()
			q.SortBy, q.Desc = store.SortValue, desc
			all, _, err := f.find(t, q)
			require.NoError(t, err)
			q.Limit = 1
			var walked []*store.Record
			for range 10 {
				page, _, err := f.find(t, q)
				require.NoError(t, err)
				walked = append(walked, page...)
				if len(page) == 0 {
					break
				}
				pos := store.RecordAt(q.SortBy, page[0])
				q.After = &pos
			}
			assert.Equal(t, recordNames(all), recordNames(walked), "desc=%v", desc)
		}
	})

	t.Run("WhileWriting", func(t *testing.T) {
		for _, c := range []struct {
			by   store.SortField
			desc bool
		}{{store.SortName, false}, {store.SortName, true}, {store.SortValue, false}, {store.SortCreatedAt, true}, {store.SortID, false}} {
			t.Run(fmt.Sprintf("%s-desc=%v", c.by, c.desc), func(t *testing.T) {
				testCursorWhileWriting(t, newStore(t), c.by, c.desc)
			})
		}
	})
}

// testCursorWhileWriting walks a cluster by cursor while another
// goroutine inserts records and deletes some of those there at the start:
// no record is listed twice, and every record that was there at the
// start and never deleted is listed.
func testCursorWhileWriting(t *testing.T, s store.Store, by store.SortField, desc bool) {
	const n = 200
	f := newRecordFixture(t, s, nil)
	survivors := map[string]bool{}
	var doomed []string
	for i := range n {
		name := fmt.Sprintf("r%03d", (i*37)%n)
		r := mustRecord(t, s, setLevel(f.in, 3, name), store.Integer, fmt.Sprint((i*53)%n))
		if i%3 == 0 {
			doomed = append(doomed, name)
		} else {
			survivors[r.ID] = true
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load() && i < 2*len(doomed); i++ {
			p := setLevel(f.in, 3, fmt.Sprintf("new%04d", i))
			v := &store.Record{Type: store.Integer, Value: []byte(fmt.Sprint((i * 7) % n))}
			if _, err := s.CreateRecord(t.Context(), p, v, store.Write{}); err != nil {
				t.Errorf("CreateRecord: %v", err)
				return
			}
			if i < len(doomed) {
				if err := s.DeleteRecord(t.Context(), setLevel(f.in, 3, doomed[i]), store.Write{}); err != nil {
					t.Errorf("DeleteRecord: %v", err)
					return
				}
			}
		}
	}()
	q := recordQuery()
	q.SortBy, q.Desc, q.Limit, q.NoCount = by, desc, 7, true
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 1000, "the walk ends")
		page, _, err := f.find(t, q)
		require.NoError(t, err)
		for _, r := range page {
			assert.False(t, seen[r.ID], "record %q listed twice", r.Name)
			seen[r.ID] = true
		}
		if len(page) < q.Limit {
			break
		}
		pos := store.RecordAt(by, page[len(page)-1])
		q.After = &pos
	}
	stop.Store(true)
	wg.Wait()
	for id := range survivors {
		assert.True(t, seen[id], "record %s, there for the whole walk, was skipped", id)
	}
}

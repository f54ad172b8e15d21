package memory

import (
	"strconv"
	"strings"
	"sync"

	"github.com/hds-go/hds/store"
)

// counts remembers the totals of a cluster's last counted lists whose
// filters are read from no index (search, valueContains, or a filter
// beside them), which a count otherwise walks: a client paging with
// count=true asks the same count on every page. A total holds while the
// cluster's records stay as they were: every change to them (records'
// insert, remove and attach, under the write lock) moves gen, which
// drops the totals. Readers share it under the store's read lock, so it
// has a lock of its own.
type counts struct {
	mu      sync.Mutex
	gen     uint64 // the records' generation the totals hold for
	next    int
	entries [4]countEntry
}

type countEntry struct {
	filters string // filterKey of the list
	total   int
}

// get returns the total of the list with filters at the records'
// generation gen, or false.
func (c *counts) get(gen uint64, filters string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return 0, false
	}
	for _, e := range c.entries {
		if e.filters == filters && filters != "" {
			return e.total, true
		}
	}
	return 0, false
}

// put remembers total for the list with filters at generation gen.
func (c *counts) put(gen uint64, filters string, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		c.gen, c.entries, c.next = gen, [4]countEntry{}, 0
	}
	c.entries[c.next] = countEntry{filters, total}
	c.next = (c.next + 1) % len(c.entries)
}

// filterKey returns a text that differs between any two queries whose
// filters differ (sort and paging left out).
func filterKey(q store.RecordQuery) string {
	var b strings.Builder
	field := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	bound := func(k *store.ValueKey) {
		if k == nil {
			field("-")
			return
		}
		field(strconv.Itoa(int(k.Group)) + "/" + strconv.FormatBool(k.HasText) + "/" + strconv.FormatBool(k.IsInt) + "/" +
			strconv.FormatInt(k.Int, 10) + "/" + strconv.FormatFloat(k.Float, 'g', -1, 64))
		field(k.Text)
	}
	field(string(q.Type))
	field(q.Search)
	field(strconv.FormatBool(q.HasValue))
	field(q.Value)
	field(q.ValueContains)
	bound(q.Min)
	bound(q.Max)
	return b.String()
}

package observe

import (
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// maxTexts bounds the texts table: an index is a uint16.
const maxTexts = 1 << 16

// textTable interns the texts facts carry, so that a queued event holds
// indexes instead of strings. The texts are a small, fixed set: the
// methods Method returns, the routes of the handlers' patterns (Route),
// and this package's kinds and outcomes. None comes from a request, so
// the table grows only while routes are first met; a text past maxTexts
// would drop its fact (and be counted) rather than grow it further.
//
// Reading is a lookup in an immutable map, without a lock; a new text
// copies the table under mu.
type textTable struct {
	mu  sync.Mutex
	set atomic.Pointer[textSet]
	max int // the most texts it holds
}

// textSet is one immutable state of a textTable: index is list's
// inverse.
type textSet struct {
	index map[string]uint16
	list  []string
}

// texts is the process's table, shared by every Observer: handlers in
// one process meet the same routes. Index 0 is "", the text of a fact
// that has none.
var texts = newTextTable(maxTexts, "", http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodDelete, http.MethodOptions, http.MethodPatch, MethodOther, Unmatched,
	StoreTimeout, StoreUnavailable, StoreOther, DeliverySucceeded, DeliveryFailed, DeliveryRetried,
	BackupSucceeded, BackupFailed)

// newTextTable returns a table of at most max texts, holding initial
// in order.
func newTextTable(max int, initial ...string) *textTable {
	t := &textTable{max: max}
	set := &textSet{index: make(map[string]uint16, len(initial))}
	for _, s := range initial {
		if _, ok := set.index[s]; !ok {
			set.index[s] = uint16(len(set.list))
			set.list = append(set.list, s)
		}
	}
	t.set.Store(set)
	return t
}

// index returns the index of s, adding s when new; false when the table
// is full.
func (t *textTable) index(s string) (uint16, bool) {
	if i, ok := t.set.Load().index[s]; ok {
		return i, true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.set.Load()
	if i, ok := old.index[s]; ok {
		return i, true
	}
	if len(old.list) >= t.max {
		return 0, false
	}
	s = strings.Clone(s) // the table keeps it for the process's life
	set := &textSet{index: maps.Clone(old.index), list: append(old.list[:len(old.list):len(old.list)], s)}
	set.index[s] = uint16(len(old.list))
	t.set.Store(set)
	return uint16(len(old.list)), true
}

// at returns the text of index i.
func (t *textTable) at(i uint16) string { return t.set.Load().list[i] }

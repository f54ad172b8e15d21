package fanout_test

import (
	"slices"
	"testing"

	"github.com/hds-go/hds/internal/fanout"
	"github.com/hds-go/hds/store"
)

func entry(project string, rev int64) *store.AuditEntry {
	return &store.AuditEntry{ProjectID: project, Revision: rev}
}

// TestHub: entries reach the subscribers of their project only, once
// each, in order; a revision already delivered is skipped; End delivers
// nil and removes the subscribers; cancel removes one.
func TestHub(t *testing.T) {
	var h fanout.Hub
	var a, b, other []int64
	record := func(got *[]int64) func(*store.AuditEntry) {
		return func(e *store.AuditEntry) {
			if e == nil {
				*got = append(*got, -1)
				return
			}
			*got = append(*got, e.Revision)
		}
	}
	cancelA := h.Subscribe("p", 2, record(&a))
	h.Subscribe("p", 0, record(&b)) // the project has a subscriber: its last stays 2
	h.Subscribe("q", 0, record(&other))
	h.Publish(entry("p", 1), entry("p", 3), entry("q", 1), entry("p", 3), entry("p", 4))
	if want := []int64{3, 4}; !slices.Equal(a, want) || !slices.Equal(b, want) {
		t.Errorf("subscribers of p got %v and %v, want %v each", a, b, want)
	}
	if want := []int64{1}; !slices.Equal(other, want) {
		t.Errorf("subscriber of q got %v, want %v", other, want)
	}
	if got, want := h.Watched(), map[string]int64{"p": 4, "q": 1}; len(got) != 2 || got["p"] != want["p"] || got["q"] != want["q"] {
		t.Errorf("Watched() = %v, want %v", got, want)
	}
	cancelA()
	h.Publish(entry("p", 5))
	if want := []int64{3, 4}; !slices.Equal(a, want) {
		t.Errorf("a cancelled subscriber got %v, want %v", a, want)
	}
	h.End("p")
	if want := []int64{3, 4, 5, -1}; !slices.Equal(b, want) {
		t.Errorf("subscriber of p got %v after End, want %v", b, want)
	}
	h.Publish(entry("p", 6))
	if _, ok := h.Watched()["p"]; ok || len(b) != 4 {
		t.Errorf("after End, p is still watched (%v) or delivered to (%v)", h.Watched(), b)
	}
}

// Package fanout hands the entries of the projects' audit logs, as a
// store commits them, to the subscribers of each project in process: the
// building block of the Subscribe of a store.EventSource (the memory
// store publishes its own commits, the PostgreSQL store those it hears
// through LISTEN/NOTIFY).
package fanout

import (
	"sync"

	"github.com/hds-go/hds/store"
)

// Hub fans the entries of the projects' audit logs out to the
// subscribers of each project, in process: the building block of a
// store.EventSource's Subscribe. The zero Hub is ready to use.
type Hub struct {
	mu       sync.Mutex
	projects map[string]*hubProject
}

type hubProject struct {
	last int64
	subs map[*hubSub]struct{}
}

type hubSub struct{ deliver func(*store.AuditEntry) }

// Subscribe adds deliver to the subscribers of the project with id
// projectID; last is the project's newest revision, known to the caller,
// when the project has no subscriber yet. It returns the function that
// removes it.
func (h *Hub) Subscribe(projectID string, last int64, deliver func(*store.AuditEntry)) (cancel func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.projects == nil {
		h.projects = make(map[string]*hubProject)
	}
	hp := h.projects[projectID]
	if hp == nil {
		hp = &hubProject{last: last, subs: make(map[*hubSub]struct{})}
		h.projects[projectID] = hp
	}
	sub := &hubSub{deliver: deliver}
	hp.subs[sub] = struct{}{}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if hp := h.projects[projectID]; hp != nil {
			delete(hp.subs, sub)
			if len(hp.subs) == 0 {
				delete(h.projects, projectID)
			}
		}
	}
}

// Publish delivers each entry, in the order given, to the subscribers of
// its project, unless the project's subscribers already had its revision.
// Callers publish a project's entries in revision order.
func (h *Hub) Publish(entries ...*store.AuditEntry) {
	if len(entries) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range entries {
		hp := h.projects[e.ProjectID]
		if hp == nil || e.Revision <= hp.last {
			continue
		}
		hp.last = e.Revision
		for sub := range hp.subs {
			sub.deliver(e)
		}
	}
}

// End tells the subscribers of the project with id projectID that it was
// deleted (deliver(nil)) and removes them.
func (h *Hub) End(projectID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hp := h.projects[projectID]
	if hp == nil {
		return
	}
	delete(h.projects, projectID)
	for sub := range hp.subs {
		sub.deliver(nil)
	}
}

// Watched returns the projects that have subscribers, each with the
// newest revision they were given.
func (h *Hub) Watched() map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int64, len(h.projects))
	for id, hp := range h.projects {
		out[id] = hp.last
	}
	return out
}

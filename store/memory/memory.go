// Package memory is an in-memory implementation of store.Store and
// store.UserDirectory. It is the default store of hds.New, and the store
// to test against: fast, safe for concurrent use, and held to the same
// conformance suites (store/storetest) as the PostgreSQL store. Nothing
// survives the process.
package memory

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hds-go/hds/internal/fanout"
	"github.com/hds-go/hds/store"
)

// Store keeps everything in maps behind one read-write mutex. Values are
// copied in and out of the store.Store methods; the store.Streamer
// methods hand out the stored states themselves, which are never changed
// in place (a write replaces them). The zero value is not usable; call
// New.
type Store struct {
	// Now returns the current time; timestamps are truncated to
	// microseconds in UTC. Tests may replace it before first use.
	Now func() time.Time

	mu       sync.RWMutex
	projects map[string]*project // by name
	quotas   store.Quotas        // under mu
	out      outbox              // the webhooks' outboxes, under mu
	// written holds, under mu, the audit entries written since the write
	// lock was taken; unlock publishes and logs them.
	written []*store.AuditEntry
	hub     fanout.Hub
	logger  atomic.Pointer[slog.Logger]

	// tokens are the API tokens of every project, by the hex of their
	// hash (store.Access), under mu.
	tokens map[string]*store.APIToken

	usersMu     sync.RWMutex
	usersByName map[string]*store.User
	usersByID   map[string]*store.User
	// ended and used hold, under usersMu, the ended sessions and the used
	// refresh tokens (store.Sessions), each until it may be forgotten.
	ended, used sessionMarks
}

type project struct {
	store.Project
	collections map[string]*collection
	// members are the project's members by user id (store.Access).
	members map[string]*store.Member
	// bytes is what store.Quotas.MaxBytesPerProject counts.
	bytes int64
	// log is the project's audit log, oldest first: log[i] has revision
	// i+1 (Project.Revision is len(log)).
	log []*store.AuditEntry
	// hooks are the project's webhooks, oldest first, with their
	// outboxes (store.Webhooks).
	hooks []*hook
	// snaps are the project's snapshots by name (store.Snapshots).
	snaps map[string]*snap
}

type collection struct {
	store.Collection
	parent   *project
	clusters map[string]*cluster
}

type cluster struct {
	store.Cluster
	parent *collection
	// records are the cluster's records in ordered indexes, changed in
	// the write path.
	records *records
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.Streamer      = (*Store)(nil)
	_ store.QuotaSetter   = (*Store)(nil)
	_ store.UserDirectory = (*Store)(nil)
	_ store.Access        = (*Store)(nil)
)

// Option configures a Store.
type Option func(*Store)

// WithQuotas sets the quotas the store enforces, q.Effective() (default
// store.DefaultQuotas; a field left 0 keeps its default, store.Unlimited
// means no bound).
func WithQuotas(q store.Quotas) Option {
	return func(s *Store) { s.quotas = q.Effective() }
}

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{
		Now:         time.Now,
		projects:    make(map[string]*project),
		tokens:      make(map[string]*store.APIToken),
		quotas:      store.DefaultQuotas,
		out:         outbox{maxPending: store.DefaultMaxPending},
		usersByName: make(map[string]*store.User),
		usersByID:   make(map[string]*store.User),
		ended:       sessionMarks{marks: make(map[sessionKey]time.Time)},
		used:        sessionMarks{marks: make(map[sessionKey]time.Time)},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// SetQuotas implements store.QuotaSetter: the store enforces q.Effective().
func (s *Store) SetQuotas(q store.Quotas) {
	s.lock()
	defer s.unlock()
	s.quotas = q.Effective()
}

// Quotas returns the quotas the store enforces (store.Quotas.Effective of
// those it was given).
func (s *Store) Quotas() store.Quotas {
	s.lock()
	defer s.unlock()
	return s.quotas
}

// grow adds delta bytes to the project, or returns the *QuotaError of
// growing past its quota and changes nothing. Callers hold s.mu.
func (s *Store) grow(pr *project, delta int64) error {
	if err := s.quotas.CheckBytes(pr.bytes, delta); err != nil {
		return err
	}
	pr.bytes += delta
	return nil
}

// size is what a name and a value count against the project's quota.
func size(name string, value json.RawMessage) int64 { return int64(len(name) + len(value)) }

// bytes is what the record counts: its current state and its history.
func (r *record) bytes() int64 {
	n := size(r.Name(), r.Value())
	for _, h := range r.hist() {
		n += size(h.Name, h.Value)
	}
	return n
}

// bytes is what the cluster counts: its name and its records.
func (k *cluster) bytes() int64 {
	n := int64(len(k.Name))
	k.records.scan(func(r *record) bool {
		n += r.bytes()
		return true
	})
	return n
}

// bytes is what the collection counts: its name and its clusters.
func (c *collection) bytes() int64 {
	n := int64(len(c.Name))
	for _, k := range c.clusters {
		n += k.bytes()
	}
	return n
}

func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// SetAuditLogger implements store.AuditLogSetter.
func (s *Store) SetAuditLogger(logger *slog.Logger) { s.logger.Store(logger) }

// audit writes e, made by c, as the next entry of the project's audit log
// and returns it; the caller holds the write lock. It is the one way an
// entry is written: every change calls it, under the lock that makes the
// change.
func (s *Store) audit(pr *project, c store.Caller, e store.AuditEntry) *store.AuditEntry {
	pr.Revision++
	e.ProjectID, e.Project, e.Revision, e.Time = pr.ID, pr.Name, pr.Revision, s.now()
	e.Stamp(c)
	pr.log = append(pr.log, &e)
	s.written = append(s.written, &e)
	s.outbox(pr, &e)
	return &e
}

// changeRevision is the project's newest revision whose entry changes
// something (not credential.reveal), 0 when none: the revision of a
// comparison and what Batch.IfRevision is checked against
// (docs/api.md#21-compare-and-promote). The caller holds the lock; the
// scan goes back over the newest reveals only.
func (pr *project) changeRevision() int64 {
	for i := len(pr.log) - 1; i >= 0; i-- {
		if pr.log[i].Action != store.ActionCredentialReveal {
			return pr.log[i].Revision
		}
	}
	return 0
}

// unaudit drops the entries of the project after revision, written under
// the write lock the caller holds (a batch that rolls back).
func (s *Store) unaudit(pr *project, revision int64) {
	pr.log = pr.log[:revision]
	pr.Revision = revision
	pr.unoutbox(revision)
	s.written = slices.DeleteFunc(s.written, func(e *store.AuditEntry) bool {
		return e.ProjectID == pr.ID && e.Revision > revision
	})
}

// lock takes the write lock; unlock releases it. Every write takes it
// with lock and releases it with unlock, which publishes the audit
// entries written meanwhile (in revision order, under the lock) and logs
// them (after).
func (s *Store) lock() { s.mu.Lock() }

func (s *Store) unlock() {
	s.boundQueues()
	written := s.written
	s.written = nil
	s.hub.Publish(written...)
	s.mu.Unlock()
	store.LogAudit(context.Background(), s.logger.Load(), written...)
}

// Ping always succeeds: memory is always reachable.
func (s *Store) Ping(context.Context) error { return nil }

// project resolves p's project and checks p.Caller's access to it
// (store.Path.Check): map lookups only. It, collection, cluster and
// record resolve paths for callers that hold s.mu.
func (s *Store) project(p store.Path) (*project, error) {
	pr, ok := s.projects[p.Project]
	if err := p.Check(ok, pr.standing(p.Caller)); err != nil {
		return nil, err
	}
	return pr, nil
}

// standing is what p.Check needs of pr for caller; pr may be nil.
func (pr *project) standing(caller store.Caller) store.Standing {
	if pr == nil {
		return store.Standing{}
	}
	st := store.Standing{ProjectID: pr.ID, OwnerID: pr.OwnerID}
	if m, ok := pr.members[caller.UserID]; ok && caller.TokenID == "" {
		st.Member = m.Role
	}
	return st
}

func (s *Store) collection(p store.Path) (*collection, error) {
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	c, ok := pr.collections[p.Collection]
	if !ok {
		return nil, &store.NotFoundError{Kind: "collection", Name: p.Collection}
	}
	return c, nil
}

func (s *Store) cluster(p store.Path) (*cluster, error) {
	c, err := s.collection(p)
	if err != nil {
		return nil, err
	}
	k, ok := c.clusters[p.Cluster]
	if !ok {
		return nil, &store.NotFoundError{Kind: "cluster", Name: p.Cluster}
	}
	return k, nil
}

func (s *Store) record(p store.Path) (*cluster, *record, error) {
	k, err := s.cluster(p)
	if err != nil {
		return nil, nil, err
	}
	if id, ok := parseID(p.Record); ok {
		if r := k.records.getID(id); r != nil {
			return k, r, nil
		}
	}
	if r := k.records.get(p.Record); r != nil {
		return k, r, nil
	}
	return nil, nil, &store.NotFoundError{Kind: "record", Name: p.Record}
}

// project returns the project the cluster is in.
func (k *cluster) project() *project { return k.parent.parent }

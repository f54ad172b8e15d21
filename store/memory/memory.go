// Package memory is an in-memory implementation of store.Store and
// store.UserDirectory. It is the default store of hds.New, and the store
// to test against: fast, safe for concurrent use, and held to the same
// conformance suites (store/storetest) as the PostgreSQL store. Nothing
// survives the process.
package memory

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hds-go/hds/internal/fanout"
	"github.com/hds-go/hds/internal/sortkey"
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
}

type collection struct {
	store.Collection
	parent   *project
	clusters map[string]*cluster
}

type cluster struct {
	store.Cluster
	parent  *collection
	records map[string]*record // by name
	byID    map[recordID]*record
	// sorted caches the records in name order, the default order of a
	// list; writes (under the write lock) drop it.
	sorted atomic.Pointer[[]*record]
}

// byName returns the records in name order, sorting only after a write.
// Readers under the read lock may build it at the same time; they build
// the same slice.
func (k *cluster) byName() []*record {
	if p := k.sorted.Load(); p != nil {
		return *p
	}
	recs := make([]*record, 0, len(k.records))
	for _, r := range k.records {
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b *record) int { return strings.Compare(a.Name, b.Name) })
	k.sorted.Store(&recs)
	return recs
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

// WithQuotas sets the quotas the store enforces (default
// store.DefaultQuotas; the zero Quotas enforces none).
func WithQuotas(q store.Quotas) Option {
	return func(s *Store) { s.quotas = q }
}

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{
		Now:         time.Now,
		projects:    make(map[string]*project),
		tokens:      make(map[string]*store.APIToken),
		quotas:      store.DefaultQuotas,
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

// SetQuotas implements store.QuotaSetter.
func (s *Store) SetQuotas(q store.Quotas) {
	s.lock()
	defer s.unlock()
	s.quotas = q
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
	n := size(r.Name, r.Value())
	for _, h := range r.hist() {
		n += size(h.Name, h.Value)
	}
	return n
}

// bytes is what the cluster counts: its name and its records.
func (k *cluster) bytes() int64 {
	n := int64(len(k.Name))
	for _, r := range k.records {
		n += r.bytes()
	}
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
	return &e
}

// unaudit drops the entries of the project after revision, written under
// the write lock the caller holds (a batch that rolls back).
func (s *Store) unaudit(pr *project, revision int64) {
	pr.log = pr.log[:revision]
	pr.Revision = revision
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
	written := s.written
	s.written = nil
	s.hub.Publish(written...)
	s.mu.Unlock()
	store.LogAudit(context.Background(), s.logger.Load(), written...)
}

// Ping always succeeds: memory is always reachable.
func (s *Store) Ping(context.Context) error { return nil }

// --- path resolution (callers hold s.mu) ---

// project resolves p's project and checks p.Caller's access to it
// (store.Path.Check): map lookups only.
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
		if r, ok := k.byID[id]; ok {
			return k, r, nil
		}
	}
	if r, ok := k.records[p.Record]; ok {
		return k, r, nil
	}
	return nil, nil, &store.NotFoundError{Kind: "record", Name: p.Record}
}

// --- copies out ---

func (pr *project) out() *store.Project {
	p := pr.Project
	p.CollectionCount = len(pr.collections)
	return &p
}

func (c *collection) out() *store.Collection {
	o := c.Collection
	o.Project = c.parent.Name
	o.ClusterCount = len(c.clusters)
	for _, k := range c.clusters {
		o.RecordCount += len(k.records)
	}
	return &o
}

func (k *cluster) out(withRecords bool) *store.Cluster {
	o := k.Cluster
	o.Collection = k.parent.Name
	o.Project = k.parent.parent.Name
	o.RecordCount = len(k.records)
	if withRecords {
		o.Records = cloneRecords(k.byName())
	}
	return &o
}

// --- projects ---

// FindProjects implements store.Store.
func (s *Store) FindProjects(_ context.Context, userID string, q store.ListQuery) ([]*store.Project, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var items []*store.Project
	caller := store.Path{Caller: store.Caller{UserID: userID}}
	for _, pr := range s.projects {
		if role := caller.RoleOn(pr.standing(caller.Caller)); role != "" && store.MatchesSearch(pr.Name, q.Search) {
			o := pr.out()
			o.Role = role
			items = append(items, o)
		}
	}
	items, total := page(items, q, func(p *store.Project) entry {
		return entry{p.ID, p.Name, p.CreatedAt, p.UpdatedAt}
	})
	return items, total, nil
}

// FindProject implements store.Store.
func (s *Store) FindProject(_ context.Context, p store.Path) (*store.Project, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	o := pr.out()
	o.Role = p.RoleOn(pr.standing(p.Caller))
	return o, nil
}

// CreateProject implements store.Store.
func (s *Store) CreateProject(_ context.Context, p store.Path) (*store.Project, error) {
	if !p.Caller.CanCreateProjects() {
		return nil, store.ErrPermissionDenied
	}
	if err := store.ValidateName(p.Project); err != nil {
		return nil, err
	}
	s.lock()
	defer s.unlock()
	if _, ok := s.projects[p.Project]; ok {
		return nil, &store.ExistsError{Kind: "project", Name: p.Project}
	}
	owned := 0
	for _, pr := range s.projects {
		if pr.OwnerID == p.Caller.UserID {
			owned++
		}
	}
	if err := s.quotas.CheckProjects(owned); err != nil {
		return nil, err
	}
	now := s.now()
	pr := &project{
		Project:     store.Project{ID: store.NewID(), Name: p.Project, OwnerID: p.Caller.UserID, CreatedAt: now, UpdatedAt: now},
		collections: make(map[string]*collection),
		members:     make(map[string]*store.Member),
	}
	s.projects[pr.Name] = pr
	s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionProjectCreate})
	o := pr.out()
	o.Role = store.RoleOwner
	return o, nil
}

// RenameProject implements store.Store.
func (s *Store) RenameProject(_ context.Context, p store.Path, newName string) (*store.Project, error) {
	if err := store.ValidateName(newName); err != nil {
		return nil, err
	}
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	if newName != pr.Name {
		if _, ok := s.projects[newName]; ok {
			return nil, &store.ExistsError{Kind: "project", Name: newName}
		}
		delete(s.projects, pr.Name)
		pr.Name, pr.UpdatedAt = newName, s.now()
		s.projects[newName] = pr
		s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionProjectRename})
	}
	o := pr.out()
	o.Role = p.RoleOn(pr.standing(p.Caller))
	return o, nil
}

// DeleteProject implements store.Store.
func (s *Store) DeleteProject(_ context.Context, p store.Path) error {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return err
	}
	delete(s.projects, pr.Name)
	s.dropTokens(pr.ID) // tokens die with their project
	s.hub.End(pr.ID)
	return nil
}

// --- collections ---

// FindCollections implements store.Store.
func (s *Store) FindCollections(_ context.Context, p store.Path, q store.ListQuery) ([]*store.Collection, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, 0, err
	}
	var items []*store.Collection
	for _, c := range pr.collections {
		if store.MatchesSearch(c.Name, q.Search) {
			items = append(items, c.out())
		}
	}
	items, total := page(items, q, func(c *store.Collection) entry {
		return entry{c.ID, c.Name, c.CreatedAt, c.UpdatedAt}
	})
	return items, total, nil
}

// FindCollection implements store.Store.
func (s *Store) FindCollection(_ context.Context, p store.Path) (*store.Collection, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.collection(p)
	if err != nil {
		return nil, err
	}
	return c.out(), nil
}

// CreateCollection implements store.Store.
func (s *Store) CreateCollection(_ context.Context, p store.Path) (*store.Collection, error) {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	if err := store.ValidateName(p.Collection); err != nil {
		return nil, err
	}
	if _, ok := pr.collections[p.Collection]; ok {
		return nil, &store.ExistsError{Kind: "collection", Name: p.Collection}
	}
	if err := s.grow(pr, int64(len(p.Collection))); err != nil {
		return nil, err
	}
	now := s.now()
	c := &collection{
		Collection: store.Collection{ID: store.NewID(), Name: p.Collection, CreatedAt: now, UpdatedAt: now},
		parent:     pr,
		clusters:   make(map[string]*cluster),
	}
	pr.collections[c.Name] = c
	s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionCollectionCreate, Collection: c.Name})
	return c.out(), nil
}

// RenameCollection implements store.Store.
func (s *Store) RenameCollection(_ context.Context, p store.Path, newName string) (*store.Collection, error) {
	if err := store.ValidateName(newName); err != nil {
		return nil, err
	}
	s.lock()
	defer s.unlock()
	c, err := s.collection(p)
	if err != nil {
		return nil, err
	}
	if newName != c.Name {
		if _, ok := c.parent.collections[newName]; ok {
			return nil, &store.ExistsError{Kind: "collection", Name: newName}
		}
		if err := s.grow(c.parent, int64(len(newName)-len(c.Name))); err != nil {
			return nil, err
		}
		delete(c.parent.collections, c.Name)
		c.Name, c.UpdatedAt = newName, s.now()
		c.parent.collections[newName] = c
		s.audit(c.parent, p.Caller, store.AuditEntry{Action: store.ActionCollectionRename, Collection: c.Name})
	}
	return c.out(), nil
}

// DeleteCollection implements store.Store.
func (s *Store) DeleteCollection(_ context.Context, p store.Path) error {
	s.lock()
	defer s.unlock()
	c, err := s.collection(p)
	if err != nil {
		return err
	}
	c.parent.bytes -= c.bytes()
	delete(c.parent.collections, c.Name)
	s.audit(c.parent, p.Caller, store.AuditEntry{Action: store.ActionCollectionDelete, Collection: c.Name})
	return nil
}

// --- clusters ---

// FindClusters implements store.Store.
func (s *Store) FindClusters(_ context.Context, p store.Path, q store.ListQuery) ([]*store.Cluster, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.collection(p)
	if err != nil {
		return nil, 0, err
	}
	var items []*store.Cluster
	for _, k := range c.clusters {
		if store.MatchesSearch(k.Name, q.Search) {
			items = append(items, k.out(false))
		}
	}
	items, total := page(items, q, func(k *store.Cluster) entry {
		return entry{k.ID, k.Name, k.CreatedAt, k.UpdatedAt}
	})
	return items, total, nil
}

// FindCluster implements store.Store.
func (s *Store) FindCluster(_ context.Context, p store.Path, records bool) (*store.Cluster, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, err := s.cluster(p)
	if err != nil {
		return nil, err
	}
	return k.out(records), nil
}

// CreateCluster implements store.Store.
func (s *Store) CreateCluster(_ context.Context, p store.Path) (*store.Cluster, error) {
	s.lock()
	defer s.unlock()
	c, err := s.collection(p)
	if err != nil {
		return nil, err
	}
	if err := store.ValidateName(p.Cluster); err != nil {
		return nil, err
	}
	if _, ok := c.clusters[p.Cluster]; ok {
		return nil, &store.ExistsError{Kind: "cluster", Name: p.Cluster}
	}
	if err := s.grow(c.parent, int64(len(p.Cluster))); err != nil {
		return nil, err
	}
	now := s.now()
	k := &cluster{
		Cluster: store.Cluster{ID: store.NewID(), Name: p.Cluster, CreatedAt: now, UpdatedAt: now},
		parent:  c,
		records: make(map[string]*record),
		byID:    make(map[recordID]*record),
	}
	c.clusters[k.Name] = k
	s.audit(c.parent, p.Caller, store.AuditEntry{Action: store.ActionClusterCreate, Collection: c.Name, Cluster: k.Name})
	return k.out(false), nil
}

// RenameCluster implements store.Store.
func (s *Store) RenameCluster(_ context.Context, p store.Path, newName string) (*store.Cluster, error) {
	if err := store.ValidateName(newName); err != nil {
		return nil, err
	}
	s.lock()
	defer s.unlock()
	k, err := s.cluster(p)
	if err != nil {
		return nil, err
	}
	if newName != k.Name {
		if _, ok := k.parent.clusters[newName]; ok {
			return nil, &store.ExistsError{Kind: "cluster", Name: newName}
		}
		if err := s.grow(k.parent.parent, int64(len(newName)-len(k.Name))); err != nil {
			return nil, err
		}
		delete(k.parent.clusters, k.Name)
		k.Name, k.UpdatedAt = newName, s.now()
		k.parent.clusters[newName] = k
		s.audit(k.project(), p.Caller, store.AuditEntry{Action: store.ActionClusterRename, Collection: k.parent.Name, Cluster: k.Name})
	}
	return k.out(false), nil
}

// DeleteCluster implements store.Store.
func (s *Store) DeleteCluster(_ context.Context, p store.Path) error {
	s.lock()
	defer s.unlock()
	k, err := s.cluster(p)
	if err != nil {
		return err
	}
	k.parent.parent.bytes -= k.bytes()
	delete(k.parent.clusters, k.Name)
	s.audit(k.project(), p.Caller, store.AuditEntry{Action: store.ActionClusterDelete, Collection: k.parent.Name, Cluster: k.Name})
	return nil
}

// --- records ---

// FindRecords implements store.Store.
func (s *Store) FindRecords(_ context.Context, p store.Path, q store.RecordQuery) ([]*store.Record, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, err := s.cluster(p)
	if err != nil {
		return nil, 0, err
	}
	page, total := matchRecords(k, q)
	return cloneRecords(page), total, nil
}

// counted is the total of a list of n matches: n, or store.NotCounted
// when q asks for no count.
func counted(n int, q store.ListQuery) int {
	if q.NoCount {
		return store.NotCounted
	}
	return n
}

// snapshot returns the current states of recs: immutable pointers, safe
// to read once s.mu is released.
func snapshot(recs []*record) []*store.Record {
	states := make([]store.Record, len(recs))
	out := make([]*store.Record, len(recs))
	for i, id := range idTexts(recs) {
		recs[i].fill(&states[i], id)
		out[i] = &states[i]
	}
	return out
}

// StreamRecords implements store.Streamer: the page is a snapshot of
// immutable record pointers taken under the read lock; no value is
// copied and no lock is held while the caller reads.
func (s *Store) StreamRecords(_ context.Context, p store.Path, q store.RecordQuery) (int, iter.Seq2[*store.Record, error], error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, err := s.cluster(p)
	if err != nil {
		return 0, nil, err
	}
	page, total := matchRecords(k, q)
	return total, store.Items(snapshot(page)), nil
}

// StreamClusterRecords implements store.Streamer, as StreamRecords does.
func (s *Store) StreamClusterRecords(_ context.Context, p store.Path) (*store.Cluster, iter.Seq2[*store.Record, error], error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, err := s.cluster(p)
	if err != nil {
		return nil, nil, err
	}
	return k.out(false), store.Items(snapshot(k.byName())), nil
}

// StreamRecordVersions implements store.Streamer: the states are shared,
// immutable, as StreamRecords does.
func (s *Store) StreamRecordVersions(_ context.Context, p store.Path, q store.ListQuery) (int, iter.Seq2[*store.RecordVersion, error], error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, r, err := s.record(p)
	if err != nil {
		return 0, nil, err
	}
	all := r.versions()
	return len(all), store.Items(window(all, q)), nil
}

// cloneRecords copies records out with three allocations in all: the
// records, the pointers, and one buffer holding every value.
func cloneRecords(src []*record) []*store.Record {
	size := 0
	for _, r := range src {
		size += len(r.value)
	}
	recs := make([]store.Record, len(src))
	out := make([]*store.Record, len(src))
	buf := make([]byte, 0, size)
	for i, id := range idTexts(src) {
		r := src[i]
		r.fill(&recs[i], id)
		start := len(buf)
		buf = append(buf, r.value...)
		recs[i].Value = buf[start:len(buf):len(buf)]
		out[i] = &recs[i]
	}
	return out
}

// recordMatcher applies a RecordQuery's filters, cheapest first, with
// the query lower-cased once.
type recordMatcher struct {
	q                store.RecordQuery
	search, contains string
}

func newRecordMatcher(q store.RecordQuery) recordMatcher {
	return recordMatcher{q: q, search: strings.ToLower(q.Search), contains: strings.ToLower(q.ValueContains)}
}

func (m recordMatcher) matches(r *record) bool {
	switch {
	case m.q.Type != "" && r.Type() != m.q.Type,
		m.search != "" && !strings.Contains(strings.ToLower(r.Name), m.search):
		return false
	case !m.q.HasValue && m.contains == "" && m.q.Min == nil && m.q.Max == nil:
		return true
	}
	k := r.key()
	switch {
	case m.q.HasValue && (!k.HasText || k.Text != m.q.Value),
		m.contains != "" && (!k.HasText || !strings.Contains(strings.ToLower(k.Text), m.contains)),
		(m.q.Min != nil || m.q.Max != nil) && (r.Type() != m.q.Type || !sortkey.InRange(m.q, k)):
		return false
	}
	return true
}

// recordOrder sorts records by q.SortBy, ties by name then id ascending.
func recordOrder(q store.ListQuery) func(a, b *record) int {
	return func(a, b *record) int {
		var c int
		switch q.SortBy {
		case store.SortValue:
			c = sortkey.Compare(a.key(), b.key())
		case store.SortType:
			c = strings.Compare(string(a.Type()), string(b.Type()))
		case store.SortID:
			c = bytes.Compare(a.id[:], b.id[:])
		case store.SortCreatedAt:
			c = cmp.Compare(a.created, b.created)
		case store.SortUpdatedAt:
			c = cmp.Compare(a.updated, b.updated)
		default:
			c = strings.Compare(a.Name, b.Name)
		}
		if q.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Name, b.Name), bytes.Compare(a.id[:], b.id[:]))
	}
}

// FindRecord implements store.Store.
func (s *Store) FindRecord(_ context.Context, p store.Path) (*store.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, r, err := s.record(p)
	if err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// CreateRecord implements store.Store.
func (s *Store) CreateRecord(_ context.Context, p store.Path, in *store.Record, _ store.Write) (*store.Record, error) {
	s.lock()
	defer s.unlock()
	k, err := s.cluster(p)
	if err != nil {
		return nil, err
	}
	r, err := s.createRecord(k, p.Record, in, p.Caller, s.now())
	if err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// createRecord adds the record name to k from in, made by c, with its
// audit entry; the caller holds the write lock.
func (s *Store) createRecord(k *cluster, name string, in *store.Record, c store.Caller, now time.Time) (*record, error) {
	if err := store.ValidateName(name); err != nil {
		return nil, err
	}
	if _, ok := k.records[name]; ok {
		return nil, &store.ExistsError{Kind: "record", Name: name}
	}
	if id, ok := parseID(name); ok && k.byID[id] != nil {
		// The segment names that record, so it exists (API.md section 2).
		return nil, &store.ExistsError{Kind: "record", Name: name}
	}
	if err := s.quotas.CheckRecords(len(k.records)); err != nil {
		return nil, err
	}
	if err := s.quotas.CheckBytes(k.project().bytes, size(name, in.Value)); err != nil {
		return nil, err
	}
	id := in.ID
	if id == "" {
		id = store.NewID()
	} else if s.idTaken(id) {
		return nil, &store.ExistsError{Kind: "record id", Name: id}
	}
	r := &record{Version: 1, created: micros(now), updated: micros(now), by: actorOf(c.ID())}
	var ok bool
	if r.id, ok = parseID(id); !ok {
		return nil, &store.ValidationError{Message: "record id " + strconv.Quote(id) + " is not a UUID"}
	}
	r.set(name, in.Type, append(json.RawMessage(nil), in.Value...))
	k.records[r.Name] = r
	k.byID[r.id] = r
	k.sorted.Store(nil)
	k.project().bytes += size(r.Name, r.Value())
	s.auditRecord(k, r, c, store.ActionRecordCreate)
	return r, nil
}

// idTaken reports whether any record anywhere has id. Only used for
// caller-chosen ids, which are fresh UUIDs, so the scan is rare.
func (s *Store) idTaken(id string) bool { return s.recordByID(id) != nil }

// UpdateRecord implements store.Store.
func (s *Store) UpdateRecord(_ context.Context, p store.Path, w store.Write, update func(*store.Record) error) (*store.Record, error) {
	s.lock()
	defer s.unlock()
	k, r, err := s.record(p)
	if err != nil {
		return nil, err
	}
	if err := s.updateRecord(k, r, p.Caller, w, update); err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// updateRecord applies update to r, in k, by c, with the checks of
// UpdateRecord; the caller holds the write lock.
func (s *Store) updateRecord(k *cluster, r *record, c store.Caller, w store.Write, update func(*store.Record) error) error {
	next := r.Clone()
	if err := update(next); err != nil {
		return err
	}
	if next.Name != r.Name {
		if err := store.ValidateName(next.Name); err != nil {
			return err
		}
		if _, ok := k.records[next.Name]; ok {
			return &store.ExistsError{Kind: "record", Name: next.Name}
		}
		if id, ok := parseID(next.Name); ok && k.byID[id] != nil && id != r.id {
			return &store.ExistsError{Kind: "record", Name: next.Name}
		}
	}
	if err := w.Check(r.state()); err != nil {
		return err
	}
	action := store.UpdateAction(r.state(), next)
	if err := s.write(k, r, next.Name, next.Type, next.Value, c, w); err != nil {
		return err
	}
	s.auditRecord(k, r, c, action)
	return nil
}

// auditRecord writes the audit entry of action on r, in k, by c; the
// caller holds the write lock.
func (s *Store) auditRecord(k *cluster, r *record, c store.Caller, action store.Action) {
	s.audit(k.project(), c, store.AuditEntry{Action: action, Collection: k.parent.Name, Cluster: k.Name,
		Record: r.Name, RecordID: r.ID(), Version: r.Version})
}

// write makes name, type and value the record's new state, keeping the
// state it replaces in its history, cut to w.MaxVersions; or returns the
// *QuotaError of a project that would grow past its quota and changes
// nothing. c made the change.
func (s *Store) write(k *cluster, r *record, name string, t store.DataType, value json.RawMessage, c store.Caller, w store.Write) error {
	old := size(r.Name, r.Value())
	delta := size(name, value) - old
	history := slices.Clone(r.hist()) // the old one may be shared (a batch's undo)
	kept := len(history)
	if w.MaxVersions > 0 {
		delta += old
		kept++
	}
	for i := 0; i < kept-max(w.MaxVersions, 0); i++ { // the versions dropped
		delta -= size(history[i].Name, history[i].Value)
	}
	if err := s.grow(k.project(), delta); err != nil {
		return err
	}
	if w.MaxVersions > 0 {
		history = append(history, sharedVersion(r.state()))
	}
	if drop := len(history) - max(w.MaxVersions, 0); drop > 0 {
		history = slices.Delete(history, 0, drop)
	}
	r.setHist(history)
	delete(k.records, r.Name)
	r.set(name, t, append(json.RawMessage(nil), value...))
	r.Version++
	r.updated, r.by = micros(s.now()), actorOf(c.ID())
	k.records[r.Name] = r
	k.sorted.Store(nil)
	return nil
}

// project returns the project the cluster is in.
func (k *cluster) project() *project { return k.parent.parent }

// DeleteRecord implements store.Store.
func (s *Store) DeleteRecord(_ context.Context, p store.Path, w store.Write) error {
	s.lock()
	defer s.unlock()
	k, r, err := s.record(p)
	if err != nil {
		return err
	}
	if err := w.Check(r.state()); err != nil {
		return err
	}
	k.remove(r)
	s.auditRecord(k, r, p.Caller, store.ActionRecordDelete)
	return nil
}

// remove takes r out of k, and its bytes out of the project's count.
func (k *cluster) remove(r *record) {
	k.project().bytes -= r.bytes()
	delete(k.records, r.Name)
	delete(k.byID, r.id)
	k.sorted.Store(nil)
}

// add puts r into k, and its bytes into the project's count.
func (k *cluster) add(r *record) {
	k.project().bytes += r.bytes()
	k.records[r.Name] = r
	k.byID[r.id] = r
	k.sorted.Store(nil)
}

// sharedVersion returns the state cur as a RecordVersion sharing cur's
// (immutable) value.
func sharedVersion(cur *store.Record) *store.RecordVersion {
	return &store.RecordVersion{RecordID: cur.ID, Version: cur.Version, Name: cur.Name, Type: cur.Type,
		Value: cur.Value, ChangedAt: cur.UpdatedAt, ChangedBy: cur.UpdatedBy}
}

// versions returns the record's states, newest first, shared (read-only).
func (r *record) versions() []*store.RecordVersion {
	history := r.hist()
	out := make([]*store.RecordVersion, 0, len(history)+1)
	out = append(out, sharedVersion(r.state()))
	for i := len(history) - 1; i >= 0; i-- {
		out = append(out, history[i])
	}
	return out
}

// version returns a copy of the record's state at version v, or nil.
func (r *record) version(v int64) *store.RecordVersion {
	if v == r.Version {
		return store.VersionOf(r.state())
	}
	for _, h := range r.hist() {
		if h.Version == v {
			return h.Clone()
		}
	}
	return nil
}

// FindRecordVersions implements store.Store.
func (s *Store) FindRecordVersions(_ context.Context, p store.Path, q store.ListQuery) ([]*store.RecordVersion, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, r, err := s.record(p)
	if err != nil {
		return nil, 0, err
	}
	all := r.versions()
	page := window(all, q)
	for i, v := range page {
		page[i] = v.Clone()
	}
	return page, len(all), nil
}

// FindRecordVersion implements store.Store.
func (s *Store) FindRecordVersion(_ context.Context, p store.Path, version int64) (*store.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, r, err := s.record(p)
	if err != nil {
		return nil, err
	}
	v := r.version(version)
	if v == nil {
		return nil, store.VersionNotFound(version)
	}
	return v.At(r.state()), nil
}

// RestoreRecord implements store.Store.
func (s *Store) RestoreRecord(_ context.Context, p store.Path, version int64, w store.Write) (*store.Record, error) {
	s.lock()
	defer s.unlock()
	k, r, err := s.record(p)
	if err != nil {
		return nil, err
	}
	v := r.version(version)
	if v == nil {
		return nil, store.VersionNotFound(version)
	}
	if err := w.Check(r.state()); err != nil {
		return nil, err
	}
	if err := s.write(k, r, r.Name, v.Type, v.Value, p.Caller, w); err != nil {
		return nil, err
	}
	s.auditRecord(k, r, p.Caller, store.ActionRecordRestore)
	return r.Clone(), nil
}

// ResealRecord implements store.Store. It finds the record by id across
// the store (an administrative walk, not a request path).
func (s *Store) ResealRecord(_ context.Context, id string, reseal store.Resealer) (bool, error) {
	s.lock()
	defer s.unlock()
	k, r := s.clusterRecordByID(id)
	if r == nil {
		return false, &store.NotFoundError{Kind: "record", Name: id}
	}
	before := r.bytes()
	// Every new value is computed first, so that an error changes nothing.
	cur := r.Value()
	changed := false
	if r.Type().IsCredential() {
		v, ok, err := reseal(r.Type(), r.Value())
		if err != nil {
			return false, err
		}
		if ok {
			cur, changed = append(json.RawMessage(nil), v...), true
		}
	}
	history := r.hist()
	hist := make([]json.RawMessage, len(history))
	for i, h := range history {
		hist[i] = h.Value
		if !h.Type.IsCredential() {
			continue
		}
		v, ok, err := reseal(h.Type, h.Value)
		if err != nil {
			return false, err
		}
		if ok {
			hist[i], changed = append(json.RawMessage(nil), v...), true
		}
	}
	// Copy-on-write: states already handed to readers stay as they are.
	if changed {
		r.value = string(cur)
		history = slices.Clone(history)
		for i, h := range history {
			if string(hist[i]) != string(h.Value) {
				c := *h
				c.Value = hist[i]
				history[i] = &c
			}
		}
		r.setHist(history)
		k.project().bytes += r.bytes() - before // re-sealing is never refused
	}
	return changed, nil
}

// recordByID returns the record with id anywhere in the store, or nil.
func (s *Store) recordByID(id string) *record {
	_, r := s.clusterRecordByID(id)
	return r
}

// clusterRecordByID returns the record with id anywhere in the store and
// its cluster, or nils.
func (s *Store) clusterRecordByID(text string) (*cluster, *record) {
	id, ok := parseID(text)
	if !ok {
		return nil, nil
	}
	for _, pr := range s.projects {
		for _, c := range pr.collections {
			for _, k := range c.clusters {
				if r, ok := k.byID[id]; ok {
					return k, r
				}
			}
		}
	}
	return nil, nil
}

// FindCredentialRecords implements store.Store.
func (s *Store) FindCredentialRecords(_ context.Context, afterID string, limit int) ([]store.RecordRef, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var refs []store.RecordRef
	for _, pr := range s.projects {
		for _, c := range pr.collections {
			for _, k := range c.clusters {
				for _, r := range k.records {
					if r.hasCredential() && r.ID() > afterID {
						refs = append(refs, store.RecordRef{
							Path:   store.Path{Project: pr.Name, Collection: c.Name, Cluster: k.Name, Record: r.ID()},
							Record: r.Clone(),
						})
					}
				}
			}
		}
	}
	slices.SortFunc(refs, func(a, b store.RecordRef) int { return strings.Compare(a.Record.ID, b.Record.ID) })
	if len(refs) > limit {
		refs = refs[:limit]
	}
	return refs, nil
}

// hasCredential reports whether the record's current state or a kept
// version is a credential.
func (r *record) hasCredential() bool {
	if r.Type().IsCredential() {
		return true
	}
	for _, h := range r.hist() {
		if h.Type.IsCredential() {
			return true
		}
	}
	return false
}

// --- list helpers ---

// entry holds the fields every list can sort by.
type entry struct {
	id, name         string
	created, updated time.Time
}

func compareEntries(by store.SortField, a, b entry) int {
	switch by {
	case store.SortID:
		return strings.Compare(a.id, b.id)
	case store.SortCreatedAt:
		return a.created.Compare(b.created)
	case store.SortUpdatedAt:
		return a.updated.Compare(b.updated)
	}
	return strings.Compare(a.name, b.name)
}

// page sorts items as q says and cuts out the requested window. It
// returns the window and the number of items before paging.
func page[T any](items []T, q store.ListQuery, fields func(T) entry) ([]T, int) {
	order := entryOrder(q)
	total := counted(len(items), q)
	if a := q.After; a != nil {
		pos := entry{a.ID, a.Name, a.Time, a.Time}
		items = slices.DeleteFunc(items, func(it T) bool { return order(fields(it), pos) <= 0 })
	}
	slices.SortFunc(items, func(x, y T) int { return order(fields(x), fields(y)) })
	return window(items, q), total
}

// entryOrder sorts entries by q.SortBy, ties by name then id ascending.
func entryOrder(q store.ListQuery) func(a, b entry) int {
	return func(a, b entry) int {
		c := compareEntries(q.SortBy, a, b)
		if q.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.id, b.id))
	}
}

func window[T any](items []T, q store.ListQuery) []T {
	if q.Offset >= len(items) {
		return []T{}
	}
	items = items[q.Offset:]
	if q.Limit < len(items) {
		items = items[:q.Limit]
	}
	return items
}

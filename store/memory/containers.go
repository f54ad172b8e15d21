package memory

import (
	"context"

	"github.com/hds-go/hds/store"
)

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
		o.RecordCount += k.records.len()
	}
	return &o
}

func (k *cluster) out(withRecords bool) *store.Cluster {
	o := k.Cluster
	o.Collection = k.parent.Name
	o.Project = k.parent.parent.Name
	o.RecordCount = k.records.len()
	o.State = k.records.state
	if withRecords {
		o.Records = cloneRecords(k.records.all())
	}
	return &o
}

// renamed changes the state of every cluster of c, whose collection or
// project was renamed (store.Cluster.State).
func (c *collection) renamed() {
	for _, k := range c.clusters {
		k.records.state++
	}
}

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
		return entry{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
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
		for _, c := range pr.collections {
			c.renamed()
		}
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
		return entry{ID: c.ID, Name: c.Name, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
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
		c.renamed()
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
		return entry{ID: k.ID, Name: k.Name, CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt}
	})
	return items, total, nil
}

// KeepsClusterState implements store.ClusterStateKeeper: Cluster.State
// moves with every change of the cluster's stored state.
func (s *Store) KeepsClusterState() bool { return true }

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
		records: newRecords(),
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
		k.records.state++
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

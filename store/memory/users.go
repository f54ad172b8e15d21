package memory

import (
	"context"
	"slices"

	"github.com/hds-go/hds/store"
)

// CreateUser implements store.UserDirectory.
func (s *Store) CreateUser(_ context.Context, u *store.User) (*store.User, error) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	if _, ok := s.usersByName[u.Username]; ok {
		return nil, &store.ExistsError{Kind: "user", Name: u.Username}
	}
	c := u.Clone()
	if c.ID == "" {
		c.ID = store.NewID()
	} else if _, ok := s.usersByID[c.ID]; ok {
		return nil, &store.ExistsError{Kind: "user id", Name: c.ID}
	}
	c.CreatedAt = s.now()
	c.UpdatedAt = c.CreatedAt
	s.usersByName[c.Username] = c
	s.usersByID[c.ID] = c
	return c.Clone(), nil
}

// FindUserByName implements store.UserDirectory.
func (s *Store) FindUserByName(_ context.Context, username string) (*store.User, error) {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	u, ok := s.usersByName[username]
	if !ok {
		return nil, &store.NotFoundError{Kind: "user", Name: username}
	}
	return u.Clone(), nil
}

// FindUserByID implements store.UserDirectory.
func (s *Store) FindUserByID(_ context.Context, id string) (*store.User, error) {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	u, ok := s.usersByID[id]
	if !ok {
		return nil, &store.NotFoundError{Kind: "user", Name: id}
	}
	return u.Clone(), nil
}

// ListUsers implements store.UserDirectory.
func (s *Store) ListUsers(_ context.Context, q store.ListQuery) ([]*store.User, int, error) {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	matches := make([]*store.User, 0, len(s.usersByName))
	for _, u := range s.usersByName {
		if q.Search == "" || store.MatchesSearch(u.Username, q.Search) {
			matches = append(matches, u)
		}
	}
	slices.SortFunc(matches, func(a, b *store.User) int { return store.CompareUsers(a, b, q) })
	total := len(matches)
	matches = matches[min(q.Offset, total):]
	if q.Limit > 0 && q.Limit < len(matches) {
		matches = matches[:q.Limit]
	}
	out := make([]*store.User, len(matches))
	for i, u := range matches {
		out[i] = u.Clone()
	}
	return out, total, nil
}

// UpdateUser implements store.UserDirectory.
func (s *Store) UpdateUser(_ context.Context, username string, c store.UserChange) (*store.User, error) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	u, ok := s.usersByName[username]
	if !ok {
		return nil, &store.NotFoundError{Kind: "user", Name: username}
	}
	after := *u
	if c.Admin != nil {
		after.Admin = *c.Admin
	}
	if c.Active != nil {
		after.Active = *c.Active
	}
	if s.leavesNoAdmin(u, &after) {
		return nil, &store.ValidationError{Message: store.LastAdminRule}
	}
	u.Admin, u.Active = after.Admin, after.Active
	if c.Active != nil && !*c.Active {
		u.SessionGeneration++ // a disable ends every session
	}
	if c.PasswordHash != nil {
		u.PasswordHash = append([]byte(nil), c.PasswordHash...)
		u.SessionGeneration++
	}
	u.UpdatedAt = s.now()
	return u.Clone(), nil
}

// leavesNoAdmin reports whether changing before into after (nil: deleted)
// would leave no active administrator where there is one: the
// last-administrator rule. The caller holds usersMu for writing.
func (s *Store) leavesNoAdmin(before, after *store.User) bool {
	if !before.Admin || !before.Active || (after != nil && after.Admin && after.Active) {
		return false
	}
	for _, u := range s.usersByID {
		if u != before && u.Admin && u.Active {
			return false
		}
	}
	return true
}

// SetUserActive implements store.UserDirectory.
func (s *Store) SetUserActive(ctx context.Context, username string, active bool) error {
	_, err := s.UpdateUser(ctx, username, store.UserChange{Active: &active})
	return err
}

// DeleteUser implements store.UserDirectory: under the projects' lock
// (taken first, as everywhere) and then the users' lock, so that no
// project can be created for, or transferred to, the user in between.
func (s *Store) DeleteUser(_ context.Context, username string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	u, ok := s.usersByName[username]
	if !ok {
		return &store.NotFoundError{Kind: "user", Name: username}
	}
	owned := 0
	for _, pr := range s.projects {
		if pr.OwnerID == u.ID {
			owned++
		}
	}
	if owned > 0 {
		return store.OwnsProjectsError(owned)
	}
	if s.leavesNoAdmin(u, nil) {
		return &store.ValidationError{Message: store.LastAdminRule}
	}
	delete(s.usersByName, username)
	delete(s.usersByID, u.ID)
	for _, m := range []*sessionMarks{&s.ended, &s.used} { // as PostgreSQL's ON DELETE CASCADE
		for k := range m.marks {
			if k.userID == u.ID {
				delete(m.marks, k)
			}
		}
	}
	for _, pr := range s.projects { // memberships go; API tokens stay with their project
		delete(pr.members, u.ID)
	}
	return nil
}

// TransferProject implements store.Access.
func (s *Store) TransferProject(_ context.Context, p store.Path, username string) (*store.Project, error) {
	p.Need = store.RightOwn
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	s.usersMu.RLock()
	u, ok := s.usersByName[username]
	var id string
	if ok && u.Active {
		id = u.ID
	}
	s.usersMu.RUnlock()
	if id == "" {
		return nil, &store.NotFoundError{Kind: "user", Name: username}
	}
	if id != pr.OwnerID {
		owned := 0
		for _, other := range s.projects {
			if other.OwnerID == id {
				owned++
			}
		}
		if err := s.quotas.CheckProjects(owned); err != nil {
			return nil, err // the new owner's max_projects_per_user, as for a new project
		}
		now := s.now()
		prev := pr.OwnerID
		delete(pr.members, id)
		pr.members[prev] = &store.Member{UserID: prev, Username: s.username(prev), Role: store.RoleAdmin, CreatedAt: now}
		pr.OwnerID, pr.UpdatedAt = id, now
		s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionProjectTransfer, Target: username})
	}
	o := pr.out()
	p.Caller.ServerAdmin = false // the role the caller now holds as itself
	o.Role = p.RoleOn(pr.standing(p.Caller))
	return o, nil
}

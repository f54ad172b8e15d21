package memory

import (
	"context"
	"slices"
	"strings"

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

// FindUsers implements store.UserDirectory.
func (s *Store) FindUsers(context.Context) ([]*store.User, error) {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	users := make([]*store.User, 0, len(s.usersByName))
	for _, u := range s.usersByName {
		users = append(users, u.Clone())
	}
	slices.SortFunc(users, func(a, b *store.User) int { return strings.Compare(a.Username, b.Username) })
	return users, nil
}

// SetUserActive implements store.UserDirectory.
func (s *Store) SetUserActive(_ context.Context, username string, active bool) error {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	u, ok := s.usersByName[username]
	if !ok {
		return &store.NotFoundError{Kind: "user", Name: username}
	}
	u.Active = active
	u.UpdatedAt = s.now()
	return nil
}

// DeleteUser implements store.UserDirectory.
func (s *Store) DeleteUser(_ context.Context, username string) error {
	id, err := s.deleteUser(username)
	if err == nil {
		s.dropMemberships(id) // after usersMu: s.mu is always taken first
	}
	return err
}

func (s *Store) deleteUser(username string) (string, error) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	u, ok := s.usersByName[username]
	if !ok {
		return "", &store.NotFoundError{Kind: "user", Name: username}
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
	return u.ID, nil
}

package memory

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/hds-go/hds/store"
)

// FindMembers implements store.Access.
func (s *Store) FindMembers(_ context.Context, p store.Path, q store.ListQuery) ([]*store.Member, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, 0, err
	}
	items := []*store.Member{{UserID: pr.OwnerID, Username: s.username(pr.OwnerID), Role: store.RoleOwner, CreatedAt: pr.CreatedAt}}
	for _, m := range pr.members {
		c := *m
		items = append(items, &c)
	}
	slices.SortFunc(items, func(a, b *store.Member) int { return strings.Compare(a.Username, b.Username) })
	return window(items, q), len(items), nil
}

// username returns the username of the user id: "anonymous" for the
// built-in anonymous user (in no directory), "" when the user is unknown
// (a deleted owner). Callers may hold s.mu: usersMu is always taken
// after it.
func (s *Store) username(id string) string {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	if u, ok := s.usersByID[id]; ok {
		return u.Username
	}
	if id == store.AnonymousUserID {
		return store.AnonymousUserID
	}
	return ""
}

// PutMember implements store.Access.
func (s *Store) PutMember(_ context.Context, p store.Path, m store.Member) (*store.Member, error) {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	if err := checkMember(pr.OwnerID, m); err != nil {
		return nil, err
	}
	old, ok := pr.members[m.UserID]
	if ok {
		m.CreatedAt = old.CreatedAt
	} else {
		m.CreatedAt = s.now()
	}
	pr.members[m.UserID] = &m
	s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionMemberPut, Target: m.Username})
	c := m
	return &c, nil
}

// checkMember refuses a role no member may have and the owner's entry.
func checkMember(ownerID string, m store.Member) error {
	switch {
	case !store.MemberRole(m.Role):
		return &store.ValidationError{Message: "role must be one of viewer, reader, editor, admin"}
	case m.UserID == ownerID:
		return errOwnerEntry
	}
	return nil
}

// errOwnerEntry refuses a change of the owner's entry.
var errOwnerEntry = &store.ValidationError{Message: "the owner's entry cannot be changed or deleted"}

// DeleteMember implements store.Access.
func (s *Store) DeleteMember(_ context.Context, p store.Path, userID, username string) error {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return err
	}
	if userID == pr.OwnerID {
		return errOwnerEntry
	}
	if _, ok := pr.members[userID]; !ok {
		return &store.NotFoundError{Kind: "member", Name: username}
	}
	delete(pr.members, userID)
	s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionMemberDelete, Target: username})
	return nil
}

// CreateToken implements store.Access.
func (s *Store) CreateToken(_ context.Context, p store.Path, t *store.APIToken) (*store.APIToken, error) {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, err
	}
	if t.Collection != "" {
		c, ok := pr.collections[t.Collection]
		if !ok {
			return nil, &store.NotFoundError{Kind: "collection", Name: t.Collection}
		}
		if _, ok := c.clusters[t.Cluster]; t.Cluster != "" && !ok {
			return nil, &store.NotFoundError{Kind: "cluster", Name: t.Cluster}
		}
	}
	c := cloneToken(t)
	c.ProjectID = pr.ID
	if c.ID == "" {
		c.ID = store.NewID()
	}
	c.CreatedAt = s.now()
	key := hex.EncodeToString(c.Hash)
	if _, ok := s.tokens[key]; ok {
		return nil, &store.ExistsError{Kind: "token", Name: c.ID}
	}
	s.tokens[key] = c
	s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionTokenCreate, Target: c.ID})
	return cloneToken(c), nil
}

// FindTokens implements store.Access.
func (s *Store) FindTokens(_ context.Context, p store.Path, q store.ListQuery) ([]*store.APIToken, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pr, err := s.project(p)
	if err != nil {
		return nil, 0, err
	}
	var items []*store.APIToken
	for _, t := range s.tokens {
		if t.ProjectID == pr.ID {
			items = append(items, cloneToken(t))
		}
	}
	slices.SortFunc(items, func(a, b *store.APIToken) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return window(items, q), len(items), nil
}

// DeleteToken implements store.Access.
func (s *Store) DeleteToken(_ context.Context, p store.Path, id string) error {
	s.lock()
	defer s.unlock()
	pr, err := s.project(p)
	if err != nil {
		return err
	}
	for key, t := range s.tokens {
		if t.ID == id && t.ProjectID == pr.ID {
			delete(s.tokens, key)
			s.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionTokenDelete, Target: id})
			return nil
		}
	}
	return &store.NotFoundError{Kind: "token", Name: id}
}

// dropTokens deletes the tokens of a project. Callers hold s.mu.
func (s *Store) dropTokens(projectID string) {
	for key, t := range s.tokens {
		if t.ProjectID == projectID {
			delete(s.tokens, key)
		}
	}
}

// FindTokenByHash implements store.Access.
func (s *Store) FindTokenByHash(_ context.Context, hash []byte) (*store.APIToken, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tokens[hex.EncodeToString(hash)]
	if !ok || subtle.ConstantTimeCompare(t.Hash, hash) != 1 {
		return nil, &store.NotFoundError{Kind: "token"}
	}
	return cloneToken(t), nil
}

// TouchToken implements store.Access.
func (s *Store) TouchToken(_ context.Context, id string, now time.Time) error {
	now = now.UTC().Truncate(time.Microsecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		if t.ID == id {
			if t.LastUsedAt == nil || !now.Before(t.LastUsedAt.Add(store.TouchInterval)) {
				t.LastUsedAt = &now
			}
			return nil
		}
	}
	return nil
}

// cloneToken returns a deep copy of t.
func cloneToken(t *store.APIToken) *store.APIToken {
	c := *t
	c.Hash = slices.Clone(t.Hash)
	if t.ExpiresAt != nil {
		e := *t.ExpiresAt
		c.ExpiresAt = &e
	}
	if t.LastUsedAt != nil {
		l := *t.LastUsedAt
		c.LastUsedAt = &l
	}
	return &c
}

package memory

import (
	"context"
	"time"

	"github.com/hds-go/hds/store"
)

// sessionKey names an ended session or a used token of a user.
type sessionKey struct{ userID, id string }

// sessionMarks is a set of marks, each kept until its time has passed.
// Expired marks are swept when the set has doubled since the last sweep,
// so a sweep costs O(1) per mark added.
type sessionMarks struct {
	marks   map[sessionKey]time.Time
	sweepAt int
}

// add records k until until and reports whether it was new. The caller
// holds usersMu for writing.
func (m *sessionMarks) add(k sessionKey, until, now time.Time) bool {
	if len(m.marks) >= m.sweepAt {
		for k, t := range m.marks {
			if t.Before(now) {
				delete(m.marks, k)
			}
		}
		m.sweepAt = 2*len(m.marks) + 1024
	}
	if t, ok := m.marks[k]; ok && !t.Before(now) {
		if until.After(t) {
			m.marks[k] = until
		}
		return false
	}
	m.marks[k] = until
	return true
}

// has reports whether k is marked. The caller holds usersMu.
func (m *sessionMarks) has(k sessionKey) bool {
	_, ok := m.marks[k]
	return ok
}

// FindSessionUser implements store.Sessions.
func (s *Store) FindSessionUser(_ context.Context, userID, sessionID string) (store.SessionUser, error) {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	u, ok := s.usersByID[userID]
	if !ok {
		return store.SessionUser{}, &store.NotFoundError{Kind: "user", Name: userID}
	}
	return store.SessionUser{User: u.Clone(), Ended: s.ended.has(sessionKey{userID, sessionID})}, nil
}

// EndSession implements store.Sessions.
func (s *Store) EndSession(_ context.Context, userID, sessionID string, until time.Time) error {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	if _, ok := s.usersByID[userID]; !ok {
		return &store.NotFoundError{Kind: "user", Name: userID}
	}
	s.ended.add(sessionKey{userID, sessionID}, until, s.now())
	return nil
}

// UseToken implements store.Sessions. The write lock makes the check and
// the mark one step, so of concurrent uses exactly one wins.
func (s *Store) UseToken(_ context.Context, userID, tokenID string, until time.Time) error {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	if _, ok := s.usersByID[userID]; !ok {
		return &store.NotFoundError{Kind: "user", Name: userID}
	}
	if !s.used.add(sessionKey{userID, tokenID}, until, s.now()) {
		return store.ErrTokenUsed
	}
	return nil
}

// SetPassword implements store.Sessions.
func (s *Store) SetPassword(_ context.Context, userID string, hash []byte) (*store.User, error) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	u, ok := s.usersByID[userID]
	if !ok {
		return nil, &store.NotFoundError{Kind: "user", Name: userID}
	}
	u.PasswordHash = append([]byte(nil), hash...)
	u.SessionGeneration++
	u.UpdatedAt = s.now()
	return u.Clone(), nil
}

package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// SessionStore is what RunSessions tests: a user directory and its
// sessions on one value, as every store of this module provides them.
type SessionStore interface {
	store.UserDirectory
	store.Sessions
}

// RunSessions runs the conformance suite of store.Sessions. newStores
// must return two handles on one fresh, empty storage, so that what one
// records the other sees: the same store twice for a store held in
// process, two stores on one database for PostgreSQL (two instances of
// the service). It is called once per subtest.
func RunSessions(t *testing.T, newStores func(t *testing.T) (SessionStore, SessionStore)) {
	future := time.Now().Add(time.Hour)

	t.Run("Errors", func(t *testing.T) {
		s, _ := newStores(t)
		ctx := t.Context()
		mustUser(t, s, "alice")
		id := store.NewID()
		_, err := s.FindSessionUser(ctx, id, "sid-1")
		assertNotFound(t, err, "user", id, "FindSessionUser of a missing user")
		err = s.EndSession(ctx, id, "sid-1", future)
		assertNotFound(t, err, "user", id, "EndSession of a missing user")
		err = s.UseToken(ctx, id, "jti-1", future)
		assertNotFound(t, err, "user", id, "UseToken of a missing user")
		_, err = s.SetPassword(ctx, id, []byte("new hash"))
		assertNotFound(t, err, "user", id, "SetPassword of a missing user")
		_, err = s.FindSessionUser(ctx, "not-a-uuid", "sid-1")
		assertNotFound(t, err, "user", "not-a-uuid", "FindSessionUser of an id that is no UUID")
	})

	t.Run("FindSessionUser", func(t *testing.T) {
		s, _ := newStores(t)
		ctx := t.Context()
		u := mustUser(t, s, "alice")
		su, err := s.FindSessionUser(ctx, u.ID, "never-recorded")
		require.NoError(t, err, "FindSessionUser")
		assert.Equal(t, viewUser(u), viewUser(su.User), "the user as FindUserByID returns it")
		assert.Equal(t, int64(0), su.User.SessionGeneration, "a new user is in generation 0")
		assert.False(t, su.Ended, "a session never ended is not ended")
		su.User.Username = "changed"
		again, err := s.FindSessionUser(ctx, u.ID, "never-recorded")
		require.NoError(t, err)
		assert.Equal(t, "alice", again.User.Username, "FindSessionUser returns a copy")
		require.NoError(t, s.SetUserActive(ctx, "alice", false))
		su, err = s.FindSessionUser(ctx, u.ID, "never-recorded")
		require.NoError(t, err)
		assert.False(t, su.User.Active, "a disabled user is returned as disabled")
	})

	t.Run("EndSession", func(t *testing.T) {
		a, b := newStores(t)
		ctx := t.Context()
		alice, bob := mustUser(t, a, "alice"), mustUser(t, a, "bob")
		require.NoError(t, a.EndSession(ctx, alice.ID, "sid-1", future), "EndSession")
		require.NoError(t, a.EndSession(ctx, alice.ID, "sid-1", future.Add(time.Hour)), "ending a session again is no error")
		for _, c := range []struct {
			s     SessionStore
			user  string
			sid   string
			ended bool
			what  string
		}{
			{a, alice.ID, "sid-1", true, "the ended session, on the store that ended it"},
			{b, alice.ID, "sid-1", true, "the ended session, on a second store of the same storage"},
			{b, alice.ID, "sid-2", false, "another session of the same user"},
			{b, alice.ID, "SID-1", false, "session ids are case-sensitive"},
			{b, bob.ID, "sid-1", false, "the same session id of another user"},
		} {
			su, err := c.s.FindSessionUser(ctx, c.user, c.sid)
			if assert.NoError(t, err, c.what) {
				assert.Equal(t, c.ended, su.Ended, c.what)
			}
		}
	})

	t.Run("UseToken", func(t *testing.T) {
		a, b := newStores(t)
		ctx := t.Context()
		alice, bob := mustUser(t, a, "alice"), mustUser(t, a, "bob")
		require.NoError(t, a.UseToken(ctx, alice.ID, "jti-1", future), "the first use")
		assert.ErrorIs(t, a.UseToken(ctx, alice.ID, "jti-1", future), store.ErrTokenUsed, "a second use on the same store")
		assert.ErrorIs(t, b.UseToken(ctx, alice.ID, "jti-1", future), store.ErrTokenUsed, "a second use on a second store")
		assert.NoError(t, b.UseToken(ctx, alice.ID, "jti-2", future), "another token")
		assert.NoError(t, b.UseToken(ctx, bob.ID, "jti-1", future), "the same token id of another user")
		su, err := a.FindSessionUser(ctx, alice.ID, "jti-1")
		require.NoError(t, err)
		assert.False(t, su.Ended, "using a token does not end its session")
	})

	t.Run("UseTokenConcurrently", func(t *testing.T) {
		a, b := newStores(t)
		ctx := t.Context()
		alice := mustUser(t, a, "alice")
		for round := range 5 {
			jti := fmt.Sprintf("jti-%d", round)
			const n = 16
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				s := a
				if i%2 == 1 {
					s = b
				}
				wg.Go(func() {
					<-start
					errs[i] = s.UseToken(ctx, alice.ID, jti, future)
				})
			}
			close(start)
			wg.Wait()
			won := 0
			for i, err := range errs {
				if err == nil {
					won++
					continue
				}
				assert.ErrorIs(t, err, store.ErrTokenUsed, "round %d, use %d: a losing use is ErrTokenUsed", round, i)
			}
			assert.Equal(t, 1, won, "round %d: exactly one of %d concurrent uses on two stores wins", round, n)
		}
	})

	t.Run("SetPassword", func(t *testing.T) {
		a, b := newStores(t)
		ctx := t.Context()
		alice, bob := mustUser(t, a, "alice"), mustUser(t, a, "bob")
		u, err := a.SetPassword(ctx, alice.ID, []byte("new hash"))
		require.NoError(t, err, "SetPassword")
		assert.Equal(t, []byte("new hash"), u.PasswordHash, "the new hash")
		assert.Equal(t, int64(1), u.SessionGeneration, "the generation moves on")
		assert.False(t, u.UpdatedAt.Before(alice.UpdatedAt), "UpdatedAt does not go back")
		assert.Equal(t, stamp(alice.CreatedAt), stamp(u.CreatedAt), "CreatedAt is kept")
		got, err := b.FindUserByName(ctx, "alice")
		require.NoError(t, err)
		assert.Equal(t, viewUser(u), viewUser(got), "a second store sees the change")
		u, err = b.SetPassword(ctx, alice.ID, []byte("third hash"))
		require.NoError(t, err)
		assert.Equal(t, int64(2), u.SessionGeneration, "each change moves it on by one")
		u.PasswordHash[0] = 'X'
		su, err := a.FindSessionUser(ctx, alice.ID, "sid")
		require.NoError(t, err)
		assert.Equal(t, []byte("third hash"), su.User.PasswordHash, "SetPassword returns a copy")
		assert.Equal(t, int64(2), su.User.SessionGeneration, "FindSessionUser reports the generation")
		other, err := a.FindUserByID(ctx, bob.ID)
		require.NoError(t, err)
		assert.Equal(t, viewUser(bob), viewUser(other), "another user is untouched")
	})

	t.Run("ExpiredMarksDoNotHideLiveOnes", func(t *testing.T) {
		a, b := newStores(t)
		ctx := t.Context()
		alice := mustUser(t, a, "alice")
		require.NoError(t, a.EndSession(ctx, alice.ID, "live", future))
		require.NoError(t, a.UseToken(ctx, alice.ID, "live", future))
		past := time.Now().Add(-time.Hour)
		for i := range 1100 { // past the memory store's first sweep
			s := a
			if i%2 == 1 {
				s = b
			}
			require.NoError(t, s.EndSession(ctx, alice.ID, fmt.Sprint("old-", i), past))
			require.NoError(t, s.UseToken(ctx, alice.ID, fmt.Sprint("old-", i), past))
		}
		su, err := b.FindSessionUser(ctx, alice.ID, "live")
		require.NoError(t, err)
		assert.True(t, su.Ended, "an ended session stays ended until its time, whatever is forgotten around it")
		assert.ErrorIs(t, b.UseToken(ctx, alice.ID, "live", future), store.ErrTokenUsed, "a used token stays used until its time")
	})

	t.Run("DeleteUserForgetsSessions", func(t *testing.T) {
		a, b := newStores(t)
		ctx := t.Context()
		alice := mustUser(t, a, "alice")
		require.NoError(t, a.EndSession(ctx, alice.ID, "sid", future))
		require.NoError(t, a.UseToken(ctx, alice.ID, "jti", future))
		require.NoError(t, a.DeleteUser(ctx, "alice"))
		_, err := b.FindSessionUser(ctx, alice.ID, "sid")
		assertNotFound(t, err, "user", alice.ID, "a deleted user")
		_, err = a.CreateUser(ctx, &store.User{ID: alice.ID, Username: "alice", PasswordHash: []byte("h"), Active: true})
		require.NoError(t, err, "a user with the same id again")
		su, err := b.FindSessionUser(ctx, alice.ID, "sid")
		require.NoError(t, err)
		assert.False(t, su.Ended, "the marks went with the deleted user")
		assert.NoError(t, b.UseToken(ctx, alice.ID, "jti", future), "the marks went with the deleted user")
	})
}

package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// RunUsers runs the conformance suite of store.UserDirectory. newUsers
// must return a fresh, empty directory each time it is called; it is
// called once per subtest.
func RunUsers(t *testing.T, newUsers func(t *testing.T) store.UserDirectory) {
	t.Run("Errors", func(t *testing.T) {
		d := newUsers(t)
		ctx := t.Context()
		mustUser(t, d, "alice")
		_, err := d.CreateUser(ctx, &store.User{Username: "alice", PasswordHash: []byte("other"), Active: true})
		assertUserExists(t, err, "CreateUser with a taken username")
		_, err = d.CreateUser(ctx, &store.User{ID: store.NewID(), Username: "alice", PasswordHash: []byte("other")})
		assertUserExists(t, err, "CreateUser with a taken username and a new id")
		_, err = d.FindUserByName(ctx, "nobody")
		assertNotFound(t, err, "user", "nobody", "FindUserByName of a missing user")
		_, err = d.FindUserByName(ctx, "Alice")
		assertNotFound(t, err, "user", "Alice", "usernames are case-sensitive")
		_, err = d.FindUserByName(ctx, "nul\x00name")
		assertNotFound(t, err, "user", "nul\x00name", "FindUserByName of a name with U+0000")
		id := store.NewID()
		_, err = d.FindUserByID(ctx, id)
		assertNotFound(t, err, "user", id, "FindUserByID of a missing id")
		_, err = d.FindUserByID(ctx, "not-a-uuid")
		assertNotFound(t, err, "user", "not-a-uuid", "FindUserByID of an id that is no UUID")
		err = d.SetUserActive(ctx, "nobody", false)
		assertNotFound(t, err, "user", "nobody", "SetUserActive of a missing user")
		err = d.DeleteUser(ctx, "nobody")
		assertNotFound(t, err, "user", "nobody", "DeleteUser of a missing user")
		us, err := listUsers(ctx, d)
		require.NoError(t, err, "ListUsers")
		assert.Equal(t, []string{"alice"}, usernames(us), "failed calls change nothing")
	})

	t.Run("CreateAssignsID", func(t *testing.T) {
		d := newUsers(t)
		u, err := d.CreateUser(t.Context(), &store.User{Username: "alice", PasswordHash: []byte("$2a$10$hash"), Active: true})
		require.NoError(t, err, "CreateUser")
		assert.NotEmpty(t, u.ID, "CreateUser assigns an id when none is given")
		assert.Equal(t, "alice", u.Username, "Username")
		assert.Equal(t, []byte("$2a$10$hash"), u.PasswordHash, "PasswordHash")
		assert.True(t, u.Active, "Active")
		assert.False(t, u.CreatedAt.IsZero(), "CreateUser sets CreatedAt")
		assert.False(t, u.UpdatedAt.IsZero(), "CreateUser sets UpdatedAt")
		v := mustUser(t, d, "bob")
		assert.NotEqual(t, u.ID, v.ID, "two users get different ids")
	})

	t.Run("CreateKeepsGivenID", func(t *testing.T) {
		d := newUsers(t)
		id := store.NewID()
		u, err := d.CreateUser(t.Context(), &store.User{ID: id, Username: "alice", PasswordHash: []byte("h")})
		require.NoError(t, err, "CreateUser with an id")
		assert.Equal(t, id, u.ID, "CreateUser keeps the id it is given")
		assert.False(t, u.Active, "Active false is kept")
		got, err := d.FindUserByID(t.Context(), id)
		if assert.NoError(t, err, "FindUserByID") {
			assert.Equal(t, "alice", got.Username, "FindUserByID finds the user by the given id")
		}
	})

	t.Run("Find", func(t *testing.T) {
		d := newUsers(t)
		u := mustUser(t, d, "alice")
		mustUser(t, d, "bob")
		got, err := d.FindUserByName(t.Context(), "alice")
		if assert.NoError(t, err, "FindUserByName") {
			assert.Equal(t, viewUser(u), viewUser(got), "FindUserByName returns the created user")
		}
		got, err = d.FindUserByID(t.Context(), u.ID)
		if assert.NoError(t, err, "FindUserByID") {
			assert.Equal(t, viewUser(u), viewUser(got), "FindUserByID returns the created user")
		}
	})

	t.Run("ListUsersOrderedByUsername", func(t *testing.T) {
		d := newUsers(t)
		us, err := listUsers(t.Context(), d)
		require.NoError(t, err, "ListUsers on an empty directory")
		assert.Empty(t, us, "an empty directory has no users")
		created := map[string]*store.User{}
		for _, name := range []string{"carol", "alice", "dave", "bob"} {
			created[name] = mustUser(t, d, name)
		}
		us, total, err := d.ListUsers(t.Context(), store.ListQuery{})
		require.NoError(t, err, "ListUsers")
		assert.Equal(t, []string{"alice", "bob", "carol", "dave"}, usernames(us), "ListUsers with an empty query lists every user, by username")
		assert.Equal(t, 4, total, "ListUsers with an empty query counts every user")
		for _, u := range us {
			assert.Equal(t, viewUser(created[u.Username]), viewUser(u), "ListUsers returns %q as created", u.Username)
		}
	})

	t.Run("SetUserActive", func(t *testing.T) {
		d := newUsers(t)
		mustUser(t, d, "alice")
		bob := mustUser(t, d, "bob")
		for _, active := range []bool{false, false, true, true, false} {
			require.NoError(t, d.SetUserActive(t.Context(), "alice", active), "SetUserActive(%v)", active)
			u, err := d.FindUserByName(t.Context(), "alice")
			if assert.NoError(t, err, "FindUserByName") {
				assert.Equal(t, active, u.Active, "SetUserActive(%v) sets Active", active)
			}
		}
		got, err := d.FindUserByName(t.Context(), "bob")
		if assert.NoError(t, err, "FindUserByName bob") {
			assert.Equal(t, viewUser(bob), viewUser(got), "SetUserActive changes no other user")
		}
	})

	t.Run("DeleteUser", func(t *testing.T) {
		d := newUsers(t)
		u := mustUser(t, d, "alice")
		mustUser(t, d, "bob")
		require.NoError(t, d.DeleteUser(t.Context(), "alice"), "DeleteUser")
		_, err := d.FindUserByName(t.Context(), "alice")
		assertNotFound(t, err, "user", "alice", "FindUserByName after delete")
		_, err = d.FindUserByID(t.Context(), u.ID)
		assertNotFound(t, err, "user", u.ID, "FindUserByID after delete")
		err = d.DeleteUser(t.Context(), "alice")
		assertNotFound(t, err, "user", "alice", "deleting a deleted user again")
		err = d.SetUserActive(t.Context(), "alice", true)
		assertNotFound(t, err, "user", "alice", "SetUserActive of a deleted user")
		us, err := listUsers(t.Context(), d)
		require.NoError(t, err, "ListUsers")
		assert.Equal(t, []string{"bob"}, usernames(us), "the deleted user is not listed")
		v := mustUser(t, d, "alice")
		assert.NotEqual(t, u.ID, v.ID, "a re-created user gets a new id")
	})

	t.Run("CopiesInAndOut", func(t *testing.T) {
		d := newUsers(t)
		in := &store.User{Username: "alice", PasswordHash: []byte("hash-one"), Active: true}
		u, err := d.CreateUser(t.Context(), in)
		require.NoError(t, err, "CreateUser")
		want := viewUser(u)
		in.PasswordHash[0] = 'X'
		in.Active = false
		u.PasswordHash[1] = 'X'
		u.Username, u.Active = "changed", false
		got, err := d.FindUserByName(t.Context(), "alice")
		require.NoError(t, err, "FindUserByName")
		assert.Equal(t, want, viewUser(got), "changing the user given to or returned by CreateUser changes nothing")
		assert.Equal(t, "hash-one", string(got.PasswordHash), "the stored hash is the one given")
		got.PasswordHash[0] = 'Y'
		got.Active = false
		got, err = d.FindUserByID(t.Context(), got.ID)
		require.NoError(t, err, "FindUserByID")
		assert.Equal(t, want, viewUser(got), "changing the user returned by FindUserByName changes nothing")
		got.PasswordHash[0] = 'Z'
		us, err := listUsers(t.Context(), d)
		require.NoError(t, err, "ListUsers")
		require.Len(t, us, 1, "ListUsers")
		assert.Equal(t, want, viewUser(us[0]), "changing the user returned by FindUserByID changes nothing")
		us[0].PasswordHash[0] = 'W'
		got, err = d.FindUserByName(t.Context(), "alice")
		require.NoError(t, err, "FindUserByName")
		assert.Equal(t, want, viewUser(got), "changing a user returned by ListUsers changes nothing")
	})

	t.Run("ConcurrentCreate", func(t *testing.T) {
		d := newUsers(t)
		errs := race(racers, func(i int) error {
			_, err := d.CreateUser(t.Context(), &store.User{Username: "alice", PasswordHash: fmt.Appendf(nil, "hash%d", i), Active: true})
			return err
		})
		winner, wins := -1, 0
		for i, err := range errs {
			switch {
			case err == nil:
				winner = i
				wins++
			case errors.Is(err, store.ErrAlreadyExists):
			default:
				assert.Fail(t, "unexpected error", "CreateUser goroutine %d: %v (want nil or ErrAlreadyExists)", i, err)
			}
		}
		assert.Equal(t, 1, wins, "exactly one of %d concurrent creates of one username succeeds", racers)
		u, err := d.FindUserByName(t.Context(), "alice")
		if assert.NoError(t, err, "FindUserByName") && winner >= 0 {
			assert.Equal(t, fmt.Sprintf("hash%d", winner), string(u.PasswordHash), "the winner's user is stored")
		}
		us, err := listUsers(t.Context(), d)
		require.NoError(t, err, "ListUsers")
		assert.Len(t, us, 1, "one user is stored")
	})

	t.Run("ConcurrentMixed", func(t *testing.T) {
		d := newUsers(t)
		errs := race(racers, func(i int) error {
			name := fmt.Sprintf("user%02d", i)
			if _, err := d.CreateUser(t.Context(), &store.User{Username: name, PasswordHash: []byte("h"), Active: true}); err != nil {
				return err
			}
			if err := d.SetUserActive(t.Context(), name, false); err != nil {
				return err
			}
			if _, err := listUsers(t.Context(), d); err != nil {
				return err
			}
			if i%2 == 0 {
				return d.DeleteUser(t.Context(), name)
			}
			return nil
		})
		for i, err := range errs {
			assert.NoError(t, err, "goroutine %d", i)
		}
		us, err := listUsers(t.Context(), d)
		require.NoError(t, err, "ListUsers")
		assert.Len(t, us, racers/2, "the odd users are left")
		for _, u := range us {
			assert.False(t, u.Active, "%s was disabled", u.Username)
		}
	})
}

// assertUserExists checks that err is ErrAlreadyExists.
func assertUserExists(t *testing.T, err error, msg string) {
	t.Helper()
	assert.ErrorIs(t, err, store.ErrAlreadyExists, "%s: want ErrAlreadyExists", msg)
}

func mustUser(t *testing.T, d store.UserDirectory, name string) *store.User {
	t.Helper()
	u, err := d.CreateUser(t.Context(), &store.User{Username: name, PasswordHash: []byte("hash of " + name), Active: true})
	require.NoError(t, err, "CreateUser %q", name)
	return u
}

type userView struct {
	ID, Username, PasswordHash string
	Active, Admin              bool
	SessionGeneration          int64
	CreatedAt, UpdatedAt       string
}

func viewUser(u *store.User) userView {
	if u == nil {
		return userView{}
	}
	return userView{u.ID, u.Username, string(u.PasswordHash), u.Active, u.Admin, u.SessionGeneration, stamp(u.CreatedAt), stamp(u.UpdatedAt)}
}

func usernames(us []*store.User) []string {
	names := []string{}
	for _, u := range us {
		names = append(names, u.Username)
	}
	return names
}

// listUsers lists every user of d: ListUsers with an empty query, by
// username and without a limit.
func listUsers(ctx context.Context, d store.UserDirectory) ([]*store.User, error) {
	us, _, err := d.ListUsers(ctx, store.ListQuery{})
	return us, err
}

package storetest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// UserAdminStore is what RunUserAdmin tests: an AccessStore that also
// keeps the sessions (store.Sessions), as every store of this module
// does.
type UserAdminStore interface {
	AccessStore
	store.Sessions
}

// RunUserAdmin runs the conformance suite of user administration
// (docs/api.md#server-administrators-and-user-accounts-v12): administrators
// and the last-administrator rule (under concurrency too),
// UserDirectory.ListUsers and UpdateUser, sessions ended by a disable or a
// password set and not revived by an enable, DeleteUser refusing an owner
// and dropping memberships, and Access.TransferProject. newStores must
// return two handles on one fresh, empty storage, as for RunAccess.
func RunUserAdmin(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	t.Run("AdminFlag", func(t *testing.T) { testAdminFlag(t, newStores) })
	t.Run("ListUsers", func(t *testing.T) { testListUsers(t, newStores) })
	t.Run("ListUsersSorted", func(t *testing.T) { testListUsersSorted(t, newStores) })
	t.Run("UpdateUser", func(t *testing.T) { testUpdateUser(t, newStores) })
	t.Run("LastAdmin", func(t *testing.T) { testLastAdmin(t, newStores) })
	t.Run("LastAdminConcurrent", func(t *testing.T) { testLastAdminConcurrent(t, newStores) })
	t.Run("DeleteUser", func(t *testing.T) { testDeleteOwner(t, newStores) })
	t.Run("Transfer", func(t *testing.T) { testTransfer(t, newStores) })
	t.Run("TransferAgainstDelete", func(t *testing.T) { testTransferAgainstDelete(t, newStores) })
}

func newAdminUser(t *testing.T, d store.UserDirectory, name string, admin, active bool) *store.User {
	t.Helper()
	u, err := d.CreateUser(t.Context(), &store.User{Username: name, PasswordHash: []byte("hash of " + name), Active: active, Admin: admin})
	require.NoError(t, err, "CreateUser %q", name)
	return u
}

func assertLastAdmin(t *testing.T, err error, what string) {
	t.Helper()
	var ve *store.ValidationError
	if assert.ErrorAs(t, err, &ve, "%s: want the last-administrator rule's *ValidationError", what) {
		assert.Equal(t, store.LastAdminRule, ve.Message, "%s: message", what)
	}
}

func testAdminFlag(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	s, other := newStores(t)
	a := newAdminUser(t, s, "alice", true, true)
	assert.True(t, a.Admin, "CreateUser keeps Admin true")
	b := newAdminUser(t, s, "bob", false, true)
	assert.False(t, b.Admin, "CreateUser keeps Admin false")
	got, err := other.FindUserByName(t.Context(), "alice")
	require.NoError(t, err)
	assert.True(t, got.Admin, "FindUserByName reads Admin")
	got, err = other.FindUserByID(t.Context(), b.ID)
	require.NoError(t, err)
	assert.False(t, got.Admin, "FindUserByID reads Admin")
	us, err := listUsers(t.Context(), other)
	require.NoError(t, err)
	require.Len(t, us, 2)
	assert.Equal(t, []bool{true, false}, []bool{us[0].Admin, us[1].Admin}, "ListUsers reads Admin")
}

func testListUsers(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	s, other := newStores(t)
	ctx := t.Context()
	names := []string{"bob", "Zed", "alice", "ÄRGER", "ärger-2", "a%b", "a_b", `a\b`, "axb", "carol"}
	for i, n := range names {
		newAdminUser(t, s, n, i%3 == 0, i%2 == 0)
	}
	list := func(q store.ListQuery) ([]string, int) {
		t.Helper()
		us, total, err := other.ListUsers(ctx, q)
		require.NoError(t, err, "ListUsers %+v", q)
		return usernames(us), total
	}
	got, total := list(store.ListQuery{Limit: 100})
	assert.Equal(t, []string{"Zed", "a%b", `a\b`, "a_b", "alice", "axb", "bob", "carol", "ÄRGER", "ärger-2"}, got, "ordered by username byte-wise")
	assert.Equal(t, len(names), total, "total")
	got, total = list(store.ListQuery{Limit: 3, Offset: 2})
	assert.Equal(t, []string{`a\b`, "a_b", "alice"}, got, "limit and offset")
	assert.Equal(t, len(names), total, "total counts every match")
	got, total = list(store.ListQuery{Limit: 3, Offset: 50})
	assert.Empty(t, got, "an offset past the end")
	assert.Equal(t, len(names), total, "total past the end")
	got, total = list(store.ListQuery{Limit: 100, Search: "ärg"})
	assert.Equal(t, []string{"ÄRGER", "ärger-2"}, got, "search is case-insensitive as strings.ToLower")
	assert.Equal(t, 2, total)
	got, _ = list(store.ListQuery{Limit: 100, Search: "%"})
	assert.Equal(t, []string{"a%b"}, got, "%% is literal")
	got, _ = list(store.ListQuery{Limit: 100, Search: "_"})
	assert.Equal(t, []string{"a_b"}, got, "_ is literal")
	got, _ = list(store.ListQuery{Limit: 100, Search: `\`})
	assert.Equal(t, []string{`a\b`}, got, `\ is literal`)
	got, total = list(store.ListQuery{Limit: 1, Offset: 1, Search: "A"})
	assert.Equal(t, []string{`a\b`}, got, "search with limit and offset")
	assert.Equal(t, 6, total, "total of a search")
	us, _, err := other.ListUsers(ctx, store.ListQuery{Limit: 100, Search: "alice"})
	require.NoError(t, err)
	if assert.Len(t, us, 1) {
		a, err := s.FindUserByName(ctx, "alice")
		require.NoError(t, err)
		assert.Equal(t, viewUser(a), viewUser(us[0]), "ListUsers returns the user as it is")
		assert.Equal(t, a.Admin, us[0].Admin, "Admin")
	}
}

// testListUsersSorted: ListUsers sorts by q.SortBy (name, id, created_at,
// updated_at) in either direction, ties broken by username then id
// ascending (docs/api.md#list-queries), with search and paging.
func testListUsersSorted(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	s, other := newStores(t)
	ctx := t.Context()
	for _, n := range []string{"carol", "alice", "dave", "bob", "erin"} {
		newAdminUser(t, s, n, false, true)
	}
	yes := true
	_, err := s.UpdateUser(ctx, "dave", store.UserChange{Admin: &yes})
	require.NoError(t, err)
	all, _, err := other.ListUsers(ctx, store.ListQuery{})
	require.NoError(t, err)
	require.Len(t, all, 5)
	// want sorts the usernames by key, ties by username then id.
	want := func(key func(u *store.User) string, desc bool) []string {
		us := slices.Clone(all)
		slices.SortFunc(us, func(a, b *store.User) int {
			c := strings.Compare(key(a), key(b))
			if desc {
				c = -c
			}
			if c != 0 {
				return c
			}
			return strings.Compare(a.Username, b.Username)
		})
		return usernames(us)
	}
	stamp := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000") }
	for _, tt := range []struct {
		by  store.SortField
		key func(u *store.User) string
	}{
		{store.SortName, func(u *store.User) string { return u.Username }},
		{store.SortID, func(u *store.User) string { return u.ID }},
		{store.SortCreatedAt, func(u *store.User) string { return stamp(u.CreatedAt) }},
		{store.SortUpdatedAt, func(u *store.User) string { return stamp(u.UpdatedAt) }},
	} {
		for _, desc := range []bool{false, true} {
			us, total, err := other.ListUsers(ctx, store.ListQuery{SortBy: tt.by, Desc: desc})
			require.NoError(t, err)
			assert.Equal(t, want(tt.key, desc), usernames(us), "sortBy %s, desc %v", tt.by, desc)
			assert.Equal(t, 5, total)
			us, total, err = other.ListUsers(ctx, store.ListQuery{SortBy: tt.by, Desc: desc, Limit: 2, Offset: 1})
			require.NoError(t, err)
			assert.Equal(t, want(tt.key, desc)[1:3], usernames(us), "sortBy %s, desc %v, limit and offset", tt.by, desc)
			assert.Equal(t, 5, total)
		}
	}
	us, _, err := other.ListUsers(ctx, store.ListQuery{SortBy: store.SortName, Desc: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"erin", "dave", "carol", "bob", "alice"}, usernames(us), "by username, descending")
	us, total, err := other.ListUsers(ctx, store.ListQuery{SortBy: store.SortUpdatedAt, Desc: true, Search: "A", Limit: 2})
	require.NoError(t, err)
	matching := slices.DeleteFunc(want(func(u *store.User) string { return stamp(u.UpdatedAt) }, true),
		func(n string) bool { return !strings.Contains(n, "a") })
	assert.Equal(t, matching[:2], usernames(us), "sorted, searched and paged")
	assert.Equal(t, 3, total, "alice, carol and dave match")
}

func testUpdateUser(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	s, other := newStores(t)
	ctx := t.Context()
	newAdminUser(t, s, "root", true, true)
	bob := newAdminUser(t, s, "bob", false, true)
	yes, no := true, false

	_, err := s.UpdateUser(ctx, "nobody", store.UserChange{Admin: &yes})
	assertNotFound(t, err, "user", "nobody", "UpdateUser of a missing user")
	_, err = s.UpdateUser(ctx, "nul\x00", store.UserChange{Admin: &yes})
	assertNotFound(t, err, "user", "nul\x00", "UpdateUser of a name with U+0000")

	u, err := s.UpdateUser(ctx, "bob", store.UserChange{Admin: &yes})
	require.NoError(t, err)
	assert.True(t, u.Admin, "Admin set")
	assert.Equal(t, bob.SessionGeneration, u.SessionGeneration, "a promotion ends no session")
	assert.True(t, u.Active, "Active unchanged")
	assert.Equal(t, bob.PasswordHash, u.PasswordHash, "the password unchanged")

	u, err = s.UpdateUser(ctx, "bob", store.UserChange{Active: &no})
	require.NoError(t, err)
	assert.False(t, u.Active, "disabled")
	assert.Equal(t, bob.SessionGeneration+1, u.SessionGeneration, "a disable ends every session")
	got, err := other.FindSessionUser(ctx, bob.ID, "some-session")
	require.NoError(t, err)
	assert.Equal(t, bob.SessionGeneration+1, got.User.SessionGeneration, "the other handle sees the ended sessions at once")

	u, err = s.UpdateUser(ctx, "bob", store.UserChange{Active: &yes})
	require.NoError(t, err)
	assert.True(t, u.Active, "enabled")
	assert.Equal(t, bob.SessionGeneration+1, u.SessionGeneration, "an enable revives no session the disable ended")
	require.NoError(t, s.SetUserActive(ctx, "bob", false), "SetUserActive false")
	require.NoError(t, s.SetUserActive(ctx, "bob", true), "SetUserActive true")
	got, err = other.FindSessionUser(ctx, bob.ID, "some-session")
	require.NoError(t, err)
	assert.Equal(t, bob.SessionGeneration+2, got.User.SessionGeneration, "SetUserActive(false) ends every session too")

	u, err = s.UpdateUser(ctx, "bob", store.UserChange{PasswordHash: []byte("new hash"), Admin: &no})
	require.NoError(t, err)
	assert.Equal(t, "new hash", string(u.PasswordHash), "password set")
	assert.False(t, u.Admin, "and Admin, in one step")
	assert.Equal(t, bob.SessionGeneration+3, u.SessionGeneration, "a password set ends every session")
	got2, err := other.FindUserByName(ctx, "bob")
	require.NoError(t, err)
	assert.Equal(t, viewUser(u), viewUser(got2), "UpdateUser returns the user as stored")
	assert.False(t, got2.Admin)

	u, err = s.UpdateUser(ctx, "bob", store.UserChange{})
	require.NoError(t, err, "an empty change")
	assert.Equal(t, bob.SessionGeneration+3, u.SessionGeneration, "an empty change ends nothing")
}

func testLastAdmin(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	s, other := newStores(t)
	ctx := t.Context()
	yes, no := true, false
	// No administrator at all: the rule does not apply.
	newAdminUser(t, s, "plain", false, true)
	_, err := s.UpdateUser(ctx, "plain", store.UserChange{Active: &no, Admin: &no})
	require.NoError(t, err, "no administrator: any change")
	require.NoError(t, s.DeleteUser(ctx, "plain"), "no administrator: delete")

	a := newAdminUser(t, s, "alice", true, true)
	newAdminUser(t, s, "dormant", true, false) // a disabled administrator does not count
	newAdminUser(t, s, "carol", false, true)
	_, err = other.UpdateUser(ctx, "alice", store.UserChange{Admin: &no})
	assertLastAdmin(t, err, "demoting the last active administrator")
	_, err = other.UpdateUser(ctx, "alice", store.UserChange{Active: &no})
	assertLastAdmin(t, err, "disabling the last active administrator")
	err = other.SetUserActive(ctx, "alice", false)
	assertLastAdmin(t, err, "SetUserActive(false) of the last active administrator")
	err = other.DeleteUser(ctx, "alice")
	assertLastAdmin(t, err, "deleting the last active administrator")
	_, err = other.UpdateUser(ctx, "alice", store.UserChange{Admin: &no, PasswordHash: []byte("x")})
	assertLastAdmin(t, err, "a refused change changes nothing of it")
	got, err := s.FindUserByName(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, viewUser(a), viewUser(got), "refused changes changed nothing")
	assert.True(t, got.Admin)

	_, err = other.UpdateUser(ctx, "alice", store.UserChange{PasswordHash: []byte("x")})
	require.NoError(t, err, "the last administrator may change its password")
	_, err = other.UpdateUser(ctx, "alice", store.UserChange{Admin: &yes, Active: &yes})
	require.NoError(t, err, "a change that keeps it an active administrator")
	_, err = other.UpdateUser(ctx, "dormant", store.UserChange{Admin: &no})
	require.NoError(t, err, "demoting a disabled administrator")
	require.NoError(t, other.DeleteUser(ctx, "dormant"), "deleting a disabled (former) administrator")
	_, err = other.UpdateUser(ctx, "carol", store.UserChange{Active: &no})
	require.NoError(t, err, "disabling a non-administrator")

	_, err = s.UpdateUser(ctx, "carol", store.UserChange{Admin: &yes})
	require.NoError(t, err)
	_, err = s.UpdateUser(ctx, "alice", store.UserChange{Admin: &no})
	assertLastAdmin(t, err, "carol is an administrator but disabled")
	_, err = s.UpdateUser(ctx, "carol", store.UserChange{Active: &yes})
	require.NoError(t, err)
	_, err = s.UpdateUser(ctx, "alice", store.UserChange{Admin: &no})
	require.NoError(t, err, "demoting alice while carol is an active administrator")
	err = other.DeleteUser(ctx, "carol")
	assertLastAdmin(t, err, "carol is now the last one")
	require.NoError(t, other.DeleteUser(ctx, "alice"), "deleting a non-administrator")
}

// testLastAdminConcurrent: two active administrators, each taken away
// at the same time through the two handles (demote, disable or delete):
// exactly one change wins, and one active administrator remains.
func testLastAdminConcurrent(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	s, other := newStores(t)
	ctx := t.Context()
	no := false
	handles := []UserAdminStore{s, other}
	takeAway := []func(d UserAdminStore, name string) error{
		func(d UserAdminStore, name string) error {
			_, err := d.UpdateUser(ctx, name, store.UserChange{Admin: &no})
			return err
		},
		func(d UserAdminStore, name string) error { return d.SetUserActive(ctx, name, false) },
		func(d UserAdminStore, name string) error { return d.DeleteUser(ctx, name) },
	}
	survivor := ""
	for round := range 12 {
		names := []string{fmt.Sprintf("a%02d", round), fmt.Sprintf("b%02d", round)}
		for _, n := range names {
			newAdminUser(t, s, n, true, true)
		}
		if survivor != "" { // the pair alone are the active administrators
			_, err := s.UpdateUser(ctx, survivor, store.UserChange{Admin: &no})
			require.NoError(t, err, "round %d: demoting the previous survivor", round)
		}
		errs := race(2, func(i int) error { return takeAway[(round+i)%3](handles[i], names[i]) })
		wins := 0
		for i, err := range errs {
			if err == nil {
				wins++
				continue
			}
			assertLastAdmin(t, err, fmt.Sprintf("round %d, change %d", round, i))
			survivor = names[i]
		}
		assert.Equal(t, 1, wins, "round %d: exactly one of two concurrent changes wins", round)
		us, err := listUsers(ctx, other)
		require.NoError(t, err)
		var active []string
		for _, u := range us {
			if u.Admin && u.Active {
				active = append(active, u.Username)
			}
		}
		require.Len(t, active, 1, "round %d: one active administrator remains", round)
		survivor = active[0]
	}
}

func testDeleteOwner(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	s, other := newStores(t)
	ctx := t.Context()
	alice := newAdminUser(t, s, "alice", false, true)
	bob := newAdminUser(t, s, "bob", false, true)
	for _, name := range []string{"web", "api"} {
		_, err := s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: alice.ID, Name: "alice"}, Project: name})
		require.NoError(t, err)
	}
	err := other.DeleteUser(ctx, "alice")
	var ve *store.ValidationError
	if assert.ErrorAs(t, err, &ve, "deleting an owner") {
		assert.Equal(t, store.OwnsProjectsError(2).Message, ve.Message, "the message says how many")
		assert.Contains(t, ve.Message, "2 projects")
	}
	_, err = s.FindUserByName(ctx, "alice")
	require.NoError(t, err, "the owner is still there")

	web := store.Path{Caller: store.Caller{UserID: alice.ID, Name: "alice"}, Need: store.RightAdmin, Project: "web"}
	_, err = s.PutMember(ctx, web, store.Member{UserID: bob.ID, Username: "bob", Role: store.RoleAdmin})
	require.NoError(t, err)
	asBob := store.Path{Caller: store.Caller{UserID: bob.ID, Name: "bob"}, Need: store.RightAdmin, Project: "web"}
	hash := sha256.Sum256([]byte("hds_bobs-token"))
	tok, err := s.CreateToken(ctx, asBob, &store.APIToken{Name: "ci", Role: store.RoleViewer, Hash: hash[:], CreatedBy: bob.ID})
	require.NoError(t, err)
	require.NoError(t, other.DeleteUser(ctx, "bob"), "deleting a member who owns nothing")
	members, total, err := s.FindMembers(ctx, web, store.NewListQuery())
	require.NoError(t, err)
	assert.Equal(t, 1, total, "the deleted user's membership went")
	assert.Len(t, members, 1)
	got, err := s.FindTokenByHash(ctx, hash[:])
	if assert.NoError(t, err, "the API token a deleted user created stays") {
		assert.Equal(t, tok.ID, got.ID)
	}
	v := newAdminUser(t, s, "bob", false, true)
	_, err = s.FindProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: v.ID}, Project: "web"})
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "a new user of the same name is no member")

	for _, name := range []string{"web", "api"} {
		require.NoError(t, s.DeleteProject(ctx, store.Path{Caller: store.Caller{UserID: alice.ID}, Need: store.RightOwn, Project: name}))
	}
	require.NoError(t, other.DeleteUser(ctx, "alice"), "an owner of nothing any more")
}

func testTransfer(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	s, other := newStores(t)
	ctx := t.Context()
	alice := newAdminUser(t, s, "alice", false, true)
	bob := newAdminUser(t, s, "bob", false, true)
	carol := newAdminUser(t, s, "carol", false, true)
	root := newAdminUser(t, s, "root", true, true)
	newAdminUser(t, s, "off", false, false)
	as := func(u *store.User) store.Path {
		return store.Path{Need: store.RightRead, Caller: store.Caller{UserID: u.ID, Name: u.Username, RequestID: "req-t"}, Project: "web"}
	}
	_, err := s.CreateProject(ctx, as(alice))
	require.NoError(t, err)
	admin := as(alice)
	admin.Need = store.RightAdmin
	_, err = s.PutMember(ctx, admin, store.Member{UserID: bob.ID, Username: "bob", Role: store.RoleViewer})
	require.NoError(t, err)
	_, err = s.PutMember(ctx, admin, store.Member{UserID: carol.ID, Username: "carol", Role: store.RoleAdmin})
	require.NoError(t, err)
	before, err := s.FindProject(ctx, as(alice))
	require.NoError(t, err)

	// Refusals, in the order of the Store contract; each changes nothing.
	_, err = other.TransferProject(ctx, store.Path{Need: store.RightRead, Caller: as(alice).Caller, Project: "nope"}, "bob")
	assertNotFound(t, err, "project", "nope", "a missing project")
	_, err = other.TransferProject(ctx, as(carol), "bob")
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "an admin member is not the owner")
	_, err = other.TransferProject(ctx, as(root), "bob")
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "a server administrator without ServerAdmin set")
	_, err = other.TransferProject(ctx, as(alice), "nobody")
	assertNotFound(t, err, "user", "nobody", "an unknown user")
	_, err = other.TransferProject(ctx, as(alice), "off")
	assertNotFound(t, err, "user", "off", "a disabled user")
	tok := store.APIToken{ID: store.NewID(), ProjectID: before.ID, Name: "ci", Role: store.RoleEditor}
	_, err = other.TransferProject(ctx, store.Path{Need: store.RightRead, Caller: tok.Caller(), Project: "web"}, "bob")
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "an API token")
	pr, err := other.TransferProject(ctx, as(alice), "alice")
	require.NoError(t, err, "to the current owner")
	assert.Equal(t, alice.ID, pr.OwnerID)
	after, err := s.FindProject(ctx, as(alice))
	require.NoError(t, err)
	assert.Equal(t, before.Revision, after.Revision, "refusals and a no-op write no entry")

	pr, err = other.TransferProject(ctx, as(alice), "bob")
	require.NoError(t, err, "the owner transfers")
	assert.Equal(t, bob.ID, pr.OwnerID, "the new owner")
	assert.Equal(t, store.RoleAdmin, pr.Role, "the previous owner's role, as it now is")
	assert.Equal(t, before.Revision+1, pr.Revision, "one entry")
	assert.Equal(t, "web", pr.Name)
	members, _, err := s.FindMembers(ctx, as(bob), store.NewListQuery())
	require.NoError(t, err)
	roles := map[string]store.Role{}
	for _, m := range members {
		roles[m.Username] = m.Role
	}
	assert.Equal(t, map[string]store.Role{"alice": store.RoleAdmin, "bob": store.RoleOwner, "carol": store.RoleAdmin}, roles,
		"the new owner's membership went; the previous owner is an admin member")
	entries, _, err := s.FindAuditEntries(ctx, as(bob), store.AuditQuery{Limit: 1})
	require.NoError(t, err)
	if assert.Len(t, entries, 1) {
		e := entries[0]
		assert.Equal(t, store.ActionProjectTransfer, e.Action)
		assert.Equal(t, "bob", e.Target, "target: the new owner's username")
		assert.Equal(t, alice.ID, e.Actor)
		assert.Equal(t, "alice", e.ActorName)
		assert.Equal(t, "req-t", e.RequestID)
	}
	_, err = other.TransferProject(ctx, as(alice), "carol")
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "the previous owner may not transfer any more")
	err = s.DeleteProject(ctx, store.Path{Caller: as(alice).Caller, Need: store.RightOwn, Project: "web"})
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "nor delete the project")
	require.NoError(t, s.DeleteUser(ctx, "alice"), "the previous owner owns nothing now")

	// A server administrator may transfer any project.
	byRoot := as(root)
	byRoot.Caller.ServerAdmin = true
	pr, err = other.TransferProject(ctx, byRoot, "carol")
	require.NoError(t, err, "a server administrator transfers a project of someone else")
	assert.Equal(t, carol.ID, pr.OwnerID)
	assert.Equal(t, store.Role(""), pr.Role, "the administrator holds no role on it")
	members, _, err = s.FindMembers(ctx, as(carol), store.NewListQuery())
	require.NoError(t, err)
	roles = map[string]store.Role{}
	for _, m := range members {
		roles[m.Username] = m.Role
	}
	assert.Equal(t, map[string]store.Role{"bob": store.RoleAdmin, "carol": store.RoleOwner}, roles, "members after the second transfer")
	entries, _, err = s.FindAuditEntries(ctx, as(carol), store.AuditQuery{Limit: 1})
	require.NoError(t, err)
	if assert.Len(t, entries, 1) {
		assert.Equal(t, root.ID, entries[0].Actor, "the administrator is the actor")
		assert.Equal(t, "carol", entries[0].Target)
	}
}

// testTransferAgainstDelete: a transfer to a user races the deletion of
// that user; never is a project left owned by a deleted user.
func testTransferAgainstDelete(t *testing.T, newStores func(t *testing.T) (UserAdminStore, UserAdminStore)) {
	s, other := newStores(t)
	ctx := t.Context()
	alice := newAdminUser(t, s, "alice", false, true)
	for round := range 10 {
		name := fmt.Sprintf("p%02d", round)
		heir := newAdminUser(t, s, "heir"+name, false, true)
		p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: alice.ID, Name: "alice"}, Project: name}
		_, err := s.CreateProject(ctx, p)
		require.NoError(t, err)
		errs := race(2, func(i int) error {
			if i == 0 {
				_, err := s.TransferProject(ctx, p, heir.Username)
				return err
			}
			return other.DeleteUser(ctx, heir.Username)
		})
		var ve *store.ValidationError
		switch {
		case errs[0] == nil:
			require.ErrorAs(t, errs[1], &ve, "round %d: the transfer won, so the delete is refused", round)
			assert.Equal(t, store.OwnsProjectsError(1).Message, ve.Message)
		case errors.Is(errs[0], store.ErrNotFound):
			require.NoError(t, errs[1], "round %d: the delete won", round)
		default:
			require.Fail(t, "unexpected", "round %d: transfer %v, delete %v", round, errs[0], errs[1])
		}
		pr, err := s.FindProject(ctx, store.Path{Project: name})
		require.NoError(t, err)
		_, err = s.FindUserByID(ctx, pr.OwnerID)
		require.NoError(t, err, "round %d: the owner exists", round)
	}
}

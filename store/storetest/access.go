package storetest

import (
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// AccessStore is what RunAccess tests: the tree, its members and API
// tokens, and the users they name, on one value, as the memory and
// PostgreSQL stores provide them.
type AccessStore interface {
	store.Store
	store.Access
	store.UserDirectory
	store.AuditLog
}

// RunAccess runs the conformance suite of store.Access and of the access
// check of path resolution (store.Path.Check) with members and API
// tokens. newStores must return two handles on one fresh, empty storage
// (the same store twice for a store held in process, two stores on one
// database for PostgreSQL), so that a change made through one is seen
// through the other at once.
func RunAccess(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	t.Run("Roles", func(t *testing.T) { testRoles(t, newStores) })
	t.Run("ProjectList", func(t *testing.T) { testProjectList(t, newStores) })
	t.Run("Members", func(t *testing.T) { testMembers(t, newStores) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, newStores) })
	t.Run("TokenScope", func(t *testing.T) { testTokenScope(t, newStores) })
	t.Run("TouchToken", func(t *testing.T) { testTouchToken(t, newStores) })
	t.Run("Audit", func(t *testing.T) { testAccessAudit(t, newStores) })
	t.Run("AnonymousOwner", func(t *testing.T) { testAnonymousOwner(t, newStores) })
	t.Run("UndeclaredNeed", func(t *testing.T) { testUndeclaredNeed(t, newStores) })
}

// testUndeclaredNeed: a Path whose Need is left zero names no right, and
// no caller holds it, not even the owner or an admin member, so that an
// operation that forgets to say what it needs is refused
// (ErrPermissionDenied) and changes nothing; the zero Caller, an
// administrative tool, passes whatever Need says.
func testUndeclaredNeed(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	f := newAccessFixture(t, newStores)
	ctx := t.Context()
	_, err := f.s.PutMember(ctx, f.path(f.alice, store.RightAdmin), store.Member{UserID: f.bob.ID, Username: "bob", Role: store.RoleAdmin})
	require.NoError(t, err, "PutMember")
	for _, u := range []*store.User{f.alice, f.bob} {
		p := f.path(u, 0)
		assert.False(t, allowed(t, f.s, p), "%s without a need: FindProject", u.Username)
		p.Collection, p.Cluster, p.Record = collName, clusName, recName
		_, err := f.s.FindRecord(ctx, p)
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "%s without a need: FindRecord", u.Username)
		_, _, err = f.s.FindCollections(ctx, p, store.NewListQuery())
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "%s without a need: FindCollections", u.Username)
		p.Collection = "forgotten-" + u.Username
		_, err = f.s.CreateCollection(ctx, p)
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "%s without a need: CreateCollection", u.Username)
		_, err = f.s.FindCollection(ctx, store.Path{Project: projName, Collection: p.Collection})
		assert.ErrorIs(t, err, store.ErrNotFound, "%s without a need: nothing created", u.Username)
	}
	admin := store.Path{Project: projName, Collection: collName, Cluster: clusName, Record: recName}
	_, err = f.s.FindRecord(ctx, admin)
	assert.NoError(t, err, "the zero Caller without a need: FindRecord")
}

// testAnonymousOwner: the owner's entry of a project of the built-in
// anonymous user (require_auth false), who is in no user directory, is
// named "anonymous".
func testAnonymousOwner(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	s, _ := newStores(t)
	ctx := t.Context()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: store.AnonymousUserID}, Project: "open"}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err, "CreateProject")
	p.Need = store.RightRead
	members, total, err := s.FindMembers(ctx, p, store.NewListQuery())
	require.NoError(t, err, "FindMembers")
	assert.Equal(t, 1, total, "the owner alone")
	if assert.Len(t, members, 1) {
		assert.Equal(t, store.Member{UserID: store.AnonymousUserID, Username: "anonymous", Role: store.RoleOwner,
			CreatedAt: members[0].CreatedAt}, *members[0], "the owner's entry")
	}
}

// testAccessAudit: every change of members and tokens writes its entry
// (docs/api.md#audit-log-and-change-feed), with the username or token id
// as target; refused changes write none; no entry holds a token or its
// hash.
func testAccessAudit(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	f := newAccessFixture(t, newStores)
	ctx := t.Context()
	admin := f.path(f.alice, store.RightAdmin)
	admin.Caller.RequestID = "req-1"
	before, _, err := f.s.FindAuditEntries(ctx, admin, store.AuditQuery{Limit: 100})
	require.NoError(t, err)
	_, err = f.s.PutMember(ctx, admin, store.Member{UserID: f.bob.ID, Username: "bob", Role: store.RoleViewer})
	require.NoError(t, err)
	_, err = f.s.PutMember(ctx, admin, store.Member{UserID: f.alice.ID, Username: "alice", Role: store.RoleViewer})
	require.Error(t, err, "refused: no entry")
	tok := f.newToken(t, "audit-secret", store.APIToken{Name: "ci", Role: store.RoleViewer})
	require.NoError(t, f.s.DeleteToken(ctx, admin, tok.ID))
	require.Error(t, f.s.DeleteToken(ctx, admin, tok.ID), "refused: no entry")
	require.NoError(t, f.s.DeleteMember(ctx, admin, f.bob.ID, "bob"))
	after, _, err := f.other.FindAuditEntries(ctx, admin, store.AuditQuery{Limit: 100})
	require.NoError(t, err)
	require.Len(t, after, len(before)+4, "one entry per change")
	var got []string
	for _, e := range after[:4] {
		got = append(got, string(e.Action)+" "+e.Target)
		assert.Equal(t, f.alice.ID, e.Actor)
		assert.NotContains(t, e.Target, "audit-secret")
	}
	assert.Equal(t, []string{"member.delete bob", "token.delete " + tok.ID, "token.create " + tok.ID, "member.put bob"}, got, "newest first")
	assert.Equal(t, "req-1", after[0].RequestID)
}

// accessFixture is a project of alice with collection coll, cluster clus
// and record rec, and the users bob and mallory.
type accessFixture struct {
	s, other         AccessStore
	alice, bob, mall *store.User
}

func newAccessFixture(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) *accessFixture {
	t.Helper()
	s, other := newStores(t)
	f := &accessFixture{s: s, other: other, alice: mustUser(t, s, "alice"), bob: mustUser(t, s, "bob"), mall: mustUser(t, s, "mallory")}
	ctx := t.Context()
	p := f.path(f.alice, store.RightOwn)
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	p.Collection, p.Cluster, p.Record = collName, clusName, recName
	_, err = s.CreateCollection(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateCluster(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: []byte("1")}, store.Write{})
	require.NoError(t, err)
	return f
}

// path is the fixture project's path for user u needing right.
func (f *accessFixture) path(u *store.User, need store.Right) store.Path {
	return store.Path{Caller: store.Caller{UserID: u.ID, Name: u.Username}, Need: need, Project: projName}
}

// allowed reports whether path resolution lets p through, failing the
// test on any error but ErrPermissionDenied. It tries a project-level
// read (FindProject) and a full path (FindRecord).
func allowed(t *testing.T, s store.Store, p store.Path) bool {
	t.Helper()
	_, err := s.FindProject(t.Context(), p)
	if errors.Is(err, store.ErrPermissionDenied) {
		return false
	}
	require.NoError(t, err, "FindProject")
	return true
}

func testRoles(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	f := newAccessFixture(t, newStores)
	ctx := t.Context()
	rights := []store.Right{store.RightRead, store.RightReveal, store.RightWrite, store.RightAdmin, store.RightOwn}
	for _, role := range []store.Role{store.RoleViewer, store.RoleReader, store.RoleEditor, store.RoleAdmin} {
		_, err := f.s.PutMember(ctx, f.path(f.alice, store.RightAdmin), store.Member{UserID: f.bob.ID, Username: "bob", Role: role})
		require.NoError(t, err, "PutMember %s", role)
		for _, need := range rights {
			// Both handles see the change at once.
			for _, s := range []AccessStore{f.s, f.other} {
				want := role.Allows(need)
				assert.Equal(t, want, allowed(t, s, f.path(f.bob, need)), "%s needing right %d: FindProject", role, need)
				p := f.path(f.bob, need)
				p.Collection, p.Cluster, p.Record = collName, clusName, recName
				_, err := s.FindRecord(ctx, p)
				if want {
					assert.NoError(t, err, "%s needing right %d: FindRecord", role, need)
				} else {
					assert.ErrorIs(t, err, store.ErrPermissionDenied, "%s needing right %d: FindRecord", role, need)
				}
				_, _, err = s.FindCollections(ctx, p, store.NewListQuery())
				if want {
					assert.NoError(t, err, "%s needing right %d: FindCollections", role, need)
				} else {
					assert.ErrorIs(t, err, store.ErrPermissionDenied, "%s needing right %d: FindCollections", role, need)
				}
			}
		}
		pr, err := f.other.FindProject(ctx, f.path(f.bob, store.RightRead))
		require.NoError(t, err)
		assert.Equal(t, role, pr.Role, "FindProject reports the member's role")
	}
	// An editor writes, through the batch too; a viewer does not.
	p := f.path(f.bob, store.RightWrite)
	p.Collection = "by-bob"
	_, err := f.s.CreateCollection(ctx, p)
	require.NoError(t, err, "an admin member creates a collection")
	_, err = f.s.PutMember(ctx, f.path(f.alice, store.RightAdmin), store.Member{UserID: f.bob.ID, Username: "bob", Role: store.RoleViewer})
	require.NoError(t, err)
	_, err = f.s.Apply(ctx, f.path(f.bob, store.RightWrite), store.Batch{Ops: []store.Op{{Kind: store.OpCreate,
		Collection: collName, Cluster: clusName, Record: "r2", New: &store.Record{Type: store.Integer, Value: []byte("2")}}}})
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "a viewer's batch")
	_, err = f.other.Apply(ctx, f.path(f.alice, store.RightWrite), store.Batch{Ops: []store.Op{{Kind: store.OpCreate,
		Collection: collName, Cluster: clusName, Record: "r2", New: &store.Record{Type: store.Integer, Value: []byte("2")}}}})
	assert.NoError(t, err, "the owner's batch")

	// The owner holds every right; a stranger none; a missing project is
	// ErrNotFound for users.
	for _, need := range rights {
		assert.True(t, allowed(t, f.s, f.path(f.alice, need)), "the owner needing right %d", need)
		assert.False(t, allowed(t, f.s, f.path(f.mall, need)), "a stranger needing right %d", need)
	}
	missing := f.path(f.bob, store.RightRead)
	missing.Project = "nope"
	_, err = f.s.FindProject(ctx, missing)
	assertNotFound(t, err, "project", "nope", "a missing project, for a user")

	// Removing the member ends its access at once, on both handles.
	require.NoError(t, f.s.DeleteMember(ctx, f.path(f.alice, store.RightAdmin), f.bob.ID, "bob"))
	assert.False(t, allowed(t, f.s, f.path(f.bob, store.RightRead)), "a removed member")
	assert.False(t, allowed(t, f.other, f.path(f.bob, store.RightRead)), "a removed member, on the other handle")

	// A member may not create projects in the owner's name; a token may
	// create none.
	_, err = f.s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{TokenID: store.NewID(), Name: "ci"}, Project: "by-token"})
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "CreateProject by an API token")
}

func testProjectList(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	f := newAccessFixture(t, newStores)
	ctx := t.Context()
	_, err := f.s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: f.bob.ID}, Project: "bobs"})
	require.NoError(t, err)
	_, err = f.s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: f.mall.ID}, Project: "malls"})
	require.NoError(t, err)
	_, err = f.s.PutMember(ctx, f.path(f.alice, store.RightAdmin), store.Member{UserID: f.bob.ID, Username: "bob", Role: store.RoleEditor})
	require.NoError(t, err)
	list, total, err := f.other.FindProjects(ctx, f.bob.ID, store.NewListQuery())
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	got := map[string]store.Role{}
	for _, p := range list {
		got[p.Name] = p.Role
	}
	assert.Equal(t, map[string]store.Role{"bobs": store.RoleOwner, projName: store.RoleEditor}, got, "owned and shared projects, with the role")
	q := store.NewListQuery()
	q.Search = "BOB"
	list, total, err = f.s.FindProjects(ctx, f.bob.ID, q)
	require.NoError(t, err)
	if assert.Len(t, list, 1) {
		assert.Equal(t, "bobs", list[0].Name, "search applies to shared projects too")
	}
	assert.Equal(t, 1, total)
	// A deleted user's memberships go with it (a user who owns projects
	// cannot be deleted:
	// docs/api.md#server-administrators-and-user-accounts-v12).
	require.NoError(t, f.s.DeleteProject(ctx, store.Path{Caller: store.Caller{UserID: f.bob.ID}, Need: store.RightOwn, Project: "bobs"}))
	require.NoError(t, f.s.DeleteUser(ctx, "bob"))
	members, total, err := f.s.FindMembers(ctx, f.path(f.alice, store.RightRead), store.NewListQuery())
	require.NoError(t, err)
	assert.Equal(t, 1, total, "only the owner is left")
	assert.Len(t, members, 1)
}

func testMembers(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	f := newAccessFixture(t, newStores)
	ctx := t.Context()
	admin := f.path(f.alice, store.RightAdmin)
	var verr *store.ValidationError
	for _, role := range []store.Role{"", "owner", "Admin", "root"} {
		_, err := f.s.PutMember(ctx, admin, store.Member{UserID: f.bob.ID, Username: "bob", Role: role})
		assert.ErrorAs(t, err, &verr, "PutMember with role %q", role)
	}
	_, err := f.s.PutMember(ctx, admin, store.Member{UserID: f.alice.ID, Username: "alice", Role: store.RoleViewer})
	assert.ErrorAs(t, err, &verr, "PutMember of the owner")
	err = f.s.DeleteMember(ctx, admin, f.alice.ID, "alice")
	assert.ErrorAs(t, err, &verr, "DeleteMember of the owner")
	err = f.s.DeleteMember(ctx, admin, f.bob.ID, "bob")
	assertNotFound(t, err, "member", "bob", "DeleteMember of a user who is no member")
	_, err = f.s.PutMember(ctx, f.path(f.mall, store.RightAdmin), store.Member{UserID: f.mall.ID, Username: "mallory", Role: store.RoleAdmin})
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "a stranger makes itself admin")
	unknown := store.NewID()
	_, err = f.s.PutMember(ctx, admin, store.Member{UserID: unknown, Username: "ghost", Role: store.RoleViewer})
	if err == nil { // a store that does not check users: the handler looks the user up first
		require.NoError(t, f.s.DeleteMember(ctx, admin, unknown, "ghost"))
	} else {
		assertNotFound(t, err, "user", "ghost", "PutMember of an unknown user")
	}

	m, err := f.s.PutMember(ctx, admin, store.Member{UserID: f.bob.ID, Username: "bob", Role: store.RoleViewer})
	require.NoError(t, err)
	assert.Equal(t, store.RoleViewer, m.Role)
	assert.False(t, m.CreatedAt.IsZero())
	again, err := f.other.PutMember(ctx, admin, store.Member{UserID: f.bob.ID, Username: "bob", Role: store.RoleAdmin})
	require.NoError(t, err)
	assert.Equal(t, store.RoleAdmin, again.Role)
	assert.Equal(t, stamp(m.CreatedAt), stamp(again.CreatedAt), "a role change keeps created_at")
	_, err = f.s.PutMember(ctx, admin, store.Member{UserID: f.mall.ID, Username: "mallory", Role: store.RoleReader})
	require.NoError(t, err)
	// bob, now admin, manages members but not the owner.
	_, err = f.s.PutMember(ctx, f.path(f.bob, store.RightAdmin), store.Member{UserID: f.alice.ID, Username: "alice", Role: store.RoleViewer})
	assert.ErrorAs(t, err, &verr, "an admin changes the owner")

	list, total, err := f.other.FindMembers(ctx, f.path(f.mall, store.RightRead), store.NewListQuery())
	require.NoError(t, err)
	assert.Equal(t, 3, total)
	var got []string
	for _, m := range list {
		got = append(got, m.Username+":"+string(m.Role))
	}
	assert.Equal(t, []string{"alice:owner", "bob:admin", "mallory:reader"}, got, "members by username, the owner included")
	q := store.NewListQuery()
	q.Limit, q.Offset = 1, 1
	list, total, err = f.s.FindMembers(ctx, f.path(f.alice, store.RightRead), q)
	require.NoError(t, err)
	assert.Equal(t, 3, total)
	if assert.Len(t, list, 1) {
		assert.Equal(t, "bob", list[0].Username)
		assert.Equal(t, f.bob.ID, list[0].UserID)
	}
	q.Offset = 5
	list, total, err = f.s.FindMembers(ctx, f.path(f.alice, store.RightRead), q)
	require.NoError(t, err)
	assert.Equal(t, 3, total, "total past the last page")
	assert.Empty(t, list)

	require.NoError(t, f.other.DeleteMember(ctx, f.path(f.mall, store.RightRead), f.mall.ID, "mallory"), "a member removes itself")
	_, total, err = f.s.FindMembers(ctx, f.path(f.alice, store.RightRead), store.NewListQuery())
	require.NoError(t, err)
	assert.Equal(t, 2, total)
}

// newToken creates an API token of the fixture project and returns it
// with its hash.
func (f *accessFixture) newToken(t *testing.T, secret string, tok store.APIToken) *store.APIToken {
	t.Helper()
	h := sha256.Sum256([]byte(secret))
	tok.Hash = h[:]
	tok.CreatedBy = f.alice.ID
	got, err := f.s.CreateToken(t.Context(), f.path(f.alice, store.RightAdmin), &tok)
	require.NoError(t, err, "CreateToken")
	return got
}

func hashOf(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

func testTokens(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	f := newAccessFixture(t, newStores)
	ctx := t.Context()
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	a := f.newToken(t, "secret-a", store.APIToken{Name: "ci", Role: store.RoleReader, ExpiresAt: &exp})
	assert.Regexp(t, `^[0-9a-f-]{36}$`, a.ID)
	assert.NotEmpty(t, a.ProjectID)
	assert.Nil(t, a.LastUsedAt)
	b := f.newToken(t, "secret-b", store.APIToken{Name: "deploy", Role: store.RoleEditor, Collection: collName, Cluster: clusName})

	got, err := f.other.FindTokenByHash(ctx, hashOf("secret-a"))
	require.NoError(t, err)
	assert.Equal(t, a.ID, got.ID)
	assert.Equal(t, "ci", got.Name)
	assert.Equal(t, store.RoleReader, got.Role)
	if assert.NotNil(t, got.ExpiresAt) {
		assert.Equal(t, stamp(exp), stamp(*got.ExpiresAt))
	}
	assert.False(t, got.Expired(time.Now()))
	assert.True(t, got.Expired(exp))
	_, err = f.s.FindTokenByHash(ctx, hashOf("secret-c"))
	assert.ErrorIs(t, err, store.ErrNotFound, "an unknown hash")

	// Scope: a missing collection or cluster is ErrNotFound naming it.
	for _, c := range []struct{ coll, clus, kind, name string }{
		{"nope", "", "collection", "nope"}, {"nope", clusName, "collection", "nope"}, {collName, "nope", "cluster", "nope"},
	} {
		_, err := f.s.CreateToken(ctx, f.path(f.alice, store.RightAdmin),
			&store.APIToken{Name: "x", Role: store.RoleViewer, Collection: c.coll, Cluster: c.clus, Hash: hashOf("x" + c.coll + c.clus)})
		assertNotFound(t, err, c.kind, c.name, "CreateToken scoped to %s/%s", c.coll, c.clus)
	}
	_, err = f.s.CreateToken(ctx, f.path(f.bob, store.RightAdmin), &store.APIToken{Name: "x", Role: store.RoleViewer, Hash: hashOf("y")})
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "CreateToken by a stranger")

	list, total, err := f.other.FindTokens(ctx, f.path(f.alice, store.RightAdmin), store.NewListQuery())
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	if assert.Len(t, list, 2) {
		assert.Equal(t, []string{a.ID, b.ID}, []string{list[0].ID, list[1].ID}, "oldest first")
		assert.Equal(t, collName, list[1].Collection)
		assert.Equal(t, clusName, list[1].Cluster)
	}

	// Delete: unknown, of another project, then revoked at once.
	err = f.s.DeleteToken(ctx, f.path(f.alice, store.RightAdmin), store.NewID())
	assert.ErrorIs(t, err, store.ErrNotFound, "DeleteToken of an unknown id")
	err = f.s.DeleteToken(ctx, f.path(f.alice, store.RightAdmin), "not-a-uuid")
	assert.ErrorIs(t, err, store.ErrNotFound, "DeleteToken of an id that is no UUID")
	_, err = f.s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: f.bob.ID}, Project: "bobs"})
	require.NoError(t, err)
	err = f.s.DeleteToken(ctx, store.Path{Caller: store.Caller{UserID: f.bob.ID}, Need: store.RightAdmin, Project: "bobs"}, a.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "DeleteToken of a token of another project")
	require.NoError(t, f.s.DeleteToken(ctx, f.path(f.alice, store.RightAdmin), a.ID))
	_, err = f.other.FindTokenByHash(ctx, hashOf("secret-a"))
	assert.ErrorIs(t, err, store.ErrNotFound, "a revoked token, on the other handle")
	err = f.s.DeleteToken(ctx, f.path(f.alice, store.RightAdmin), a.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "DeleteToken of a revoked token")

	// Tokens die with their project.
	require.NoError(t, f.s.DeleteProject(ctx, f.path(f.alice, store.RightOwn)))
	_, err = f.other.FindTokenByHash(ctx, hashOf("secret-b"))
	assert.ErrorIs(t, err, store.ErrNotFound, "a token of a deleted project")
}

func testTokenScope(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	f := newAccessFixture(t, newStores)
	ctx := t.Context()
	_, err := f.s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: f.bob.ID}, Project: "bobs"})
	require.NoError(t, err)
	p := f.path(f.alice, store.RightWrite)
	p.Collection, p.Cluster = "other", "k2"
	_, err = f.s.CreateCollection(ctx, p)
	require.NoError(t, err)
	_, err = f.s.CreateCluster(ctx, p)
	require.NoError(t, err)
	p.Collection = collName
	_, err = f.s.CreateCluster(ctx, p)
	require.NoError(t, err)

	caller := func(tok store.APIToken, secret string) store.Caller {
		got, err := f.s.FindTokenByHash(ctx, hashOf(secret))
		require.NoError(t, err)
		return got.Caller()
	}
	whole := caller(*f.newToken(t, "whole", store.APIToken{Name: "whole", Role: store.RoleViewer}), "whole")
	coll := caller(*f.newToken(t, "coll", store.APIToken{Name: "coll", Role: store.RoleEditor, Collection: collName}), "coll")
	clus := caller(*f.newToken(t, "clus", store.APIToken{Name: "clus", Role: store.RoleReader, Collection: collName, Cluster: clusName}), "clus")

	type at struct {
		within              store.Level
		collection, cluster string
	}
	cases := []struct {
		c    store.Caller
		need store.Right
		at   at
		want bool
	}{
		{whole, store.RightRead, at{store.LevelProject, "", ""}, true},
		{whole, store.RightReveal, at{store.LevelProject, "", ""}, false},
		{whole, store.RightRead, at{store.LevelCluster, "other", "k2"}, true},
		{coll, store.RightWrite, at{store.LevelProject, "", ""}, false},
		{coll, store.RightRead, at{store.LevelProject, collName, ""}, false},
		{coll, store.RightWrite, at{store.LevelCollection, collName, ""}, true},
		{coll, store.RightWrite, at{store.LevelCluster, collName, "k2"}, true},
		{coll, store.RightRead, at{store.LevelCollection, "other", ""}, false},
		{coll, store.RightAdmin, at{store.LevelCollection, collName, ""}, false},
		{clus, store.RightReveal, at{store.LevelCluster, collName, clusName}, true},
		{clus, store.RightRead, at{store.LevelCollection, collName, ""}, false},
		{clus, store.RightRead, at{store.LevelCluster, collName, "k2"}, false},
		{clus, store.RightRead, at{store.LevelCluster, "other", clusName}, false},
		{clus, store.RightWrite, at{store.LevelCluster, collName, clusName}, false},
	}
	for _, c := range cases {
		p := store.Path{Caller: c.c, Need: c.need, Within: c.at.within, Project: projName, Collection: c.at.collection, Cluster: c.at.cluster}
		_, err := f.other.FindProject(ctx, p)
		if c.want {
			assert.NoError(t, err, "%s token needing %d within %v", c.c.Name, c.need, c.at)
		} else {
			assert.ErrorIs(t, err, store.ErrPermissionDenied, "%s token needing %d within %v", c.c.Name, c.need, c.at)
		}
	}
	// Another project, existing or not, is ErrPermissionDenied.
	for _, name := range []string{"bobs", "nope"} {
		_, err := f.s.FindProject(ctx, store.Path{Need: store.RightRead, Caller: whole, Project: name})
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "an API token on project %q", name)
		_, err = f.s.FindRecord(ctx, store.Path{Need: store.RightRead, Caller: whole, Within: store.LevelCluster, Project: name,
			Collection: collName, Cluster: clusName, Record: recName})
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "an API token on a record of project %q", name)
	}
	// A scoped token reads its record.
	r, err := f.s.FindRecord(ctx, store.Path{Need: store.RightRead, Caller: clus, Within: store.LevelCluster, Project: projName,
		Collection: collName, Cluster: clusName, Record: recName})
	require.NoError(t, err)
	assert.Equal(t, recName, r.Name)
	// A collection renamed leaves the scope; a new one of that name enters it.
	_, err = f.s.RenameCollection(ctx, store.Path{Caller: store.Caller{UserID: f.alice.ID}, Need: store.RightWrite,
		Project: projName, Collection: collName}, "renamed")
	require.NoError(t, err)
	_, err = f.s.FindCluster(ctx, store.Path{Need: store.RightRead, Caller: coll, Within: store.LevelCollection, Project: projName,
		Collection: "renamed", Cluster: clusName}, false)
	assert.ErrorIs(t, err, store.ErrPermissionDenied, "a collection renamed out of the token's scope")
}

func testTouchToken(t *testing.T, newStores func(t *testing.T) (AccessStore, AccessStore)) {
	f := newAccessFixture(t, newStores)
	ctx := t.Context()
	tok := f.newToken(t, "touch", store.APIToken{Name: "t", Role: store.RoleViewer})
	now := time.Now().UTC().Truncate(time.Microsecond)
	require.NoError(t, f.s.TouchToken(ctx, tok.ID, now))
	got, err := f.other.FindTokenByHash(ctx, hashOf("touch"))
	require.NoError(t, err)
	if assert.NotNil(t, got.LastUsedAt, "set by the first use") {
		assert.Equal(t, stamp(now), stamp(*got.LastUsedAt))
	}
	require.NoError(t, f.other.TouchToken(ctx, tok.ID, now.Add(59*time.Second)))
	got, err = f.s.FindTokenByHash(ctx, hashOf("touch"))
	require.NoError(t, err)
	assert.Equal(t, stamp(now), stamp(*got.LastUsedAt), "not written again within a minute")
	later := now.Add(time.Minute)
	require.NoError(t, f.s.TouchToken(ctx, tok.ID, later))
	got, err = f.other.FindTokenByHash(ctx, hashOf("touch"))
	require.NoError(t, err)
	assert.Equal(t, stamp(later), stamp(*got.LastUsedAt), "written again a minute later")
	assert.NoError(t, f.s.TouchToken(ctx, store.NewID(), later), "an unknown token")
}

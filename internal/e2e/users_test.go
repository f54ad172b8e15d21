package e2e_test

// User administration
// (docs/api.md#server-administrators-and-user-accounts-v12): GET
// /api/v1/auth/me, the /api/v1/users routes and PUT P/owner, black-box on
// every store.

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// userJSON is a user as the /api/v1/users routes show it.
type userJSON struct {
	ID        string `json:"id"`
	Username  string `json:"username"`
	Admin     bool   `json:"admin"`
	Disabled  bool   `json:"disabled"`
	CreatedAt string `json:"created_at"`
}

func pathUser(name string) string { return "/api/v1/users/" + url.PathEscape(name) }

// addAdmin creates an active server administrator directly in the
// directory and returns its token.
func (c *client) addAdmin(username string) string {
	c.t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(username+"-password"), bcrypt.MinCost)
	require.NoError(c.t, err)
	u, err := c.users.CreateUser(c.t.Context(), &store.User{Username: username, PasswordHash: hash, Active: true, Admin: true})
	require.NoError(c.t, err, "create administrator %s", username)
	c.ids[username] = u.ID
	return c.token(username)
}

// lastAdmin is the details of the last-administrator rule's refusal.
const lastAdmin = store.LastAdminRule

func TestAuthMe(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		root := c.addAdmin("root")
		alice := c.token("alice")
		var me struct {
			ID        string `json:"id"`
			Username  string `json:"username"`
			Admin     bool   `json:"admin"`
			CreatedAt string `json:"created_at"`
		}
		env := c.mustDo("GET", "/api/v1/auth/me", "", alice, http.StatusOK)
		wantFields(t, "GET /auth/me", env.Data, "id", "username", "admin", "created_at")
		env.decode(t, &me)
		assert.Equal(t, c.ids["alice"], me.ID)
		assert.Equal(t, "alice", me.Username)
		assert.False(t, me.Admin, "alice is no administrator")
		wantTimestamps(t, "created_at", me.CreatedAt)
		c.mustDo("GET", "/api/v1/auth/me", "", root, http.StatusOK).decode(t, &me)
		assert.Equal(t, "root", me.Username)
		assert.True(t, me.Admin, "root is an administrator")

		status, _, env := c.do("GET", "/api/v1/auth/me", "", "")
		wantError(t, "no token", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")
		c.tree(alice, "web", "prod", "db")
		tok := c.apiToken(alice, "web", `{"name":"ci","role":"editor"}`).Token
		forbiddenTo(t, c, "an API token", "GET", "/api/v1/auth/me", "", tok)

		// A promotion shows on the next request.
		c.mustDo("PUT", pathUser("alice"), `{"admin":true}`, root, http.StatusOK)
		c.mustDo("GET", "/api/v1/auth/me", "", alice, http.StatusOK).decode(t, &me)
		assert.True(t, me.Admin, "alice, promoted, is an administrator from the next request on")
	})
}

func TestUsersForbidden(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		root := c.addAdmin("root")
		alice := c.token("alice")
		c.tree(root, "web", "prod", "db")
		rootToken := c.apiToken(root, "web", `{"name":"ci","role":"editor"}`).Token
		routes := []struct{ method, target, body string }{
			{"GET", "/api/v1/users", ""},
			{"GET", "/api/v1/users?limit=0", ""}, // refused before the query is read
			{"POST", "/api/v1/users", `{"username":"eve","password":"eve-password","admin":true}`},
			{"POST", "/api/v1/users", `{"bad json`},
			{"GET", pathUser("bob"), ""},
			{"GET", pathUser("nobody"), ""},
			{"PUT", pathUser("alice"), `{"admin":true}`},
			{"PUT", pathUser("nobody"), `{}`},
			{"DELETE", pathUser("bob"), ""},
		}
		for _, r := range routes {
			forbiddenTo(t, c, "a user who is no administrator: "+r.method+" "+r.target, r.method, r.target, r.body, alice)
			forbiddenTo(t, c, "an administrator's API token: "+r.method+" "+r.target, r.method, r.target, r.body, rootToken)
		}
		_, err := c.users.FindUserByName(t.Context(), "eve")
		assert.ErrorIs(t, err, store.ErrNotFound, "nothing was created")
		u, err := c.users.FindUserByName(t.Context(), "alice")
		require.NoError(t, err)
		assert.False(t, u.Admin, "alice did not promote herself")
		_, err = c.users.FindUserByName(t.Context(), "bob")
		assert.NoError(t, err, "bob was not deleted")

		status, _, env := c.do("GET", "/api/v1/users", "", "")
		wantError(t, "no token", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "No authorization token provided")

		// Without authentication, the anonymous user is no administrator.
		open := c.attach(hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: true}))
		forbiddenTo(t, open, "anonymous", "GET", "/api/v1/users", "", "")
		forbiddenTo(t, open, "anonymous", "POST", "/api/v1/users", `{"username":"eve","password":"x"}`, "")
	})
}

func TestUsersCreateGetList(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		root := c.addAdmin("root")
		status, h, env := c.do("POST", "/api/v1/users", `{"username":"carol","password":"carol-password"}`, root)
		require.Equal(t, http.StatusCreated, status, "POST /users: %s", env.raw)
		assert.Equal(t, "User created", env.Message)
		rateRemaining(t, "POST /users is rate limited as every route", h)
		wantFields(t, "POST /users", env.Data, "id", "username", "admin", "disabled", "created_at")
		var carol userJSON
		env.decode(t, &carol)
		wantID(t, "the new user's id", carol.ID)
		assert.Equal(t, userJSON{ID: carol.ID, Username: "carol", CreatedAt: carol.CreatedAt}, carol, "admin defaults to false")
		wantTimestamps(t, "created_at", carol.CreatedAt)
		c.login("carol", "carol-password")

		var dave userJSON
		c.mustDo("POST", "/api/v1/users", `{"username":"dave","password":"dave-password","admin":true}`, root, http.StatusCreated).decode(t, &dave)
		assert.True(t, dave.Admin, "admin: true")
		daveToken := c.login("dave", "dave-password")
		c.mustDo("GET", "/api/v1/users", "", daveToken, http.StatusOK) // dave administers at once

		var got userJSON
		c.mustDo("GET", pathUser("carol"), "", root, http.StatusOK).decode(t, &got)
		assert.Equal(t, carol, got, "GET /users/carol")
		odd := "we ird/näme%"
		c.mustDo("POST", "/api/v1/users", `{"username":"we ird/näme%","password":"p"}`, root, http.StatusCreated)
		c.mustDo("GET", pathUser(odd), "", root, http.StatusOK).decode(t, &got)
		assert.Equal(t, odd, got.Username, "a username is percent-encoded in a path")

		var page struct {
			Items      []userJSON `json:"items"`
			Total      int        `json:"total"`
			Limit      int        `json:"limit"`
			Offset     int        `json:"offset"`
			NextCursor *string    `json:"next_cursor"`
		}
		names := func() []string {
			var out []string
			for _, u := range page.Items {
				out = append(out, u.Username)
			}
			return out
		}
		c.mustDo("GET", "/api/v1/users", "", root, http.StatusOK).decode(t, &page)
		assert.Equal(t, []string{"alice", "bob", "carol", "dave", "root", odd}, names(), "every user, by username byte-wise")
		assert.Equal(t, 6, page.Total)
		assert.Equal(t, 100, page.Limit)
		assert.Nil(t, page.NextCursor, "one page")
		c.mustDo("GET", "/api/v1/users?limit=2&offset=1", "", root, http.StatusOK).decode(t, &page)
		assert.Equal(t, []string{"bob", "carol"}, names(), "limit and offset")
		assert.Equal(t, 6, page.Total)
		require.NotNil(t, page.NextCursor)
		c.mustDo("GET", "/api/v1/users?limit=2&cursor="+url.QueryEscape(*page.NextCursor), "", root, http.StatusOK).decode(t, &page)
		assert.Equal(t, []string{"dave", "root"}, names(), "the next page by cursor")
		c.mustDo("GET", "/api/v1/users?search=A", "", root, http.StatusOK).decode(t, &page)
		assert.Equal(t, []string{"alice", "carol", "dave"}, names(), "search: case-insensitive substring")
		assert.Equal(t, 3, page.Total)
		c.mustDo("GET", "/api/v1/users?search="+url.QueryEscape("%"), "", root, http.StatusOK).decode(t, &page)
		assert.Equal(t, []string{odd}, names(), "% is literal")
		c.mustDo("GET", "/api/v1/users?search="+url.QueryEscape("ÄME"), "", root, http.StatusOK).decode(t, &page)
		assert.Equal(t, []string{odd}, names(), "case-insensitive beyond ASCII")
		if assert.Len(t, page.Items, 1) {
			assert.Equal(t, got, page.Items[0], "a listed user as GET shows it")
		}
		for _, q := range []string{"limit=0", "limit=abc", "offset=-1", "search=%00", "cursor=nope", "limit=1&limit=2"} {
			status, _, env := c.do("GET", "/api/v1/users?"+q, "", root)
			wantError(t, "GET /users?"+q, status, env, http.StatusBadRequest, "INVALID_REQUEST", env.message())
		}

		// Errors, each with its code and a message naming the rule.
		status, _, env = c.do("GET", pathUser("nobody"), "", root)
		wantError(t, "an unknown user", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		wantDetails(t, "an unknown user", env, `user "nobody" not found`)
		status, _, env = c.do("POST", "/api/v1/users", `{"username":"carol","password":"other"}`, root)
		wantError(t, "a taken username", status, env, http.StatusConflict, "RESOURCE_EXISTS", "Resource already exists")
		wantDetails(t, "a taken username", env, `user "carol" already exists`)
		for _, bad := range []struct{ body, details string }{
			{`{"username":"","password":"p"}`, "username must not be empty"},
			{`{"username":".","password":"p"}`, `username must not be "." or ".." (no path can name them)`},
			{`{"username":"..","password":"p"}`, `username must not be "." or ".." (no path can name them)`},
			{`{"username":" lead","password":"p"}`, "username must not begin or end with white space"},
			{`{"username":"trail\u00a0","password":"p"}`, "username must not begin or end with white space"},
			{`{"username":"tab\tin","password":"p"}`, "username must not contain control characters"},
			{`{"username":"` + strings.Repeat("é", 129) + `","password":"p"}`, "username must be at most 128 characters long"},
			{`{"username":"erin","password":""}`, "password must not be empty"},
			{`{"username":"erin","password":"` + strings.Repeat("x", 73) + `"}`, "password must be at most 72 bytes long"},
		} {
			status, _, env := c.do("POST", "/api/v1/users", bad.body, root)
			wantError(t, bad.body, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
			assert.Equal(t, bad.details, env.details(), "%s: details", bad.body)
		}
		c.mustDo("POST", "/api/v1/users", `{"username":"`+strings.Repeat("é", 128)+`","password":"`+strings.Repeat("x", 72)+`"}`, root, http.StatusCreated)
		for _, bad := range []string{`{"username":"erin"}`, `{"password":"p"}`, `{"username":"erin","password":"p","role":"x"}`, `[]`, `{"username":1,"password":"p"}`} {
			status, _, env := c.do("POST", "/api/v1/users", bad, root)
			wantError(t, bad, status, env, http.StatusBadRequest, "INVALID_REQUEST", env.message())
		}
		_, err := c.users.FindUserByName(t.Context(), "erin")
		assert.ErrorIs(t, err, store.ErrNotFound, "no refused create made a user")
	})
}

func TestUsersUpdateEndsSessions(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		a, b := twoInstances(t, kind)
		root := a.addAdmin("root")
		bob := a.token("bob")
		invalid := func(what, token string) {
			t.Helper()
			status, _, env := b.do("GET", "/api/v1/projects", "", token)
			wantError(t, what, status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
		}
		b.mustDo("GET", "/api/v1/projects", "", bob, http.StatusOK)

		var u userJSON
		status, h, env := a.do("PUT", pathUser("bob"), `{"disabled":true}`, root)
		require.Equal(t, http.StatusOK, status, "%s", env.raw)
		rateRemaining(t, "PUT /users is rate limited", h)
		assert.Equal(t, "User updated", env.Message)
		env.decode(t, &u)
		assert.Equal(t, userJSON{ID: a.ids["bob"], Username: "bob", Disabled: true, CreatedAt: u.CreatedAt}, u)
		invalid("a disabled user's token, on the other instance at once", bob)
		res := b.loginFrom("", "bob", "bob-password")
		res.wantError(t, "a disabled user cannot log in", http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")

		a.mustDo("PUT", pathUser("bob"), `{"disabled":false}`, root, http.StatusOK).decode(t, &u)
		assert.False(t, u.Disabled)
		invalid("enabling does not revive the sessions the disable ended", bob)
		bob = b.login("bob", "bob-password")
		a.mustDo("GET", "/api/v1/projects", "", bob, http.StatusOK)

		a.mustDo("PUT", pathUser("bob"), `{"password":"new-bob-password"}`, root, http.StatusOK)
		invalid("a password set ends every session", bob)
		b.loginFrom("", "bob", "bob-password").wantError(t, "the old password", http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")
		bob = b.login("bob", "new-bob-password")

		a.mustDo("PUT", pathUser("bob"), `{"admin":true}`, root, http.StatusOK).decode(t, &u)
		assert.True(t, u.Admin)
		b.mustDo("GET", "/api/v1/users", "", bob, http.StatusOK) // a promotion ends no session
		a.mustDo("PUT", pathUser("bob"), `{"admin":false}`, root, http.StatusOK)
		forbiddenTo(t, b, "a demoted administrator, on the other instance at once", "GET", "/api/v1/users", "", bob)

		a.mustDo("DELETE", pathUser("bob"), "", root, http.StatusNoContent)
		invalid("a deleted user's token", bob)
		status, _, env = a.do("GET", pathUser("bob"), "", root)
		wantError(t, "GET a deleted user", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")

		// Errors.
		for _, bad := range []string{`{}`, `{"admin":null}`, `{"name":"x"}`, `{"disabled":"yes"}`, `nope`} {
			status, _, env := a.do("PUT", pathUser("alice"), bad, root)
			wantError(t, "PUT "+bad, status, env, http.StatusBadRequest, "INVALID_REQUEST", env.message())
		}
		status, _, env = a.do("PUT", pathUser("alice"), `{"password":""}`, root)
		wantError(t, "an empty password", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		assert.Equal(t, "password must not be empty", env.details())
		status, _, env = a.do("PUT", pathUser("nobody"), `{"admin":true}`, root)
		wantError(t, "PUT an unknown user", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		wantDetails(t, "PUT an unknown user", env, `user "nobody" not found`)
		status, _, env = a.do("DELETE", pathUser("nobody"), "", root)
		wantError(t, "DELETE an unknown user", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
	})
}

func TestUsersLastAdmin(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		root := c.addAdmin("root")
		refused := func(what, method, target, body string) {
			t.Helper()
			status, _, env := c.do(method, target, body, root)
			wantError(t, what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
			assert.Equal(t, lastAdmin, env.details(), "%s: details name the rule", what)
		}
		refused("demoting the last administrator", "PUT", pathUser("root"), `{"admin":false}`)
		refused("disabling the last administrator", "PUT", pathUser("root"), `{"disabled":true}`)
		refused("a refused change changes nothing", "PUT", pathUser("root"), `{"disabled":true,"password":"changed"}`)
		refused("deleting the last administrator", "DELETE", pathUser("root"), "")
		c.mustDo("GET", "/api/v1/users", "", root, http.StatusOK) // root's session lives on
		c.login("root", "root-password")

		c.mustDo("PUT", pathUser("alice"), `{"admin":true}`, root, http.StatusOK)
		c.mustDo("PUT", pathUser("root"), `{"admin":false}`, root, http.StatusOK) // alice remains
		forbiddenTo(t, c, "root, demoted", "GET", "/api/v1/users", "", root)
		alice := c.token("alice")
		status, _, env := c.do("DELETE", pathUser("alice"), "", alice)
		wantError(t, "alice deleting herself, the last one", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		assert.Equal(t, lastAdmin, env.details())
	})
}

func TestUsersDeleteOwner(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		root := c.addAdmin("root")
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(bob, "bobs", "prod", "db")
		c.tree(bob, "more", "prod", "db")
		c.tree(alice, "web", "prod", "db")
		c.share(alice, "web", "bob", "admin")
		tok := c.apiToken(bob, "web", `{"name":"bobs-ci","role":"viewer"}`).Token

		status, _, env := c.do("DELETE", pathUser("bob"), "", root)
		wantError(t, "deleting an owner", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		assert.Equal(t, "the user owns 2 projects: transfer or delete them first, or disable the user", env.details())
		c.mustDo("GET", pathP("bobs"), "", bob, http.StatusOK) // nothing changed

		c.mustDo("DELETE", pathP("more"), "", bob, http.StatusNoContent)
		c.mustDo("PUT", pathP("bobs")+"/owner", `{"username":"alice"}`, bob, http.StatusOK)
		c.mustDo("DELETE", pathUser("bob"), "", root, http.StatusNoContent)
		var members struct {
			Items []memberJSON `json:"items"`
		}
		c.mustDo("GET", pathP("web")+"/members", "", alice, http.StatusOK).decode(t, &members)
		require.Len(t, members.Items, 1, "bob's membership went")
		assert.Equal(t, "alice", members.Items[0].Username)
		c.mustDo("GET", pathP("web"), "", tok, http.StatusOK) // the API token bob created stays
		c.mustDo("GET", pathP("bobs"), "", alice, http.StatusOK)
	})
}

func TestTransferProject(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		root := c.addAdmin("root")
		alice, bob := c.token("alice"), c.token("bob")
		c.addUser("carol", "carol-password")
		carol := c.token("carol")
		c.addUser("off", "off-password")
		c.mustDo("PUT", pathUser("off"), `{"disabled":true}`, root, http.StatusOK)
		c.tree(alice, "web", "prod", "db")
		c.share(alice, "web", "bob", "viewer")
		c.share(alice, "web", "carol", "admin")
		tok := c.apiToken(alice, "web", `{"name":"ci","role":"editor"}`).Token
		owner := pathP("web") + "/owner"

		forbiddenTo(t, c, "an admin member", "PUT", owner, `{"username":"carol"}`, carol)
		forbiddenTo(t, c, "a viewer", "PUT", owner, `{"username":"bob"}`, bob)
		forbiddenTo(t, c, "an API token", "PUT", owner, `{"username":"bob"}`, tok)
		c.addUser("dan", "dan-password")
		forbiddenTo(t, c, "a stranger's bad body is 403 first", "PUT", owner, `nope`, c.token("dan"))
		for _, bad := range []string{`{}`, `{"username":null}`, `{"user":"bob"}`, `nope`} {
			status, _, env := c.do("PUT", owner, bad, alice)
			wantError(t, "PUT P/owner "+bad, status, env, http.StatusBadRequest, "INVALID_REQUEST", env.message())
		}
		for _, name := range []string{"nobody", "off"} {
			status, _, env := c.do("PUT", owner, `{"username":"`+name+`"}`, alice)
			wantError(t, "to "+name, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
			wantDetails(t, "to "+name, env, `user "`+name+`" not found`)
		}
		status, _, env := c.do("PUT", pathP("nope")+"/owner", `{"username":"bob"}`, root)
		wantError(t, "a missing project", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		wantDetails(t, "a missing project", env, `project "nope" not found`)

		status, h, env := c.do("PUT", owner, `{"username":"bob"}`, alice)
		require.Equal(t, http.StatusOK, status, "%s", env.raw)
		rateRemaining(t, "PUT P/owner is rate limited", h)
		assert.Equal(t, "Project transferred", env.Message)
		var pr struct {
			projectJSON
			Role *string `json:"role"`
		}
		env.decode(t, &pr)
		assert.Equal(t, c.ids["bob"], pr.OwnerID, "bob owns it")
		if assert.NotNil(t, pr.Role) {
			assert.Equal(t, "admin", *pr.Role, "alice is now an admin member")
		}
		var members struct {
			Items []memberJSON `json:"items"`
		}
		c.mustDo("GET", pathP("web")+"/members", "", bob, http.StatusOK).decode(t, &members)
		roles := map[string]string{}
		for _, m := range members.Items {
			roles[m.Username] = m.Role
		}
		assert.Equal(t, map[string]string{"alice": "admin", "bob": "owner", "carol": "admin"}, roles)
		var audit struct {
			Items []struct {
				Action    string  `json:"action"`
				ActorName string  `json:"actor_name"`
				Target    *string `json:"target"`
			} `json:"items"`
		}
		c.mustDo("GET", pathP("web")+"/audit?limit=1", "", bob, http.StatusOK).decode(t, &audit)
		if assert.Len(t, audit.Items, 1) {
			assert.Equal(t, "project.transfer", audit.Items[0].Action)
			assert.Equal(t, "alice", audit.Items[0].ActorName)
			if assert.NotNil(t, audit.Items[0].Target) {
				assert.Equal(t, "bob", *audit.Items[0].Target, "target: the new owner's username")
			}
		}
		forbiddenTo(t, c, "the previous owner", "PUT", owner, `{"username":"alice"}`, alice)
		forbiddenTo(t, c, "the previous owner cannot delete it", "DELETE", pathP("web"), "", alice)
		c.mustDo("GET", pathP("web"), "", tok, http.StatusOK) // the project's API tokens go on

		// A server administrator may transfer any project.
		c.mustDo("PUT", owner, `{"username":"carol"}`, root, http.StatusOK).decode(t, &pr)
		assert.Equal(t, c.ids["carol"], pr.OwnerID)
		assert.Nil(t, pr.Role, "the administrator holds no role on it")
		forbiddenTo(t, c, "the administrator is no member", "GET", pathP("web"), "", root)
		c.mustDo("DELETE", pathP("web"), "", carol, http.StatusNoContent)
	})
}

func TestUsersAuditLog(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var logs bytes.Buffer
		c := newServer(t, kind, hds.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		root := c.addAdmin("root")
		c.mustDo("POST", "/api/v1/users", `{"username":"carol","password":"carol-secret-pw"}`, root, http.StatusCreated)
		c.mustDo("PUT", pathUser("carol"), `{"password":"carol-new-secret","admin":true}`, root, http.StatusOK)
		c.mustDo("DELETE", pathUser("carol"), "", root, http.StatusNoContent)
		c.do("DELETE", pathUser("root"), "", root) // refused: no line
		var got []map[string]any
		for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &m), "%s", line)
			if m["msg"] == "audit" {
				got = append(got, m)
			}
		}
		require.Len(t, got, 3, "one line per change")
		for i, action := range []string{"user.create", "user.update", "user.delete"} {
			assert.Equal(t, action, got[i]["action"])
			assert.Equal(t, c.ids["root"], got[i]["actor"])
			assert.Equal(t, "root", got[i]["actor_name"])
			assert.Equal(t, "carol", got[i]["target"])
		}
		for _, secret := range []string{"carol-secret-pw", "carol-new-secret", "$2a$"} {
			assert.NotContains(t, logs.String(), secret, "no password or hash reaches the log")
		}
	})
}

// TestUsersDisableByStoreBesideServer is the "at once" of
// docs/api.md#server-administrators-and-user-accounts-v12 for a disable
// through the store (as the CLI makes it beside a running server): the
// other instance refuses the session within 1 s.
func TestUsersDisableByStoreBesideServer(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		a, b := twoInstances(t, kind)
		bob := a.token("bob")
		require.NoError(t, b.users.SetUserActive(t.Context(), "bob", false))
		deadline := time.Now().Add(time.Second)
		for {
			status, _, _ := a.do("GET", "/api/v1/projects", "", bob)
			if status == http.StatusUnauthorized {
				break
			}
			require.True(t, time.Now().Before(deadline), "the session still works 1 s after the disable")
			time.Sleep(20 * time.Millisecond)
		}
		require.NoError(t, b.users.SetUserActive(t.Context(), "bob", true))
		status, _, env := a.do("GET", "/api/v1/projects", "", bob)
		wantError(t, "enabling revives nothing", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
	})
}

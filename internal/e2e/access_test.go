package e2e_test

// Sharing and API tokens (docs/api.md#sharing-and-api-tokens), black-box
// on every store: members and roles, the project list with roles, API
// tokens (creation, format, scope, expiry, revocation, last_used_at, rate
// limits per token), every error of the section, and changes that take
// effect on a second instance sharing the storage.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// apiTokenRE is the token string of docs/api.md#sharing-and-api-tokens
// as built.
var apiTokenRE = regexp.MustCompile(`^hds_[0-9A-Za-z]{43}$`)

const (
	forbidden    = "Insufficient permissions"
	invalidToken = "Invalid or expired token"
)

type memberJSON struct {
	UserID    string `json:"user_id"`
	Username  string `json:"username"`
	Role      string `json:"role"`
	CreatedAt string `json:"created_at"`
}

type apiTokenJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Role       string  `json:"role"`
	Collection *string `json:"collection"`
	Cluster    *string `json:"cluster"`
	CreatedAt  string  `json:"created_at"`
	ExpiresAt  *string `json:"expires_at"`
	LastUsedAt *string `json:"last_used_at"`
	Token      string  `json:"token"`
}

// share makes username a member of project p with role, as the owner
// token asks.
func (c *client) share(token, p, username, role string) memberJSON {
	c.t.Helper()
	env := c.mustDo("PUT", pathP(p)+"/members/"+username, `{"role":"`+role+`"}`, token, http.StatusOK)
	var m memberJSON
	env.decode(c.t, &m)
	return m
}

// apiToken creates an API token of project p with body and returns it.
func (c *client) apiToken(token, p, body string) apiTokenJSON {
	c.t.Helper()
	env := c.mustDo("POST", pathP(p)+"/tokens", body, token, http.StatusCreated)
	var out apiTokenJSON
	env.decode(c.t, &out)
	return out
}

// forbiddenTo checks a 403 AUTHORIZATION_FAILED.
func forbiddenTo(t *testing.T, c *client, what, method, target, body, token string) {
	t.Helper()
	status, _, env := c.do(method, target, body, token)
	wantError(t, what, status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", forbidden)
}

// refused checks a 401 "Invalid or expired token".
func refused(t *testing.T, c *client, what, method, target, token string) {
	t.Helper()
	status, _, env := c.do(method, target, "", token)
	wantError(t, what, status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", invalidToken)
}

func TestMembers(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		carol := "carol"
		c.addUser(carol, "carol-password")
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "web", "prod", "db")
		kp := pathK("web", "prod", "db")
		c.addRecord(alice, kp, "password", "CREDENTIAL", `"s3cret"`)

		// Nothing shared yet.
		forbiddenTo(t, c, "a stranger reads", "GET", pathP("web"), "", bob)
		env := c.mustDo("GET", "/api/v1/projects", "", bob, http.StatusOK)
		var list struct {
			Items []projectJSONRole `json:"items"`
			Total int               `json:"total"`
		}
		env.decode(t, &list)
		assert.Zero(t, list.Total, "bob's list before sharing")

		// Errors of PUT: bad role, unknown user, the owner's entry, a
		// non-admin. Nothing changes.
		for _, role := range []string{"owner", "Viewer", "root", ""} {
			status, _, env := c.do("PUT", pathP("web")+"/members/bob", `{"role":"`+role+`"}`, alice)
			wantError(t, "role "+role, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		}
		status, _, env := c.do("PUT", pathP("web")+"/members/bob", `{}`, alice)
		wantError(t, "no role: a missing required field", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		status, _, env = c.do("PUT", pathP("web")+"/members/nobody", `{"role":"viewer"}`, alice)
		wantError(t, "unknown user", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		wantDetails(t, "unknown user", env, `user "nobody" not found`)
		status, _, env = c.do("PUT", pathP("web")+"/members/alice", `{"role":"admin"}`, alice)
		wantError(t, "the owner's entry", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		status, _, env = c.do("DELETE", pathP("web")+"/members/alice", "", alice)
		wantError(t, "delete the owner's entry", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		status, _, env = c.do("DELETE", pathP("web")+"/members/bob", "", alice)
		wantError(t, "delete a non-member", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		forbiddenTo(t, c, "a stranger adds itself", "PUT", pathP("web")+"/members/bob", `{"role":"admin"}`, bob)
		forbiddenTo(t, c, "a stranger, unknown user", "PUT", pathP("web")+"/members/nobody", `{"role":"admin"}`, bob)
		forbiddenTo(t, c, "a stranger, bad role", "PUT", pathP("web")+"/members/bob", `{"role":"x"}`, bob)
		forbiddenTo(t, c, "a stranger lists members", "GET", pathP("web")+"/members", "", bob)
		status, _, env = c.do("PUT", pathP("nope")+"/members/bob", `{"role":"viewer"}`, alice)
		wantError(t, "a missing project", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")

		// viewer: reads, masked; no reveal, no write.
		m := c.share(alice, "web", "bob", "viewer")
		assert.Equal(t, memberJSON{UserID: c.ids["bob"], Username: "bob", Role: "viewer", CreatedAt: m.CreatedAt}, m)
		wantTimestamps(t, "member created_at", m.CreatedAt)
		c.mustDo("GET", kp, "", bob, http.StatusOK)
		forbiddenTo(t, c, "a viewer reveals", "GET", kp+"?reveal=true", "", bob)
		forbiddenTo(t, c, "a viewer reveals a list", "GET", kp+"/records?reveal=true", "", bob)
		forbiddenTo(t, c, "a viewer reveals a record", "GET", kp+"/records/password?reveal=true", "", bob)
		forbiddenTo(t, c, "a viewer exports revealed", "GET", pathP("web")+"/export?reveal=true", "", bob)
		c.mustDo("GET", kp+"?reveal=false", "", bob, http.StatusOK)
		forbiddenTo(t, c, "a viewer writes", "POST", kp+"/records", `{"name":"x","type":"INTEGER","value":1}`, bob)
		forbiddenTo(t, c, "a viewer writes a bad body", "POST", kp+"/records", `{"nope":1}`, bob)
		env = c.mustDo("GET", "/api/v1/projects", "", bob, http.StatusOK)
		env.decode(t, &list)
		if assert.Len(t, list.Items, 1) {
			assert.Equal(t, "web", list.Items[0].Name)
			assert.Equal(t, "viewer", list.Items[0].Role, "the shared project's role")
		}
		env = c.mustDo("GET", "/api/v1/projects", "", alice, http.StatusOK)
		env.decode(t, &list)
		if assert.Len(t, list.Items, 1) {
			assert.Equal(t, "owner", list.Items[0].Role)
		}

		// reader: reveals.
		again := c.share(alice, "web", "bob", "reader")
		assert.Equal(t, m.CreatedAt, again.CreatedAt, "a role change keeps created_at")
		env = c.mustDo("GET", kp+"/records/password?reveal=true", "", bob, http.StatusOK)
		assert.Contains(t, string(env.Data), "s3cret")
		forbiddenTo(t, c, "a reader writes", "PUT", kp+"/records/password?value=x", "", bob)

		// editor: writes, not the project.
		c.share(alice, "web", "bob", "editor")
		c.mustDo("POST", kp+"/records", `{"name":"port","type":"INTEGER","value":1}`, bob, http.StatusCreated)
		c.mustDo("POST", pathC("web", "dev"), "", bob, http.StatusCreated)
		forbiddenTo(t, c, "an editor renames the project", "PUT", pathP("web")+"?rename=web2", "", bob)
		forbiddenTo(t, c, "an editor manages members", "PUT", pathP("web")+"/members/carol", `{"role":"viewer"}`, bob)
		forbiddenTo(t, c, "an editor creates a token", "POST", pathP("web")+"/tokens", `{"name":"t","role":"viewer"}`, bob)

		// admin: renames, manages members, not the owner, not delete.
		c.share(alice, "web", "bob", "admin")
		c.mustDo("PUT", pathP("web")+"?rename=web2", "", bob, http.StatusOK)
		c.mustDo("PUT", pathP("web2")+"?rename=web", "", bob, http.StatusOK)
		c.share(bob, "web", carol, "viewer")
		status, _, env = c.do("PUT", pathP("web")+"/members/alice", `{"role":"viewer"}`, bob)
		wantError(t, "an admin changes the owner", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		status, _, env = c.do("DELETE", pathP("web")+"/members/alice", "", bob)
		wantError(t, "an admin removes the owner", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		forbiddenTo(t, c, "an admin deletes the project", "DELETE", pathP("web"), "", bob)

		env = c.mustDo("GET", pathP("web")+"/members", "", c.token(carol), http.StatusOK)
		var members struct {
			Items  []memberJSON `json:"items"`
			Total  int          `json:"total"`
			Limit  int          `json:"limit"`
			Offset int          `json:"offset"`
		}
		env.decode(t, &members)
		assert.Equal(t, 3, members.Total)
		var got []string
		for _, m := range members.Items {
			got = append(got, m.Username+":"+m.Role)
		}
		assert.Equal(t, []string{"alice:owner", "bob:admin", "carol:viewer"}, got, "by username, the owner included")
		env = c.mustDo("GET", pathP("web")+"/members?limit=1&offset=1", "", alice, http.StatusOK)
		env.decode(t, &members)
		assert.Equal(t, 3, members.Total)
		assert.Equal(t, 1, members.Limit)
		if assert.Len(t, members.Items, 1) {
			assert.Equal(t, "bob", members.Items[0].Username)
		}
		status, _, env = c.do("GET", pathP("web")+"/members?limit=0", "", alice)
		wantError(t, "limit=0", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")

		// A member leaves by itself; a viewer cannot remove others.
		forbiddenTo(t, c, "a viewer removes another", "DELETE", pathP("web")+"/members/bob", "", c.token(carol))
		c.mustDo("DELETE", pathP("web")+"/members/"+carol, "", c.token(carol), http.StatusNoContent)
		forbiddenTo(t, c, "a member that left", "GET", pathP("web"), "", c.token(carol))
		// The admin removes a member; effective on the next request.
		c.share(alice, "web", carol, "editor")
		c.mustDo("DELETE", pathP("web")+"/members/"+carol, "", bob, http.StatusNoContent)
		forbiddenTo(t, c, "a removed member", "GET", kp, "", c.token(carol))

		// The owner deletes; the members lose it.
		c.mustDo("DELETE", pathP("web"), "", alice, http.StatusNoContent)
		env = c.mustDo("GET", "/api/v1/projects", "", bob, http.StatusOK)
		env.decode(t, &list)
		assert.Zero(t, list.Total)
	})
}

// projectJSONRole is a project with the caller's role.
type projectJSONRole struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

func TestAPITokens(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "web", "prod", "db")
		c.tree(bob, "other", "prod", "db")
		kp := pathK("web", "prod", "db")
		c.addRecord(alice, kp, "password", "CREDENTIAL", `"s3cret"`)

		tok := c.apiToken(alice, "web", `{"name":"ci","role":"viewer"}`)
		assert.Regexp(t, apiTokenRE, tok.Token, "hds_ and 43 base62 characters")
		wantID(t, "token id", tok.ID)
		assert.Equal(t, "ci", tok.Name)
		assert.Equal(t, "viewer", tok.Role)
		assert.Nil(t, tok.Collection)
		assert.Nil(t, tok.Cluster)
		assert.Nil(t, tok.ExpiresAt, "no expiry when left out")
		assert.Nil(t, tok.LastUsedAt, "null until the first use")
		wantTimestamps(t, "created_at", tok.CreatedAt)
		other := c.apiToken(alice, "web", `{"name":"ci","role":"viewer"}`)
		assert.NotEqual(t, tok.Token, other.Token, "random")

		// The listing never holds the token string.
		env := c.mustDo("GET", pathP("web")+"/tokens", "", alice, http.StatusOK)
		assert.NotContains(t, string(env.raw), tok.Token[4:])
		assert.NotContains(t, string(env.raw), `"token"`)
		var listed struct {
			Items []apiTokenJSON `json:"items"`
			Total int            `json:"total"`
		}
		env.decode(t, &listed)
		assert.Equal(t, 2, listed.Total)
		if assert.Len(t, listed.Items, 2) {
			assert.Equal(t, tok.ID, listed.Items[0].ID, "oldest first")
		}

		// The token reads its project, masked; last_used_at is set.
		env = c.mustDo("GET", kp, "", tok.Token, http.StatusOK)
		assert.NotContains(t, string(env.raw), "s3cret")
		c.mustDo("GET", pathP("web"), "", tok.Token, http.StatusOK)
		assert.Equal(t, http.StatusOK, c.raw(request("GET", pathP("web")+"/export", "", tok.Token)).StatusCode, "export")
		env = c.mustDo("GET", pathP("web")+"/tokens", "", alice, http.StatusOK)
		env.decode(t, &listed)
		if assert.NotNil(t, listed.Items[0].LastUsedAt, "set by the first use") {
			wantTimestamps(t, "last_used_at", *listed.Items[0].LastUsedAt)
		}

		// Everything else is 403.
		for _, r := range []struct{ what, method, target, body string }{
			{"reveal", "GET", kp + "?reveal=true", ""},
			{"write", "POST", kp + "/records", `{"name":"x","type":"INTEGER","value":1}`},
			{"another project", "GET", pathP("other"), ""},
			{"another project's cluster", "GET", pathK("other", "prod", "db"), ""},
			{"a missing project", "GET", pathP("nope"), ""},
			{"a missing project's cluster", "GET", pathK("nope", "prod", "db"), ""},
			{"the project list", "GET", "/api/v1/projects", ""},
			{"create a project", "POST", "/api/v1/projects", `{"name":"mine"}`},
			{"create a project, path form", "POST", pathP("mine"), ""},
			{"rename the project", "PUT", pathP("web") + "?rename=x", ""},
			{"delete the project", "DELETE", pathP("web"), ""},
			{"members", "GET", pathP("web") + "/members", ""},
			{"put a member", "PUT", pathP("web") + "/members/bob", `{"role":"viewer"}`},
			{"tokens", "GET", pathP("web") + "/tokens", ""},
			{"create a token", "POST", pathP("web") + "/tokens", `{"name":"x","role":"viewer"}`},
			{"revoke a token", "DELETE", pathP("web") + "/tokens/" + other.ID, ""},
			{"refresh", "POST", "/api/v1/auth/refresh", ""},
			{"logout", "POST", "/api/v1/auth/logout", ""},
			{"password", "POST", "/api/v1/auth/password", `{"current_password":"a","new_password":"b"}`},
		} {
			forbiddenTo(t, c, "a viewer token: "+r.what, r.method, r.target, r.body, tok.Token)
		}

		// Roles: reader reveals, editor writes, batch and import included.
		reader := c.apiToken(alice, "web", `{"name":"r","role":"reader"}`)
		env = c.mustDo("GET", kp+"?reveal=true", "", reader.Token, http.StatusOK)
		assert.Contains(t, string(env.raw), "s3cret")
		forbiddenTo(t, c, "a reader token writes", "DELETE", kp+"/records/password", "", reader.Token)
		editor := c.apiToken(alice, "web", `{"name":"e","role":"editor"}`)
		rec := c.addRecord(editor.Token, kp, "port", "INTEGER", "5432")
		c.mustDo("POST", pathP("web")+"/batch", `{"operations":[{"op":"upsert","collection":"prod","cluster":"db","record":"port","type":"INTEGER","value":1}]}`, editor.Token, http.StatusOK)
		env = c.mustDo("GET", kp+"/records/port/versions", "", editor.Token, http.StatusOK)
		assert.Contains(t, string(env.raw), `"changed_by":"token:`+editor.ID+`"`, "a token's change names it")
		_ = rec

		// Malformed, unknown, JWT in place of a token: 401, the same
		// message for all.
		for what, bad := range map[string]string{
			"too short":         "hds_abc",
			"too long":          tok.Token + "a",
			"bad alphabet":      tok.Token[:len(tok.Token)-1] + "-",
			"a JWT with prefix": "hds_" + alice,
			"unknown":           "hds_" + strings.Repeat("A", 43),
			"prefix only":       "hds_",
		} {
			refused(t, c, what, "GET", pathP("web"), bad)
			refused(t, c, what+" on refresh", "POST", "/api/v1/auth/refresh", bad)
		}

		// Revoke: at once; not listed; a second revoke, an unknown id and
		// another project's token are 404.
		c.mustDo("DELETE", pathP("web")+"/tokens/"+tok.ID, "", alice, http.StatusNoContent)
		refused(t, c, "a revoked token", "GET", pathP("web"), tok.Token)
		refused(t, c, "a revoked token on refresh", "POST", "/api/v1/auth/refresh", tok.Token)
		for what, id := range map[string]string{"revoked": tok.ID, "unknown": randomID(), "not a uuid": "x"} {
			status, _, env := c.do("DELETE", pathP("web")+"/tokens/"+id, "", alice)
			wantError(t, "revoke "+what, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		}
		bobs := c.apiToken(bob, "other", `{"name":"b","role":"viewer"}`)
		status, _, env := c.do("DELETE", pathP("web")+"/tokens/"+bobs.ID, "", alice)
		wantError(t, "revoke another project's token", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		c.mustDo("GET", pathP("other"), "", bobs.Token, http.StatusOK)

		// Tokens outlive their creator's membership and die with the
		// project.
		c.share(alice, "web", "bob", "admin")
		bobMade := c.apiToken(bob, "web", `{"name":"by-bob","role":"viewer"}`)
		c.mustDo("DELETE", pathP("web")+"/members/bob", "", alice, http.StatusNoContent)
		c.mustDo("GET", pathP("web"), "", bobMade.Token, http.StatusOK)
		c.mustDo("DELETE", pathP("web"), "", alice, http.StatusNoContent)
		refused(t, c, "a token of a deleted project", "GET", pathP("web"), bobMade.Token)
		refused(t, c, "a token of a deleted project", "GET", pathP("web"), reader.Token)
	})
}

func TestAPITokenFields(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "db")
		for what, body := range map[string]string{
			"role admin":              `{"name":"t","role":"admin"}`,
			"role owner":              `{"name":"t","role":"owner"}`,
			"role in capitals":        `{"name":"t","role":"Viewer"}`,
			"expires_in 0":            `{"name":"t","role":"viewer","expires_in":0}`,
			"expires_in -1":           `{"name":"t","role":"viewer","expires_in":-1}`,
			"expires_in 1.5":          `{"name":"t","role":"viewer","expires_in":1.5}`,
			"expires_in 1e3":          `{"name":"t","role":"viewer","expires_in":1e3}`,
			"expires_in a string":     `{"name":"t","role":"viewer","expires_in":"60"}`,
			"expires_in huge":         `{"name":"t","role":"viewer","expires_in":99999999999999999999}`,
			"cluster alone":           `{"name":"t","role":"viewer","cluster":"db"}`,
			"empty name":              `{"name":"","role":"viewer"}`,
			"a bad collection name":   `{"name":"t","role":"viewer","collection":"a/b"}`,
			"a name with a line feed": `{"name":"a\nb","role":"viewer"}`,
		} {
			status, _, env := c.do("POST", pathP("web")+"/tokens", body, alice)
			wantError(t, what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		}
		for what, body := range map[string]string{
			"no name":       `{"role":"viewer"}`,
			"no role":       `{"name":"t"}`,
			"unknown field": `{"name":"t","role":"viewer","scope":"x"}`,
			"not an object": `[]`,
		} {
			status, _, env := c.do("POST", pathP("web")+"/tokens", body, alice)
			wantError(t, what, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		}
		for what, c2 := range map[string]struct{ body, details string }{
			"a missing collection":            {`{"name":"t","role":"viewer","collection":"nope"}`, `collection "nope" not found`},
			"a missing cluster":               {`{"name":"t","role":"viewer","collection":"prod","cluster":"nope"}`, `cluster "nope" not found`},
			"a missing collection, a cluster": {`{"name":"t","role":"viewer","collection":"nope","cluster":"db"}`, `collection "nope" not found`},
		} {
			status, _, env := c.do("POST", pathP("web")+"/tokens", c2.body, alice)
			wantError(t, what, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
			wantDetails(t, what, env, c2.details)
		}
		env := c.mustDo("GET", pathP("web")+"/tokens", "", alice, http.StatusOK)
		assert.Contains(t, string(env.Data), `"total":0`, "nothing was created")

		// expires_in: expires_at is set; an expired token is 401.
		tok := c.apiToken(alice, "web", `{"name":"short","role":"viewer","expires_in":1,"collection":"prod","cluster":"db"}`)
		require.NotNil(t, tok.ExpiresAt)
		assert.Equal(t, "prod", *tok.Collection)
		assert.Equal(t, "db", *tok.Cluster)
		c.mustDo("GET", pathK("web", "prod", "db"), "", tok.Token, http.StatusOK)
		waitPast(t, *tok.ExpiresAt)
		refused(t, c, "an expired token", "GET", pathK("web", "prod", "db"), tok.Token)
		long := c.apiToken(alice, "web", `{"name":"long","role":"viewer","expires_in":3600}`)
		exp, err := time.Parse(time.RFC3339, *long.ExpiresAt)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now().Add(time.Hour), exp, time.Minute)
	})
}

func TestAPITokenScope(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "db")
		c.mustDo("POST", pathK("web", "prod", "cache"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("web", "dev", "db"), "", alice, http.StatusNotFound)
		c.mustDo("POST", pathC("web", "dev"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("web", "dev", "db"), "", alice, http.StatusCreated)
		coll := c.apiToken(alice, "web", `{"name":"c","role":"editor","collection":"prod"}`).Token
		clus := c.apiToken(alice, "web", `{"name":"k","role":"editor","collection":"prod","cluster":"db"}`).Token

		ok := func(what, method, target, body, token string, want int) {
			t.Helper()
			status, _, env := c.do(method, target, body, token)
			assert.Equal(t, want, status, "%s: %s", what, env.raw)
		}
		// A collection-scoped token: C and below.
		ok("coll: GET C", "GET", pathC("web", "prod"), "", coll, http.StatusOK)
		ok("coll: GET C/clusters", "GET", pathC("web", "prod")+"/clusters", "", coll, http.StatusOK)
		ok("coll: GET K", "GET", pathK("web", "prod", "cache"), "", coll, http.StatusOK)
		ok("coll: create a cluster", "POST", pathK("web", "prod", "new"), "", coll, http.StatusCreated)
		ok("coll: rename a cluster", "PUT", pathK("web", "prod", "new")+"?rename=new2", "", coll, http.StatusOK)
		ok("coll: delete a cluster", "DELETE", pathK("web", "prod", "new2"), "", coll, http.StatusNoContent)
		for what, r := range map[string][2]string{
			"GET P":              {"GET", pathP("web")},
			"GET P/collections":  {"GET", pathP("web") + "/collections"},
			"create a sibling":   {"POST", pathC("web", "qa")},
			"rename its scope":   {"PUT", pathC("web", "prod") + "?rename=x"},
			"delete its scope":   {"DELETE", pathC("web", "prod")},
			"another collection": {"GET", pathC("web", "dev")},
			"another's cluster":  {"GET", pathK("web", "dev", "db")},
			"export":             {"GET", pathP("web") + "/export"},
			"batch":              {"POST", pathP("web") + "/batch"},
		} {
			forbiddenTo(t, c, "coll: "+what, r[0], r[1], "", coll)
		}
		// A cluster-scoped token: K and below.
		ok("clus: GET K", "GET", pathK("web", "prod", "db"), "", clus, http.StatusOK)
		ok("clus: a record", "POST", pathK("web", "prod", "db")+"/records/a?type=INTEGER&value=1", "", clus, http.StatusCreated)
		ok("clus: records", "GET", pathK("web", "prod", "db")+"/records", "", clus, http.StatusOK)
		for what, r := range map[string][2]string{
			"GET P":             {"GET", pathP("web")},
			"GET C":             {"GET", pathC("web", "prod")},
			"GET C/clusters":    {"GET", pathC("web", "prod") + "/clusters"},
			"rename its scope":  {"PUT", pathK("web", "prod", "db") + "?rename=x"},
			"delete its scope":  {"DELETE", pathK("web", "prod", "db")},
			"a sibling cluster": {"GET", pathK("web", "prod", "cache")},
			"same name, other":  {"GET", pathK("web", "dev", "db")},
		} {
			forbiddenTo(t, c, "clus: "+what, r[0], r[1], "", clus)
		}
	})
}

// TestAccessRateLimitPerToken: an API token's requests are counted
// against the token, not its creator.
func TestAccessRateLimitPerToken(t *testing.T) {
	c := newServer(t, memoryKind, hds.WithRateLimit(1000, 3))
	alice := c.token("alice")
	c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	tok := c.apiToken(alice, "web", `{"name":"t","role":"viewer"}`).Token
	other := c.apiToken(c.token("alice"), "web", `{"name":"u","role":"viewer"}`).Token
	for i := range 3 {
		status, h, _ := c.do("GET", pathP("web"), "", tok)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, int64(2-i), rateRemaining(t, "token", h), "counted per token")
	}
	res := c.call(req{method: "GET", target: pathP("web"), token: tok})
	want429(t, "the token's limit", res, 60)
	status, _, _ := c.do("GET", pathP("web"), "", other)
	assert.Equal(t, http.StatusOK, status, "another token of the same project has its own count")
}

// TestAccessAcrossInstances: a revoked token, a removed member, a logout
// and a password change are refused on the next request on a second
// instance sharing the storage.
func TestAccessAcrossInstances(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		a, b := twoInstances(t, kind)
		alice, bob := a.token("alice"), a.token("bob")
		a.tree(alice, "web", "prod", "db")
		tok := a.apiToken(alice, "web", `{"name":"t","role":"viewer"}`).Token
		tokID := func() string {
			env := a.mustDo("GET", pathP("web")+"/tokens", "", alice, http.StatusOK)
			var l struct{ Items []apiTokenJSON }
			env.decode(t, &l)
			return l.Items[0].ID
		}()
		a.share(alice, "web", "bob", "viewer")
		b.mustDo("GET", pathP("web"), "", tok, http.StatusOK)
		b.mustDo("GET", pathP("web"), "", bob, http.StatusOK)

		a.mustDo("DELETE", pathP("web")+"/tokens/"+tokID, "", alice, http.StatusNoContent)
		refused(t, b, "a token revoked on the other instance", "GET", pathP("web"), tok)
		a.mustDo("DELETE", pathP("web")+"/members/bob", "", alice, http.StatusNoContent)
		forbiddenTo(t, b, "a member removed on the other instance", "GET", pathP("web"), "", bob)

		a.mustDo("POST", "/api/v1/auth/logout", "", bob, http.StatusNoContent)
		refused(t, b, "a session ended on the other instance", "GET", "/api/v1/projects", bob)

		fresh := a.login("alice", "alice-password")
		b.mustDo("GET", "/api/v1/projects", "", fresh, http.StatusOK)
		env := a.mustDo("POST", "/api/v1/auth/password", `{"current_password":"alice-password","new_password":"new-alice"}`, alice, http.StatusOK)
		var newTok struct{ Token string }
		require.NoError(t, json.Unmarshal(env.Data, &newTok))
		refused(t, b, "a session before a password change on the other instance", "GET", "/api/v1/projects", fresh)
		b.mustDo("GET", "/api/v1/projects", "", newTok.Token, http.StatusOK)
	})
}

// TestAccessAudit: membership and API token changes are in the audit log
// (docs/api.md#audit-log-and-change-feed), target the username or the
// token id; neither the audit log nor the server log ever holds a token
// string or its hash.
func TestAccessAudit(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var logs syncBuffer
		c := newServer(t, kind, hds.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		alice := c.token("alice")
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		c.share(alice, "web", "bob", "viewer")
		tok := c.apiToken(alice, "web", `{"name":"ci","role":"viewer"}`)
		c.mustDo("GET", pathP("web"), "", tok.Token, http.StatusOK)
		refused(t, c, "a bad token", "GET", pathP("web"), alteredToken(tok.Token))
		c.mustDo("DELETE", pathP("web")+"/tokens/"+tok.ID, "", alice, http.StatusNoContent)
		c.mustDo("DELETE", pathP("web")+"/members/bob", "", alice, http.StatusNoContent)

		env := c.mustDo("GET", pathP("web")+"/audit", "", alice, http.StatusOK)
		var entries struct {
			Items []struct {
				Action, Actor, Target string
			} `json:"items"`
		}
		env.decode(t, &entries)
		var got []string
		for _, e := range entries.Items {
			got = append(got, e.Action+" "+e.Target)
		}
		assert.Equal(t, []string{"member.delete bob", "token.delete " + tok.ID, "token.create " + tok.ID, "member.put bob", "project.create "}, got)
		hash := sha256.Sum256([]byte(tok.Token))
		for what, secret := range map[string]string{"token": tok.Token, "token body": tok.Token[4:], "hash": hex.EncodeToString(hash[:])} {
			assert.NotContains(t, string(env.raw), secret, "the audit log holds no %s", what)
			assert.NotContains(t, logs.String(), secret, "the server log holds no %s", what)
		}
		assert.Contains(t, logs.String(), "token:"+tok.ID, "the log names the token by its id")
	})
}

// alteredToken returns tok with its last character changed to another
// one of the same alphabet (so that it still looks like a token).
func alteredToken(tok string) string {
	last := byte('x')
	if tok[len(tok)-1] == last {
		last = 'y'
	}
	return tok[:len(tok)-1] + string(last)
}

// TestMissingRole: a body without "role" (or with "role": null) misses a
// required field, 400 INVALID_REQUEST as docs/api.md#routes says of every
// body and as every other route answers a missing field; a role that is
// given but not one of the roles stays 400 VALIDATION_ERROR
// (docs/api.md#sharing-and-api-tokens).
func TestMissingRole(t *testing.T) {
	c := newServer(t, memoryKind)
	alice := c.token("alice")

	c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	for _, body := range []string{`{}`, `{"role":null}`, ``} {
		status, _, env := c.do("PUT", pathP("web")+"/members/bob", body, alice)
		wantError(t, "member body "+body, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		wantDetails(t, "member body "+body, env, `the field "role" is required`)
	}
	for _, body := range []string{`{"name":"ci"}`, `{"name":"ci","role":null}`} {
		status, _, env := c.do("POST", pathP("web")+"/tokens", body, alice)
		wantError(t, "token body "+body, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		wantDetails(t, "token body "+body, env, `the field "role" is required`)
	}
	status, _, env := c.do("PUT", pathP("web")+"/members/bob", `{"role":""}`, alice)
	wantError(t, "an empty role", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
	status, _, env = c.do("POST", pathP("web")+"/tokens", `{"name":"ci","role":"admin"}`, alice)
	wantError(t, "a token role other than viewer, reader, editor", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
	var members struct {
		Total int `json:"total"`
	}
	c.mustDo("GET", pathP("web")+"/members", "", alice, http.StatusOK).decode(t, &members)
	assert.Equal(t, 1, members.Total, "nothing changed: the owner alone")
}

// TestAnonymousOwnerName: with require_auth false, a project created
// without a token belongs to the built-in user anonymous
// (docs/api.md#authentication), and its owner's entry in GET P/members
// names it; the username was empty, the user not being in the directory.
func TestAnonymousOwnerName(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: true}))
		c.mustDo("POST", pathP("open"), "", "", http.StatusCreated)
		var members struct {
			Items []struct {
				UserID   string `json:"user_id"`
				Username string `json:"username"`
				Role     string `json:"role"`
			} `json:"items"`
		}
		c.mustDo("GET", pathP("open")+"/members", "", "", http.StatusOK).decode(t, &members)
		require.Len(t, members.Items, 1, "the owner alone")
		assert.Equal(t, "anonymous", members.Items[0].UserID, "user_id")
		assert.Equal(t, "anonymous", members.Items[0].Username, "username")
		assert.Equal(t, "owner", members.Items[0].Role, "role")
	})
}

// TestRevealRightsFirst checks that a viewer's reveal=true is 403
// even when another input of the request is bad: rights come before the
// request's own input
// (docs/api.md#concurrency-control-and-record-history and
// docs/api.md#sharing-and-api-tokens), on the routes that take reveal.
func TestRevealRightsFirst(t *testing.T) {
	c := newServer(t, memoryKind)
	alice := c.token("alice")
	bob := c.token("bob")
	c.tree(alice, "p", "c", "k")
	c.addRecord(alice, pathK("p", "c", "k"), "n", "INTEGER", "1")
	c.share(alice, "p", "bob", "viewer")
	r := pathR("p", "c", "k", "n")
	for _, tc := range []struct {
		target  string // without reveal; it has a query string
		headers []string
	}{
		{r + "?version=0", nil},
		{r + "?version=1", []string{"If-None-Match", "bad"}},
		{r + "/versions?limit=0", nil},
		{pathK("p", "c", "k") + "/records?limit=0", nil},
		{pathK("p", "c", "k") + "?format=xml", nil},
	} {
		status, _, env := c.sendWith("GET", tc.target+"&reveal=true", "", bob, tc.headers...)
		wantError(t, tc.target, status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", forbidden)
		// Without reveal, the bad input is what the viewer hears about.
		status, _, _ = c.sendWith("GET", tc.target, "", bob, tc.headers...)
		assert.Equal(t, http.StatusBadRequest, status, "%s without reveal", tc.target)
	}
}

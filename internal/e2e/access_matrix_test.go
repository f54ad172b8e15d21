package e2e_test

// The role x route matrix of docs/api.md#17-sharing-and-api-tokens: every
// route of the served OpenAPI document (built from the route table, so a
// new route cannot be missed: an operation this file does not classify
// fails the test), tried by every role, by API tokens of every role, and by
// scoped tokens, with and without reveal=true. A caller without the right
// gets 403 AUTHORIZATION_FAILED "Insufficient permissions"; one with it
// never does. Requests are built so that an allowed one changes nothing
// (missing targets, no bodies, renames to the current name), except DELETE
// P, which runs last.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// routeRight is what a route asks, as docs/api.md#17-sharing-and-api-tokens
// says: a right on the project, the level a token's scope must cover, and
// whether API tokens may use it at all.
type routeRight struct {
	need      store.Right
	level     store.Level
	usersOnly bool
}

// routeRights classify every route under a project, by operation id.
var routeRights = map[string]routeRight{
	"getProject":         {store.RightRead, store.LevelProject, false},
	"renameProject":      {store.RightAdmin, store.LevelProject, false},
	"deleteProject":      {store.RightOwn, store.LevelProject, false},
	"listCollections":    {store.RightRead, store.LevelProject, false},
	"createCollection":   {store.RightWrite, store.LevelProject, false},
	"createCollectionAt": {store.RightWrite, store.LevelProject, false},
	"getCollection":      {store.RightRead, store.LevelCollection, false},
	"renameCollection":   {store.RightWrite, store.LevelProject, false},
	"deleteCollection":   {store.RightWrite, store.LevelProject, false},
	"listClusters":       {store.RightRead, store.LevelCollection, false},
	"createCluster":      {store.RightWrite, store.LevelCollection, false},
	"createClusterAt":    {store.RightWrite, store.LevelCollection, false},
	"getClusterData":     {store.RightRead, store.LevelCluster, false},
	"renameCluster":      {store.RightWrite, store.LevelCollection, false},
	"deleteCluster":      {store.RightWrite, store.LevelCollection, false},
	"listRecords":        {store.RightRead, store.LevelCluster, false},
	"createRecord":       {store.RightWrite, store.LevelCluster, false},
	"createRecordAt":     {store.RightWrite, store.LevelCluster, false},
	"getRecord":          {store.RightRead, store.LevelCluster, false},
	"updateRecord":       {store.RightWrite, store.LevelCluster, false},
	"deleteRecord":       {store.RightWrite, store.LevelCluster, false},
	"listRecordVersions": {store.RightRead, store.LevelCluster, false},
	"restoreRecord":      {store.RightWrite, store.LevelCluster, false},
	"applyBatch":         {store.RightWrite, store.LevelProject, false},
	"exportProject":      {store.RightRead, store.LevelProject, false},
	"importProject":      {store.RightWrite, store.LevelProject, false},
	"diffProject":        {store.RightRead, store.LevelProject, false},
	"promote":            {store.RightWrite, store.LevelProject, false},
	// Snapshots work at the project's level: a scoped token is 403 on
	// every snapshot route (docs/api.md#snapshots-and-rollback-v13).
	"createSnapshot":  {store.RightWrite, store.LevelProject, false},
	"listSnapshots":   {store.RightRead, store.LevelProject, false},
	"getSnapshot":     {store.RightRead, store.LevelProject, false},
	"deleteSnapshot":  {store.RightAdmin, store.LevelProject, false},
	"listMembers":     {store.RightRead, store.LevelProject, true},
	"putMember":       {store.RightAdmin, store.LevelProject, true},
	"deleteMember":    {store.RightAdmin, store.LevelProject, true},
	"createAPIToken":  {store.RightAdmin, store.LevelProject, true},
	"listAPITokens":   {store.RightAdmin, store.LevelProject, true},
	"deleteAPIToken":  {store.RightAdmin, store.LevelProject, true},
	"listAudit":       {store.RightAdmin, store.LevelProject, true},
	"transferProject": {store.RightOwn, store.LevelProject, true},
	// A scoped API token streams its scope's events
	// (docs/api.md#17-sharing-and-api-tokens).
	"streamEvents": {store.RightRead, store.LevelCluster, false},
}

// outsideProjects are the routes outside any project; usersOnly ones
// refuse API tokens (TestAPITokens tries each).
var outsideProjects = map[string]bool{
	"getHealth": false, "getOpenAPI": false, "login": false,
	"refreshToken": true, "logout": true, "changePassword": true,
	"listProjects": true, "createProject": true, "createProjectAt": true,
	"getMe": true,
}

// adminRoutes are the routes for server administrators only
// (docs/api.md#server-administrators-and-user-accounts-v12): every other
// user and every API token gets 403 (TestAccessMatrix tries each with every
// caller of the matrix, none of them an administrator, and with an
// administrator).
var adminRoutes = map[string]bool{
	"listUsers": true, "createUser": true, "getUser": true, "updateUser": true, "deleteUser": true,
}

// matrixRoute is one operation of the document.
type matrixRoute struct {
	id, method, path string
	reveal           bool // takes reveal
}

// documentRoutes lists the operations of c's OpenAPI document.
func documentRoutes(t *testing.T, c *client) []matrixRoute {
	t.Helper()
	res := c.raw(request("GET", "/api/v1/openapi.json", "", ""))
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	var out []matrixRoute
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				ID         string `json:"operationId"`
				Parameters []struct {
					Ref string `json:"$ref"`
				} `json:"parameters"`
			}
			require.NoError(t, json.Unmarshal(raw, &op))
			r := matrixRoute{id: op.ID, method: strings.ToUpper(method), path: path}
			for _, p := range op.Parameters {
				r.reveal = r.reveal || strings.HasSuffix(p.Ref, "/RevealQuery")
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b matrixRoute) int { return strings.Compare(a.id, b.id) })
	return out
}

// matrixCaller is who tries a route.
type matrixCaller struct {
	name  string
	token string
	role  store.Role // "" for a stranger
	api   bool       // an API token
	scope store.Level
}

func (mc matrixCaller) allowed(rr routeRight, need store.Right) bool {
	if mc.api && (rr.usersOnly || rr.level < mc.scope) {
		return false
	}
	return mc.role.Allows(need)
}

func TestAccessMatrix(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		owner := c.token("alice")
		c.tree(owner, "p", "c", "k")
		c.addRecord(owner, pathK("p", "c", "k"), "r", "CREDENTIAL", `"s3cret"`)
		callers := []matrixCaller{{name: "owner", token: owner, role: store.RoleOwner}, {name: "stranger", token: c.token("bob")}}
		serverAdmin := c.addAdmin("root") // no role on p: a stranger to it
		for _, role := range []string{"viewer", "reader", "editor", "admin"} {
			c.addUser(role, role+"-password")
			c.share(owner, "p", role, role)
			callers = append(callers, matrixCaller{name: role, token: c.login(role, role+"-password"), role: store.Role(role)})
		}
		for _, role := range []string{"viewer", "reader", "editor"} {
			tok := c.apiToken(owner, "p", `{"name":"t","role":"`+role+`"}`).Token
			callers = append(callers, matrixCaller{name: role + " token", token: tok, role: store.Role(role), api: true})
		}
		tok := c.apiToken(owner, "p", `{"name":"t","role":"editor","collection":"c"}`).Token
		callers = append(callers, matrixCaller{name: "collection token", token: tok, role: store.RoleEditor, api: true, scope: store.LevelCollection})
		tok = c.apiToken(owner, "p", `{"name":"t","role":"reader","collection":"c","cluster":"k"}`).Token
		callers = append(callers, matrixCaller{name: "cluster token", token: tok, role: store.RoleReader, api: true, scope: store.LevelCluster})

		var last []matrixRoute // DELETE P
		tried := 0
		try := func(r matrixRoute, rr routeRight) {
			for _, reveal := range []bool{false, true} {
				if reveal && !r.reveal {
					continue
				}
				target := matrixTarget(r)
				need := rr.need
				if reveal {
					target += "?reveal=true"
					need = max(need, store.RightReveal)
				}
				for _, mc := range callers {
					q := request(r.method, target, "", mc.token)
					if r.id == "streamEvents" { // a stream that is allowed never ends by itself
						ctx, cancel := context.WithTimeout(q.Context(), 300*time.Millisecond)
						defer cancel()
						q = q.WithContext(ctx)
					}
					res := c.raw(q)
					body, _ := io.ReadAll(res.Body)
					var env envelope
					_ = json.Unmarshal(body, &env)
					what := mc.name + ": " + r.method + " " + target
					if mc.allowed(rr, need) {
						assert.NotEqual(t, http.StatusForbidden, res.StatusCode, "%s (%s): %s", what, r.id, body)
					} else {
						wantError(t, what, res.StatusCode, env, http.StatusForbidden, "AUTHORIZATION_FAILED", forbidden)
					}
					tried++
				}
			}
		}
		for _, r := range documentRoutes(t, c) {
			if adminRoutes[r.id] {
				for _, mc := range callers {
					res := c.raw(request(r.method, matrixTarget(r), "", mc.token))
					body, _ := io.ReadAll(res.Body)
					var env envelope
					_ = json.Unmarshal(body, &env)
					wantError(t, mc.name+": "+r.method+" "+r.path, res.StatusCode, env, http.StatusForbidden, "AUTHORIZATION_FAILED", forbidden)
					tried++
				}
				res := c.raw(request(r.method, matrixTarget(r), "", serverAdmin))
				assert.NotEqual(t, http.StatusForbidden, res.StatusCode, "a server administrator: %s %s", r.method, r.path)
				continue
			}
			rr, ok := routeRights[r.id]
			if !ok {
				_, outside := outsideProjects[r.id]
				assert.True(t, outside, "route %s %s (%s) is not in the matrix: classify it in routeRights", r.method, r.path, r.id)
				continue
			}
			if r.id == "deleteProject" {
				last = append(last, r)
				continue
			}
			try(r, rr)
		}
		// DELETE P last, the owner last of all.
		slices.SortStableFunc(callers, func(a, b matrixCaller) int {
			if a.role == store.RoleOwner && !a.api {
				return 1
			}
			if b.role == store.RoleOwner && !b.api {
				return -1
			}
			return 0
		})
		for _, r := range last {
			try(r, routeRights[r.id])
		}
		t.Logf("%d requests", tried)
	})
}

// matrixTarget fills a route's path so that an allowed request changes
// nothing: deletes name what does not exist.
func matrixTarget(r matrixRoute) string {
	names := map[string]string{"{project}": "p", "{collection}": "c", "{cluster}": "k", "{record}": "r",
		"{username}": "nobody", "{id}": "019a7b2e-4c1d-7f3a-9b2e-5d6c7e8f9a0b", "{name}": "s"}
	if r.method == http.MethodDelete && r.id != "deleteProject" {
		for _, last := range []string{"{record}", "{cluster}", "{collection}"} {
			if strings.HasSuffix(r.path, last) {
				names[last] = "gone"
				break
			}
		}
	}
	target := r.path
	for k, v := range names {
		target = strings.ReplaceAll(target, k, v)
	}
	return target
}

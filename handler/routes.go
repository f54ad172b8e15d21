package handler

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/handler/console"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// Path prefixes of the resource routes (docs/api.md#4-routes).
const (
	pathP = "/api/v1/projects/{project}"
	pathC = pathP + "/collections/{collection}"
	pathK = pathC + "/clusters/{cluster}"
	pathR = pathK + "/records/{record}"
)

// New returns the API's router: every route of docs/api.md#4-routes and the
// OpenAPI document that describes them (openapi.go, built from this one
// table: each route carries its operation), an enveloped 405
// (with Allow) for a known path with a wrong method, an enveloped 404 for
// anything else, and no redirects for non-canonical paths.
func New(cfg Config) http.Handler {
	rt := routes(cfg)
	for _, run := range rt.background {
		go run()
	}
	return rt.finish()
}

// routes registers every route on a new router.
func routes(cfg Config) *router {
	if cfg.Sessions == nil {
		cfg.Sessions, _ = cfg.Users.(store.Sessions)
	}
	if cfg.Access == nil {
		cfg.Access, _ = cfg.Store.(store.Access)
	}
	// Requests are counted against the user once the token verifies, and
	// against the client IP when answered before that.
	byIP := cfg.RateLimiter.Limit(func(r *http.Request) string { return "ip:" + cfg.ClientIP.Of(r) })
	byUser := cfg.RateLimiter.Limit(func(r *http.Request) string {
		if t := auth.APITokenFrom(r.Context()); t != nil {
			return "token:" + t.ID
		}
		if u := auth.UserFrom(r.Context()); u != nil && u.ID != store.AnonymousUserID {
			return "user:" + u.ID
		}
		if c := auth.SessionCheckFrom(r.Context()); c != nil {
			return "user:" + c.UserID // the same user, its session not checked yet
		}
		return "ip:" + cfg.ClientIP.Of(r)
	})
	cur := newCursors(cfg.Tokens)
	authn := middleware.Authenticate(cfg.Tokens, cfg.Sessions, cfg.Access, !cfg.AllowAnonymous, byIP)
	// Bodies are limited only once the route is known and the caller
	// authenticated, so that an oversized request to an unknown route, with
	// a wrong method or without a token still gets its 404, 405 or 401.
	limitBody := middleware.BodyLimit(cfg.MaxBodyBytes)
	// The query string is parsed, strictly, last (withQuery). Every
	// protected route has this order; only authentication and the body
	// limit vary.
	chain := func(authn, limit func(http.Handler) http.Handler) func(queryHandler) http.Handler {
		return func(h queryHandler) http.Handler { return authn(byUser(limit(withQuery(cfg.Store, h)))) }
	}
	protect := chain(authn, limitBody)
	// The reads of one record and of a list of records make one store
	// call and change nothing: when the store can check sessions itself
	// (store.SessionChecker), authentication leaves the session check to
	// that call, which makes it in the statement that resolves the path.
	protectRead := protect
	if sc, ok := cfg.Store.(store.SessionChecker); ok && cfg.Sessions != nil && sc.ChecksSessions(cfg.Sessions) {
		protectRead = chain(middleware.DeferSession(cfg.Tokens, cfg.Sessions, cfg.Access, !cfg.AllowAnonymous, byIP), limitBody)
	}
	// Batches and imports take larger bodies (limits.max_import_bytes).
	limitImport := middleware.BodyLimit(cfg.MaxImportBytes)
	protectImport := chain(authn, limitImport)
	rt := newRouter(byIP)
	s := cfg.Store

	rt.handle("GET /health", handleHealth(s, cfg.SharedLimits, cfg.Version), operation{
		id: "getHealth", tag: "meta", summary: "Health of the service and its store",
		description: "Not enveloped. 200 with status \"ok\" when the store answers, \"degraded\" when it does but the shared rate limit store (Redis) does not or its writes fail for a full disk (checks.storage \"full\"), 503 with \"unavailable\" when the store does not answer; checks says which. Needs no token and is not rate limited.",
		access:      public, status: 200, success: "Health",
		other: map[int]string{503: "HealthUnavailable", 413: defaultResponse},
	})
	rt.handle("GET /api/v1/openapi.json", handleOpenAPI(rt, cfg.Version, !cfg.AllowAnonymous), operation{
		id: "getOpenAPI", tag: "meta", summary: "This OpenAPI document",
		description: "Not enveloped. Needs no token and is not rate limited. Answers 304 to an If-None-Match that names the current ETag.",
		access:      public, status: 200, success: "OpenAPIDocument",
		other: map[int]string{304: "NotModified", 413: defaultResponse},
	})
	rt.handle("POST /api/v1/auth/login", byIP(limitBody(handleLogin(cfg.Users, cfg.Tokens, cfg.LoginThrottle, cfg.ClientIP))), operation{
		id: "login", tag: "auth", summary: "Log in",
		description: "Exchanges a username and password for a token. A wrong password, an unknown user and a disabled account all answer 401 \"Invalid username or password\". Failed logins are limited per username and per client IP: past the limit every login for them answers 429 until the window has passed.",
		access:      public, counted: true, body: "Login", status: 200, success: "Token",
		errors: []int{400, 401},
	})
	rt.handle("POST /api/v1/auth/refresh", byIP(limitBody(handleRefresh(cfg.Sessions, cfg.Tokens, cfg.Access))), operation{
		id: "refreshToken", tag: "auth", summary: "Refresh a token",
		description: "Exchanges the token in the Authorization header for a new one of the same session. The token may have expired, by no more than the refresh window, and its session must be younger than the maximum session age and not ended. A token can be refreshed once: a second refresh of it is 401 \"Invalid or expired token\" (of two concurrent ones exactly one succeeds); the token itself stays valid until it expires. No body.",
		access:      expiredBearer, counted: true, status: 200, success: "Token",
		errors: []int{400},
	})
	rt.handle("POST /api/v1/auth/logout", authn(byUser(limitBody(handleLogout(cfg.Sessions, cfg.Tokens)))), operation{
		id: "logout", tag: "auth", summary: "End the session",
		description: "Ends the session of the token in the Authorization header: that token and every token refreshed from the same login are refused from then on (401 \"Invalid or expired token\"), on every instance sharing the store. Other sessions of the user go on. Needs a token even when authentication is not required. No body.",
		usersOnly:   true, access: bearer, counted: true, status: 204, success: "LoggedOut",
		errors: []int{400},
	})
	rt.handle("POST /api/v1/auth/password", authn(byUser(limitBody(handlePassword(cfg.Sessions, cfg.Tokens, cfg.LoginThrottle, cfg.ClientIP)))), operation{
		id: "changePassword", tag: "auth", summary: "Change the caller's password",
		description: "With the right current_password, the password becomes new_password (not empty, at most 72 bytes) and every earlier session of the user, this one included, is refused from then on; the answer is a token of a new session. A wrong current_password is 400 VALIDATION_ERROR and counts as a failed login of the user: past the limit of failed logins it answers 429. Needs a token even when authentication is not required.",
		usersOnly:   true, access: bearer, counted: true, body: "PasswordChange", status: 200, success: "Token",
		errors: []int{400},
	})

	rt.handle("GET /api/v1/auth/me", protect(handleMe()), operation{
		id: "getMe", tag: "auth", summary: "Who the caller is",
		description: "The user the token names: id, username, whether a server administrator, and when the account was created. Needs a token even when authentication is not required; API tokens may not (403).",
		usersOnly:   true, access: bearer, counted: true, status: 200, success: "Me",
	})
	// User administration
	// (docs/api.md#server-administrators-and-user-accounts-v12): server
	// administrators only, checked before the body or the query is read.
	protectAdmin := func(h queryHandler) http.Handler {
		return authn(byUser(adminOnly(limitBody(withQuery(s, h)))))
	}
	ua := userAdmin{users: cfg.Users, cursors: cur, logger: cfg.Logger}
	rt.handle("GET /api/v1/users", protectAdmin(ua.handleList()), operation{
		id: "listUsers", tag: "users", summary: "List the users",
		description: "Server administrators only (others and API tokens: 403). Every account, by username byte-wise unless sortBy says otherwise (name is the username; ties by username, then id): limit, offset, cursor, count, search (a case-insensitive substring of the username; %, _ and \\ are literal), sortBy and sortOrder.",
		usersOnly:   true, access: bearer, counted: true, query: []string{"limit", "offset", "search", "sortBy", "sortOrder", "count", "cursor"}, status: 200, success: "UserList",
		errors: []int{400, 403},
	})
	rt.handle("POST /api/v1/users", protectAdmin(ua.handleCreate()), operation{
		id: "createUser", tag: "users", summary: "Add a user",
		description: "Server administrators only. username: 1 to 128 characters of valid UTF-8, no control characters, no leading or trailing white space, not \".\" or \"..\"; password: not empty, at most 72 bytes; admin: optional, default false. A broken rule is 400 VALIDATION_ERROR naming it; a taken username is 409.",
		usersOnly:   true, access: bearer, counted: true, body: "UserCreate", status: 201, success: "User",
		errors: []int{400, 403, 409},
	})
	rt.handle("GET /api/v1/users/{username}", protectAdmin(ua.handleGet()), operation{
		id: "getUser", tag: "users", summary: "Get a user",
		description: "Server administrators only. An unknown username is 404. In a path a username is percent-encoded.",
		usersOnly:   true, access: bearer, counted: true, status: 200, success: "User",
		errors: []int{400, 403, 404},
	})
	rt.handle("PUT /api/v1/users/{username}", protectAdmin(ua.handleUpdate()), operation{
		id: "updateUser", tag: "users", summary: "Change a user",
		description: "Server administrators only. Any of admin, disabled and password, at least one, in one step. A password set or a disable ends every session of the user at once, on every instance; enabling the user again revives none of them. Demoting or disabling the last active administrator is 400 VALIDATION_ERROR; an unknown username is 404.",
		usersOnly:   true, access: bearer, counted: true, body: "UserUpdate", status: 200, success: "User",
		errors: []int{400, 403, 404},
	})
	rt.handle("DELETE /api/v1/users/{username}", protectAdmin(ua.handleDelete()), operation{
		id: "deleteUser", tag: "users", summary: "Delete a user",
		description: "Server administrators only. Every session of the user ends at once and its memberships go; the API tokens it created stay with their projects. A user who still owns projects is 400 VALIDATION_ERROR (details say how many: transfer or delete them first, or disable the user); so is the last active administrator. An unknown username is 404.",
		usersOnly:   true, access: bearer, counted: true, status: 204, success: "NoContent",
		errors: []int{400, 403, 404},
	})

	rt.handle("GET /api/v1/projects", protect(handleList(s, cur, projects)), operation{
		id: "listProjects", tag: "projects", summary: "List the caller's projects",
		description: "The projects the caller owns, one page at a time: limit, offset, search (a substring of the name), sortBy and sortOrder.",
		usersOnly:   true, access: bearer, counted: true, query: listQuery, status: 200, success: "ProjectList",
		errors: []int{400},
	})
	rt.handle("POST /api/v1/projects", protect(handleCreateFromBody(s, projects)), operation{
		id: "createProject", tag: "projects", summary: "Create a project (body form)",
		description: "Project names are unique across the whole service: a name anyone already uses is 409.",
		usersOnly:   true, access: bearer, counted: true, body: "Name", status: 201, success: "Project",
		errors: []int{400, 403, 409},
	})
	rt.handle("POST "+pathP, protect(handleCreate(s, projects)), operation{
		id: "createProjectAt", tag: "projects", summary: "Create a project (path form)",
		description: "The name is in the path; a body, if any, may only repeat it. Project names are unique across the whole service: a name anyone already uses is 409.",
		usersOnly:   true, access: bearer, counted: true, body: "PathName", status: 201, success: "Project",
		errors: []int{400, 403, 409},
	})
	rt.handle("GET "+pathP, protect(handleGet(s, projects)), operation{
		id: "getProject", tag: "projects", summary: "Get a project",
		description: "The project with its collection count. A project of another user is 403.",
		need:        store.RightRead, access: bearer, counted: true, status: 200, success: "Project",
		errors: underProject,
	})
	rt.handle("PUT "+pathP, protect(handleRename(s, projects)), operation{
		id: "renameProject", tag: "projects", summary: "Rename a project",
		description: "The new name comes from ?rename=NEW or from a body {\"name\": NEW}, not both. Renaming to the current name is a no-op.",
		need:        store.RightAdmin, access: bearer, counted: true, query: []string{"rename"}, body: "Rename", status: 200, success: "Project",
		errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("DELETE "+pathP, protect(handleDelete(s, projects)), operation{
		id: "deleteProject", tag: "projects", summary: "Delete a project and everything in it",
		description: "Deletes the project with its collections, clusters and records, in one step.",
		need:        store.RightOwn, access: bearer, counted: true, status: 204, success: "NoContent",
		errors: underProject,
	})

	rt.handle("GET "+pathP+"/collections", protect(handleList(s, cur, collections)), operation{
		id: "listCollections", tag: "collections", summary: "List the collections of a project",
		description: "The project's collections, one page at a time: limit, offset, search, sortBy and sortOrder.",
		need:        store.RightRead, access: bearer, counted: true, query: listQuery, status: 200, success: "CollectionList",
		errors: underProject,
	})
	rt.handle("POST "+pathP+"/collections", protect(handleCreateFromBody(s, collections)), operation{
		id: "createCollection", tag: "collections", summary: "Create a collection (body form)",
		description: "The name is in the body. A name the project already has is 409.",
		need:        store.RightWrite, access: bearer, counted: true, body: "Name", status: 201, success: "Collection",
		errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("POST "+pathC, protect(handleCreate(s, collections)), operation{
		id: "createCollectionAt", tag: "collections", summary: "Create a collection (path form)",
		description: "The name is in the path; a body, if any, may only repeat it.",
		need:        store.RightWrite, access: bearer, counted: true, body: "PathName", status: 201, success: "Collection",
		errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("GET "+pathC, protect(handleGet(s, collections)), operation{
		id: "getCollection", tag: "collections", summary: "Get a collection",
		description: "The collection with its cluster and record counts.",
		need:        store.RightRead, access: bearer, counted: true, status: 200, success: "Collection",
		errors: underProject,
	})
	rt.handle("PUT "+pathC, protect(handleRename(s, collections)), operation{
		id: "renameCollection", tag: "collections", summary: "Rename a collection",
		description: "The new name comes from ?rename=NEW or from a body {\"name\": NEW}, not both. Renaming to the current name is a no-op.",
		need:        store.RightWrite, access: bearer, counted: true, query: []string{"rename"}, body: "Rename", status: 200, success: "Collection",
		errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("DELETE "+pathC, protect(handleDelete(s, collections)), operation{
		id: "deleteCollection", tag: "collections", summary: "Delete a collection and everything in it",
		description: "Deletes the collection with its clusters and records, in one step.",
		need:        store.RightWrite, access: bearer, counted: true, status: 204, success: "NoContent",
		errors: underProject,
	})

	audit, _ := s.(store.AuditLog)
	rec := records{store: s, creds: credentials{ring: cfg.Sealer}, audit: audit, cursors: cur,
		clusterTags: store.KeepsClusterState(s), maxResolved: cmp.Or(cfg.MaxResolvedBytes, DefaultMaxResolvedBytes),
		pre:           preconditions{requireIfMatch: cfg.RequireIfMatch, maxVersions: cfg.MaxVersions},
		keepAutomatic: keepAutomatic(cfg.KeepAutomaticSnapshots)}
	rt.handle("GET "+pathC+"/clusters", protect(handleList(s, cur, clusters)), operation{
		id: "listClusters", tag: "clusters", summary: "List the clusters of a collection",
		description: "The collection's clusters, one page at a time: limit, offset, search, sortBy and sortOrder.",
		need:        store.RightRead, access: bearer, counted: true, query: listQuery, status: 200, success: "ClusterList",
		errors: underProject,
	})
	rt.handle("POST "+pathC+"/clusters", protect(handleCreateFromBody(s, clusters)), operation{
		id: "createCluster", tag: "clusters", summary: "Create a cluster (body form)",
		description: "The name is in the body. A name the collection already has is 409.",
		need:        store.RightWrite, access: bearer, counted: true, body: "Name", status: 201, success: "Cluster",
		errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("POST "+pathK, protect(handleCreate(s, clusters)), operation{
		id: "createClusterAt", tag: "clusters", summary: "Create a cluster (path form)",
		description: "The name is in the path; a body, if any, may only repeat it.",
		need:        store.RightWrite, access: bearer, counted: true, body: "PathName", status: 201, success: "Cluster",
		errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("GET "+pathK, protect(rec.handleClusterData()), operation{
		id: "getClusterData", tag: "clusters", summary: "Get a cluster with the value of every record",
		description: "data maps every record name to its value; credential values are masked unless reveal=true. With types=true, types maps every record name to its type name. With format=env, the answer is the cluster's environment file (text/plain, not enveloped): NAME='value' lines for the records whose names are environment variable names, X-Hds-Skipped-Records counting the others. The ETag header names the cluster's stored state, the same for both forms, masked or revealed (with resolve=true, also the state of every record the answer was built from); with If-None-Match naming it (or *) the answer is 304 without a body.",
		need:        store.RightRead, access: bearer, counted: true, query: []string{"reveal", "resolve", "types", "format"}, headers: []string{"ifNoneMatch"}, status: 200, success: "ClusterData",
		errors: slices.Concat(underProject, []int{422}),
		other:  map[int]string{304: "ClusterNotModified"},
	})
	rt.handle("PUT "+pathK, protect(handleRename(s, clusters)), operation{
		id: "renameCluster", tag: "clusters", summary: "Rename a cluster",
		description: "The new name comes from ?rename=NEW or from a body {\"name\": NEW}, not both. Renaming to the current name is a no-op.",
		need:        store.RightWrite, access: bearer, counted: true, query: []string{"rename"}, body: "Rename", status: 200, success: "Cluster",
		errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("DELETE "+pathK, protect(handleDelete(s, clusters)), operation{
		id: "deleteCluster", tag: "clusters", summary: "Delete a cluster and its records",
		description: "Deletes the cluster with its records, in one step.",
		need:        store.RightWrite, access: bearer, counted: true, status: 204, success: "NoContent",
		errors: underProject,
	})

	rt.handle("GET "+pathK+"/records", protectRead(rec.handleList()), operation{
		id: "listRecords", tag: "records", summary: "List the records of a cluster",
		description: "Filters combine with AND. Credential values are masked unless reveal=true, and never matched by value or valueContains.",
		need:        store.RightRead, access: bearer, counted: true, query: recordQuery, status: 200, success: "RecordList",
		errors: slices.Concat(underProject, []int{422}),
	})
	rt.handle("POST "+pathK+"/records", protect(rec.handleCreate(true)), operation{
		id: "createRecord", tag: "records", summary: "Create a record (body form)",
		description: "The query parameters rename, type and value cannot accompany the body (400).",
		need:        store.RightWrite, access: bearer, counted: true, query: []string{"reveal"}, body: "RecordCreate", status: 201, success: "Record",
		errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("POST "+pathR, protect(rec.handleCreate(false)), operation{
		id: "createRecordAt", tag: "records", summary: "Create a record (path form)",
		description: "The name is in the path; the type and value come from ?type=T&value=V or from a body {\"type\", \"value\"} (which may repeat the name), not both. The body is not declared here, so that a generated client's helper for this operation sends none: to send the record as a body, use createRecord (POST .../records with its name).",
		need:        store.RightWrite, access: bearer, counted: true, query: []string{"recordType", "recordValue", "reveal"}, status: 201, success: "Record",
		errors: slices.Concat(underProject, []int{409}),
	})
	rt.handle("GET "+pathR, protectRead(rec.handleGet()), operation{
		id: "getRecord", tag: "records", summary: "Get a record",
		description: "{record} is the record's id when a record of the cluster has that id, its name otherwise. With ?version=N, the record as it was at version N (404 when that version is not kept or never reached). The ETag header names the record's state (with resolve=true, also the state of every record the answer was built from); with If-None-Match naming it (or *) the answer is 304 without a body.",
		need:        store.RightRead, access: bearer, counted: true, query: []string{"reveal", "resolve", "version"}, headers: []string{"ifNoneMatch"}, status: 200, success: "Record",
		errors: slices.Concat(underProject, []int{422}),
		other:  map[int]string{304: "RecordNotModified"},
	})
	rt.handle("PUT "+pathR, protect(rec.handleUpdate()), operation{
		id: "updateRecord", tag: "records", summary: "Update a record's value, type or name",
		description: "Any of ?value=V&type=T&rename=NEW, or a body with any of {\"value\", \"type\", \"name\"}, not both; all of it in one step, or nothing. Every update adds 1 to version and keeps the state it replaces in the record's history. Changing a credential to another type needs a new value. With If-Match, the update happens only when the record's ETag is among the tags (412 otherwise); without it, 428 when the server requires If-Match.",
		need:        store.RightWrite, access: bearer, counted: true, query: []string{"recordValue", "recordType", "rename", "reveal"}, headers: []string{"ifMatch"}, body: "RecordUpdate", status: 200, success: "Record",
		errors: slices.Concat(underProject, []int{409, 412, 428}),
	})
	rt.handle("DELETE "+pathR, protect(rec.handleDelete()), operation{
		id: "deleteRecord", tag: "records", summary: "Delete a record and its history",
		description: "{record} is the record's id when a record of the cluster has that id, its name otherwise. With If-Match, the delete happens only when the record's ETag is among the tags (412 otherwise); without it, 428 when the server requires If-Match.",
		need:        store.RightWrite, access: bearer, counted: true, headers: []string{"ifMatch"}, status: 204, success: "NoContent",
		errors: slices.Concat(underProject, []int{412, 428}),
	})
	rt.handle("GET "+pathR+"/versions", protect(rec.handleVersions()), operation{
		id: "listRecordVersions", tag: "records", summary: "List a record's history",
		description: "The record's states, newest first: the current one, then the versions its history keeps (history.max_versions). Only limit and offset apply. Credential values are masked unless reveal=true.",
		need:        store.RightRead, access: bearer, counted: true, query: []string{"limit", "offset", "reveal"}, status: 200, success: "RecordVersionList",
		errors: underProject,
	})
	rt.handle("POST "+pathR+"/restore", protect(rec.handleRestore()), operation{
		id: "restoreRecord", tag: "records", summary: "Restore a version of a record",
		description: "Makes the type and value of version N (?version=N or a body {\"version\": N}, not both) current again as a new version; the name stays. 404 when that version is not kept. If-Match as for PUT.",
		need:        store.RightWrite, access: bearer, counted: true, query: []string{"restoreVersion", "reveal"}, headers: []string{"ifMatch"}, body: "Restore", status: 200, success: "Record",
		errors: slices.Concat(underProject, []int{412, 428}),
	})

	rt.handle("POST "+pathP+"/batch", protectImport(rec.handleBatch()), operation{
		id: "applyBatch", tag: "projects", summary: "Apply record operations, all or none",
		description: "1 to 1000 operations (create, update, upsert, delete), applied in order in one step: either all apply (200, one result each) or none does, and the answer is the error the first failing operation would get alone, its details starting \"operation N: \" (N from 0). A body that is not a batch is 400 without that prefix. An operation may name a record an earlier one created. Updates keep history as PUT does; with require_if_match, each update and delete needs if_match (428). The body may be up to limits.max_import_bytes (16 MiB by default).",
		need:        store.RightWrite, access: bearer, counted: true, body: "Batch", status: 200, success: "BatchResults",
		errors: slices.Concat(underProject, []int{409, 428}),
		other:  map[int]string{412: "OpPreconditionFailed"},
	})
	rt.handle("GET "+pathP+"/export", protect(rec.handleExport()), operation{
		id: "exportProject", tag: "projects", summary: "Export a whole project",
		description: "The bare document (not enveloped), an attachment: every collection, cluster and record from one consistent snapshot, empty collections and clusters included. Credentials are masked unless reveal=true.",
		need:        store.RightRead, access: bearer, counted: true, query: []string{"reveal"}, status: 200, success: "ExportDocument",
		errors: underProject,
	})
	rt.handle("POST "+pathP+"/import", protectImport(rec.handleImport()), operation{
		id: "importProject", tag: "projects", summary: "Import an export document",
		description: "merge (default) creates and updates what the document holds and keeps what it lacks; replace also deletes what it lacks (records, clusters, collections). A masked credential leaves the existing value as it is (for a new record it is 400). All or nothing; dry_run=true changes nothing and answers what would change. The body may be up to limits.max_import_bytes (16 MiB by default).",
		need:        store.RightWrite, access: bearer, counted: true, query: []string{"importMode", "dryRun"}, body: "Import", status: 200, success: "ImportResult",
		errors: slices.Concat(underProject, []int{409}),
		other:  map[int]string{412: "OpPreconditionFailed"},
	})

	rt.handle("GET "+pathP+"/diff", protect(rec.handleDiff()), operation{
		id: "diffProject", tag: "projects", summary: "Compare two collections or two clusters",
		description: "from and to are two collections (COLLECTION) or two clusters (COLLECTION/CLUSTER). Records are compared by name, as stored, in one consistent snapshot (clusters of two collections paired by name): added (only in from), removed (only in to), changed (type or value differ), unchanged (listed only with unchanged=true, always counted). Items sort by cluster, then record, byte-wise. Credentials are compared on their plain values but masked unless reveal=true (reader; audited once). revision is the project's newest audit revision the snapshot saw that changes something (credential.reveal entries not counted): a promote with that if_revision applies exactly this comparison, whoever revealed a credential meanwhile. A cluster and a collection mixed, from or to missing, or equal: 400; a side that does not exist: 404.",
		need:        store.RightRead, access: bearer, counted: true, query: []string{"diffFrom", "diffTo", "unchanged", "reveal"}, status: 200, success: "Diff",
		errors: underProject,
	})
	rt.handle("POST "+pathP+"/promote", protect(rec.handlePromote()), operation{
		id: "promote", tag: "projects", summary: "Make one collection or cluster hold what another holds",
		description: "Applies every added and changed item of the comparison of from with to (GET diff) to to, creating the clusters a collection lacks; with delete, removes its removed records (never clusters or collections). records narrows a promote between two clusters to those names (400 for collections). All or nothing; each record changed is audited as its own record.create, record.update or record.delete; credentials are copied sealed, never shown. if_revision: when the project's newest revision that changes something (credential.reveal entries not counted) is no longer that number, 412 (details: current revision is N) and nothing changes. Quotas apply as for batch; require_if_match does not. dry_run changes nothing and answers what would change.",
		need:        store.RightWrite, access: bearer, counted: true, body: "Promote", status: 200, success: "PromoteResult",
		errors: underProject,
		other:  map[int]string{412: "RevisionPreconditionFailed"},
	})

	acc := members{store: s, access: cfg.Access, users: cfg.Users, cursors: cur, now: time.Now}
	rt.handle("GET "+pathP+"/members", protect(acc.handleList()), operation{
		id: "listMembers", tag: "members", summary: "List the members of a project",
		description: "Every member with its role, the owner included (role owner), by username; limit and offset apply. Any role may list them; API tokens may not (403).",
		need:        store.RightRead, usersOnly: true, access: bearer, counted: true, query: []string{"limit", "offset", "cursor"}, status: 200, success: "MemberList",
		errors: underProject,
	})
	rt.handle("PUT "+pathP+"/members/{username}", protect(acc.handlePut()), operation{
		id: "putMember", tag: "members", summary: "Add a member or change its role",
		description: "Admins and the owner only. The role is viewer, reader, editor or admin (400 VALIDATION_ERROR otherwise); an unknown user is 404; the owner's own entry cannot be changed (400 VALIDATION_ERROR). Effective on the member's next request, on every instance.",
		need:        store.RightAdmin, usersOnly: true, access: bearer, counted: true, body: "MemberPut", status: 200, success: "Member",
		errors: underProject,
	})
	rt.handle("DELETE "+pathP+"/members/{username}", protect(acc.handleDelete()), operation{
		id: "deleteMember", tag: "members", summary: "Remove a member",
		description: "Admins and the owner, or the member itself. The owner's entry cannot be deleted (400 VALIDATION_ERROR); a user who is not a member is 404. Effective on the member's next request, on every instance.",
		need:        store.RightAdmin, usersOnly: true, access: bearer, counted: true, status: 204, success: "NoContent",
		errors: underProject,
	})
	rt.handle("PUT "+pathP+"/owner", protect(acc.handleTransfer()), operation{
		id: "transferProject", tag: "projects", summary: "Give the project to another user",
		description: "The owner, or a server administrator (for any project). The named active user becomes the owner; the previous owner stays as an admin member. Audited as project.transfer. An unknown or disabled user is 404; a new owner who owns limits.max_projects_per_user projects already is 403 QUOTA_EXCEEDED, and nothing changes.",
		need:        store.RightOwn, usersOnly: true, access: bearer, counted: true, body: "OwnerPut", status: 200, success: "Project",
		errors: underProject,
	})
	rt.handle("POST "+pathP+"/tokens", protect(acc.handleCreateToken()), operation{
		id: "createAPIToken", tag: "members", summary: "Create an API token for a program",
		description: "Admins and the owner only. role is viewer, reader or editor; collection (and cluster, which needs collection) narrow the token's scope to that subtree (404 when it does not exist); expires_in is a positive number of seconds, no expiry when left out. The answer holds the token string (hds_ and 43 base62 characters); it is shown this once, the server keeps only its hash.",
		need:        store.RightAdmin, usersOnly: true, access: bearer, counted: true, body: "APITokenCreate", status: 201, success: "APITokenCreated",
		errors: underProject,
	})
	rt.handle("GET "+pathP+"/tokens", protect(acc.handleListTokens()), operation{
		id: "listAPITokens", tag: "members", summary: "List the API tokens of a project",
		description: "Admins and the owner only; oldest first, without the token strings; limit and offset apply. Revoked tokens are not listed.",
		need:        store.RightAdmin, usersOnly: true, access: bearer, counted: true, query: []string{"limit", "offset", "cursor"}, status: 200, success: "APITokenList",
		errors: underProject,
	})
	rt.handle("DELETE "+pathP+"/tokens/{id}", protect(acc.handleDeleteToken()), operation{
		id: "deleteAPIToken", tag: "members", summary: "Revoke an API token",
		description: "Admins and the owner only. The token is refused from the next request on, on every instance. An unknown or revoked id, or one of another project, is 404.",
		need:        store.RightAdmin, usersOnly: true, access: bearer, counted: true, status: 204, success: "NoContent",
		errors: underProject,
	})
	if cfg.Webhooks != nil {
		addWebhookRoutes(rt, cfg, protect)
	}
	addSnapshotRoutes(rt, rec, protect)
	if src, ok := s.(store.EventSource); ok {
		f := &feed{store: s, src: src, sessions: cfg.Sessions, access: cfg.Access, keepalive: cmp.Or(cfg.EventsKeepalive, DefaultEventsKeepalive),
			shutdown: cfg.Shutdown, open: &streamCount{max: cmp.Or(cfg.MaxStreamsPerUser, DefaultMaxStreamsPerUser), open: map[string]int{}}}
		rt.handle("GET "+pathP+"/events", protect(f.handle()), operation{
			id: "streamEvents", tag: "audit", summary: "Watch the project's changes (Server-Sent Events)",
			description: "A text/event-stream, not enveloped: every change of the project (every audit entry but credential.reveal) as an event with id: <revision>, event: <action> and data: <the entry as one line of JSON>, within a second of its commit, on every instance sharing the database. By default the stream starts with the next change; with Last-Event-ID: N (the header a reconnecting EventSource sends) or ?since=N it first replays every entry after revision N, without gap or duplicate. ?collection=NAME (and &cluster=NAME) narrows it to that collection (cluster), named as at the time of each event. A comment (: keep-alive) is sent when nothing else was for events.keepalive. The stream ends when the token expires or its session ends (an API token: when it expires or is revoked), when the caller loses access, when the project is deleted and when the server shuts down; a client reconnects with Last-Event-ID. At most events.max_streams_per_user streams per user on each instance: one more is 429 with Retry-After. Opening a stream counts as one request for the rate limits.",
			need:        store.RightRead, access: bearer, counted: true, query: []string{"eventsSince", "eventsCollection", "eventsCluster"}, headers: []string{"lastEventId"},
			status: 200, success: "EventStream",
			errors: underProject,
		})
	}
	if audit != nil {
		rt.handle("GET "+pathP+"/audit", protect(handleAudit(s, audit, cur)), operation{
			id: "listAudit", tag: "audit", summary: "Read the project's audit log",
			description: "Who changed what, and who read credentials in plain text: one entry per change (and per request that revealed credentials), newest first. revision counts the project's entries from 1, without gaps, in commit order. Filters: action, actor (a user id or token:<id>), since and until (RFC 3339, inclusive), after (a revision, exclusive); limit, offset, cursor and count as for lists. Admins and the owner only; API tokens may not (403).",
			need:        store.RightAdmin, usersOnly: true, access: bearer, counted: true, query: []string{"limit", "offset", "cursor", "count", "auditAction", "auditActor", "since", "until", "after"},
			status: 200, success: "AuditList",
			errors: underProject,
		})
	}

	// The console is static files for a browser, not an operation of the
	// API: it stays out of the route table and so out of the OpenAPI
	// document (whose clients it would only clutter), and it is neither
	// authenticated (its page logs in through the API) nor rate limited,
	// like /health.
	if cfg.Console {
		rt.console = console.New()
	}
	return rt
}

// router records the methods of each path so that it can answer a wrong
// method with an enveloped 405 and an Allow header, which ServeMux would
// answer in plain text.
type router struct {
	mux     *http.ServeMux
	paths   []string
	methods map[string][]string
	// limit counts the 404 and 405 answers against the client IP.
	limit func(http.Handler) http.Handler
	// routes are the registered routes, in order, each with its
	// description: the OpenAPI document is built from them (openapi.go).
	routes []route
	// console, when set, serves console.Prefix and beneath, before the
	// canonical-path check (its page is a path with a trailing slash).
	console http.Handler
	// background is the work New starts with the router (the webhook
	// dispatcher); each runs until Config.Shutdown is closed.
	background []func()
}

// route is one registered "METHOD /path" pattern and the operation the
// OpenAPI document describes it with.
type route struct {
	pattern string
	op      operation
}

func newRouter(limit func(http.Handler) http.Handler) *router {
	return &router{mux: http.NewServeMux(), methods: make(map[string][]string), limit: limit}
}

// handle registers "METHOD /path" with its OpenAPI operation and notes
// the method for the path's Allow header. The handler records the matched
// pattern for the log.
func (rt *router) handle(pattern string, h http.Handler, op operation) {
	rt.routes = append(rt.routes, route{pattern: pattern, op: op})
	method, path, _ := strings.Cut(pattern, " ")
	if _, seen := rt.methods[path]; !seen {
		rt.paths = append(rt.paths, path)
	}
	rt.methods[path] = append(rt.methods[path], method)
	if method == http.MethodGet {
		rt.methods[path] = append(rt.methods[path], http.MethodHead)
	}
	req := &requirement{need: op.need, within: levelOf(pattern), usersOnly: op.usersOnly}
	rt.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqinfo.From(r.Context()).Pattern = pattern
		if op.access == bearer {
			r = withRequirement(r, req)
		}
		h.ServeHTTP(w, r)
	}))
}

// finish registers the 405 fallbacks and the 404 catch-all and returns the
// router behind the canonical-path check.
func (rt *router) finish() http.Handler {
	for _, path := range rt.paths {
		allow := strings.Join(rt.methods[path], ", ")
		rt.mux.Handle(path, rt.limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			envelope.Error(w, r, &envelope.RequestError{Status: http.StatusMethodNotAllowed,
				Message: "Method not allowed", Details: "allowed methods: " + allow})
		})))
	}
	rt.mux.Handle("/", rt.limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		envelope.Error(w, r, envelope.ErrNoRoute)
	})))
	mux, consoleHandler := rt.mux, rt.console
	notCanonical := rt.limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		envelope.Error(w, r, envelope.ErrNoRoute)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; consoleHandler != nil && (p+"/" == console.Prefix || strings.HasPrefix(p, console.Prefix)) {
			reqinfo.From(r.Context()).Pattern = "GET " + console.Prefix
			consoleHandler.ServeHTTP(w, r)
			return
		}
		if !canonical(r.URL.EscapedPath()) {
			notCanonical.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// canonical reports whether path has no empty segment (a trailing '/'
// included) and no "." or ".." segment, raw or percent-encoded. ServeMux
// would redirect such paths to a cleaned one; the API answers 404.
func canonical(path string) bool {
	if !strings.HasPrefix(path, "/") {
		return false
	}
	for seg := range strings.SplitSeq(path[1:], "/") {
		if seg == "" {
			return false
		}
		if strings.Contains(seg, ".") || strings.Contains(seg, "%") {
			if u, err := url.PathUnescape(seg); err != nil || u == "." || u == ".." {
				return false
			}
		}
	}
	return true
}

// Package openapi builds the OpenAPI 3.1 document of the hds API, which
// the handler serves at GET /api/v1/openapi.json.
//
// The document is built from the handler's route table: every route is
// registered with the Operation that describes it (handler/routes.go), so
// the document lists exactly the registered routes, and the black-box
// HTTP suite validates every request and response it makes against the
// served document, so the document and the behaviour cannot drift apart.
//
// The package's API is the route table's vocabulary (Route, Operation,
// Access), the values of the handler the schemas state (Facts), and
// Encode. document.go holds the operations and the document's frame;
// schemas.go the schemas (access.go, transfer.go, users.go and
// webhooks.go those of the members and token routes, of batch, export and
// import, of user administration and of webhooks); components.go the other
// components: parameters, request bodies, responses and headers.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hds-go/hds/store"
)

// openAPIVersion is the version of the OpenAPI specification the document
// follows.
const openAPIVersion = "3.1.0"

// Access says what a route needs in the Authorization header.
type Access int

const (
	// Public routes need no token (security: []).
	Public Access = iota
	// Bearer routes need a valid token, or none at all when require_auth
	// is false (the request then runs as the anonymous user).
	Bearer
	// ExpiredBearer routes need a token with a valid signature that may
	// have expired within the refresh window (POST /api/v1/auth/refresh).
	ExpiredBearer
)

// Route is one route of the API: its "METHOD /path" pattern (as
// http.ServeMux takes it) and the operation that describes it.
type Route struct {
	Pattern   string
	Operation Operation
}

// Operation describes one route for the document.
type Operation struct {
	ID, Tag, Summary, Description string
	Access                        Access
	// UsersOnly routes refuse API tokens (403): the project list and
	// creation, members, and the session routes.
	UsersOnly bool
	// Counted routes are counted by the rate limiter: their responses
	// carry the X-RateLimit-* headers, and they may answer 429.
	Counted bool
	// Query lists the route's query parameters, keys of queryParameters
	// (the path parameters come from the pattern).
	Query []string
	// Headers lists the route's request header parameters, keys of
	// headerParameters.
	Headers []string
	// Body is the request body, a key of requestBodies, or "".
	Body string
	// Status and Success are the success status and its response, a key
	// of successResponses.
	Status  int
	Success string
	// Errors are the error statuses the route answers with a response of
	// its own (each a key of errorResponses); 401 is added to every route
	// that reads a token, and every other error (413, 415, 429, 500, 503)
	// is the default response.
	Errors []int
	// Other names the response of further statuses (a key of
	// components.responses before responseName, such as DefaultResponse).
	Other map[int]string
}

// Facts are the values the handler defines and the document states:
// limits, enumerations and names. The handler fills them from its own
// constants, so that the document cannot state other ones.
type Facts struct {
	// ExportFormat is the format of an export document.
	ExportFormat string
	// FormatEnv is the value of the format query parameter of GET K that
	// answers the environment file.
	FormatEnv string
	// EventStreamType is the media type of the change feed.
	EventStreamType string
	// SkippedRecordsHeader is the header of the environment file that
	// counts the records it leaves out.
	SkippedRecordsHeader string
	// ContainerSortBy and RecordSortBy are the sortBy values of the
	// project, collection, cluster and user lists and of the record list,
	// in the order the document lists them.
	ContainerSortBy, RecordSortBy []string
	// Changes are the kinds of change of a comparison (GET P/diff).
	Changes []string
	// WebhookActions are the actions a webhook may receive (every action
	// of the change feed); ping is added.
	WebhookActions []store.Action
	// MaxTokenName is the longest API token name, in bytes; MaxExpiresIn
	// the longest expires_in, in seconds.
	MaxTokenName, MaxExpiresIn int
	// MaxBatchOps is the most operations one batch may hold.
	MaxBatchOps int
	// MinWebhookSecret and MaxWebhookSecret bound a webhook secret, in
	// bytes; MaxWebhookURL a webhook url.
	MinWebhookSecret, MaxWebhookSecret, MaxWebhookURL int
}

// CacheControl is the document's Cache-Control: no-store, as on every
// response under /api/v1/ (docs/api.md#1-conventions); a client that keeps
// its own copy revalidates it with If-None-Match and the ETag (304).
const CacheControl = "no-store"

// Component names. Every section of components has its own suffix, so no
// parameter, request body, response and schema share a name, and no
// generator has to rename one (handler/openapi_test.go checks it): path
// parameters end in Path, query parameters in Query, request bodies in
// Body, responses in Response; schemas end in none of those.
func pathParamName(key string) string   { return upperFirst(key) + "Path" }
func queryParamName(key string) string  { return upperFirst(key) + "Query" }
func headerParamName(key string) string { return upperFirst(key) + "Header" }
func bodyName(key string) string        { return key + "Body" }
func responseName(key string) string    { return key + "Response" }

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// DefaultResponse is the key of the error response of every status an
// operation does not list: 413, 415, 429, 500 and 503.
const DefaultResponse = "OtherError"

// errorResponse describes the error response of one status.
type errorResponse struct {
	name, description string
	extra             []string // header names and their components.headers keys, in pairs
}

// errorResponses are the error responses an operation lists, by status;
// each references the ErrorEnvelope schema and says its codes and
// messages in its description.
var errorResponses = map[int]errorResponse{
	400: {name: "BadRequest", description: "400 INVALID_REQUEST (\"Invalid request\"): malformed JSON, an unknown field, a missing field, a bad query parameter, a body mixed with the path form. 400 VALIDATION_ERROR (\"Validation failed\"): a bad name, a value that does not fit its type, an unknown type; details says which."},
	401: {name: "Unauthorized", description: "401 AUTHENTICATION_FAILED: the token is missing (\"No authorization token provided\"), malformed (\"Invalid or expired token\"), badly signed (\"Invalid token signature\"), expired (\"Token has expired\"), or names an unknown or disabled user; for login, a wrong username or password (\"Invalid username or password\")."},
	403: {name: "Forbidden", description: "403 AUTHORIZATION_FAILED (\"Insufficient permissions\"): the caller's role on the project (none for a project of another user) does not hold the right the route needs, or an API token is used outside its project or scope. " +
		"403 QUOTA_EXCEEDED (\"Quota exceeded\"), on the writes that create or grow something: the write would pass a quota " +
		"(limits.max_projects_per_user, limits.max_records_per_cluster, limits.max_bytes_per_project or limits.max_webhooks_per_project), details names it; nothing changed."},
	404: {name: "NotFound", description: "404 RESOURCE_NOT_FOUND: a resource of the path is missing; details names the missing level (e.g. collection \"prod\" not found). Also the answer to any path this document does not list."},
	409: {name: "Conflict", description: "409 RESOURCE_EXISTS: a create or rename onto a name already taken."},
	412: {name: "PreconditionFailed", description: "412 PRECONDITION_FAILED (\"Precondition failed\"): If-Match names none of the record's current tags; nothing changed. ETag is the current one, details names the current version.",
		extra: []string{"ETag", "RecordETag"}},
	422: {name: "UnresolvedReference", description: "422 UNRESOLVED_REFERENCE (\"Unresolved reference\"), with resolve=true: a reference cannot be resolved (no such record, out of the caller's reach, a cycle, more than 10 deep, a resolved text past 1 MiB); details names the record of the answer and the first such reference as written, e.g. record api_url: ${prod/db/host}: not found (or ...: too deep, ...: too large). An answer whose resolved text in all would pass limits.max_resolved_bytes (default 16 MiB) is 422 too, details record NAME: too large; nothing of the answer is sent."},
	428: {name: "PreconditionRequired", description: "428 PRECONDITION_REQUIRED (\"Precondition required\"): the server requires If-Match on this write (concurrency.require_if_match)."},
}

// defaultErrorDescription describes the default response.
const defaultErrorDescription = "Any other error, with the error envelope: " +
	"413 INVALID_REQUEST, a body over the limit (1 MiB by default), refused before routing; " +
	"415 INVALID_REQUEST, a non-empty body without Content-Type: application/json; " +
	"429 RATE_LIMIT_EXCEEDED (\"Rate limit exceeded\"), a rate limit or the limit of failed logins is used up, retry after Retry-After seconds; " +
	"500 SERVER_ERROR, anything unexpected (the message never reveals internals); " +
	"503 SERVICE_UNAVAILABLE, the store, the user directory or the rate limit store cannot be reached. " +
	"A path of this document with a method it does not list answers 405 INVALID_REQUEST (\"Method not allowed\") with an Allow header, before authentication."

// responsesOf returns the responses of op, by status ("default" for every
// status it does not list), each the name of its components.responses
// entry.
func responsesOf(op Operation) map[string]string {
	out := map[string]string{strconv.Itoa(op.Status): responseName(op.Success), "default": responseName(DefaultResponse)}
	statuses := slices.Clone(op.Errors)
	if op.Access != Public {
		statuses = append(statuses, http.StatusUnauthorized)
	}
	for _, s := range statuses {
		out[strconv.Itoa(s)] = responseName(errorResponses[s].name)
	}
	for s, name := range op.Other {
		out[strconv.Itoa(s)] = responseName(name)
	}
	return out
}

// obj is a JSON object of the document.
type obj = map[string]any

func ref(kind, name string) obj { return obj{"$ref": "#/components/" + kind + "/" + name} }

func schemaRef(name string) obj { return ref("schemas", name) }

// pathParam matches the parameters of a pattern.
var pathParam = regexp.MustCompile(`\{([a-z]+)\}`)

// The document's server and contact.
const (
	// standaloneServer is the default address of the standalone server
	// (example/).
	standaloneServer = "http://127.0.0.1:8080"
	repositoryURL    = "https://github.com/hds-go/hds"
)

// document builds the document of the given routes, served by a server
// of the given version. With requireAuth false the routes that take a
// token also run without one.
func (f Facts) document(routes []Route, version string, requireAuth bool) obj {
	paths := obj{}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		item, ok := paths[path].(obj)
		if !ok {
			item = obj{}
			var params []any
			for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
				params = append(params, ref("parameters", pathParamName(m[1])))
			}
			if params != nil {
				item["parameters"] = params
			}
			paths[path] = item
		}
		item[strings.ToLower(method)] = operationObject(rt.Operation, requireAuth)
	}
	security := []any{obj{"bearerAuth": []any{}}}
	if !requireAuth {
		security = append(security, obj{})
	}
	return obj{
		"openapi": openAPIVersion,
		"info": obj{
			"title":       "hds",
			"version":     version,
			"summary":     "Typed hierarchical data: project > collection > cluster > record.",
			"description": infoDescription,
			"contact":     obj{"name": "hds", "url": repositoryURL},
		},
		"servers": []any{obj{"url": standaloneServer,
			"description": "The standalone server's default address (go run ./example). Where hds is mounted in a host application, use the host's address and append your mount prefix (e.g. https://example.com/hds)."}},
		"tags": []any{
			obj{"name": "meta", "description": "Health and this document."},
			obj{"name": "auth", "description": "Tokens (JWT, HS256)."},
			obj{"name": "projects", "description": "Projects, owned by the user who created them."},
			obj{"name": "collections", "description": "Collections of a project."},
			obj{"name": "clusters", "description": "Clusters of a collection."},
			obj{"name": "records", "description": "Typed values of a cluster."},
			obj{"name": "members", "description": "Who may use a project: members with roles, and API tokens for programs."},
			obj{"name": "users", "description": "User accounts, for server administrators."},
			obj{"name": "audit", "description": "Who changed what (the audit log), and the changes as they happen (the change feed)."},
			obj{"name": "webhooks", "description": "Changes POSTed to other services as they happen, signed (when webhooks are enabled)."},
			obj{"name": "snapshots", "description": "Named, immutable copies of a collection or a cluster, and rollback to them by promote."},
		},
		"security": security,
		"paths":    paths,
		"components": obj{
			// One scheme for both kinds of token: they travel in the same
			// header, and a generator given two schemes for one header
			// (ogen) asks the caller for both.
			"securitySchemes": obj{"bearerAuth": obj{
				"type": "http", "scheme": "bearer", "bearerFormat": "JWT or hds_ API token",
				"description": "Authorization: Bearer TOKEN, where TOKEN is either a user's JWT from POST /api/v1/auth/login or /api/v1/auth/refresh, or a program's API token from POST /api/v1/projects/{project}/tokens (hds_ and 43 base62 characters). An API token acts with its role, only in its project and scope; every route outside them is 403, and so are the routes for users only (their descriptions say so). A revoked, expired or unknown API token, or a malformed one, is 401 \"Invalid or expired token\".",
			}},
			"schemas":       f.schemas(),
			"parameters":    f.parameters(),
			"requestBodies": requestBodies(),
			"responses":     f.responses(),
			"headers":       headers(),
		},
	}
}

const infoDescription = `The JSON REST API of hds. Paths are relative to where the handler is mounted (a host may serve them under a prefix such as /hds): append your mount prefix to the server URL.

Every response under /api/v1/ except this document is an envelope: {"success": true, "data", "message"} or {"success": false, "error": {"code", "message", "details"}} (the ErrorEnvelope schema). Unknown routes answer 404 RESOURCE_NOT_FOUND, and a path of this document with a method it does not list answers 405 INVALID_REQUEST with an Allow header listing the path's methods, with or without a token. A path with an empty, "." or ".." segment is 404, never redirected.

Request bodies are JSON objects sent with Content-Type: application/json; unknown fields are refused. Names are 1 to 128 code points with no control characters, no "/", not "." or "..", and no leading or trailing white space; in a path they are percent-encoded. Record types are accepted in any case and in the short forms STR, INT, FLT, BOOL (and []STR, ...); responses use the canonical names of RecordType.

Every request may carry an X-Request-ID header (1 to 128 printable ASCII characters); every response carries X-Request-ID: the client's when it is valid, a new random id otherwise. The request log line has it too.

Rate limits: every counted response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset of the window closest to running out; over a limit the answer is 429 with Retry-After. /health and this document are not counted.`

func operationObject(op Operation, requireAuth bool) obj {
	o := obj{"operationId": op.ID, "tags": []any{op.Tag}, "summary": op.Summary, "description": op.Description}
	if op.UsersOnly { // the one security scheme covers API tokens too
		o["description"] = op.Description + " For users only: an API token is 403."
	}
	switch {
	case op.Access == Public:
		o["security"] = []any{}
	case op.Access == ExpiredBearer:
		o["security"] = []any{obj{"bearerAuth": []any{}}}
	case op.UsersOnly: // no API token
		security := []any{obj{"bearerAuth": []any{}}}
		if !requireAuth {
			security = append(security, obj{})
		}
		o["security"] = security
	}
	var params []any
	for _, name := range op.Query {
		params = append(params, ref("parameters", queryParamName(name)))
	}
	for _, name := range op.Headers {
		params = append(params, ref("parameters", headerParamName(name)))
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.Body != "" {
		o["requestBody"] = ref("requestBodies", bodyName(op.Body))
	}
	resp := obj{}
	for status, name := range responsesOf(op) {
		resp[status] = ref("responses", name)
	}
	o["responses"] = resp
	return o
}

// Encode returns the document of the given routes, in the order
// registered, served by a server of the given version, as JSON. With
// requireAuth false the routes that take a token also run without one.
// The same arguments always give the same bytes.
func Encode(routes []Route, facts Facts, version string, requireAuth bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(facts.document(routes, version, requireAuth)); err != nil {
		panic("hds: encode the OpenAPI document: " + err.Error()) // maps of strings, numbers and slices always encode
	}
	return buf.Bytes()
}

// Validate reports what the document could not describe in routes: a
// pattern registered twice, an empty or repeated operation ID, a missing
// summary, tag, status or success response, and a parameter, header,
// body, error status or response key the components do not have.
func Validate(routes []Route) error {
	var problems []string
	seen := map[string]bool{}
	ids := map[string]string{}
	query, header := Facts{}.queryParameters(), headerParameters()
	responses, bodies := Facts{}.responses(), requestBodies()
	for _, r := range routes {
		pattern, op := r.Pattern, r.Operation
		bad := func(format string, args ...any) {
			problems = append(problems, pattern+": "+fmt.Sprintf(format, args...))
		}
		if seen[pattern] {
			bad("registered twice")
		}
		seen[pattern] = true
		if other, dup := ids[op.ID]; dup || op.ID == "" {
			bad("operationId %q is empty or also used by %s", op.ID, other)
		}
		ids[op.ID] = pattern
		if op.Summary == "" || op.Tag == "" || op.Status == 0 || op.Success == "" {
			bad("summary, tag, status and success are required")
		}
		if _, ok := responses[responseName(op.Success)]; !ok && op.Success != "" {
			bad("success response %q is not a component", op.Success)
		}
		for _, s := range op.Errors {
			if _, ok := errorResponses[s]; !ok {
				bad("error status %d has no response in errorResponses", s)
			}
		}
		for s, name := range op.Other {
			if _, ok := responses[responseName(name)]; !ok {
				bad("the response %q of status %d is not a component", name, s)
			}
		}
		for _, q := range op.Query {
			if _, ok := query[q]; !ok {
				bad("query parameter %q is not a component", q)
			}
		}
		for _, h := range op.Headers {
			if _, ok := header[h]; !ok {
				bad("header parameter %q is not a component", h)
			}
		}
		if _, ok := bodies[bodyName(op.Body)]; !ok && op.Body != "" {
			bad("request body %q is not a component", op.Body)
		}
	}
	if problems != nil {
		return fmt.Errorf("openapi: %s", strings.Join(problems, "; "))
	}
	return nil
}

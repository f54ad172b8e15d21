package handler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// The OpenAPI 3.1 document of the API, served at GET /api/v1/openapi.json.
//
// It is built from the router's own table (routes.go): every route is
// registered with the operation that describes it, so the document lists
// exactly the registered routes (openapi_test.go proves the method and
// pattern sets equal), and the black-box HTTP suite
// validates every request and response it makes against the served
// document, so the document and the behaviour cannot drift apart.

// openAPIVersion is the version of the OpenAPI specification the document
// follows.
const openAPIVersion = "3.1.0"

// access says what a route needs in the Authorization header.
type access int

const (
	// public routes need no token (security: []).
	public access = iota
	// bearer routes need a valid token, or none at all when require_auth
	// is false (the request then runs as the anonymous user).
	bearer
	// expiredBearer routes need a token with a valid signature that may
	// have expired within the refresh window (POST /api/v1/auth/refresh).
	expiredBearer
)

// operation describes one route for the document.
type operation struct {
	id, tag, summary, description string
	access                        access
	// need is the right the route needs on its project (API.md section
	// 17); routes outside any project leave it zero.
	need store.Right
	// usersOnly routes refuse API tokens (403): the project list and
	// creation, members, and the session routes.
	usersOnly bool
	// counted routes are counted by the rate limiter: their responses
	// carry the X-RateLimit-* headers, and they may answer 429.
	counted bool
	// query lists the route's query parameters, keys of queryParameters
	// (the path parameters come from the pattern).
	query []string
	// headers lists the route's request header parameters, keys of
	// headerParameters.
	headers []string
	// body is the request body, a key of requestBodies, or "".
	body string
	// status and success are the success status and its response, a key
	// of successResponses.
	status  int
	success string
	// errors are the error statuses the route answers with a response of
	// its own (each a key of errorResponses); 401 is added to every route
	// that reads a token, and every other error (413, 415, 429, 500, 503)
	// is the default response.
	errors []int
	// other names the response of further statuses (a key of
	// components.responses before responseName).
	other map[int]string
}

// Query parameter sets (keys of queryParameters).
var (
	listQuery   = []string{"limit", "offset", "search", "sortBy", "sortOrder", "count"}
	recordQuery = []string{"limit", "offset", "search", "recordSortBy", "sortOrder", "count", "typeFilter", "valueFilter", "valueContains", "minValue", "maxValue", "reveal"}
)

// Error statuses of the routes under a project (P and below): a path name
// no resource can have may be refused (400), the project may belong to
// someone else (403), and a level of the path may be missing (404).
var underProject = []int{400, 403, 404}

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

// defaultResponse is the key of the error response of every status an
// operation does not list: 413, 415, 429, 500 and 503.
const defaultResponse = "OtherError"

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
		"(limits.max_projects_per_user, limits.max_records_per_cluster or limits.max_bytes_per_project), details names it; nothing changed."},
	404: {name: "NotFound", description: "404 RESOURCE_NOT_FOUND: a resource of the path is missing; details names the missing level (e.g. collection \"prod\" not found). Also the answer to any path this document does not list."},
	409: {name: "Conflict", description: "409 RESOURCE_EXISTS: a create or rename onto a name already taken."},
	412: {name: "PreconditionFailed", description: "412 PRECONDITION_FAILED (\"Precondition failed\"): If-Match names none of the record's current tags; nothing changed. ETag is the current one, details names the current version.",
		extra: []string{"ETag", "RecordETag"}},
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
func responsesOf(op operation) map[string]string {
	out := map[string]string{strconv.Itoa(op.status): responseName(op.success), "default": responseName(defaultResponse)}
	statuses := slices.Clone(op.errors)
	if op.access != public {
		statuses = append(statuses, http.StatusUnauthorized)
	}
	for _, s := range statuses {
		out[strconv.Itoa(s)] = responseName(errorResponses[s].name)
	}
	for s, name := range op.other {
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

// openAPIDocument builds the document of the given routes, served by a
// server of the given version. With requireAuth false the routes that
// take a token also run without one.
func openAPIDocument(routes []route, version string, requireAuth bool) obj {
	paths := obj{}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
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
		item[strings.ToLower(method)] = operationObject(rt.op, requireAuth)
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
			"schemas":       schemas(),
			"parameters":    parameters(),
			"requestBodies": requestBodies(),
			"responses":     responses(),
			"headers":       headers(),
		},
	}
}

const infoDescription = `The JSON REST API of hds. Paths are relative to where the handler is mounted (a host may serve them under a prefix such as /hds): append your mount prefix to the server URL.

Every response under /api/v1/ except this document is an envelope: {"success": true, "data", "message"} or {"success": false, "error": {"code", "message", "details"}} (the ErrorEnvelope schema). Unknown routes answer 404 RESOURCE_NOT_FOUND, and a path of this document with a method it does not list answers 405 INVALID_REQUEST with an Allow header listing the path's methods, with or without a token. A path with an empty, "." or ".." segment is 404, never redirected.

Request bodies are JSON objects sent with Content-Type: application/json; unknown fields are refused. Names are 1 to 128 code points with no control characters, no "/", not "." or "..", and no leading or trailing white space; in a path they are percent-encoded. Record types are accepted in any case and in the short forms STR, INT, FLT, BOOL (and []STR, ...); responses use the canonical names of RecordType.

Every request may carry an X-Request-ID header (1 to 128 printable ASCII characters); every response carries X-Request-ID: the client's when it is valid, a new random id otherwise. The request log line has it too.

Rate limits: every counted response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset of the window closest to running out; over a limit the answer is 429 with Retry-After. /health and this document are not counted.`

func operationObject(op operation, requireAuth bool) obj {
	o := obj{"operationId": op.id, "tags": []any{op.tag}, "summary": op.summary, "description": op.description}
	if op.usersOnly { // the one security scheme covers API tokens too
		o["description"] = op.description + " For users only: an API token is 403."
	}
	switch {
	case op.access == public:
		o["security"] = []any{}
	case op.access == expiredBearer:
		o["security"] = []any{obj{"bearerAuth": []any{}}}
	case op.usersOnly: // no API token
		security := []any{obj{"bearerAuth": []any{}}}
		if !requireAuth {
			security = append(security, obj{})
		}
		o["security"] = security
	}
	var params []any
	for _, name := range op.query {
		params = append(params, ref("parameters", queryParamName(name)))
	}
	for _, name := range op.headers {
		params = append(params, ref("parameters", headerParamName(name)))
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.body != "" {
		o["requestBody"] = ref("requestBodies", bodyName(op.body))
	}
	resp := obj{}
	for status, name := range responsesOf(op) {
		resp[status] = ref("responses", name)
	}
	o["responses"] = resp
	return o
}

// Patterns of the document's strings.
const (
	timestampPattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$`
	idPattern        = `^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`
	namePattern      = `^[^/\x00-\x1f\x7f-\x9f]+$`
)

// enumVarName is the name of a record type's constant in generated code
// (x-enum-varnames): STRING is String, DATETIME DateTime, []UUID
// ArrayUUID.
func enumVarName(t store.DataType) string {
	name := string(t)
	prefix := ""
	if rest, ok := strings.CutPrefix(name, "[]"); ok {
		prefix, name = "Array", rest
	}
	switch name {
	case "DATETIME":
		name = "DateTime"
	case "UUID":
	default:
		name = name[:1] + strings.ToLower(name[1:])
	}
	return prefix + name
}

// Examples of the document; they fit their schemas (redocly's
// no-invalid-media-type-examples checks them).
const (
	exampleTime     = "2026-11-22T08:18:19.123000Z"
	exampleRecordID = "019a7b2e-4c1d-7f3a-9b2e-5d6c7e8f9a0b"
)

func schemas() obj {
	typeNames := make([]any, len(store.Types))
	varNames := make([]any, len(store.Types))
	for i, t := range store.Types {
		typeNames[i] = string(t)
		varNames[i] = enumVarName(t)
	}
	count := obj{"type": "integer", "minimum": 0}
	// object is a closed object whose properties are all required.
	object := func(description string, props obj, order ...string) obj {
		req := make([]any, len(order))
		for i, k := range order {
			req[i] = k
		}
		o := obj{"type": "object", "properties": props, "required": req, "additionalProperties": false}
		if description != "" {
			o["description"] = description
		}
		return o
	}
	// body is a closed request body object.
	body := func(description string, props obj, required ...string) obj {
		o := obj{"type": "object", "description": description, "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			o["required"] = required
		}
		return o
	}
	history := func(item string) obj {
		return object("One page of a list. total counts every match before limit and offset; it is null with count=false.", obj{
			"items":  obj{"type": "array", "items": schemaRef(item)},
			"total":  obj{"type": []any{"integer", "null"}, "minimum": 0},
			"limit":  obj{"type": "integer", "minimum": 1, "maximum": store.MaxLimit},
			"offset": count,
		}, "items", "total", "limit", "offset")
	}
	list := func(item string) obj {
		o := history(item)
		o["description"] = "One page of a list. total counts every match before limit and offset; it is null with count=false. next_cursor, sent back as ?cursor=, returns the next page; it is null on the page that holds the last item."
		o["properties"].(obj)["next_cursor"] = obj{"type": []any{"string", "null"}}
		o["required"] = append(o["required"].([]any), "next_cursor")
		return o
	}
	envelopeOf := func(data string) obj {
		return object("The success envelope.", obj{
			"success": obj{"type": "boolean", "const": true},
			"data":    schemaRef(data),
			"message": schemaRef("Message"),
		}, "success", "data", "message")
	}
	clusterProps := func(data bool) obj {
		p := obj{
			"id": schemaRef("Id"), "name": schemaRef("Name"),
			"project": schemaRef("Name"), "collection": schemaRef("Name"),
			"created_at": schemaRef("Timestamp"), "updated_at": schemaRef("Timestamp"),
			"record_count": count,
		}
		if data {
			p["data"] = obj{"type": "object", "description": "Every record name of the cluster mapped to its value (credentials masked unless reveal=true).",
				"propertyNames": schemaRef("Name"), "additionalProperties": schemaRef("RecordValue")}
		}
		return p
	}
	clusterFields := []string{"id", "name", "project", "collection", "created_at", "updated_at", "record_count"}
	recordInput := obj{"name": schemaRef("Name"), "type": schemaRef("TypeName"), "value": schemaRef("RecordValue")}

	s := obj{
		"Id": obj{"type": "string", "format": "uuid", "pattern": idPattern,
			"description": "A UUID version 7 in lowercase canonical form.", "examples": []any{exampleRecordID}},
		"Name": obj{"type": "string", "minLength": 1, "maxLength": store.MaxNameLength, "pattern": namePattern,
			"not":         obj{"enum": []any{".", ".."}},
			"description": "1 to 128 code points of UTF-8; no control characters (U+0000 to U+001F, U+007F to U+009F), no '/', not '.' or '..', no leading or trailing white space. Case-sensitive.",
			"examples":    []any{"webshop"}},
		"Timestamp": obj{"type": "string", "format": "date-time", "pattern": timestampPattern,
			"description": "RFC 3339 in UTC with exactly six fraction digits and Z.", "examples": []any{exampleTime}},
		"Message": obj{"type": "string", "minLength": 1, "description": "A short success message.", "examples": []any{"OK"}},
		"RecordType": obj{"type": "string", "enum": typeNames, "x-enum-varnames": varNames,
			"description": "The canonical name of a record type, as responses give it."},
		"TypeName": obj{"type": "string",
			"description": "A record type as input: a RecordType name in any case, or a short form STR, INT, FLT, BOOL, []STR, []INT, []FLT, []BOOL. An unknown type is 400 VALIDATION_ERROR listing every supported type.",
			"examples":    []any{"STRING", "int", "[]FLOAT"}},

		"StringValue": obj{"type": "string",
			"description": "The value of a STRING, DATE, TIME, DATETIME, UUID or CREDENTIAL record (credentials masked as \"********\" unless reveal=true)."},
		"FloatValue":   obj{"type": "number", "format": "double", "description": "The value of a FLOAT record: an IEEE 754 double (one without a fraction also matches IntegerValue)."},
		"BooleanValue": obj{"type": "boolean", "description": "The value of a BOOLEAN record."},
		"NullValue":    obj{"type": "null", "description": "The value of a NULL record."},
		"ScalarValue": obj{"description": "An element of an array value.",
			"anyOf": []any{schemaRef("StringValue"), integerValue(), schemaRef("FloatValue"), schemaRef("BooleanValue"), schemaRef("NullValue")}},
		"ArrayValue": obj{"type": "array", "items": schemaRef("ScalarValue"),
			"description": "The value of a []T record: every element a value of T."},
		"RecordValue": obj{
			"description": "A JSON value fitting the record's type: a string (STRING, DATE, TIME, DATETIME, UUID, CREDENTIAL), an integer (INTEGER, 64-bit), a number (FLOAT, double), a boolean, null (NULL), or an array of such for []T. Credentials are masked as \"********\" unless reveal=true. An anyOf, not a oneOf: a whole number matches both IntegerValue and FloatValue.",
			"anyOf":       []any{schemaRef("StringValue"), integerValue(), schemaRef("FloatValue"), schemaRef("BooleanValue"), schemaRef("NullValue"), schemaRef("ArrayValue")},
			"examples":    []any{5432, "db.internal", []any{"a", "b"}, nil}},

		"Project": object("A project.", obj{
			"id": schemaRef("Id"), "name": schemaRef("Name"),
			"owner_id":   obj{"type": "string", "minLength": 1, "description": "The owner's user id (\"anonymous\" for the anonymous user)."},
			"created_at": schemaRef("Timestamp"), "updated_at": schemaRef("Timestamp"),
			"collection_count": count,
			"role": obj{"type": []any{"string", "null"}, "enum": []any{"viewer", "reader", "editor", "admin", "owner", nil},
				"description": "The caller's role on the project (for an API token, the token's role); null only in the answer to PUT P/owner by a server administrator who holds no role on the project."},
		}, "id", "name", "owner_id", "created_at", "updated_at", "collection_count", "role"),
		"Collection": object("A collection; project is its project's name. record_count counts the records of all its clusters.", obj{
			"id": schemaRef("Id"), "name": schemaRef("Name"), "project": schemaRef("Name"),
			"created_at": schemaRef("Timestamp"), "updated_at": schemaRef("Timestamp"),
			"cluster_count": count, "record_count": count,
		}, "id", "name", "project", "created_at", "updated_at", "cluster_count", "record_count"),
		"Cluster":     object("A cluster; project and collection are its parents' names.", clusterProps(false), clusterFields...),
		"ClusterData": object("A cluster with the value of every record.", clusterProps(true), slices.Concat(clusterFields, []string{"data"})...),
		"RecordItem": object("A record: a named, typed value.", obj{
			"id": schemaRef("Id"), "name": schemaRef("Name"), "type": schemaRef("RecordType"),
			"value":      schemaRef("RecordValue"),
			"version":    obj{"type": "integer", "minimum": 1, "description": "1 at creation, plus 1 on every update."},
			"created_at": schemaRef("Timestamp"), "updated_at": schemaRef("Timestamp"),
		}, "id", "name", "type", "value", "version", "created_at", "updated_at"),
		"RecordVersion": object("One state of a record; changed_by is who wrote it (a user id), null when not known.", obj{
			"version": obj{"type": "integer", "minimum": 1}, "name": schemaRef("Name"), "type": schemaRef("RecordType"),
			"value": schemaRef("RecordValue"), "changed_at": schemaRef("Timestamp"),
			"changed_by": obj{"type": []any{"string", "null"}},
		}, "version", "name", "type", "value", "changed_at", "changed_by"),
		"RecordVersionList": history("RecordVersion"),
		"AuditEntry": object("One entry of a project's audit log (also the data of a change feed event). Fields that do not apply are null. It never holds a value, a password or a token.", obj{
			"revision":   obj{"type": "integer", "minimum": 1, "description": "The entry's place in the project's log: from 1, without gaps, in commit order."},
			"time":       schemaRef("Timestamp"),
			"action":     obj{"type": "string", "enum": auditActions()},
			"actor":      obj{"type": []any{"string", "null"}, "description": "Who: a user id, or token:<id> for an API token."},
			"actor_name": obj{"type": []any{"string", "null"}, "description": "The username, or the API token's name."},
			"collection": obj{"type": []any{"string", "null"}, "description": "Names after the change (for a delete, before)."},
			"cluster":    obj{"type": []any{"string", "null"}},
			"record":     obj{"type": []any{"string", "null"}},
			"record_id":  obj{"type": []any{"string", "null"}},
			"version":    obj{"type": []any{"integer", "null"}, "description": "The record's version after the change (the version deleted; the version revealed)."},
			"target":     obj{"type": []any{"string", "null"}, "description": "The username of member.* entries, the token id of token.* entries."},
			"request_id": obj{"type": []any{"string", "null"}, "description": "The X-Request-Id of the request that made the change."},
		}, "revision", "time", "action", "actor", "actor_name", "collection", "cluster", "record", "record_id", "version", "target", "request_id"),
		"AuditList":      list("AuditEntry"),
		"ProjectList":    list("Project"),
		"CollectionList": list("Collection"),
		"ClusterList":    list("Cluster"),
		"RecordList":     list("RecordItem"),
		"Token": object("A token and its lifetime in seconds.", obj{
			"token":      obj{"type": "string", "minLength": 1, "description": "A JWT (HS256)."},
			"expires_in": obj{"type": "integer", "minimum": 1},
			"user_id":    obj{"type": "string", "minLength": 1},
		}, "token", "expires_in", "user_id"),
		"Health": object("The service's health; not enveloped.", obj{
			"status":    obj{"type": "string", "enum": []any{"ok", "degraded", "unavailable"}},
			"timestamp": schemaRef("Timestamp"),
			"version":   obj{"type": "string", "minLength": 1},
			"checks": object("Each dependency's state.", obj{
				"store": obj{"type": "string", "enum": []any{"ok", "unavailable"}},
				"rate_limit": obj{"type": "string", "enum": []any{"ok", "unavailable", "local"},
					"description": "The shared rate limit store: local when counters live in this process only; unavailable while Redis cannot be reached and each instance counts on its own."},
			}, "store", "rate_limit"),
		}, "status", "timestamp", "version", "checks"),
		"OpenAPIDocument": obj{"type": "object", "description": "An OpenAPI 3.1 document (this one).",
			"required": []any{"openapi", "info", "paths"},
			"properties": obj{
				"openapi":    obj{"type": "string", "description": "The OpenAPI version, 3.1.0."},
				"info":       obj{"type": "object", "description": "Title, version (the server's) and description."},
				"servers":    obj{"type": "array", "items": obj{"type": "object"}},
				"tags":       obj{"type": "array", "items": obj{"type": "object"}},
				"security":   obj{"type": "array", "items": obj{"type": "object"}},
				"paths":      obj{"type": "object", "description": "Every route of the API."},
				"components": obj{"type": "object"},
			}},

		"ErrorCode": obj{"type": "string", "enum": []any{
			envelope.CodeInvalidRequest, envelope.CodeValidation, envelope.CodeAuthentication,
			envelope.CodeAuthorization, envelope.CodeNotFound, envelope.CodeExists, envelope.CodeRateLimit,
			envelope.CodeServer, envelope.CodeServiceUnavailable, envelope.CodePreconditionFailed,
			envelope.CodePreconditionNeeded, envelope.CodeQuotaExceeded},
			"description": "The error code; each response's description says which codes it carries."},
		"ErrorDetail": object("What went wrong.", obj{
			"code":    schemaRef("ErrorCode"),
			"message": obj{"type": "string", "minLength": 1, "description": "A fixed message for the code and status."},
			"details": obj{"type": "string", "description": "More about the error; an empty string when there is nothing to add."},
		}, "code", "message", "details"),
		"ErrorEnvelope": object("The error envelope of every error under /api/v1/.", obj{
			"success": obj{"type": "boolean", "const": false},
			"error":   schemaRef("ErrorDetail"),
		}, "success", "error"),

		"LoginRequest": body("Credentials.", obj{"username": obj{"type": "string"}, "password": obj{"type": "string", "format": "password"}},
			"username", "password"),
		"PasswordChangeRequest": body("The current password and the new one.", obj{
			"current_password": obj{"type": "string", "format": "password"},
			"new_password":     obj{"type": "string", "format": "password", "minLength": 1, "description": "At most 72 bytes."}},
			"current_password", "new_password"),
		"NameRequest":         body("A name.", obj{"name": schemaRef("Name")}, "name"),
		"PathNameRequest":     body("The name of the path again, if at all.", obj{"name": schemaRef("Name")}),
		"RecordCreateRequest": body("A new record; value left out is null.", recordInput, "name", "type"),
		"RestoreRequest":      body("The version to restore.", obj{"version": obj{"type": "integer", "minimum": 1}}, "version"),
	}
	addTransferSchemas(s, object, body, count)
	addAccessSchemas(s, object, body, list)
	addUserSchemas(s, object, body, list)
	update := body("What to change: any of value, type and name.", recordInput)
	update["minProperties"] = 1
	s["RecordUpdateRequest"] = update
	for _, name := range []string{"Project", "ProjectList", "Collection", "CollectionList", "Cluster", "ClusterList",
		"ClusterData", "RecordItem", "RecordList", "RecordVersionList", "Token", "BatchResults", "ImportResult", "AuditList",
		"Member", "MemberList", "APITokenCreated", "APITokenList", "User", "UserList", "Me"} {
		s[name+"Envelope"] = envelopeOf(name)
	}
	return s
}

// queryParameters are the query parameters, by key; each is a component
// named queryParamName(key).
func queryParameters() map[string]obj {
	query := func(name, description string, schema obj) obj {
		return obj{"name": name, "in": "query", "required": false, "description": description, "schema": schema}
	}
	sortBy := func(fields map[string]store.SortField) obj {
		names := sortNames(fields)
		enum := make([]any, len(names))
		for i, n := range names {
			enum[i] = n
		}
		return obj{"type": "string", "enum": enum, "default": string(store.SortName)}
	}
	return map[string]obj{
		"limit": query("limit", "Page size, a decimal integer.",
			obj{"type": "integer", "minimum": 1, "maximum": store.MaxLimit, "default": store.DefaultLimit}),
		"offset": query("offset", "Matches to skip, a decimal integer.",
			obj{"type": "integer", "minimum": 0, "default": 0}),
		"cursor": query("cursor", "The next_cursor of the previous page: this page follows it. Needs the same filters and sort, and offset absent or 0; a cursor that is malformed or of another list, sort or set of filters is 400 INVALID_REQUEST.",
			obj{"type": "string"}),
		"search": query("search", "Case-insensitive substring of the name; %, _ and \\ are literal.",
			obj{"type": "string"}),
		"sortBy":       query("sortBy", "Sort field; ties are broken by name, then id.", sortBy(containerSortFields)),
		"recordSortBy": query("sortBy", "Sort field; ties are broken by name, then id. value puts numbers first (by numeric value), then every other value by its canonical text, then NULL and credentials.", sortBy(recordSortFields)),
		"sortOrder":    query("sortOrder", "Sort direction.", obj{"type": "string", "enum": []any{"asc", "desc"}, "default": "asc"}),
		"count": query("count", "false answers total null and skips counting the matches.",
			obj{"type": "boolean", "default": true}),
		"typeFilter": query("type", "Only records of this type.", schemaRef("TypeName")),
		"valueFilter": query("value", "Only records whose canonical text equals this string exactly.",
			obj{"type": "string"}),
		"valueContains": query("valueContains", "Only records whose canonical text contains this string, case-insensitively; %, _ and \\ are literal.",
			obj{"type": "string"}),
		"minValue": query("minValue", "Only records whose value is at least this bound (inclusive). Needs type INTEGER, FLOAT, DATE, TIME, DATETIME, STRING or UUID (else 400 INVALID_REQUEST); the bound is read as that type's query text (400 VALIDATION_ERROR when it does not fit). INTEGER and FLOAT compare numerically, DATETIME by instant, the others by canonical text byte-wise.",
			obj{"type": "string"}),
		"maxValue": query("maxValue", "Only records whose value is at most this bound (inclusive); as minValue.",
			obj{"type": "string"}),
		"reveal": query("reveal", "true returns credential values in plain text instead of masked.",
			obj{"type": "boolean", "default": false}),
		"rename": query("rename", "The new name (path form; not with a body).", schemaRef("Name")),
		"version": query("version", "A version of the record, a positive decimal integer: the record as it was then.",
			obj{"type": "integer", "minimum": 1}),
		"restoreVersion": query("version", "The version to restore, a positive decimal integer (not with a body).",
			obj{"type": "integer", "minimum": 1}),
		"format": query("format", "env answers the cluster's environment file (text/plain) instead of its data; any other value is 400.",
			obj{"type": "string", "enum": []any{formatEnv}}),
		"importMode": query("mode", "merge creates and updates what the document holds and keeps what it lacks; replace also deletes what it lacks.",
			obj{"type": "string", "enum": []any{"merge", "replace"}, "default": "merge"}),
		"dryRun": query("dry_run", "true changes nothing and answers what the import would do.",
			obj{"type": "boolean", "default": false}),
		"recordType":  query("type", "The record type (path form; not with a body).", schemaRef("TypeName")),
		"auditAction": query("action", "Only entries of this action.", obj{"type": "string", "enum": auditActions()}),
		"auditActor":  query("actor", "Only entries of this actor: a user id, or token:<id> where id is an API token id (a UUID, any case; anything else is 400).", obj{"type": "string"}),
		"since": query("since", "Only entries at or after this time (RFC 3339).",
			obj{"type": "string", "format": "date-time"}),
		"until": query("until", "Only entries at or before this time (RFC 3339).",
			obj{"type": "string", "format": "date-time"}),
		"eventsSince": query("since", "Replay every entry after this revision first (a decimal integer of 0 or more); the Last-Event-ID header, when sent, wins.",
			obj{"type": "integer", "minimum": 0}),
		"eventsCollection": query("collection", "Only the events of this collection (its name at the time of each event).", schemaRef("Name")),
		"eventsCluster":    query("cluster", "Only the events of this cluster of the collection (needs collection).", schemaRef("Name")),
		"after": query("after", "Only entries of a later revision (a decimal integer of 0 or more).",
			obj{"type": "integer", "minimum": 0}),
		"recordValue": query("value", "The value as text (path form; not with a body): STRING, DATE, TIME, DATETIME, UUID and CREDENTIAL as given; INTEGER, FLOAT and BOOLEAN parsed (42, 3.14, true); NULL empty or left out; arrays as a JSON array.",
			obj{"type": "string"}),
	}
}

// headerParameters are the request header parameters, by key; each is a
// component named headerParamName(key).
func headerParameters() map[string]obj {
	return map[string]obj{
		"ifMatch": {"name": "If-Match", "in": "header", "required": false,
			"description": "* or a comma-separated list of entity tags: the write happens only when the record's ETag is among them (weak tags never match). Malformed: 400.",
			"schema":      obj{"type": "string"}},
		"lastEventId": {"name": "Last-Event-ID", "in": "header", "required": false,
			"description": "The id (revision) of the last event received: the stream replays every entry after it first. A value that is not a decimal integer of 0 or more is 400.",
			"schema":      obj{"type": "string", "pattern": "^[0-9]+$"}},
		"ifNoneMatch": {"name": "If-None-Match", "in": "header", "required": false,
			"description": "* or a comma-separated list of entity tags: 304 when the record's ETag is among them.",
			"schema":      obj{"type": "string"}},
	}
}

func parameters() obj {
	path := func(name, description string) obj {
		return obj{"name": name, "in": "path", "required": true, "description": description, "schema": schemaRef("Name")}
	}
	p := obj{
		pathParamName("project"):    path("project", "The project's name."),
		pathParamName("collection"): path("collection", "The collection's name."),
		pathParamName("cluster"):    path("cluster", "The cluster's name."),
		pathParamName("record"):     path("record", "The record's id, if a record of the cluster has that id; its name otherwise."),
		pathParamName("username"): obj{"name": "username", "in": "path", "required": true, "description": "A user's username.",
			"schema": obj{"type": "string", "minLength": 1}},
		pathParamName("id"): obj{"name": "id", "in": "path", "required": true, "description": "An API token's id.",
			"schema": obj{"type": "string", "minLength": 1}},
	}
	for key, param := range queryParameters() {
		p[queryParamName(key)] = param
	}
	for key, param := range headerParameters() {
		p[headerParamName(key)] = param
	}
	return p
}

// requestBodyExamples are the examples of the record bodies, by key.
var requestBodyExamples = map[string]obj{
	"RecordCreate": {
		"integer":     obj{"summary": "An INTEGER", "value": obj{"name": "port", "type": "INTEGER", "value": 5432}},
		"stringArray": obj{"summary": "A []STRING", "value": obj{"name": "hosts", "type": "[]STRING", "value": []any{"db1.internal", "db2.internal"}}},
		"credential":  obj{"summary": "A CREDENTIAL, stored sealed", "value": obj{"name": "password", "type": "CREDENTIAL", "value": "s3cret"}},
	},
	"RecordUpdate": {
		"value":  obj{"summary": "A new value", "value": obj{"value": 6432}},
		"rename": obj{"summary": "A new name only", "value": obj{"name": "primary-port"}},
	},
}

// integerValue is the value of an INTEGER record in RecordValue and
// ScalarValue: integer/int64, so that generated clients keep all 64 bits
// (a plain number is a float32 to oapi-codegen). It is written in place,
// not as a component: ogen tells an integer from a FLOAT's number in an
// anyOf only by an integer schema of its own, not through a $ref.
func integerValue() obj {
	return obj{"type": "integer", "format": "int64", "title": "IntegerValue",
		"description": "The value of an INTEGER record: a 64-bit signed integer, exact beyond 2^53."}
}

// requestBodies are the request bodies; each is a component named
// bodyName(key).
func requestBodies() obj {
	out := obj{}
	for key, b := range map[string]struct {
		description, schema string
		required            bool
	}{
		"Login":          {"The username and password.", "LoginRequest", true},
		"PasswordChange": {"The current password and the new one.", "PasswordChangeRequest", true},
		"Name":           {"The new resource's name.", "NameRequest", true},
		"PathName":       {"Optional: the name of the path again.", "PathNameRequest", false},
		"Rename":         {"The new name, unless ?rename= gives it.", "NameRequest", false},
		"RecordCreate":   {"The new record.", "RecordCreateRequest", true},
		"RecordUpdate":   {"What to change, unless the query parameters give it.", "RecordUpdateRequest", false},
		"Restore":        {"The version to restore, unless ?version= gives it.", "RestoreRequest", false},
		"Batch":          {"The operations, applied in order, all or none.", "BatchRequest", true},
		"Import":         {"An export document (its project, revision and exported_at are ignored).", "ImportDocument", true},
		"MemberPut":      {"The member's role.", "MemberPutRequest", true},
		"APITokenCreate": {"The new API token's name, role, scope and lifetime.", "APITokenCreateRequest", true},
		"UserCreate":     {"The new user.", "UserCreateRequest", true},
		"UserUpdate":     {"What to change.", "UserUpdateRequest", true},
		"OwnerPut":       {"The new owner.", "OwnerPutRequest", true},
	} {
		media := obj{"schema": schemaRef(b.schema)}
		if ex, ok := requestBodyExamples[key]; ok {
			media["examples"] = ex
		}
		out[bodyName(key)] = obj{"description": b.description, "required": b.required,
			"content": obj{"application/json": media}}
	}
	return out
}

// successResponse describes the success response of a payload: its
// description, the schema of its body, its extra headers and an example.
type successResponse struct {
	description, schema string
	extra               []string // header names and their components.headers keys, in pairs
	example             any
	// text, when set, describes a text/plain alternative to the JSON body
	// (the environment file of GET K?format=env).
	text string
	// stream, when set, describes a text/event-stream body that replaces
	// the JSON one (the change feed).
	stream string
}

// successResponses are the success responses with a body, by key; each is
// a component named responseName(key).
var successResponses = map[string]successResponse{
	"Project":        {description: "The project.", schema: "ProjectEnvelope"},
	"ProjectList":    {description: "A page of projects.", schema: "ProjectListEnvelope"},
	"Collection":     {description: "The collection.", schema: "CollectionEnvelope"},
	"CollectionList": {description: "A page of collections.", schema: "CollectionListEnvelope"},
	"Cluster":        {description: "The cluster.", schema: "ClusterEnvelope"},
	"ClusterList":    {description: "A page of clusters.", schema: "ClusterListEnvelope"},
	"ClusterData": {description: "The cluster and its data; with format=env, its environment file (text/plain) instead.", schema: "ClusterDataEnvelope",
		extra: []string{skippedRecordsHeader, "SkippedRecords"},
		text:  "The environment file: one line NAME='value' per record whose name is an environment variable name ([A-Za-z_][A-Za-z0-9_]*), sorted by name byte-wise, the value in POSIX shell single quotes (a single quote in a value written as quote, backslash, quote, quote), so that `set -a; . ./file` loads it. The value is the canonical text (arrays as compact JSON, NULL empty), credentials masked unless reveal=true; every line ends with a newline. Not enveloped."},
	"RecordVersionList": {description: "A page of the record's states, newest first.", schema: "RecordVersionListEnvelope"},
	"AuditList":         {description: "A page of the project's audit log, newest first.", schema: "AuditListEnvelope"},
	"EventStream": {description: "The change feed, as Server-Sent Events (not enveloped).",
		stream: "Events, each: id: <revision>, event: <action>, data: <the audit entry (AuditEntry) as one line of JSON>, then an empty line. Comment lines (: keep-alive) keep the connection open."},
	"Record": {description: "The record; ETag names its state.", schema: "RecordItemEnvelope", extra: []string{"ETag", "RecordETag"}, example: obj{"success": true, "message": "Record created",
		"data": obj{"id": exampleRecordID, "name": "port", "type": "INTEGER", "value": 5432, "version": 1,
			"created_at": exampleTime, "updated_at": exampleTime}}},
	"RecordList":   {description: "A page of records.", schema: "RecordListEnvelope"},
	"Token":        {description: "A new token; never cached.", schema: "TokenEnvelope", extra: []string{"Cache-Control", "NoStore"}},
	"BatchResults": {description: "Every operation applied: one result each, in order.", schema: "BatchResultsEnvelope"},
	"ExportDocument": {description: "The export document, not enveloped, sent as an attachment.", schema: "ExportDocument",
		extra: []string{"Content-Disposition", "ContentDisposition"}},
	"ImportResult": {description: "What the import changed (or, with dry_run=true, would change): records only.", schema: "ImportResultEnvelope"},
	"Member":       {description: "The member.", schema: "MemberEnvelope"},
	"MemberList":   {description: "A page of the project's members, the owner included.", schema: "MemberListEnvelope"},
	"APITokenCreated": {description: "The new API token, with its token string: shown this once.", schema: "APITokenCreatedEnvelope",
		extra: []string{"Cache-Control", "NoStore"}},
	"APITokenList": {description: "A page of the project's API tokens, without their token strings.", schema: "APITokenListEnvelope"},
	"User":         {description: "The user.", schema: "UserEnvelope"},
	"UserList":     {description: "A page of users, by username.", schema: "UserListEnvelope"},
	"Me":           {description: "The caller.", schema: "MeEnvelope"},
}

func responses() obj {
	// rateHeaders are the request id and rate limit headers and the extra
	// ones, given as a header name and the key of its components.headers
	// entry.
	rateHeaders := func(extra ...string) obj {
		h := obj{middleware.RequestIDHeader: ref("headers", middleware.RequestIDHeader)}
		for _, name := range []string{middleware.HeaderLimit, middleware.HeaderRemaining, middleware.HeaderReset} {
			h[name] = ref("headers", name)
		}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = ref("headers", extra[i+1])
		}
		return h
	}
	jsonContent := func(schema string, example any) obj {
		media := obj{"schema": schemaRef(schema)}
		if example != nil {
			media["example"] = example
		}
		return obj{"application/json": media}
	}
	health := func(description, status, storeState string) obj {
		return obj{"description": description, "headers": obj{"Cache-Control": ref("headers", "NoStore"),
			middleware.RequestIDHeader: ref("headers", middleware.RequestIDHeader)},
			"content": jsonContent("Health", obj{"status": status, "timestamp": exampleTime, "version": "1.0.0",
				"checks": obj{"store": storeState, "rate_limit": "ok"}})}
	}
	r := obj{
		responseName("NoContent"):         obj{"description": "Deleted, with everything beneath it.", "headers": rateHeaders()},
		responseName("LoggedOut"):         obj{"description": "The session has ended.", "headers": rateHeaders()},
		responseName("Health"):            health("The store answers: status is ok, or degraded when the shared rate limit store (Redis) does not.", "ok", "ok"),
		responseName("HealthUnavailable"): health("The store does not answer: status is unavailable.", "unavailable", "unavailable"),
		responseName("OpenAPIDocument"): obj{"description": "This document.",
			"headers": obj{"ETag": ref("headers", "ETag"), "Cache-Control": ref("headers", "CacheControl"),
				middleware.RequestIDHeader: ref("headers", middleware.RequestIDHeader)},
			"content": jsonContent("OpenAPIDocument", nil)},
		responseName("OpPreconditionFailed"): obj{"description": "412 PRECONDITION_FAILED (\"Precondition failed\"): an operation's if_match names none of its record's current tags (details: \"operation N: current version is V\"), or the project changed under an import; nothing changed.",
			"headers": rateHeaders(), "content": jsonContent("ErrorEnvelope", nil)},
		responseName("RecordNotModified"): obj{"description": "The record's state is the one If-None-Match names.", "headers": rateHeaders("ETag", "RecordETag")},
		responseName("NotModified"): obj{"description": "The document named by If-None-Match is current.",
			"headers": obj{"ETag": ref("headers", "ETag"),
				middleware.RequestIDHeader: ref("headers", middleware.RequestIDHeader)}},
		responseName(defaultResponse): obj{"description": defaultErrorDescription,
			"headers": rateHeaders(middleware.HeaderRetryAfter, middleware.HeaderRetryAfter, "Allow", "Allow"),
			"content": jsonContent("ErrorEnvelope", obj{"success": false,
				"error": obj{"code": envelope.CodeRateLimit, "message": "Rate limit exceeded", "details": ""}})},
	}
	for key, s := range successResponses {
		content := jsonContent(s.schema, s.example)
		if s.stream != "" {
			content = obj{eventsMessage: obj{"schema": obj{"type": "string", "description": s.stream},
				"example": "id: 7\nevent: record.update\ndata: {\"revision\":7,\"time\":\"2026-11-22T08:18:19.123000Z\",\"action\":\"record.update\",...}\n\n"}}
		}
		if s.text != "" {
			content["text/plain"] = obj{"schema": obj{"type": "string", "description": s.text},
				"example": "DB_HOST='db1.internal'\nDB_PORT='5432'\nGREETING='it'\\''s me'\n"}
		}
		r[responseName(key)] = obj{"description": s.description, "headers": rateHeaders(s.extra...),
			"content": content}
	}
	for status, e := range errorResponses {
		var example any
		if status == http.StatusBadRequest {
			example = obj{"success": false, "error": obj{"code": envelope.CodeValidation, "message": "Validation failed",
				"details": "value for type INTEGER: not an integer: \"abc\""}}
		}
		r[responseName(e.name)] = obj{"description": e.description, "headers": rateHeaders(e.extra...),
			"content": jsonContent("ErrorEnvelope", example)}
	}
	return r
}

func headers() obj {
	return obj{
		middleware.HeaderLimit: obj{"description": "The request limit of the window closest to running out (present on every counted response).",
			"schema": obj{"type": "integer", "minimum": 1}},
		middleware.HeaderRemaining: obj{"description": "Requests left in that window.",
			"schema": obj{"type": "integer", "minimum": 0}},
		middleware.HeaderReset: obj{"description": "When that window resets, in Unix seconds.",
			"schema": obj{"type": "integer", "minimum": 0}},
		middleware.HeaderRetryAfter: obj{"description": "With 429: seconds to wait before retrying.",
			"schema": obj{"type": "integer", "minimum": 1}},
		"Allow": obj{"description": "With 405: the methods of the path.",
			"schema": obj{"type": "string", "minLength": 1}},
		"ContentDisposition": obj{"description": "attachment, with the file name PROJECT.json.", "required": true,
			"schema": obj{"type": "string", "pattern": "^attachment"}},
		"NoStore": obj{"description": "The response is never cached.", "required": true,
			"schema": obj{"type": "string", "const": "no-store"}},
		"CacheControl": obj{"description": "Revalidate with If-None-Match before reusing the document.", "required": true,
			"schema": obj{"type": "string", "const": openAPICacheControl}},
		middleware.RequestIDHeader: obj{"description": "The request's id: the client's X-Request-ID when it is 1 to 128 printable ASCII characters, a new random one otherwise. The request log line has it too.",
			"required": true, "schema": obj{"type": "string", "minLength": 1, "maxLength": 128, "pattern": `^[\x21-\x7e]+$`}},
		"ETag": obj{"description": "The document's entity tag.", "required": true,
			"schema": obj{"type": "string", "minLength": 1}},
		"SkippedRecords": obj{"description": "With format=env: how many records the environment file leaves out because their names are not environment variable names (0 when none).",
			"schema": obj{"type": "integer", "minimum": 0}},
		"RecordETag": obj{"description": "The strong entity tag of the record's state: it changes with every change of the record and is never used again; opaque.", "required": true,
			"schema": obj{"type": "string", "pattern": `^"[\x21\x23-\x7e]+"$`}},
	}
}

// openAPICacheControl is the document's Cache-Control: no-store, as on
// every response under /api/v1/ (API.md section 1); a client that keeps
// its own copy revalidates it with If-None-Match and the ETag (304).
const openAPICacheControl = "no-store"

// servedDocument is the encoded document and its entity tag.
type servedDocument struct {
	body []byte
	etag string
}

// encodeDocument encodes the document of rt's routes.
func encodeDocument(rt *router, version string, requireAuth bool) servedDocument {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(openAPIDocument(rt.routes, version, requireAuth)); err != nil {
		panic("hds: encode the OpenAPI document: " + err.Error()) // maps of strings, numbers and slices always encode
	}
	sum := sha256.Sum256(buf.Bytes())
	return servedDocument{body: buf.Bytes(), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

// handleOpenAPI serves the document of rt's routes, not enveloped. It
// needs no token and is not counted by the rate limiter. The document is
// built once, on the first request, when every route is registered.
func handleOpenAPI(rt *router, version string, requireAuth bool) http.Handler {
	served := sync.OnceValue(func() servedDocument { return encodeDocument(rt, version, requireAuth) })
	return strictQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := served()
		h := w.Header()
		h.Set("Cache-Control", openAPICacheControl)
		h.Set("ETag", d.etag)
		h.Set("Content-Type", envelope.ContentType)
		// ServeContent answers If-None-Match (304), HEAD and ranges.
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(d.body))
	}))
}

// addTransferSchemas adds the schemas of the batch, export and import
// routes (API.md section 18) to s.
func addTransferSchemas(s obj, object func(string, obj, ...string) obj, body func(string, obj, ...string) obj, count obj) {
	mapOf := func(description, item string) obj {
		return obj{"type": "object", "description": description, "propertyNames": schemaRef("Name"),
			"additionalProperties": schemaRef(item)}
	}
	s["BatchOperation"] = body("One operation of a batch. name (a new name) is for update only; if_match is an ETag header value, quotes included (update, upsert and delete). create and upsert need type; a value left out is null.",
		obj{
			"op":         obj{"type": "string", "enum": []any{"create", "update", "upsert", "delete"}},
			"collection": schemaRef("Name"), "cluster": schemaRef("Name"),
			"record": obj{"type": "string", "description": "The record's name, or its id (update, upsert, delete)."},
			"type":   schemaRef("TypeName"), "value": schemaRef("RecordValue"), "name": schemaRef("Name"),
			"if_match": obj{"type": "string", "description": "* or a comma-separated list of entity tags, as for If-Match."},
		}, "op", "collection", "cluster", "record")
	s["BatchRequest"] = body("A batch: 1 to 1000 operations. create_parents creates missing collections and clusters for create and upsert.",
		obj{
			"operations": obj{"type": "array", "minItems": 1, "maxItems": maxBatchOps, "items": schemaRef("BatchOperation")},
			// No "default": openapi-typescript (defaultNonNullable) would
			// make a property with one required in the request body.
			"create_parents": obj{"type": "boolean", "description": "Create the missing collection and cluster of create and upsert operations; false when left out."},
		}, "operations")
	s["BatchResult"] = object("What one operation did: status is the HTTP status it would get alone (201 created, 200 updated, 204 deleted); record is null for a delete, credentials masked.", obj{
		"index":  count,
		"status": obj{"type": "integer", "enum": []any{200, 201, 204}},
		"record": obj{"oneOf": []any{schemaRef("RecordItem"), obj{"type": "null"}}},
	}, "index", "status", "record")
	s["BatchResults"] = object("The result of every operation, in order.", obj{
		"results": obj{"type": "array", "items": schemaRef("BatchResult")},
	}, "results")
	s["ExportRecord"] = object("A record of an export: credentials masked unless reveal=true.", obj{
		"type": schemaRef("RecordType"), "value": schemaRef("RecordValue")}, "type", "value")
	s["ExportCluster"] = object("A cluster of an export.", obj{"records": mapOf("Every record, by name.", "ExportRecord")}, "records")
	s["ExportCollection"] = object("A collection of an export.", obj{"clusters": mapOf("Every cluster, by name.", "ExportCluster")}, "clusters")
	s["ExportDocument"] = object("A whole project: every collection, cluster and record, empty ones included, from one consistent snapshot.", obj{
		"format":      obj{"type": "string", "const": exportFormat},
		"project":     schemaRef("Name"),
		"revision":    obj{"type": "integer", "minimum": 0, "description": "The newest audit revision the snapshot includes (0 until the audit log exists)."},
		"exported_at": schemaRef("Timestamp"),
		"collections": mapOf("Every collection, by name.", "ExportCollection"),
	}, "format", "project", "revision", "exported_at", "collections")
	s["ImportRecord"] = body("A record to import. A credential given masked (\"********\", or an array of them) leaves the existing value as it is.",
		obj{"type": schemaRef("TypeName"), "value": schemaRef("RecordValue")}, "type")
	s["ImportCluster"] = body("A cluster to import.", obj{"records": mapOf("Its records, by name.", "ImportRecord")}, "records")
	s["ImportCollection"] = body("A collection to import.", obj{"clusters": mapOf("Its clusters, by name.", "ImportCluster")}, "clusters")
	s["ImportDocument"] = body("An export document; format must be "+exportFormat+".", obj{
		"format":      obj{"type": "string", "const": exportFormat},
		"project":     obj{"description": "Ignored."},
		"revision":    obj{"description": "Ignored."},
		"exported_at": obj{"description": "Ignored."},
		"collections": mapOf("The collections, by name.", "ImportCollection"),
	}, "format", "collections")
	s["ImportChange"] = object("A record the import creates, updates or deletes.", obj{
		"action":     obj{"type": "string", "enum": []any{"create", "update", "delete"}},
		"collection": schemaRef("Name"), "cluster": schemaRef("Name"), "record": schemaRef("Name"),
	}, "action", "collection", "cluster", "record")
	s["ImportResult"] = object("What the import changed, counting records only.", obj{
		"created": count, "updated": count, "deleted": count, "unchanged": count,
		"changes":  obj{"type": "array", "items": schemaRef("ImportChange"), "description": "By collection, cluster and record name."},
		"revision": obj{"type": "integer", "minimum": 0, "description": "The project's audit revision after the import (its newest entry); when nothing was written (a dry run, nothing to change), the revision the import was planned at."},
	}, "created", "updated", "deleted", "unchanged", "changes", "revision")
}

// auditActions lists the actions of the audit log, for the schemas.
func auditActions() []any {
	out := make([]any, len(store.Actions))
	for i, a := range store.Actions {
		out[i] = string(a)
	}
	return out
}

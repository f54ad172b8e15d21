package handler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// The OpenAPI 3.1 document of the API, served at GET /api/v1/openapi.json.
//
// It is built from operations, the table below, which describes every
// pattern that routes.go registers, keyed by that pattern. A test
// (openapi_test.go) fails when a registered pattern has no description or
// a description has no registered pattern, and the black-box HTTP suite
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
	// counted routes are counted by the rate limiter: their responses may
	// carry the X-RateLimit-* headers, and they may answer 429.
	counted bool
	// query lists the route's query parameters, keys of
	// components.parameters (the path parameters come from the pattern).
	query []string
	// body is the request body, a key of components.requestBodies, or "".
	body string
	// status and success are the success status and its response, a key
	// of components.responses.
	status  int
	success string
	// errors are the error statuses the route answers besides those every
	// route of its kind may answer (see responsesOf); each is a response
	// of errorResponses, unless other names another response for it.
	errors []int
	other  map[int]string
}

// Query parameter sets (keys of components.parameters).
var (
	listQuery   = []string{"limit", "offset", "search", "sortBy", "sortOrder"}
	recordQuery = []string{"limit", "offset", "search", "recordSortBy", "sortOrder", "typeFilter", "valueFilter", "valueContains", "reveal"}
)

// Error statuses shared by the routes under a project (P and below): a
// path name no resource can have may be refused (400), the project may
// belong to someone else (403), and a level of the path may be missing
// (404).
var underProject = []int{400, 403, 404}

// operations describes every route of routes.go, keyed by its pattern.
var operations = map[string]operation{
	"GET /health": {
		id: "getHealth", tag: "meta", summary: "Health of the service and its store",
		description: "Not enveloped. 200 with status \"ok\" when the store answers, 503 with \"unavailable\" when it does not. Needs no token and is not rate limited.",
		access:      public, status: 200, success: "Health",
		other: map[int]string{503: "HealthUnavailable"},
	},
	"GET /api/v1/openapi.json": {
		id: "getOpenAPI", tag: "meta", summary: "This OpenAPI document",
		description: "Not enveloped. Needs no token and is not rate limited. Answers 304 to an If-None-Match that names the current ETag.",
		access:      public, status: 200, success: "OpenAPIDocument",
		other: map[int]string{304: "NotModified"},
	},
	"POST /api/v1/auth/login": {
		id: "login", tag: "auth", summary: "Log in",
		description: "Exchanges a username and password for a token. A wrong password, an unknown user and a disabled account all answer 401 \"Invalid username or password\". Failed logins are limited per username and per client IP: past the limit every login for them answers 429 until the window has passed.",
		access:      public, counted: true, body: "Login", status: 200, success: "Token",
		errors: []int{400, 401, 415},
	},
	"POST /api/v1/auth/refresh": {
		id: "refreshToken", tag: "auth", summary: "Refresh a token",
		description: "Exchanges the token in the Authorization header for a new one of the same session. The token may have expired, by no more than the refresh window, and its session must be younger than the maximum session age. No body.",
		access:      expiredBearer, counted: true, status: 200, success: "Token",
		errors: []int{400},
	},

	"GET /api/v1/projects": {
		id: "listProjects", tag: "projects", summary: "List the caller's projects",
		access: bearer, counted: true, query: listQuery, status: 200, success: "ProjectList",
		errors: []int{400},
	},
	"POST /api/v1/projects": {
		id: "createProject", tag: "projects", summary: "Create a project (body form)",
		description: "Project names are unique across the whole service: a name anyone already uses is 409.",
		access:      bearer, counted: true, body: "Name", status: 201, success: "Project",
		errors: []int{400, 409, 415},
	},
	"POST " + pathP: {
		id: "createProjectAt", tag: "projects", summary: "Create a project (path form)",
		description: "The name is in the path; a body, if any, may only repeat it. Project names are unique across the whole service: a name anyone already uses is 409.",
		access:      bearer, counted: true, body: "PathName", status: 201, success: "Project",
		errors: []int{400, 409, 415},
	},
	"GET " + pathP: {
		id: "getProject", tag: "projects", summary: "Get a project",
		access: bearer, counted: true, status: 200, success: "Project",
		errors: underProject,
	},
	"PUT " + pathP: {
		id: "renameProject", tag: "projects", summary: "Rename a project",
		description: "The new name comes from ?rename=NEW or from a body {\"name\": NEW}, not both. Renaming to the current name is a no-op.",
		access:      bearer, counted: true, query: []string{"rename"}, body: "Rename", status: 200, success: "Project",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"DELETE " + pathP: {
		id: "deleteProject", tag: "projects", summary: "Delete a project and everything in it",
		access: bearer, counted: true, status: 204, success: "NoContent",
		errors: underProject,
	},

	"GET " + pathP + "/collections": {
		id: "listCollections", tag: "collections", summary: "List the collections of a project",
		access: bearer, counted: true, query: listQuery, status: 200, success: "CollectionList",
		errors: underProject,
	},
	"POST " + pathP + "/collections": {
		id: "createCollection", tag: "collections", summary: "Create a collection (body form)",
		access: bearer, counted: true, body: "Name", status: 201, success: "Collection",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"POST " + pathC: {
		id: "createCollectionAt", tag: "collections", summary: "Create a collection (path form)",
		description: "The name is in the path; a body, if any, may only repeat it.",
		access:      bearer, counted: true, body: "PathName", status: 201, success: "Collection",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"GET " + pathC: {
		id: "getCollection", tag: "collections", summary: "Get a collection",
		access: bearer, counted: true, status: 200, success: "Collection",
		errors: underProject,
	},
	"PUT " + pathC: {
		id: "renameCollection", tag: "collections", summary: "Rename a collection",
		description: "The new name comes from ?rename=NEW or from a body {\"name\": NEW}, not both. Renaming to the current name is a no-op.",
		access:      bearer, counted: true, query: []string{"rename"}, body: "Rename", status: 200, success: "Collection",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"DELETE " + pathC: {
		id: "deleteCollection", tag: "collections", summary: "Delete a collection and everything in it",
		access: bearer, counted: true, status: 204, success: "NoContent",
		errors: underProject,
	},

	"GET " + pathC + "/clusters": {
		id: "listClusters", tag: "clusters", summary: "List the clusters of a collection",
		access: bearer, counted: true, query: listQuery, status: 200, success: "ClusterList",
		errors: underProject,
	},
	"POST " + pathC + "/clusters": {
		id: "createCluster", tag: "clusters", summary: "Create a cluster (body form)",
		access: bearer, counted: true, body: "Name", status: 201, success: "Cluster",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"POST " + pathK: {
		id: "createClusterAt", tag: "clusters", summary: "Create a cluster (path form)",
		description: "The name is in the path; a body, if any, may only repeat it.",
		access:      bearer, counted: true, body: "PathName", status: 201, success: "Cluster",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"GET " + pathK: {
		id: "getClusterData", tag: "clusters", summary: "Get a cluster with the value of every record",
		description: "data maps every record name to its value; credential values are masked unless reveal=true.",
		access:      bearer, counted: true, query: []string{"reveal"}, status: 200, success: "ClusterData",
		errors: underProject,
	},
	"PUT " + pathK: {
		id: "renameCluster", tag: "clusters", summary: "Rename a cluster",
		description: "The new name comes from ?rename=NEW or from a body {\"name\": NEW}, not both. Renaming to the current name is a no-op.",
		access:      bearer, counted: true, query: []string{"rename"}, body: "Rename", status: 200, success: "Cluster",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"DELETE " + pathK: {
		id: "deleteCluster", tag: "clusters", summary: "Delete a cluster and its records",
		access: bearer, counted: true, status: 204, success: "NoContent",
		errors: underProject,
	},

	"GET " + pathK + "/records": {
		id: "listRecords", tag: "records", summary: "List the records of a cluster",
		description: "Filters combine with AND. Credential values are masked unless reveal=true, and never matched by value or valueContains.",
		access:      bearer, counted: true, query: recordQuery, status: 200, success: "RecordList",
		errors: underProject,
	},
	"POST " + pathK + "/records": {
		id: "createRecord", tag: "records", summary: "Create a record (body form)",
		description: "The query parameters rename, type and value cannot accompany the body (400).",
		access:      bearer, counted: true, query: []string{"reveal"}, body: "RecordCreate", status: 201, success: "Record",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"POST " + pathR: {
		id: "createRecordAt", tag: "records", summary: "Create a record (path form)",
		description: "The name is in the path; the type and value come from ?type=T&value=V or from a body {\"type\", \"value\"} (which may repeat the name), not both.",
		access:      bearer, counted: true, query: []string{"recordType", "recordValue", "reveal"}, body: "RecordPathCreate", status: 201, success: "Record",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"GET " + pathR: {
		id: "getRecord", tag: "records", summary: "Get a record",
		description: "{record} is the record's id when a record of the cluster has that id, its name otherwise.",
		access:      bearer, counted: true, query: []string{"reveal"}, status: 200, success: "Record",
		errors: underProject,
	},
	"PUT " + pathR: {
		id: "updateRecord", tag: "records", summary: "Update a record's value, type or name",
		description: "Any of ?value=V&type=T&rename=NEW, or a body with any of {\"value\", \"type\", \"name\"}, not both; all of it in one step, or nothing. Every update adds 1 to version. Changing a credential to another type needs a new value.",
		access:      bearer, counted: true, query: []string{"recordValue", "recordType", "rename", "reveal"}, body: "RecordUpdate", status: 200, success: "Record",
		errors: slices.Concat(underProject, []int{409, 415}),
	},
	"DELETE " + pathR: {
		id: "deleteRecord", tag: "records", summary: "Delete a record",
		access: bearer, counted: true, status: 204, success: "NoContent",
		errors: underProject,
	},
}

// responsesOf returns every status op may answer with the name of its
// response in components.responses: its own, 413 (a body over the limit,
// refused before routing) and 500 (anything unexpected) on every route;
// 401 and 503 (the user directory) where a token is read; 429 and 503
// (the rate limit store) where requests are counted.
func responsesOf(op operation) map[int]string {
	out := map[int]string{op.status: op.success, 413: errorResponses[413].name, 500: errorResponses[500].name}
	statuses := slices.Clone(op.errors)
	if op.access != public {
		statuses = append(statuses, 401, 503)
	}
	if op.counted {
		statuses = append(statuses, 429, 503)
	}
	for _, s := range statuses {
		out[s] = errorResponses[s].name
	}
	for s, name := range op.other {
		out[s] = name
	}
	return out
}

// errorResponse describes the error envelope of one status: its codes,
// and the messages API.md fixes for it, if any.
type errorResponse struct {
	name, description string
	codes             []string
	messages          []string
	header            string // a required header, a key of components.headers
}

var errorResponses = map[int]errorResponse{
	400: {name: "BadRequest", description: "INVALID_REQUEST: malformed JSON, an unknown field, a missing field, a bad query parameter, a body mixed with the path form. VALIDATION_ERROR: a bad name, a value that does not fit its type, an unknown type.",
		codes: []string{envelope.CodeInvalidRequest, envelope.CodeValidation}},
	401: {name: "Unauthorized", description: "The token is missing, malformed, badly signed, expired, or names an unknown or disabled user; or, for login, the username or password is wrong.",
		codes: []string{envelope.CodeAuthentication},
		messages: []string{"No authorization token provided", "Invalid or expired token", "Invalid token signature",
			"Token has expired", "Invalid username or password"}},
	403: {name: "Forbidden", description: "The project belongs to another user.",
		codes: []string{envelope.CodeAuthorization}, messages: []string{"Insufficient permissions"}},
	404: {name: "NotFound", description: "A resource of the path is missing; details names the missing level (e.g. collection \"prod\" not found).",
		codes: []string{envelope.CodeNotFound}},
	405: {name: "MethodNotAllowed", description: "The path exists but not with this method; Allow lists its methods. Answered by the router for every path of this document, before authentication.",
		codes: []string{envelope.CodeInvalidRequest}, header: "Allow"},
	409: {name: "Conflict", description: "A create or rename onto a name already taken.",
		codes: []string{envelope.CodeExists}},
	413: {name: "PayloadTooLarge", description: "The request body is larger than the limit (1 MiB by default).",
		codes: []string{envelope.CodeInvalidRequest}},
	415: {name: "UnsupportedMediaType", description: "A non-empty body sent without Content-Type: application/json.",
		codes: []string{envelope.CodeInvalidRequest}},
	429: {name: "TooManyRequests", description: "A rate limit, or the limit of failed logins, is used up; retry after Retry-After seconds.",
		codes: []string{envelope.CodeRateLimit}, messages: []string{"Rate limit exceeded"}, header: middleware.HeaderRetryAfter},
	500: {name: "ServerError", description: "Anything unexpected. The message never reveals internals.",
		codes: []string{envelope.CodeServer}},
	503: {name: "ServiceUnavailable", description: "The store, the user directory or the rate limit store cannot be reached.",
		codes: []string{envelope.CodeServiceUnavailable}},
}

// obj is a JSON object of the document.
type obj = map[string]any

func ref(kind, name string) obj { return obj{"$ref": "#/components/" + kind + "/" + name} }

func schemaRef(name string) obj { return ref("schemas", name) }

// pathParam matches the parameters of a pattern.
var pathParam = regexp.MustCompile(`\{([a-z]+)\}`)

// openAPIDocument builds the document of a server of the given version.
// With requireAuth false the routes that take a token also run without one.
func openAPIDocument(version string, requireAuth bool) obj {
	paths := obj{}
	for _, pattern := range slices.Sorted(maps.Keys(operations)) {
		op := operations[pattern]
		method, path, _ := strings.Cut(pattern, " ")
		item, ok := paths[path].(obj)
		if !ok {
			item = obj{}
			var params []any
			for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
				params = append(params, ref("parameters", m[1]))
			}
			if params != nil {
				item["parameters"] = params
			}
			paths[path] = item
		}
		item[strings.ToLower(method)] = operationObject(op)
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
		},
		"tags": []any{
			obj{"name": "meta", "description": "Health and this document."},
			obj{"name": "auth", "description": "Tokens (JWT, HS256)."},
			obj{"name": "projects", "description": "Projects, owned by the user who created them."},
			obj{"name": "collections", "description": "Collections of a project."},
			obj{"name": "clusters", "description": "Clusters of a collection."},
			obj{"name": "records", "description": "Typed values of a cluster."},
		},
		"security": security,
		"paths":    paths,
		"components": obj{
			"securitySchemes": obj{"bearerAuth": obj{
				"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
				"description": "A token from POST /api/v1/auth/login or /api/v1/auth/refresh, sent as Authorization: Bearer <token>.",
			}},
			"schemas":       schemas(),
			"parameters":    parameters(),
			"requestBodies": requestBodies(),
			"responses":     responses(),
			"headers":       headers(),
		},
	}
}

const infoDescription = `The JSON REST API of hds. Paths are relative to where the handler is mounted (a host may serve them under a prefix such as /hds).

Every response under /api/v1/ except this document is an envelope: {"success": true, "data", "message"} or {"success": false, "error": {"code", "message", "details"}}. Unknown routes answer 404 RESOURCE_NOT_FOUND, and a path of this document with a method it does not list answers 405 INVALID_REQUEST with an Allow header (components.responses.MethodNotAllowed), with or without a token. A path with an empty, "." or ".." segment is 404, never redirected.

Request bodies are JSON objects sent with Content-Type: application/json; unknown fields are refused. Names are 1 to 128 code points with no control characters, no "/", not "." or "..", and no leading or trailing white space; in a path they are percent-encoded. Record types are accepted in any case and in the short forms STR, INT, FLT, BOOL (and []STR, ...); responses use the canonical names of RecordType.

Rate limits: every counted response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset of the window closest to running out; over a limit the answer is 429 with Retry-After. /health and this document are not counted.`

func operationObject(op operation) obj {
	o := obj{"operationId": op.id, "tags": []any{op.tag}, "summary": op.summary}
	if op.description != "" {
		o["description"] = op.description
	}
	switch op.access {
	case public:
		o["security"] = []any{}
	case expiredBearer:
		o["security"] = []any{obj{"bearerAuth": []any{}}}
	}
	params := []any{ref("parameters", "requestId")}
	for _, name := range op.query {
		params = append(params, ref("parameters", name))
	}
	o["parameters"] = params
	if op.body != "" {
		o["requestBody"] = ref("requestBodies", op.body)
	}
	resp := obj{}
	for status, name := range responsesOf(op) {
		resp[strconv.Itoa(status)] = ref("responses", name)
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

func schemas() obj {
	typeNames := make([]any, len(store.Types))
	for i, t := range store.Types {
		typeNames[i] = string(t)
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
	list := func(item string) obj {
		return object("One page of a list. total counts every match before limit and offset.", obj{
			"items":  obj{"type": "array", "items": schemaRef(item)},
			"total":  count,
			"limit":  obj{"type": "integer", "minimum": 1, "maximum": store.MaxLimit},
			"offset": count,
		}, "items", "total", "limit", "offset")
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

	s := obj{
		"Id": obj{"type": "string", "format": "uuid", "pattern": idPattern,
			"description": "A UUID version 7 in lowercase canonical form."},
		"Name": obj{"type": "string", "minLength": 1, "maxLength": store.MaxNameLength, "pattern": namePattern,
			"not":         obj{"enum": []any{".", ".."}},
			"description": "1 to 128 code points of UTF-8; no control characters (U+0000 to U+001F, U+007F to U+009F), no '/', not '.' or '..', no leading or trailing white space. Case-sensitive."},
		"Timestamp": obj{"type": "string", "format": "date-time", "pattern": timestampPattern,
			"description": "RFC 3339 in UTC with exactly six fraction digits and Z.", "examples": []any{"2026-11-22T08:18:19.123000Z"}},
		"Message": obj{"type": "string", "minLength": 1, "description": "A short success message."},
		"RecordType": obj{"type": "string", "enum": typeNames,
			"description": "The canonical name of a record type, as responses give it."},
		"TypeName": obj{"type": "string",
			"description": "A record type as input: a RecordType name in any case, or a short form STR, INT, FLT, BOOL, []STR, []INT, []FLT, []BOOL. An unknown type is 400 VALIDATION_ERROR listing every supported type.",
			"examples":    []any{"STRING", "int", "[]FLOAT"}},
		"RecordValue": obj{
			"description": "Any JSON value fitting the record's type: a string (STRING, DATE, TIME, DATETIME, UUID, CREDENTIAL), a number (INTEGER, FLOAT), a boolean, null, or an array of such for []T. Credentials are masked as \"********\" unless reveal=true."},

		"Project": object("A project.", obj{
			"id": schemaRef("Id"), "name": schemaRef("Name"),
			"owner_id":   obj{"type": "string", "minLength": 1, "description": "The owner's user id (\"anonymous\" for the anonymous user)."},
			"created_at": schemaRef("Timestamp"), "updated_at": schemaRef("Timestamp"),
			"collection_count": count,
		}, "id", "name", "owner_id", "created_at", "updated_at", "collection_count"),
		"Collection": object("A collection; project is its project's name. record_count counts the records of all its clusters.", obj{
			"id": schemaRef("Id"), "name": schemaRef("Name"), "project": schemaRef("Name"),
			"created_at": schemaRef("Timestamp"), "updated_at": schemaRef("Timestamp"),
			"cluster_count": count, "record_count": count,
		}, "id", "name", "project", "created_at", "updated_at", "cluster_count", "record_count"),
		"Cluster":     object("A cluster; project and collection are its parents' names.", clusterProps(false), clusterFields...),
		"ClusterData": object("A cluster with the value of every record.", clusterProps(true), slices.Concat(clusterFields, []string{"data"})...),
		"Record": object("A typed value.", obj{
			"id": schemaRef("Id"), "name": schemaRef("Name"), "type": schemaRef("RecordType"),
			"value":      schemaRef("RecordValue"),
			"version":    obj{"type": "integer", "minimum": 1, "description": "1 at creation, plus 1 on every update."},
			"created_at": schemaRef("Timestamp"), "updated_at": schemaRef("Timestamp"),
		}, "id", "name", "type", "value", "version", "created_at", "updated_at"),
		"ProjectList":    list("Project"),
		"CollectionList": list("Collection"),
		"ClusterList":    list("Cluster"),
		"RecordList":     list("Record"),
		"Token": object("A token and its lifetime in seconds.", obj{
			"token":      obj{"type": "string", "minLength": 1, "description": "A JWT (HS256)."},
			"expires_in": obj{"type": "integer", "minimum": 1},
			"user_id":    obj{"type": "string", "minLength": 1},
		}, "token", "expires_in", "user_id"),
		"Health": object("The service's health; not enveloped.", obj{
			"status":    obj{"type": "string", "enum": []any{"ok", "unavailable"}},
			"timestamp": schemaRef("Timestamp"),
			"version":   obj{"type": "string", "minLength": 1},
		}, "status", "timestamp", "version"),

		"ErrorCode": obj{"type": "string", "enum": []any{
			envelope.CodeInvalidRequest, envelope.CodeValidation, envelope.CodeAuthentication,
			envelope.CodeAuthorization, envelope.CodeNotFound, envelope.CodeExists, envelope.CodeRateLimit,
			envelope.CodeServer, envelope.CodeServiceUnavailable}},
		"Error": object("The error envelope.", obj{
			"success": obj{"type": "boolean", "const": false},
			"error": object("", obj{
				"code":    schemaRef("ErrorCode"),
				"message": obj{"type": "string", "minLength": 1},
				"details": obj{"type": "string", "description": "More about the error; an empty string when there is nothing to add."},
			}, "code", "message", "details"),
		}, "success", "error"),

		"Login": body("Credentials.", obj{"username": obj{"type": "string"}, "password": obj{"type": "string"}},
			"username", "password"),
		"NameBody":     body("A name.", obj{"name": schemaRef("Name")}, "name"),
		"PathNameBody": body("The name of the path again, if at all.", obj{"name": schemaRef("Name")}),
		"RecordCreate": body("A new record; value left out is null.", obj{
			"name": schemaRef("Name"), "type": schemaRef("TypeName"), "value": schemaRef("RecordValue"),
		}, "name", "type"),
		"RecordPathCreate": body("A new record named by the path; name, if given, must equal the path's.", obj{
			"name": schemaRef("Name"), "type": schemaRef("TypeName"), "value": schemaRef("RecordValue"),
		}, "type"),
	}
	update := body("What to change: any of value, type and name.", obj{
		"name": schemaRef("Name"), "type": schemaRef("TypeName"), "value": schemaRef("RecordValue"),
	})
	update["minProperties"] = 1
	s["RecordUpdate"] = update
	for _, name := range []string{"Project", "ProjectList", "Collection", "CollectionList", "Cluster", "ClusterList",
		"ClusterData", "Record", "RecordList", "Token"} {
		s[name+"Envelope"] = envelopeOf(name)
	}
	return s
}

func parameters() obj {
	query := func(name, description string, schema obj) obj {
		return obj{"name": name, "in": "query", "required": false, "description": description, "schema": schema}
	}
	path := func(name, description string) obj {
		return obj{"name": name, "in": "path", "required": true, "description": description, "schema": schemaRef("Name")}
	}
	sortBy := func(fields map[string]store.SortField) obj {
		names := sortNames(fields)
		enum := make([]any, len(names))
		for i, n := range names {
			enum[i] = n
		}
		return obj{"type": "string", "enum": enum, "default": string(store.SortName)}
	}
	return obj{
		"project":    path("project", "The project's name."),
		"collection": path("collection", "The collection's name."),
		"cluster":    path("cluster", "The cluster's name."),
		"record":     path("record", "The record's id, if a record of the cluster has that id; its name otherwise."),

		"requestId": obj{"name": middleware.RequestIDHeader, "in": "header", "required": false,
			"description": "An id for the request, echoed in the response and the log: 1 to 128 printable ASCII characters (any other value is replaced by a random id).",
			"schema":      obj{"type": "string"}},

		"limit": query("limit", "Page size, a decimal integer.",
			obj{"type": "integer", "minimum": 1, "maximum": store.MaxLimit, "default": store.DefaultLimit}),
		"offset": query("offset", "Matches to skip, a decimal integer.",
			obj{"type": "integer", "minimum": 0, "default": 0}),
		"search": query("search", "Case-insensitive substring of the name; %, _ and \\ are literal.",
			obj{"type": "string"}),
		"sortBy":       query("sortBy", "Sort field; ties are broken by name, then id.", sortBy(containerSortFields)),
		"recordSortBy": query("sortBy", "Sort field; ties are broken by name, then id. value puts numbers first (by numeric value), then every other value by its canonical text, then NULL and credentials.", sortBy(recordSortFields)),
		"sortOrder":    query("sortOrder", "Sort direction.", obj{"type": "string", "enum": []any{"asc", "desc"}, "default": "asc"}),
		"typeFilter":   query("type", "Only records of this type.", schemaRef("TypeName")),
		"valueFilter": query("value", "Only records whose canonical text equals this string exactly.",
			obj{"type": "string"}),
		"valueContains": query("valueContains", "Only records whose canonical text contains this string, case-insensitively; %, _ and \\ are literal.",
			obj{"type": "string"}),
		"reveal": query("reveal", "true returns credential values in plain text instead of masked.",
			obj{"type": "boolean", "default": false}),
		"rename":     query("rename", "The new name (path form; not with a body).", schemaRef("Name")),
		"recordType": query("type", "The record type (path form; not with a body).", schemaRef("TypeName")),
		"recordValue": query("value", "The value as text (path form; not with a body): STRING, DATE, TIME, DATETIME, UUID and CREDENTIAL as given; INTEGER, FLOAT and BOOLEAN parsed (42, 3.14, true); NULL empty or left out; arrays as a JSON array.",
			obj{"type": "string"}),
	}
}

func requestBodies() obj {
	jsonBody := func(description, schema string, required bool) obj {
		return obj{"description": description, "required": required,
			"content": obj{"application/json": obj{"schema": schemaRef(schema)}}}
	}
	return obj{
		"Login":            jsonBody("The username and password.", "Login", true),
		"Name":             jsonBody("The new resource's name.", "NameBody", true),
		"PathName":         jsonBody("Optional: the name of the path again.", "PathNameBody", false),
		"Rename":           jsonBody("The new name, unless ?rename= gives it.", "NameBody", false),
		"RecordCreate":     jsonBody("The new record.", "RecordCreate", true),
		"RecordPathCreate": jsonBody("The type and value, unless ?type= and ?value= give them.", "RecordPathCreate", false),
		"RecordUpdate":     jsonBody("What to change, unless the query parameters give it.", "RecordUpdate", false),
	}
}

func responses() obj {
	// rateHeaders are the rate limit headers and the extra ones, given as
	// a header name and the key of its components.headers entry.
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
	jsonContent := func(schema obj) obj { return obj{"application/json": obj{"schema": schema}} }
	success := func(description, schema string, extra ...string) obj {
		return obj{"description": description, "headers": rateHeaders(extra...),
			"content": jsonContent(schemaRef(schema))}
	}
	health := func(description, status string) obj {
		return obj{"description": description, "headers": obj{"Cache-Control": ref("headers", "NoStore"),
			middleware.RequestIDHeader: ref("headers", middleware.RequestIDHeader)},
			"content": jsonContent(obj{"allOf": []any{schemaRef("Health"),
				obj{"properties": obj{"status": obj{"const": status}}}}})}
	}
	r := obj{
		"Project":           success("The project.", "ProjectEnvelope"),
		"ProjectList":       success("A page of projects.", "ProjectListEnvelope"),
		"Collection":        success("The collection.", "CollectionEnvelope"),
		"CollectionList":    success("A page of collections.", "CollectionListEnvelope"),
		"Cluster":           success("The cluster.", "ClusterEnvelope"),
		"ClusterList":       success("A page of clusters.", "ClusterListEnvelope"),
		"ClusterData":       success("The cluster and its data.", "ClusterDataEnvelope"),
		"Record":            success("The record.", "RecordEnvelope"),
		"RecordList":        success("A page of records.", "RecordListEnvelope"),
		"Token":             success("A new token; never cached.", "TokenEnvelope", "NoStore"),
		"NoContent":         obj{"description": "Deleted, with everything beneath it.", "headers": rateHeaders()},
		"Health":            health("The store answers.", "ok"),
		"HealthUnavailable": health("The store does not answer.", "unavailable"),
		"OpenAPIDocument": obj{"description": "This document.",
			"headers": obj{"ETag": ref("headers", "ETag"), "Cache-Control": ref("headers", "CacheControl"),
				middleware.RequestIDHeader: ref("headers", middleware.RequestIDHeader)},
			"content": jsonContent(obj{"type": "object", "required": []any{"openapi", "info", "paths"},
				"description": "An OpenAPI 3.1 document."})},
		"NotModified": obj{"description": "The document named by If-None-Match is current.",
			"headers": obj{"ETag": ref("headers", "ETag"),
				middleware.RequestIDHeader: ref("headers", middleware.RequestIDHeader)}},
	}
	for _, status := range slices.Sorted(maps.Keys(errorResponses)) {
		e := errorResponses[status]
		codes := make([]any, len(e.codes))
		for i, c := range e.codes {
			codes[i] = c
		}
		detail := obj{"code": obj{"enum": codes}}
		if len(e.messages) > 0 {
			messages := make([]any, len(e.messages))
			for i, m := range e.messages {
				messages[i] = m
			}
			detail["message"] = obj{"enum": messages}
		}
		h := rateHeaders()
		if e.header != "" {
			h = rateHeaders(e.header, e.header)
		}
		r[e.name] = obj{
			"description": e.description,
			"headers":     h,
			"content": jsonContent(obj{"allOf": []any{schemaRef("Error"),
				obj{"properties": obj{"error": obj{"properties": detail}}}}}),
		}
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
		middleware.HeaderRetryAfter: obj{"description": "Seconds to wait before retrying.", "required": true,
			"schema": obj{"type": "integer", "minimum": 1}},
		"Allow": obj{"description": "The methods of the path.", "required": true,
			"schema": obj{"type": "string", "minLength": 1}},
		"NoStore": obj{"description": "The response is never cached.", "required": true,
			"schema": obj{"type": "string", "const": "no-store"}},
		"CacheControl": obj{"description": "Revalidate with If-None-Match before reusing the document.", "required": true,
			"schema": obj{"type": "string", "const": openAPICacheControl}},
		middleware.RequestIDHeader: obj{"description": "The request's id: the client's X-Request-ID when it is 1 to 128 printable ASCII characters, a new random one otherwise. The request log line has it too.",
			"required": true, "schema": obj{"type": "string", "minLength": 1, "maxLength": 128, "pattern": `^[\x21-\x7e]+$`}},
		"ETag": obj{"description": "The document's entity tag.", "required": true,
			"schema": obj{"type": "string", "minLength": 1}},
	}
}

// openAPICacheControl lets clients keep the document but revalidate it.
const openAPICacheControl = "no-cache"

// handleOpenAPI serves the document, built once here, not enveloped. It
// needs no token and is not counted by the rate limiter.
func handleOpenAPI(version string, requireAuth bool) http.Handler {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(openAPIDocument(version, requireAuth)); err != nil {
		panic("hds: encode the OpenAPI document: " + err.Error()) // maps of strings, numbers and slices always encode
	}
	doc := buf.Bytes()
	sum := sha256.Sum256(doc)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	return strictQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", openAPICacheControl)
		h.Set("ETag", etag)
		h.Set("Content-Type", envelope.ContentType)
		// ServeContent answers If-None-Match (304), HEAD and ranges.
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc))
	}))
}

package openapi

import (
	"net/http"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// queryParameters are the query parameters, by key; each is a component
// named queryParamName(key).
func (f Facts) queryParameters() map[string]obj {
	query := func(name, description string, schema obj) obj {
		return obj{"name": name, "in": "query", "required": false, "description": description, "schema": schema}
	}
	sortBy := func(names []string) obj {
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
		"sortBy":       query("sortBy", "Sort field; ties are broken by name, then id.", sortBy(f.ContainerSortBy)),
		"recordSortBy": query("sortBy", "Sort field; ties are broken by name, then id. value puts numbers first (by numeric value), then every other value by its canonical text, then NULL and credentials.", sortBy(f.RecordSortBy)),
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
		"resolve": query("resolve", "true replaces every reference (${NAME}, ${CLUSTER/NAME}, ${COLLECTION/CLUSTER/NAME}) in STRING and []STRING values by the referenced record's current value as text; a value that pulled in a credential is masked unless reveal=true. A reference that cannot be resolved is 422. Not with version (400).",
			obj{"type": "boolean", "default": false}),
		"types": query("types", "true adds types to the cluster data: every record name mapped to its type name. The ETag is the same with or without it.",
			obj{"type": "boolean", "default": false}),
		"rename": query("rename", "The new name (path form; not with a body).", schemaRef("Name")),
		"version": query("version", "A version of the record, a positive decimal integer: the record as it was then.",
			obj{"type": "integer", "minimum": 1}),
		"restoreVersion": query("version", "The version to restore, a positive decimal integer (not with a body).",
			obj{"type": "integer", "minimum": 1}),
		"format": query("format", "env answers the cluster's environment file (text/plain) instead of its data; any other value is 400.",
			obj{"type": "string", "enum": []any{f.FormatEnv}}),
		"importMode": query("mode", "merge creates and updates what the document holds and keeps what it lacks; replace also deletes what it lacks.",
			obj{"type": "string", "enum": []any{"merge", "replace"}, "default": "merge"}),
		"dryRun": query("dry_run", "true changes nothing and answers what the import would do.",
			obj{"type": "boolean", "default": false}),
		"diffFromSnapshot": query("from_snapshot", "Side A as a snapshot's name, instead of from: what a rollback to it would change (a snapshot of a collection pairs with a collection, of a cluster with a cluster).",
			obj{"type": "string", "minLength": 1}),
		"snapshotCollection": query("collection", "Only the snapshots taken of this collection (as named then).", schemaRef("Name")),
		"diffFrom": query("from", "Side A: a collection (COLLECTION) or a cluster (COLLECTION/CLUSTER).",
			obj{"type": "string", "minLength": 1}),
		"diffTo": query("to", "Side B: a collection or a cluster, as from (both of one kind, not equal).",
			obj{"type": "string", "minLength": 1}),
		"unchanged": query("unchanged", "true also lists the unchanged records (they are always counted).",
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
			"description": "* or a comma-separated list of entity tags: 304 when the answer's ETag is among them (weak comparison: W/\"x\" matches \"x\"). Malformed: 400.",
			"schema":      obj{"type": "string"}},
	}
}

func (f Facts) parameters() obj {
	path := func(name, description string) obj {
		return obj{"name": name, "in": "path", "required": true, "description": description, "schema": schemaRef("Name")}
	}
	p := obj{
		pathParamName("project"):    path("project", "The project's name."),
		pathParamName("collection"): path("collection", "The collection's name."),
		pathParamName("cluster"):    path("cluster", "The cluster's name."),
		pathParamName("record"):     path("record", "The record's id, if a record of the cluster has that id; its name otherwise."),
		pathParamName("name"):       path("name", "The snapshot's name."),
		pathParamName("username"): obj{"name": "username", "in": "path", "required": true, "description": "A user's username.",
			"schema": obj{"type": "string", "minLength": 1}},
		pathParamName("id"): obj{"name": "id", "in": "path", "required": true, "description": "An API token's id.",
			"schema": obj{"type": "string", "minLength": 1}},
	}
	for key, param := range f.queryParameters() {
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
		"Promote":        {"The two sides and what to apply.", "PromoteRequest", true},
		"MemberPut":      {"The member's role.", "MemberPutRequest", true},
		"APITokenCreate": {"The new API token's name, role, scope and lifetime.", "APITokenCreateRequest", true},
		"UserCreate":     {"The new user.", "UserCreateRequest", true},
		"UserUpdate":     {"What to change.", "UserUpdateRequest", true},
		"OwnerPut":       {"The new owner.", "OwnerPutRequest", true},
		"WebhookCreate":  {"The new webhook's url, actions, scope and secret.", "WebhookCreateRequest", true},
		"SnapshotCreate": {"The new snapshot's name, what it copies and its description.", "SnapshotCreateRequest", true},
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
func (f Facts) successResponses() map[string]successResponse {
	return map[string]successResponse{
		"Project":        {description: "The project.", schema: "ProjectEnvelope"},
		"ProjectList":    {description: "A page of projects.", schema: "ProjectListEnvelope"},
		"Collection":     {description: "The collection.", schema: "CollectionEnvelope"},
		"CollectionList": {description: "A page of collections.", schema: "CollectionListEnvelope"},
		"Cluster":        {description: "The cluster.", schema: "ClusterEnvelope"},
		"ClusterList":    {description: "A page of clusters.", schema: "ClusterListEnvelope"},
		"ClusterData": {description: "The cluster and its data; with format=env, its environment file (text/plain) instead. ETag names the cluster's stored state (the same for both forms).", schema: "ClusterDataEnvelope",
			extra: []string{f.SkippedRecordsHeader, "SkippedRecords", "ETag", "ClusterETag"},
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
		"ImportResult":  {description: "What the import changed (or, with dry_run=true, would change): records only.", schema: "ImportResultEnvelope"},
		"Diff":          {description: "The comparison, from one snapshot.", schema: "DiffEnvelope"},
		"PromoteResult": {description: "What the promote changed (or, with dry_run, would change): records only, and the automatic snapshot it took.", schema: "PromoteResultEnvelope"},
		"Snapshot":      {description: "The snapshot.", schema: "SnapshotEnvelope"},
		"SnapshotList":  {description: "A page of the project's snapshots, newest first.", schema: "SnapshotListEnvelope"},
		"SnapshotData":  {description: "The snapshot and its records.", schema: "SnapshotDataEnvelope"},
		"Member":        {description: "The member.", schema: "MemberEnvelope"},
		"MemberList":    {description: "A page of the project's members, the owner included.", schema: "MemberListEnvelope"},
		"APITokenCreated": {description: "The new API token, with its token string: shown this once.", schema: "APITokenCreatedEnvelope",
			extra: []string{"Cache-Control", "NoStore"}},
		"APITokenList": {description: "A page of the project's API tokens, without their token strings.", schema: "APITokenListEnvelope"},
		"User":         {description: "The user.", schema: "UserEnvelope"},
		"UserList":     {description: "A page of users, by username.", schema: "UserListEnvelope"},
		"Me":           {description: "The caller.", schema: "MeEnvelope"},
		"WebhookCreated": {description: "The new webhook, with its secret: shown this once.", schema: "WebhookCreatedEnvelope",
			extra: []string{"Cache-Control", "NoStore"}},
		"Webhook":      {description: "The webhook, without its secret.", schema: "WebhookEnvelope"},
		"WebhookList":  {description: "A page of the project's webhooks, oldest first, without their secrets.", schema: "WebhookListEnvelope"},
		"PingQueued":   {description: "The ping delivery, sent at once.", schema: "DeliveryEnvelope"},
		"DeliveryList": {description: "A page of the webhook's deliveries, newest first.", schema: "DeliveryListEnvelope"},
	}
}

func (f Facts) responses() obj {
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
			"content": jsonContent("Health", obj{"status": status, "timestamp": exampleTime, "version": "1.3.0",
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
		responseName("RevisionPreconditionFailed"): obj{"description": "412 PRECONDITION_FAILED (\"Precondition failed\"): the project's newest revision that changes something (credential.reveal entries not counted) is no longer if_revision (details: \"current revision is N\", N that revision); nothing changed.",
			"headers": rateHeaders(), "content": jsonContent("ErrorEnvelope", nil)},
		responseName("RecordNotModified"):  obj{"description": "The record's state is the one If-None-Match names.", "headers": rateHeaders("ETag", "RecordETag")},
		responseName("ClusterNotModified"): obj{"description": "The cluster's stored state is the one If-None-Match names: no body.", "headers": rateHeaders("ETag", "ClusterETag")},
		responseName("NotModified"): obj{"description": "The document named by If-None-Match is current.",
			"headers": obj{"ETag": ref("headers", "ETag"),
				middleware.RequestIDHeader: ref("headers", middleware.RequestIDHeader)}},
		responseName(DefaultResponse): obj{"description": defaultErrorDescription,
			"headers": rateHeaders(middleware.HeaderRetryAfter, middleware.HeaderRetryAfter, "Allow", "Allow"),
			"content": jsonContent("ErrorEnvelope", obj{"success": false,
				"error": obj{"code": envelope.CodeRateLimit, "message": "Rate limit exceeded", "details": ""}})},
	}
	for key, s := range f.successResponses() {
		content := jsonContent(s.schema, s.example)
		if s.stream != "" {
			content = obj{f.EventStreamType: obj{"schema": obj{"type": "string", "description": s.stream},
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
			"schema": obj{"type": "string", "const": CacheControl}},
		middleware.RequestIDHeader: obj{"description": "The request's id: the client's X-Request-ID when it is 1 to 128 printable ASCII characters, a new random one otherwise. The request log line has it too.",
			"required": true, "schema": obj{"type": "string", "minLength": 1, "maxLength": 128, "pattern": `^[\x21-\x7e]+$`}},
		"ETag": obj{"description": "The document's entity tag.", "required": true,
			"schema": obj{"type": "string", "minLength": 1}},
		"SkippedRecords": obj{"description": "With format=env: how many records the environment file leaves out because their names are not environment variable names (0 when none).",
			"schema": obj{"type": "integer", "minimum": 0}},
		"ClusterETag": obj{"description": "The strong entity tag of the cluster's stored state: it changes with every create, update, rename, restore and delete of a record of the cluster and every rename of the cluster, its collection or its project, and with nothing else; no other cluster or earlier state has it. With resolve=true it also covers every record the answer was built from. Opaque. Absent only when hds serves a store of its host's own that does not keep the cluster's state (store.ClusterStateKeeper): then no 304 either.", "required": false,
			"schema": obj{"type": "string", "pattern": `^"[\x21\x23-\x7e]+"$`}},
		"RecordETag": obj{"description": "The strong entity tag of the record's state: it changes with every change of the record and is never used again; opaque.", "required": true,
			"schema": obj{"type": "string", "pattern": `^"[\x21\x23-\x7e]+"$`}},
	}
}

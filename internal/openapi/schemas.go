package openapi

import (
	"slices"
	"strings"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/store"
)

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

func (f Facts) schemas() obj {
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
			p["types"] = obj{"type": "object", "description": "Only with types=true: every record name of the cluster mapped to its type name.",
				"propertyNames": schemaRef("Name"), "additionalProperties": schemaRef("RecordType")}
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
				"storage": obj{"type": "string", "enum": []any{"ok", "full"},
					"description": "Present only while the store's writes fail for want of storage (a full disk; reads still work), as full: status is then degraded."},
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
			envelope.CodePreconditionNeeded, envelope.CodeQuotaExceeded, envelope.CodeUnresolved},
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
	f.addTransferSchemas(s, object, body, count)
	f.addAccessSchemas(s, object, body, list)
	f.addUserSchemas(s, object, body, list)
	f.addWebhookSchemas(s, object, body, history)
	update := body("What to change: any of value, type and name.", recordInput)
	update["minProperties"] = 1
	s["RecordUpdateRequest"] = update
	for _, name := range []string{"Project", "ProjectList", "Collection", "CollectionList", "Cluster", "ClusterList",
		"ClusterData", "RecordItem", "RecordList", "RecordVersionList", "Token", "BatchResults", "ImportResult", "Diff", "AuditList",
		"Member", "MemberList", "APITokenCreated", "APITokenList", "User", "UserList", "Me",
		"Webhook", "WebhookCreated", "WebhookList", "Delivery", "DeliveryList"} {
		s[name+"Envelope"] = envelopeOf(name)
	}
	f.addSnapshotSchemas(s, object, body, history, count, envelopeOf)
	return s
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

// auditActions lists the actions of the audit log, for the schemas.
func auditActions() []any {
	out := make([]any, len(store.Actions))
	for i, a := range store.Actions {
		out[i] = string(a)
	}
	return out
}

// anys returns ss as a JSON array.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

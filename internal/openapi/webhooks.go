package openapi

import "github.com/hds-go/hds/store"

// addWebhookSchemas adds the schemas of the webhook routes
// (docs/api.md#22-webhooks) to s; page is a list without a cursor.
func (f Facts) addWebhookSchemas(s obj, object func(string, obj, ...string) obj, body func(string, obj, ...string) obj, page func(string) obj) {
	nullable := func(schema obj) obj { return obj{"oneOf": []any{schema, obj{"type": "null"}}} }
	var actions []any
	for _, a := range f.WebhookActions {
		actions = append(actions, string(a))
	}
	action := obj{"type": "string", "enum": actions}
	props := func(secret bool) (obj, []string) {
		p := obj{
			"id":         schemaRef("Id"),
			"url":        obj{"type": "string", "minLength": 1, "maxLength": f.MaxWebhookURL},
			"actions":    obj{"type": "array", "items": action, "minItems": 1, "description": "The actions it receives; every action of the change feed unless it was created with a list."},
			"collection": nullable(schemaRef("Name")),
			"cluster":    nullable(schemaRef("Name")),
			"created_at": schemaRef("Timestamp"),
		}
		fields := []string{"id", "url", "actions", "collection", "cluster", "created_at"}
		if secret {
			p["secret"] = obj{"type": "string", "minLength": f.MinWebhookSecret, "maxLength": f.MaxWebhookSecret, "description": "The key of X-Hds-Signature; shown in this answer only."}
			fields = append(fields, "secret")
		}
		return p, fields
	}
	p, fields := props(false)
	s["Webhook"] = object("A webhook of a project; collection and cluster are its scope (null: not narrowed).", p, fields...)
	p, fields = props(true)
	s["WebhookCreated"] = object("A new webhook with its secret.", p, fields...)
	s["WebhookList"] = page("Webhook")
	s["WebhookCreateRequest"] = body("A new webhook. actions: a list of change-feed actions (default all); collection, and cluster with it, narrow its scope; secret: 16 to 256 bytes (a random one when left out).", obj{
		"url":        obj{"type": "string", "minLength": 1, "maxLength": f.MaxWebhookURL},
		"actions":    obj{"type": "array", "items": action, "minItems": 1},
		"collection": schemaRef("Name"),
		"cluster":    schemaRef("Name"),
		"secret":     obj{"type": "string", "minLength": f.MinWebhookSecret, "maxLength": f.MaxWebhookSecret},
	}, "url")
	s["Delivery"] = object("One event on its way to a webhook.", obj{
		"id":               obj{"type": "string", "format": "uuid", "description": "The X-Hds-Delivery header: the same on every attempt."},
		"revision":         obj{"type": []any{"integer", "null"}, "minimum": 1, "description": "The event's revision; null for a ping."},
		"action":           obj{"type": "string", "enum": append(append([]any{}, actions...), string(store.ActionPing))},
		"status":           obj{"type": "string", "enum": []any{"pending", "succeeded", "failed"}},
		"attempts":         obj{"type": "integer", "minimum": 0},
		"last_status_code": obj{"type": []any{"integer", "null"}, "description": "The HTTP status of the last answer; null when none came."},
		"last_error":       obj{"type": []any{"string", "null"}, "description": "Why the last attempt failed; null when none did."},
		"next_attempt_at":  nullable(schemaRef("Timestamp")),
		"created_at":       schemaRef("Timestamp"),
	}, "id", "revision", "action", "status", "attempts", "last_status_code", "last_error", "next_attempt_at", "created_at")
	s["DeliveryList"] = page("Delivery")
}

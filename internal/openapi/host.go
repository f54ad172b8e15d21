package openapi

import (
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// HostResponse is the success response of a route a host adds to the
// handler (handler.AdminRoute): the host's schemas are not components of
// the document, so the response is written in place in its operation,
// with the headers every counted response carries.
type HostResponse struct {
	// Description says what the response is.
	Description string
	// Data is the JSON Schema of the envelope's data; with List, of one
	// item of a page of docs/api.md#list-queries (items, total, limit,
	// offset). nil, without MediaType: a response without a body.
	Data map[string]any
	List bool
	// MediaType, when set, is the content type of a body that is not
	// enveloped (a file): its schema is a binary string.
	MediaType string
	// Headers are further response headers, by name, each with its
	// description (a string, required).
	Headers map[string]string
}

// object is the response object of r.
func (r *HostResponse) object() obj {
	h := obj{middleware.RequestIDHeader: ref("headers", middleware.RequestIDHeader)}
	for _, name := range []string{middleware.HeaderLimit, middleware.HeaderRemaining, middleware.HeaderReset} {
		h[name] = ref("headers", name)
	}
	for name, description := range r.Headers {
		h[name] = obj{"description": description, "required": true, "schema": obj{"type": "string", "minLength": 1}}
	}
	o := obj{"description": r.Description, "headers": h}
	switch {
	case r.MediaType != "":
		o["content"] = obj{r.MediaType: obj{"schema": obj{"type": "string", "format": "binary"}}}
	case r.Data != nil:
		data := any(r.Data)
		if r.List {
			data = obj{"type": "object", "additionalProperties": false,
				"description": "One page of a list. total counts every item before limit and offset.",
				"properties": obj{
					"items":  obj{"type": "array", "items": r.Data},
					"total":  obj{"type": "integer", "minimum": 0},
					"limit":  obj{"type": "integer", "minimum": 1, "maximum": store.MaxLimit},
					"offset": obj{"type": "integer", "minimum": 0},
				},
				"required": []any{"items", "total", "limit", "offset"}}
		}
		o["content"] = obj{"application/json": obj{"schema": obj{
			"type": "object", "description": "The success envelope.", "additionalProperties": false,
			"properties": obj{
				"success": obj{"type": "boolean", "const": true},
				"data":    data,
				"message": schemaRef("Message"),
			},
			"required": []any{"success", "data", "message"},
		}}}
	}
	return o
}

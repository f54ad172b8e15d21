package openapi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// good is an operation every component of which exists.
func good(id string) Operation {
	return Operation{ID: id, Tag: "projects", Summary: "s", Description: "d", Access: Bearer, Counted: true,
		Query: []string{"limit"}, Headers: []string{"ifMatch"}, Body: "Name", Status: 200, Success: "Project",
		Errors: []int{400, 403}, Other: map[int]string{412: "OpPreconditionFailed"}}
}

// TestValidate checks that Validate accepts a well-described table and
// names each kind of mistake a route table can make.
func TestValidate(t *testing.T) {
	require.NoError(t, Validate([]Route{{"GET /a", good("getA")}, {"PUT /a", good("putA")}}))
	for _, tt := range []struct {
		name   string
		routes []Route
		want   string
	}{
		{"twice", []Route{{"GET /a", good("getA")}, {"GET /a", good("getB")}}, "GET /a: registered twice"},
		{"same id", []Route{{"GET /a", good("getA")}, {"PUT /a", good("getA")}}, `PUT /a: operationId "getA" is empty or also used by GET /a`},
		{"no summary", []Route{{"GET /a", func() Operation { o := good("getA"); o.Summary = ""; return o }()}}, "summary, tag, status and success are required"},
		{"unknown success", []Route{{"GET /a", func() Operation { o := good("getA"); o.Success = "Nope"; return o }()}}, `success response "Nope" is not a component`},
		{"unknown error", []Route{{"GET /a", func() Operation { o := good("getA"); o.Errors = []int{418}; return o }()}}, "error status 418 has no response"},
		{"unknown other", []Route{{"GET /a", func() Operation { o := good("getA"); o.Other = map[int]string{304: "Nope"}; return o }()}}, `the response "Nope" of status 304 is not a component`},
		{"unknown query", []Route{{"GET /a", func() Operation { o := good("getA"); o.Query = []string{"nope"}; return o }()}}, `query parameter "nope" is not a component`},
		{"unknown header", []Route{{"GET /a", func() Operation { o := good("getA"); o.Headers = []string{"nope"}; return o }()}}, `header parameter "nope" is not a component`},
		{"unknown body", []Route{{"GET /a", func() Operation { o := good("getA"); o.Body = "Nope"; return o }()}}, `request body "Nope" is not a component`},
	} {
		err := Validate(tt.routes)
		if assert.Error(t, err, tt.name) {
			assert.Contains(t, err.Error(), tt.want, tt.name)
		}
	}
}

// TestEncode checks that the document holds each route once, under its
// path, with its path parameters, and that the same table always encodes
// to the same bytes (the served ETag depends on it).
func TestEncode(t *testing.T) {
	routes := []Route{{"GET /api/v1/projects/{project}", good("getProject")}, {"GET /health", func() Operation {
		o := good("getHealth")
		o.Access = Public
		return o
	}()}}
	raw := Encode(routes, Facts{}, "1.2.3", true)
	assert.Equal(t, raw, Encode(routes, Facts{}, "1.2.3", true))
	var doc struct {
		Info  struct{ Version string }
		Paths map[string]map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, "1.2.3", doc.Info.Version)
	require.Len(t, doc.Paths, 2)
	assert.JSONEq(t, `[{"$ref":"#/components/parameters/ProjectPath"}]`, string(doc.Paths["/api/v1/projects/{project}"]["parameters"]))
	var health struct {
		OperationID string `json:"operationId"`
		Security    []any
		Responses   map[string]any
	}
	require.NoError(t, json.Unmarshal(doc.Paths["/health"]["get"], &health))
	assert.Equal(t, "getHealth", health.OperationID)
	assert.Empty(t, health.Security, "a public route needs no token")
	assert.NotContains(t, health.Responses, "401", "a public route reads no token")
}

package handler

// The served document is checked against the OpenAPI 3.1 specification
// (libopenapi-validator) by the test module, internal/e2e/openapi_test.go,
// with every request and response of the black-box HTTP suite: that keeps
// the validator's dependencies out of the library's module. Here: every
// $ref resolves, and the document says what each route needs.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// TestOpenAPIDescribesEveryRoute checks the operation every route is
// registered with (openapi.Validate): a unique operationId, a summary, a
// tag, a success response, and statuses, parameters and bodies that have a
// component.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	rt := routes(Config{Webhooks: &Webhooks{}, Store: memory.New()})
	require.NoError(t, openapi.Validate(rt.routes))
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// opOf returns the operation of a registered pattern.
func opOf(pattern string) openapi.Operation {
	for _, r := range routes(Config{Webhooks: &Webhooks{}, Store: memory.New()}).routes {
		if r.Pattern == pattern {
			return r.Operation
		}
	}
	return openapi.Operation{}
}

// serveDocument fetches the document from a router of the given setting.
func serveDocument(t *testing.T, requireAuth bool) []byte {
	t.Helper()
	h := New(Config{Version: "1.2.3", AllowAnonymous: !requireAuth, Webhooks: &Webhooks{}, Store: memory.New()})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// TestOpenAPIDocumentValidates checks that every $ref of the served
// document resolves and what the document must say about the routes (its
// validation against the OpenAPI 3.1 specification is in internal/e2e).
func TestOpenAPIDocumentValidates(t *testing.T) {
	for _, requireAuth := range []bool{true, false} {
		t.Run(fmt.Sprintf("require_auth=%v", requireAuth), func(t *testing.T) {
			raw := serveDocument(t, requireAuth)
			var tree map[string]any
			if err := json.Unmarshal(raw, &tree); err != nil {
				t.Fatal(err)
			}
			checkRefs(t, tree, tree, "#")
			checkDocumentRoutes(t, tree, requireAuth)
		})
	}
}

// checkRefs reports every $ref of node that names nothing in root.
func checkRefs(t *testing.T, root, node any, at string) {
	t.Helper()
	switch n := node.(type) {
	case map[string]any:
		if r, ok := n["$ref"].(string); ok {
			var cur any = root
			for _, part := range strings.Split(strings.TrimPrefix(r, "#/"), "/") {
				m, _ := cur.(map[string]any)
				cur = m[part]
			}
			if cur == nil {
				t.Errorf("%s: $ref %s names nothing", at, r)
			}
		}
		for k, v := range n {
			checkRefs(t, root, v, at+"/"+k)
		}
	case []any:
		for i, v := range n {
			checkRefs(t, root, v, fmt.Sprintf("%s/%d", at, i))
		}
	}
}

// checkDocumentRoutes checks that the document's operations are exactly
// the registered routes, with the security, parameters and statuses they
// need.
func checkDocumentRoutes(t *testing.T, tree map[string]any, requireAuth bool) {
	t.Helper()
	paths, _ := tree["paths"].(map[string]any)
	var documented []string
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			if method == "parameters" {
				continue
			}
			pattern := strings.ToUpper(method) + " " + path
			documented = append(documented, pattern)
			o := op.(map[string]any)
			desc := opOf(pattern)
			sec, hasSec := o["security"]
			switch {
			case desc.Access == openapi.Public && (!hasSec || len(sec.([]any)) != 0):
				t.Errorf("%s: public, want security: [] (got %v)", pattern, sec)
			case desc.Access == openapi.Bearer && !desc.UsersOnly && hasSec:
				t.Errorf("%s: needs a token, want the document's security (got %v)", pattern, sec)
			case desc.UsersOnly && (!hasSec || len(sec.([]any)) != map[bool]int{true: 1, false: 2}[requireAuth] ||
				sec.([]any)[0].(map[string]any)["bearerAuth"] == nil):
				t.Errorf("%s: for users only, want bearerAuth alone (and none when require_auth is false), got %v", pattern, sec)
			}
			if d, _ := o["description"].(string); d == "" {
				t.Errorf("%s: no description", pattern)
			}
			for _, p := range asSlice(o["parameters"]) {
				if r, _ := p.(map[string]any)["$ref"].(string); strings.Contains(r, "RequestId") || r == "" {
					t.Errorf("%s: parameter %v: X-Request-ID is documented once, not per operation", pattern, p)
				}
			}
			responses := o["responses"].(map[string]any)
			// Every other error (413, 415, 429, 500, 503) is the default
			// response.
			want := []string{"default"}
			if desc.Access != openapi.Public {
				want = append(want, "401")
			}
			if strings.Contains(path, "{project}") {
				want = append(want, "400")
				if pattern != "POST "+pathP { // no parent; a project anyone has is 409
					want = append(want, "403", "404")
				}
			}
			for status, r := range responses {
				if strings.HasPrefix(status, "4") || strings.HasPrefix(status, "5") || status == "default" {
					name := strings.TrimPrefix(r.(map[string]any)["$ref"].(string), "#/components/responses/")
					comp := tree["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
					schema := comp["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
					wantSchema := "#/components/schemas/ErrorEnvelope"
					if pattern == "GET /health" && status == "503" {
						wantSchema = "#/components/schemas/Health"
					}
					if schema["$ref"] != wantSchema {
						t.Errorf("%s: %s response schema %v, want a direct $ref to %s", pattern, status, schema, wantSchema)
					}
				}
			}
			for _, s := range want {
				if _, ok := responses[s]; !ok {
					t.Errorf("%s: no %s response", pattern, s)
				}
			}
		}
	}
	slices.Sort(documented)
	var registered []string
	for _, r := range routes(Config{Webhooks: &Webhooks{}, Store: memory.New()}).routes {
		registered = append(registered, r.Pattern)
	}
	slices.Sort(registered)
	if !slices.Equal(documented, registered) {
		t.Errorf("documented operations\n%v\nwant the registered routes\n%v", documented, registered)
	}
	security := tree["security"].([]any)
	if wantLen := map[bool]int{true: 1, false: 2}[requireAuth]; len(security) != wantLen {
		t.Errorf("security %v: want bearerAuth (a JWT or an API token), and also none when require_auth is false", security)
	}
	if schemes := tree["components"].(map[string]any)["securitySchemes"].(map[string]any); len(schemes) != 1 {
		t.Errorf("security schemes %v: want one (bearerAuth) for both kinds of token", schemes)
	}

	// The record type enum is every type of store.Types.
	enum := tree["components"].(map[string]any)["schemas"].(map[string]any)["RecordType"].(map[string]any)["enum"].([]any)
	if len(enum) != len(store.Types) {
		t.Errorf("RecordType enum %v, want the %d types", enum, len(store.Types))
	}
}

// TestOpenAPIServed checks how the document is served: not enveloped, as
// JSON, revalidated by ETag, without a token and without being counted.
func TestOpenAPIServed(t *testing.T) {
	h := New(Config{Version: "1.0.0"})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET without a token: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &top); err != nil || top["openapi"] == nil || top["success"] != nil {
		t.Errorf("the body is not the bare document: %v", err)
	}
	etag := rec.Header().Get("ETag")
	if etag == "" || rec.Header().Get("Cache-Control") != openapi.CacheControl {
		t.Errorf("ETag %q, Cache-Control %q", etag, rec.Header().Get("Cache-Control"))
	}
	r := httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil)
	r.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match the ETag: %d with %d bytes, want 304 and no body", rec.Code, rec.Body.Len())
	}
}

// TestOpenAPIGeneratorFriendly checks what client generators need (issue
// 17): component names distinct across sections and from the types
// generators derive from operation ids, typed record values, servers and
// contact, enum names, and the Health schema referenced directly.
func TestOpenAPIGeneratorFriendly(t *testing.T) {
	var tree map[string]any
	require.NoError(t, json.Unmarshal(serveDocument(t, true), &tree))
	components := tree["components"].(map[string]any)

	// One name, one component: generators make one type per component of
	// every section (oapi-codegen failed on "Cluster" as a parameter, a
	// response and a schema), and types per operation (Params, Response,
	// JSONRequestBody, Res, Req).
	seen := map[string]string{}
	normalize := func(name string) string { return strings.ToLower(name) }
	for _, section := range []string{"schemas", "parameters", "requestBodies", "responses", "headers", "securitySchemes"} {
		for name := range components[section].(map[string]any) {
			if section == "headers" || section == "securitySchemes" {
				continue // not turned into types
			}
			key := normalize(name)
			assert.Empty(t, seen[key], "components.%s.%s shares its name with components.%s", section, name, seen[key])
			seen[key] = section + "." + name
		}
	}
	for _, r := range routes(Config{Webhooks: &Webhooks{}, Store: memory.New()}).routes {
		id := strings.ToUpper(r.Operation.ID[:1]) + r.Operation.ID[1:]
		for _, suffix := range []string{"", "Params", "Response", "JSONRequestBody", "JSONBody", "Res", "Req", "OK"} {
			assert.Empty(t, seen[normalize(id+suffix)], "operation %s: a generated type %s%s is also %s", r.Operation.ID, id, suffix, seen[normalize(id+suffix)])
		}
	}
	schemas := components["schemas"].(map[string]any)
	for _, shadowed := range []string{"Record", "Error", "Object", "String", "Number", "Boolean", "Array", "Date", "Map"} {
		assert.NotContains(t, schemas, shadowed, "a schema named %s shadows a TypeScript global", shadowed)
	}

	// RecordValue is an anyOf of variants, one per JSON type and one per
	// number type (issue 25: INTEGER is integer/int64, FLOAT
	// number/double), named but for the integer.
	// The integer variant is written in place: ogen tells it from the
	// number only so.
	for _, name := range []string{"RecordValue", "ScalarValue"} {
		var variants []string
		for _, v := range schemas[name].(map[string]any)["anyOf"].([]any) {
			if ref, ok := v.(map[string]any)["$ref"].(string); ok {
				variants = append(variants, ref)
			} else {
				assert.Equal(t, map[string]any{"type": "integer", "format": "int64"}, pick(v, "type", "format"), "%s: the variant in place", name)
				variants = append(variants, "integer")
			}
		}
		want := []string{"#/components/schemas/StringValue", "integer", "#/components/schemas/FloatValue",
			"#/components/schemas/BooleanValue", "#/components/schemas/NullValue", "#/components/schemas/ArrayValue"}
		if name == "ScalarValue" {
			want = want[:5]
		}
		assert.Equal(t, want, variants, name)
	}
	assert.Equal(t, map[string]any{"type": "number", "format": "double"}, pick(schemas["FloatValue"], "type", "format"))

	// x-enum-varnames names every record type.
	rt := schemas["RecordType"].(map[string]any)
	names := rt["x-enum-varnames"].([]any)
	require.Len(t, names, len(store.Types))
	assert.Equal(t, "String", names[0])
	assert.Contains(t, names, "DateTime")
	assert.Contains(t, names, "ArrayString")
	assert.Contains(t, names, "ArrayCredential")

	// servers: the standalone address, described with the mount prefix.
	servers := tree["servers"].([]any)
	require.Len(t, servers, 1)
	assert.Equal(t, "http://127.0.0.1:8080", servers[0].(map[string]any)["url"])
	assert.Contains(t, servers[0].(map[string]any)["description"], "append your mount prefix")
	assert.NotEmpty(t, tree["info"].(map[string]any)["contact"])

	// Health, for 200 and 503, is the Health schema itself.
	get := tree["paths"].(map[string]any)["/health"].(map[string]any)["get"].(map[string]any)
	responses := components["responses"].(map[string]any)
	for _, status := range []string{"200", "503"} {
		name := strings.TrimPrefix(get["responses"].(map[string]any)[status].(map[string]any)["$ref"].(string), "#/components/responses/")
		schema := responses[name].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
		assert.Equal(t, map[string]any{"$ref": "#/components/schemas/Health"}, schema, "GET /health %s", status)
	}

	// The OpenAPIDocument schema declares its properties.
	assert.Contains(t, schemas["OpenAPIDocument"].(map[string]any)["properties"], "paths")
}

// pick returns the keys of the object schema that are in keys.
func pick(schema any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := schema.(map[string]any)[k]; ok {
			out[k] = v
		}
	}
	return out
}

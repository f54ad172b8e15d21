package e2e_test

// The HTTP suite against the OpenAPI document (GET /api/v1/openapi.json):
// every request the client helpers send and every response they receive
// (client.send and client.raw in helpers_test.go) is validated against the
// document the handler under test serves, so that, run on every store
// kind, the suite proves the document and the behaviour agree.
//
// The validator is github.com/pb33f/libopenapi-validator (on
// github.com/pb33f/libopenapi), not github.com/getkin/kin-openapi:
// libopenapi models OpenAPI 3.1 natively (JSON Schema 2020-12, through a
// maintained jsonschema/v6 fork) and has done so for years, and it checks
// a document against the official OpenAPI 3.1 JSON Schema
// (TestOpenAPIDocumentValidates), whereas kin-openapi's 3.1 support is recent
// and its document check is its own Go code. It validates a response's
// status (an undocumented status fails), its headers (required ones
// present, every documented one of its schema) and its body against the
// schema; a request's path, query and header parameters, security and
// body.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/responses"
	"github.com/pb33f/libopenapi-validator/router"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// contract validates exchanges against one OpenAPI document.
type contract struct {
	validator validator.Validator
	router    router.Router
	model     *v3.Document
	schemas   schema_validation.SchemaValidator
}

// contracts caches a contract per document text: every handler of the
// suite serves one of a few documents.
var contracts sync.Map // string -> *contract

// contractOf fetches the document a handler serves (under mount) and
// returns its contract. A handler that serves no valid document fails the
// test.
func contractOf(t testing.TB, h http.Handler, mount string) *contract {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, mount+"/api/v1/openapi.json", nil))
	require.Equal(t, http.StatusOK, rec.Code, "GET %s/api/v1/openapi.json: %s", mount, rec.Body)
	key := rec.Body.String()
	if c, ok := contracts.Load(key); ok {
		return c.(*contract)
	}
	doc, err := libopenapi.NewDocument(rec.Body.Bytes())
	require.NoError(t, err, "parse the OpenAPI document")
	model, err := doc.BuildV3Model()
	require.NoError(t, err, "build the OpenAPI model")
	v, errs := validator.NewValidator(doc)
	require.Empty(t, errs, "OpenAPI validator")
	c := &contract{validator: v, router: router.NewRouter(&model.Model, router.WithPathOnlyMatching()),
		model: &model.Model, schemas: schema_validation.NewSchemaValidator()}
	actual, _ := contracts.LoadOrStore(key, c)
	return actual.(*contract)
}

// checkContract reports (assert.Fail) how an exchange breaks the client's
// document. reqBody is the body r was sent with.
func (c *client) checkContract(r *http.Request, reqBody []byte, res *http.Response, body []byte) {
	c.t.Helper()
	api := c.api
	if api == nil { // a client built by hand
		api = contractOf(c.t, c.h, c.mount)
	}
	what := r.Method + " " + r.URL.String()
	for _, problem := range api.check(c.mount, r, reqBody, res, body) {
		assert.Fail(c.t, "breaks the OpenAPI document", "%s: %d: %s", what, res.StatusCode, problem)
	}
}

// check returns every way the exchange breaks the document: the response
// always; the request too when the server accepted it (2xx), so that the
// document is never stricter than the server. A path the document does
// not describe (an unknown route, a method the path does not have, a path
// that is not canonical) must get the router's 404 or 405 error envelope,
// or an answer every route may give before routing (413, 429, 503, 500),
// each as the document's component response of that status describes it.
func (api *contract) check(mount string, r *http.Request, reqBody []byte, res *http.Response, body []byte) []string {
	if isPreflight(r) {
		return nil // CORS (docs/api.md#cors), answered before routing
	}
	vr := r.Clone(context.Background())
	if mount != "" {
		vr.URL.Path = strings.TrimPrefix(vr.URL.Path, mount)
		vr.URL.RawPath = strings.TrimPrefix(vr.URL.RawPath, mount)
	}
	vr.Body = io.NopCloser(bytes.NewReader(reqBody))
	if len(reqBody) == 0 {
		// An empty body needs no Content-Type (docs/api.md#conventions),
		// which OpenAPI cannot say: without a body, the header says
		// nothing.
		vr.Header.Del("Content-Type")
	}
	vres := &http.Response{StatusCode: res.StatusCode, Header: res.Header, Request: vr,
		Body: io.NopCloser(bytes.NewReader(body))}

	route, err := api.router.FindRoute(vr)
	if err != nil || route == nil || route.Operation == nil || !canonicalPath(vr.URL.EscapedPath()) {
		return api.checkUndocumented(vres, body)
	}
	var problems []string
	if ok, errs := api.validator.ValidateHttpResponse(vr, vres); !ok {
		problems = append(problems, describe("response", errs)...)
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		vr.Body = io.NopCloser(bytes.NewReader(reqBody))
		if ok, errs := api.validator.ValidateHttpRequest(vr); !ok {
			problems = append(problems, describe("request accepted by the server", errs)...)
		}
	}
	return problems
}

// undocumented are the component responses a path outside the document
// may get, by status: 404, and the default response of every operation
// for the others.
var undocumented = map[int]string{
	http.StatusNotFound:              "NotFoundResponse",
	http.StatusMethodNotAllowed:      "OtherErrorResponse",
	http.StatusRequestEntityTooLarge: "OtherErrorResponse",
	http.StatusTooManyRequests:       "OtherErrorResponse",
	http.StatusServiceUnavailable:    "OtherErrorResponse",
	http.StatusInternalServerError:   "OtherErrorResponse",
}

func (api *contract) checkUndocumented(res *http.Response, body []byte) []string {
	name, ok := undocumented[res.StatusCode]
	if !ok {
		return []string{fmt.Sprintf("a path outside the document answered %d, want 404 or 405 (or 413, 429, 500, 503)", res.StatusCode)}
	}
	resp := api.model.Components.Responses.GetOrZero(name)
	if resp == nil {
		return []string{"the document has no component response " + name}
	}
	var problems []string
	if ok, errs := responses.ValidateResponseHeaders(res.Request, res, resp.Headers, "", strconv.Itoa(res.StatusCode)); !ok {
		problems = append(problems, describe("response "+name, errs)...)
	}
	mt := resp.Content.GetOrZero("application/json")
	if ct := res.Header.Get("Content-Type"); mt == nil || !strings.HasPrefix(ct, "application/json") {
		return append(problems, fmt.Sprintf("response %s: Content-Type %q", name, ct))
	}
	if ok, errs := api.schemas.ValidateSchemaBytes(mt.Schema.Schema(), body); !ok {
		problems = append(problems, describe("response "+name, errs)...)
	}
	return problems
}

func describe(what string, errs []*liberrors.ValidationError) []string {
	var out []string
	for _, e := range errs {
		s := what + ": " + e.Message
		if e.Reason != "" && e.Reason != e.Message {
			s += ": " + e.Reason
		}
		for _, se := range e.SchemaValidationErrors {
			s += fmt.Sprintf("; at %s (%s): %s", se.FieldPath, se.KeywordLocation, se.Reason)
		}
		out = append(out, s)
	}
	return out
}

// isPreflight reports a CORS preflight request.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" &&
		r.Header.Get("Access-Control-Request-Method") != ""
}

// canonicalPath reports whether an escaped path has no empty segment and
// no "." or ".." segment, raw or percent-encoded
// (docs/api.md#conventions): the others are 404 whatever route they
// resemble.
func canonicalPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch strings.ToLower(seg) {
		case "", ".", "..", "%2e", "%2e%2e", ".%2e", "%2e.":
			return false
		}
	}
	return true
}

// readBody reads and restores a request's body.
func readBody(r *http.Request) []byte {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

// TestOpenAPIDocumentValidates checks the document hds.New serves, with a
// token required and not (and webhooks on, so that every route is in
// it), against the OpenAPI 3.1 specification's JSON
// Schema and builds its model (every $ref resolved). (Moved from
// handler/openapi_test.go with the validator, which the library's module
// does not require; the document's own consistency is checked there.)
func TestOpenAPIDocumentValidates(t *testing.T) {
	for _, requireAuth := range []bool{true, false} {
		t.Run(fmt.Sprintf("require_auth=%v", requireAuth), func(t *testing.T) {
			h := hds.New(hds.WithLogger(quietLogger), hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: !requireAuth}),
				hds.WithWebhooks(hds.Webhooks{Enabled: true}), hds.WithShutdown(t.Context())) // every route in the document
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
			require.Equal(t, http.StatusOK, rec.Code, "GET /api/v1/openapi.json: %s", rec.Body)
			doc, err := libopenapi.NewDocument(rec.Body.Bytes())
			require.NoError(t, err, "parse")
			assert.Equal(t, "3.1.0", doc.GetVersion(), "openapi version")
			v, errs := validator.NewValidator(doc)
			require.Empty(t, errs, "build the model")
			if ok, verrs := v.ValidateDocument(); !ok {
				for _, e := range verrs {
					t.Errorf("not a valid OpenAPI 3.1 document: %s: %s", e.Message, e.Reason)
					for _, se := range e.SchemaValidationErrors {
						t.Errorf("  at %s (%s): %s", se.FieldPath, se.KeywordLocation, se.Reason)
					}
				}
			}
			model, err := doc.BuildV3Model()
			require.NoError(t, err, "build the model")
			assert.Equal(t, hds.Version, model.Model.Info.Version, "info.version is the server version")
		})
	}
}

// ---------------------------------------------------------------------
// What the rest of the suite does not reach: the document itself, rate
// limit headers and 429s, all validated by the client's hook.

func TestOpenAPIDocumentServed(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithRateLimit(1000, 2))
		for range 5 { // needs no token, not counted: never 429
			res := c.raw(httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
			require.Equal(t, http.StatusOK, res.StatusCode, "GET /api/v1/openapi.json: status")
			require.Equal(t, jsonType, res.Header.Get("Content-Type"), "GET /api/v1/openapi.json: Content-Type")
			assert.Empty(t, res.Header.Get("X-RateLimit-Limit"), "the OpenAPI document is counted by the rate limiter")
		}
		// With require_auth false, the document says no token is needed.
		open := c.attach(hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: true}))
		open.mustDo("POST", pathP("open"), "", "", http.StatusCreated)
		open.mustDo("GET", "/api/v1/projects", "", "", http.StatusOK)
	})
}

func TestOpenAPIRateLimitResponses(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithRateLimit(1000, 4))
		alice := c.token("alice") // one request by IP
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		var last http.Header
		for i := 0; ; i++ {
			status, h, env := c.do("GET", "/api/v1/projects", "", alice)
			if status == http.StatusTooManyRequests {
				last = h
				wantError(t, "over the limit", status, env, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
				break
			}
			require.Equal(t, http.StatusOK, status, "request %d: %s", i, env.raw)
			require.LessOrEqual(t, i, 10, "request %d: still no 429", i)
			_, err := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
			assert.NoError(t, err, "request %d: X-RateLimit-Remaining %q", i, h.Get("X-RateLimit-Remaining"))
		}
		assert.NotEmpty(t, last.Get("Retry-After"), "429 without Retry-After")
		// Failed logins past the throttle: 429 even with the right password.
		throttled := c.attach(hds.WithLoginThrottle(2, 100, time.Minute))
		for range 2 {
			status, _, env := throttled.do("POST", "/api/v1/auth/login", `{"username":"bob","password":"wrong"}`, "")
			wantError(t, "wrong password", status, env, http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")
		}
		status, _, env := throttled.do("POST", "/api/v1/auth/login", `{"username":"bob","password":"bob-password"}`, "")
		wantError(t, "login past the throttle", status, env, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "")
	})
}

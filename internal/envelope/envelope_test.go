package envelope_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

type errorBody struct {
	Success *bool `json:"success"`
	Error   struct {
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Details *string `json:"details"`
	} `json:"error"`
}

// TestErrorTable has one row per mapping of the error table.
func TestErrorTable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("context: %w", err) }
	tests := []struct {
		name    string
		err     error
		status  int
		code    string
		message string
		details string
		logged  bool
	}{
		{"request error", envelope.BadRequest("limit must be between 1 and 1000"), 400, "INVALID_REQUEST", "Invalid request", "limit must be between 1 and 1000", false},
		{"method not allowed", &envelope.RequestError{Status: 405, Message: "Method not allowed"}, 405, "INVALID_REQUEST", "Method not allowed", "", false},
		{"too large", envelope.TooLarge(10), 413, "INVALID_REQUEST", "Request body too large", "the request body must not exceed 10 bytes", false},
		{"validation", wrap(&store.ValidationError{Message: "name must not be empty"}), 400, "VALIDATION_ERROR", "Validation failed", "name must not be empty", false},
		{"no token", auth.ErrNoToken, 401, "AUTHENTICATION_FAILED", "No authorization token provided", "", false},
		{"bad signature", auth.ErrBadSignature, 401, "AUTHENTICATION_FAILED", "Invalid token signature", "", false},
		{"expired", auth.ErrTokenExpired, 401, "AUTHENTICATION_FAILED", "Token has expired", "", false},
		{"invalid token", auth.ErrInvalidToken, 401, "AUTHENTICATION_FAILED", "Invalid or expired token", "", false},
		{"session ended (checked by the store)", wrap(store.ErrSessionInvalid), 401, "AUTHENTICATION_FAILED", "Invalid or expired token", "", false},
		{"bad credentials", auth.ErrBadCredentials, 401, "AUTHENTICATION_FAILED", "Invalid username or password", "", false},
		{"not owner", wrap(store.ErrPermissionDenied), 403, "AUTHORIZATION_FAILED", "Insufficient permissions", "", false},
		{"no route", envelope.ErrNoRoute, 404, "RESOURCE_NOT_FOUND", "Resource not found", "no route matches this path", false},
		{"not found", wrap(&store.NotFoundError{Kind: "collection", Name: "prod"}), 404, "RESOURCE_NOT_FOUND", "Resource not found", `collection "prod" not found`, false},
		{"exists", wrap(&store.ExistsError{Kind: "project", Name: "web"}), 409, "RESOURCE_EXISTS", "Resource already exists", `project "web" already exists`, false},
		{"precondition failed", wrap(&store.PreconditionError{Version: 7, ETag: `"x.7"`}), 412, "PRECONDITION_FAILED", "Precondition failed", "current version is 7", false},
		{"revision moved on", wrap(&store.RevisionError{Revision: 12}), 412, "PRECONDITION_FAILED", "Precondition failed", "current revision is 12", false},
		{"precondition required", envelope.ErrPreconditionRequired, 428, "PRECONDITION_REQUIRED", "Precondition required", "", false},
		{"unresolved reference", wrap(&envelope.UnresolvedError{Record: "api_url", Reference: "${prod/db/host}", Reason: "not found"}), 422, "UNRESOLVED_REFERENCE", "Unresolved reference", "record api_url: ${prod/db/host}: not found", false},
		{"answer too large", wrap(&envelope.UnresolvedError{Record: "api_url", Reason: "too large"}), 422, "UNRESOLVED_REFERENCE", "Unresolved reference", "record api_url: too large", false},
		{"rate limited", envelope.ErrRateLimited, 429, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded", "", false},
		{"unavailable", wrap(fmt.Errorf("%w: dial tcp: refused", store.ErrUnavailable)), 503, "SERVICE_UNAVAILABLE", "Service unavailable", "", true},
		{"storage full", wrap(fmt.Errorf("%w: sqlite: database or disk is full", store.ErrStorageFull)), 503, "SERVICE_UNAVAILABLE", "Service unavailable", "storage full", true},
		{"rate limit store unavailable", wrap(fmt.Errorf("%w: dial tcp: refused", envelope.ErrRateLimitUnavailable)), 503, "SERVICE_UNAVAILABLE", "Service unavailable", "", true},
		{"unexpected", errors.New(`pq: syntax error at "SELECT secret"`), 500, "SERVER_ERROR", "Internal server error", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := &reqinfo.Info{}
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r = r.WithContext(reqinfo.NewContext(r.Context(), info))
			w := httptest.NewRecorder()
			envelope.Error(w, r, tt.err)
			if w.Code != tt.status {
				t.Errorf("status = %d, want %d", w.Code, tt.status)
			}
			if ct := w.Header().Get("Content-Type"); ct != envelope.ContentType {
				t.Errorf("Content-Type = %q", ct)
			}
			var body errorBody
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", w.Body.String(), err)
			}
			if body.Success == nil || *body.Success {
				t.Errorf("success = %v, want false", body.Success)
			}
			if body.Error.Code != tt.code || body.Error.Message != tt.message {
				t.Errorf("code, message = %q, %q; want %q, %q", body.Error.Code, body.Error.Message, tt.code, tt.message)
			}
			if body.Error.Details == nil || *body.Error.Details != tt.details {
				t.Errorf("details = %v, want %q", body.Error.Details, tt.details)
			}
			if logged := info.Err != nil; logged != tt.logged {
				t.Errorf("kept for the log = %v, want %v", logged, tt.logged)
			}
			if strings.Contains(w.Body.String(), "SELECT") || strings.Contains(w.Body.String(), "dial") {
				t.Errorf("the body leaks internals: %s", w.Body.String())
			}
		})
	}
}

func TestOK(t *testing.T) {
	w := httptest.NewRecorder()
	envelope.OK(w, http.StatusCreated, map[string]string{"a": "<b>"}, "Created")
	if w.Code != 201 || w.Body.String() != `{"success":true,"data":{"a":"<b>"},"message":"Created"}`+"\n" {
		t.Errorf("got %d %s", w.Code, w.Body.String())
	}
	w = httptest.NewRecorder()
	envelope.NoContent(w)
	if w.Code != 204 || w.Body.Len() != 0 {
		t.Errorf("got %d %q", w.Code, w.Body.String())
	}
}

func TestDecode(t *testing.T) {
	type body struct {
		Name *string `json:"name"`
		N    int     `json:"n"`
	}
	tests := []struct {
		name        string
		contentType string
		body        string
		present     bool
		status      int // 0: no error
		details     string
	}{
		{"empty", "", "", false, 0, ""},
		{"object", "application/json", `{"name":"x","n":2}`, true, 0, ""},
		{"charset", "application/json; charset=utf-8", `{"name":"x"}`, true, 0, ""},
		{"white space only", "application/json", "  \n", false, 0, ""},
		{"no content type", "", `{"name":"x"}`, false, 415, "request bodies must be sent as Content-Type: application/json"},
		{"text", "text/plain", `{"name":"x"}`, false, 415, "request bodies must be sent as Content-Type: application/json"},
		{"unknown field", "application/json", `{"name":"x","z":1}`, false, 400, `unknown field "z"`},
		{"field case", "application/json", `{"Name":"x"}`, false, 400, `unknown field "Name"`},
		{"array", "application/json", `[]`, false, 400, "the request body must be a JSON object"},
		{"null", "application/json", `null`, false, 400, "the request body must be a JSON object"},
		{"malformed", "application/json", `{"name":`, false, 400, "malformed JSON: syntax error at byte 8"},
		{"trailing", "application/json", `{} {}`, false, 400, "malformed JSON: syntax error at byte 4"},
		{"wrong type", "application/json", `{"name":5}`, false, 400, `field "name" must be a string`},
		{"invalid UTF-8", "application/json", "{\"name\":\"bad\xff\"}", false, 400, "the request body is not valid UTF-8"},
		{"lone high surrogate", "application/json", `{"name":"\ud800"}`, false, 400, `the request body holds an unpaired UTF-16 surrogate escape (\uD800 to \uDFFF)`},
		{"lone low surrogate", "application/json", `{"name":"a\uDC00b"}`, false, 400, `the request body holds an unpaired UTF-16 surrogate escape (\uD800 to \uDFFF)`},
		{"high then no low", "application/json", `{"name":"\ud83d\u0041"}`, false, 400, `the request body holds an unpaired UTF-16 surrogate escape (\uD800 to \uDFFF)`},
		{"surrogate pair", "application/json", `{"name":"\ud83d\ude00"}`, true, 0, ""},
		{"escaped backslash then u", "application/json", `{"name":"\\ud800"}`, true, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			var dst body
			present, err := envelope.Decode(r, &dst)
			if present != tt.present {
				t.Errorf("present = %v, want %v", present, tt.present)
			}
			var reqErr *envelope.RequestError
			switch {
			case tt.status == 0 && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.status != 0 && !errors.As(err, &reqErr):
				t.Errorf("error %v, want a RequestError", err)
			case tt.status != 0 && (reqErr.Status != tt.status || reqErr.Details != tt.details):
				t.Errorf("error %d %q, want %d %q", reqErr.Status, reqErr.Details, tt.status, tt.details)
			}
		})
	}
}

func TestDecodeTooLarge(t *testing.T) {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"name":"`+strings.Repeat("x", 100)+`"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Body = http.MaxBytesReader(w, r.Body, 50)
	var dst struct {
		Name string `json:"name"`
	}
	_, err := envelope.Decode(r, &dst)
	var reqErr *envelope.RequestError
	if !errors.As(err, &reqErr) || reqErr.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("error %v, want 413", err)
	}
}

// TestErrorClientGone: a request whose client went away is answered (and
// logged) as 499 with no body and no error cause, not as a 500.
func TestErrorClientGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil).WithContext(reqinfo.NewContext(ctx, &reqinfo.Info{}))
	rec := httptest.NewRecorder()
	envelope.Error(rec, r, fmt.Errorf("query: %w", context.Canceled))
	assert.Equal(t, envelope.StatusClientClosedRequest, rec.Code)
	assert.Empty(t, rec.Body.String())
	assert.Nil(t, reqinfo.From(r.Context()).Err, "not logged as a server error")

	// A cancellation the request's own context does not share stays a 500.
	live := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil).WithContext(reqinfo.NewContext(context.Background(), &reqinfo.Info{}))
	rec = httptest.NewRecorder()
	envelope.Error(rec, live, context.Canceled)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
}

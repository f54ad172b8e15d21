// Package envelope writes every response of the API in the contract's
// envelope, reads JSON request bodies strictly, and holds THE table that
// maps an error to its HTTP status, code and message
// (docs/api.md#errors). Handlers and middleware never choose a status for
// an error themselves: they call Error.
package envelope

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/observe"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// The error codes of the API contract.
const (
	CodeInvalidRequest     = "INVALID_REQUEST"
	CodeValidation         = "VALIDATION_ERROR"
	CodeAuthentication     = "AUTHENTICATION_FAILED"
	CodeAuthorization      = "AUTHORIZATION_FAILED"
	CodeNotFound           = "RESOURCE_NOT_FOUND"
	CodeExists             = "RESOURCE_EXISTS"
	CodeRateLimit          = "RATE_LIMIT_EXCEEDED"
	CodePreconditionFailed = "PRECONDITION_FAILED"
	CodePreconditionNeeded = "PRECONDITION_REQUIRED"
	CodeServer             = "SERVER_ERROR"
	CodeServiceUnavailable = "SERVICE_UNAVAILABLE"
	CodeQuotaExceeded      = "QUOTA_EXCEEDED"
	CodeUnresolved         = "UNRESOLVED_REFERENCE"
)

// ContentType is the Content-Type of every enveloped response.
const ContentType = "application/json; charset=utf-8"

// RequestError is a problem with the request itself (not with the data it
// names): the INVALID_REQUEST family. Its Message and Details go to the
// client as they are.
type RequestError struct {
	Status  int // 400, 405, 413 or 415
	Message string
	Details string
}

// Error returns the message and details.
func (e *RequestError) Error() string {
	if e.Details == "" {
		return e.Message
	}
	return e.Message + ": " + e.Details
}

// BadRequest returns a 400 INVALID_REQUEST error with the given details.
func BadRequest(details string) *RequestError {
	return &RequestError{Status: http.StatusBadRequest, Message: "Invalid request", Details: details}
}

// StatusClientClosedRequest is the status logged for a request whose
// client went away before it was answered (nginx's 499); it never reaches
// a client.
const StatusClientClosedRequest = 499

// ErrNoRoute is the error for a path that matches no route.
var ErrNoRoute = errors.New("no such route")

// ErrRateLimited is the error for a request over a rate limit; the
// middleware package exports it as middleware.ErrRateLimited.
var ErrRateLimited = errors.New("rate limit exceeded")

// LimitError is the error of a request over a limit other than the
// request rate (the open change feed streams of a user): 429
// RATE_LIMIT_EXCEEDED with Details. It matches ErrRateLimited.
type LimitError struct{ Details string }

// Error returns the details.
func (e *LimitError) Error() string { return e.Details }

// Is reports whether target is ErrRateLimited.
func (e *LimitError) Is(target error) bool { return target == ErrRateLimited }

// ErrRateLimitUnavailable is the error for a rate limit store that cannot
// be reached; the middleware package exports it as
// middleware.ErrRateLimitUnavailable.
var ErrRateLimitUnavailable = errors.New("rate limit store unavailable")

// ErrPreconditionRequired is the error for a write without If-Match when
// concurrency.require_if_match is on
// (docs/api.md#concurrency-control-and-record-history).
var ErrPreconditionRequired = errors.New("precondition required")

// UnresolvedError is a reference between records that cannot be resolved
// (docs/api.md#references-between-records): 422 UNRESOLVED_REFERENCE
// whose details name the record of the answer, the reference as written and
// why, for example `record api_url: ${prod/db/host}: not found`; or an
// answer whose resolved text in all is too large, without a reference:
// `record api_url: too large`.
type UnresolvedError struct {
	Record    string // the name of the record of the answer
	Reference string // the reference as written, ${...} included; "" for the whole answer
	Reason    string // "not found", "cycle", "too deep" or "too large"
}

// Error returns the details.
func (e *UnresolvedError) Error() string {
	if e.Reference == "" {
		return "record " + e.Record + ": " + e.Reason
	}
	return "record " + e.Record + ": " + e.Reference + ": " + e.Reason
}

// problem is one row of the error table.
type problem struct {
	status  int
	code    string
	message string
	details string
}

// classify is THE error table: it maps err to the response the client
// sees. The boolean is false for errors that match no row, which become a
// 500 whose cause is logged and never sent.
func classify(err error) (problem, bool) {
	var reqErr *RequestError
	var valErr *store.ValidationError
	var unresolved *UnresolvedError
	switch {
	case errors.As(err, &reqErr):
		return problem{reqErr.Status, CodeInvalidRequest, reqErr.Message, reqErr.Details}, true
	case errors.As(err, &valErr):
		return problem{http.StatusBadRequest, CodeValidation, "Validation failed", valErr.Message}, true
	case errors.Is(err, auth.ErrNoToken):
		return problem{http.StatusUnauthorized, CodeAuthentication, "No authorization token provided", ""}, true
	case errors.Is(err, auth.ErrBadSignature):
		return problem{http.StatusUnauthorized, CodeAuthentication, "Invalid token signature", ""}, true
	case errors.Is(err, auth.ErrTokenExpired):
		return problem{http.StatusUnauthorized, CodeAuthentication, "Token has expired", ""}, true
	case errors.Is(err, auth.ErrInvalidToken), errors.Is(err, store.ErrSessionInvalid):
		return problem{http.StatusUnauthorized, CodeAuthentication, "Invalid or expired token", ""}, true
	case errors.Is(err, auth.ErrBadCredentials):
		return problem{http.StatusUnauthorized, CodeAuthentication, "Invalid username or password", ""}, true
	case errors.Is(err, store.ErrQuotaExceeded):
		return problem{http.StatusForbidden, CodeQuotaExceeded, "Quota exceeded", detailsOf[*store.QuotaError](err)}, true
	case errors.Is(err, store.ErrPermissionDenied):
		return problem{http.StatusForbidden, CodeAuthorization, "Insufficient permissions", ""}, true
	case errors.Is(err, ErrRateLimited):
		return problem{http.StatusTooManyRequests, CodeRateLimit, "Rate limit exceeded", detailsOf[*LimitError](err)}, true
	case errors.Is(err, ErrNoRoute):
		return problem{http.StatusNotFound, CodeNotFound, "Resource not found", "no route matches this path"}, true
	case errors.Is(err, store.ErrNotFound):
		return problem{http.StatusNotFound, CodeNotFound, "Resource not found", detailsOf[*store.NotFoundError](err)}, true
	case errors.Is(err, store.ErrAlreadyExists):
		return problem{http.StatusConflict, CodeExists, "Resource already exists", detailsOf[*store.ExistsError](err)}, true
	case errors.Is(err, ErrPreconditionRequired):
		return problem{http.StatusPreconditionRequired, CodePreconditionNeeded, "Precondition required", ""}, true
	case errors.Is(err, store.ErrPreconditionFailed):
		details := detailsOf[*store.PreconditionError](err)
		if details == "" {
			details = detailsOf[*store.RevisionError](err) // docs/api.md#compare-and-promote
		}
		return problem{http.StatusPreconditionFailed, CodePreconditionFailed, "Precondition failed", details}, true
	case errors.As(err, &unresolved):
		return problem{http.StatusUnprocessableEntity, CodeUnresolved, "Unresolved reference", unresolved.Error()}, true
	case errors.Is(err, store.ErrStorageFull):
		return problem{http.StatusServiceUnavailable, CodeServiceUnavailable, "Service unavailable", "storage full"}, false
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, ErrRateLimitUnavailable):
		return problem{http.StatusServiceUnavailable, CodeServiceUnavailable, "Service unavailable", ""}, false
	}
	return problem{http.StatusInternalServerError, CodeServer, "Internal server error", ""}, false
}

// detailsOf returns the message of the first error of type E in err's
// chain: a store error that names the resource, safe to show.
func detailsOf[E error](err error) string {
	var e E
	if errors.As(err, &e) {
		return e.Error()
	}
	return ""
}

// Error writes err as an error envelope. Errors that match no row of the
// table become 500 SERVER_ERROR with a fixed message; their cause is kept
// in the request's reqinfo for the log, never sent.
//
// A request whose client went away (its context canceled, and err caused
// by that) gets StatusClientClosedRequest and no body: nobody reads it,
// and the log shows why the request ended instead of a 500.
//
// The error of one operation of a batch (a *store.OpError) is the error
// that operation would get alone, its details prefixed "operation N: "
// (docs/api.md#batch-export-and-import).
func Error(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled) {
		w.WriteHeader(StatusClientClosedRequest)
		return
	}
	p, known := classify(err)
	if !known {
		info := reqinfo.From(r.Context())
		info.Err = err
		info.StoreError = StoreErrorKind(err)
	}
	var oe *store.OpError
	if known && errors.As(err, &oe) {
		p.details = "operation " + strconv.Itoa(oe.Index) + ": " + p.details
	}
	write(w, p.status, errorBody{Error: errorDetail{Code: p.code, Message: p.message, Details: p.details}})
}

// StoreErrorKind is the kind of store error err is, as the observer
// counts them (docs/library.md#metrics-hdswithobserver): "timeout" for a
// store that did not answer in time (store.ErrUnavailable with
// context.DeadlineExceeded), "unavailable" for one that could not be
// reached or had no room (store.ErrUnavailable), and "other" for any
// other error that matches no row of the table (an internal error). It
// is empty for the errors of the table (a client's, the rate limit
// store's) and for nil.
func StoreErrorKind(err error) string {
	switch {
	case err == nil, errors.Is(err, ErrRateLimitUnavailable):
		return ""
	case errors.Is(err, store.ErrUnavailable) && errors.Is(err, context.DeadlineExceeded):
		return observe.StoreTimeout
	case errors.Is(err, store.ErrUnavailable):
		return observe.StoreUnavailable
	}
	if _, known := classify(err); known {
		return ""
	}
	return observe.StoreOther
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details string `json:"details"`
}

type errorBody struct {
	Success bool        `json:"success"`
	Error   errorDetail `json:"error"`
}

type okBody struct {
	Success bool   `json:"success"`
	Data    any    `json:"data"`
	Message string `json:"message"`
}

// OK writes a success envelope with data and a short message.
func OK(w http.ResponseWriter, status int, data any, message string) {
	write(w, status, okBody{Success: true, Data: data, Message: message})
}

// NoContent writes a 204 with no body.
func NoContent(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNoContent)
}

// contentTypeValue is the Content-Type header's value, shared by every
// response: net/http and hds only ever replace a header's values, never
// change them in place, and an Add to it copies (its capacity is its
// length). A Header.Set would allocate it anew for each response.
var contentTypeValue = []string{ContentType}

// SetContentType sets the Content-Type of h to ContentType, as
// h.Set("Content-Type", ContentType) would, without allocating.
func SetContentType(h http.Header) { h["Content-Type"] = contentTypeValue[:1:1] }

// write encodes v straight to the response.
func write(w http.ResponseWriter, status int, v any) {
	SetContentType(w.Header())
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away, or a bug caught by tests
}

// WriteRaw writes body, a complete JSON envelope the caller encoded, with
// the given status.
func WriteRaw(w http.ResponseWriter, status int, body []byte) {
	SetContentType(w.Header())
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client went away
}

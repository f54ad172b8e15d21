package handler

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/store"
)

// Routes a host adds for server administrators
// (docs/library.md#administrator-routes): the standalone server's backup
// routes are built on them. The handler serves each behind the chain of
// its own administrator routes (authentication, a user token of a server
// administrator, the rate limit, the body limit, the strict query
// parsing), answers its 405s and 404s, and lists it in the OpenAPI
// document with the operation the host gives. The host's handler writes
// its answers with WriteData, WriteList and WriteError (the envelope) and
// its log lines with LogAdminAction.

// AdminRoute is a route a host adds for server administrators
// (Config.AdminRoutes, hds.WithAdminRoutes). Every field but Description,
// Query and Errors is required; a route that lacks one, or whose path is
// not under /api/v1/, panics when the handler is built.
type AdminRoute struct {
	// Pattern is "METHOD /api/v1/PATH" as http.ServeMux takes it; a
	// {name} segment is read with r.PathValue.
	Pattern string
	// Handler serves the route, called only for a server administrator
	// (auth.UserFrom(r.Context()) is the caller).
	Handler http.Handler
	// OperationID, Tag, Summary and Description describe the route in the
	// OpenAPI document; OperationID must be unique in it.
	OperationID, Tag, Summary, Description string
	// Query lists the query parameters the route reads, each one of the
	// handler's own (such as "limit" and "offset", which ParsePage reads).
	Query []string
	// Status is the status of success.
	Status int
	// Response describes the answer of success.
	Response AdminResponse
	// Errors are the error statuses the route answers besides those of
	// every administrator route (401, 403) and the default ones (413,
	// 415, 429, 500, 503): 400, 404 and 409 are described.
	Errors []int
}

// AdminResponse describes the answer of success of an AdminRoute: data in
// the envelope (WriteData, WriteList), a file (MediaType), or no body.
type AdminResponse struct {
	// Description says what the answer is.
	Description string
	// Data is the JSON Schema of the envelope's data (a JSON object, as
	// encoding/json decodes one); with List, of one item of the page
	// WriteList answers. nil, without MediaType: no body.
	Data map[string]any
	List bool
	// MediaType, when set, is the content type of a body that is not
	// enveloped, such as a file (Data is then ignored).
	MediaType string
	// Headers are the further headers of the answer, by name, each with
	// its description.
	Headers map[string]string
}

// adminRoutes registers the host's routes of Config.AdminRoutes.
func (d *deps) adminRoutes(rt *router) {
	protectAdmin := func(h http.Handler) http.Handler {
		return d.authn(d.byUser(adminOnly(d.limitBody(withQuery(d.cfg.Store,
			func(w http.ResponseWriter, r *http.Request, _ url.Values) { h.ServeHTTP(w, r) })))))
	}
	for _, a := range d.cfg.AdminRoutes {
		method, path, _ := strings.Cut(a.Pattern, " ")
		if method == "" || !strings.HasPrefix(path, "/api/v1/") || a.Handler == nil || a.OperationID == "" ||
			a.Tag == "" || a.Summary == "" || a.Status == 0 {
			panic("hds: admin route " + a.Pattern + ": needs a pattern \"METHOD /api/v1/...\", a handler, " +
				"an operation id, a tag, a summary and a status")
		}
		res := a.Response
		rt.handle(a.Pattern, noProject, protectAdmin(a.Handler), openapi.Operation{
			ID: a.OperationID, Tag: a.Tag, Summary: a.Summary,
			Description: strings.TrimSpace("Server administrators only (others and API tokens: 403). " + a.Description),
			UsersOnly:   true, Access: openapi.Bearer, Counted: true, Query: a.Query, Status: a.Status,
			Errors: append([]int{http.StatusForbidden}, a.Errors...),
			Host: &openapi.HostResponse{Description: res.Description, Data: res.Data, List: res.List,
				MediaType: res.MediaType, Headers: res.Headers},
		})
	}
}

// WriteData answers with the success envelope {"success": true, "data":
// data, "message": message} and status.
func WriteData(w http.ResponseWriter, status int, data any, message string) {
	envelope.OK(w, status, data, message)
}

// WriteError answers with the error envelope of err: store.ErrNotFound is
// 404 RESOURCE_NOT_FOUND, store.ErrAlreadyExists 409 RESOURCE_EXISTS,
// store.ErrPermissionDenied 403, a *store.ValidationError 400, an error
// of ParsePage 400 INVALID_REQUEST, store.ErrUnavailable 503; anything
// else is 500 SERVER_ERROR with a fixed message (the error itself is
// logged, never sent).
func WriteError(w http.ResponseWriter, r *http.Request, err error) { envelope.Error(w, r, err) }

// Page is the limit and offset of a list of docs/api.md#list-queries.
type Page struct{ Limit, Offset int }

// ParsePage reads limit (1 to 1000, default 100) and offset (default 0)
// from the request's query as every list does; a bad value is an error
// WriteError answers with 400 INVALID_REQUEST.
func ParsePage(r *http.Request) (Page, error) {
	q, err := parsePage(r.URL.Query())
	return Page{Limit: q.Limit, Offset: q.Offset}, err
}

// WriteList answers with the page p of items, every item of the list (as
// docs/api.md#list-queries: data {"items", "total", "limit",
// "offset"}, total counting all of items).
func WriteList[T any](w http.ResponseWriter, items []T, p Page) {
	page := items[min(p.Offset, len(items)):]
	page = page[:min(p.Limit, len(page))]
	if page == nil {
		page = []T{}
	}
	envelope.OK(w, http.StatusOK, struct {
		Items  []T `json:"items"`
		Total  int `json:"total"`
		Limit  int `json:"limit"`
		Offset int `json:"offset"`
	}{page, len(items), p.Limit, p.Offset}, "OK")
}

// LogAdminAction writes the log line of an administrator's action as the
// user changes are (slog message "audit"): action, actor (the user id),
// actor_name, target and the request id. logger nil writes none.
func LogAdminAction(logger *slog.Logger, r *http.Request, action, target string) {
	if logger == nil {
		return
	}
	u := auth.UserFrom(r.Context())
	if u == nil {
		u = &store.User{}
	}
	logger.LogAttrs(r.Context(), slog.LevelInfo, "audit",
		slog.String("action", action), slog.String("actor", u.ID), slog.String("actor_name", u.Username),
		slog.String("target", target), slog.String("request_id", requestID(r)))
}

package handler

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// pathOf returns the resource path named by the request's URL, on behalf
// of the authenticated caller (a user or an API token), with the right
// and level its route needs (requirement).
func pathOf(r *http.Request) store.Path {
	req := requirementOf(r)
	return store.Path{
		Caller:     callerOf(r),
		Need:       req.need,
		Within:     req.within,
		Project:    r.PathValue("project"),
		Collection: r.PathValue("collection"),
		Cluster:    r.PathValue("cluster"),
		Record:     r.PathValue("record"),
	}
}

// requestID is the request's X-Request-Id.
func requestID(r *http.Request) string { return reqinfo.From(r.Context()).RequestID }

// queryHandler serves a request given its query parameters, parsed once
// and strictly by withQuery.
type queryHandler func(w http.ResponseWriter, r *http.Request, query url.Values)

// withQuery parses the request's query string (parseQuery) and hands the
// parameters to h; a query string that does not parse, or a contract
// parameter given twice, is refused with 400 before h runs. An API token
// on a route for users only is refused with 403 first.
func withQuery(s store.Store, h queryHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := permitted(r); err != nil {
			envelope.Error(w, r, err)
			return
		}
		query, err := parseQuery(r.URL.RawQuery)
		if err != nil {
			reject(w, r, s, err)
			return
		}
		h(w, r, query)
	})
}

// strictQuery is withQuery for the routes outside any project, which read
// no query parameter (login, refresh, logout, password, the OpenAPI
// document).
func strictQuery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := permitted(r)
		if err == nil {
			_, err = parseQuery(r.URL.RawQuery)
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// formParams are the query parameters that make up the path form of a
// request; none of them may accompany a JSON body.
var formParams = []string{"rename", "type", "value"}

// decodeBody decodes the JSON body into dst, reporting whether there was
// one. A body sent together with a path-form query parameter is refused:
// a request uses one form or the other.
func decodeBody(r *http.Request, query url.Values, dst any) (bool, error) {
	present, err := envelope.Decode(r, dst)
	if err != nil || !present {
		return present, err
	}
	for _, name := range formParams {
		if query.Has(name) {
			return false, envelope.BadRequest("a JSON body cannot be combined with the query parameter " + name +
				": use either the query parameters or the body")
		}
	}
	return true, nil
}

// timeLayout is RFC 3339 in UTC with exactly six fraction digits.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// formatTime formats t as the API does.
func formatTime(t time.Time) string { return string(appendTimeText(nil, t)) }

// reject answers a request refused before it reached the store. Every
// route under a project the caller may not use as the route needs is 403,
// whatever else is wrong with the request (docs/api.md#authentication and
// docs/api.md#sharing-and-api-tokens), so the caller's access is checked
// first: one lookup, on this error path only. Creating a project (POST P)
// is not a route under it: a taken name is 409 there.
func reject(w http.ResponseWriter, r *http.Request, s store.Store, err error) {
	rejectAt(w, r, s, pathOf(r), err)
}

// rejectRevealing is reject for the routes that take reveal: with
// reveal=true the right checked first is the right to reveal, so that a
// viewer asking for plain text hears 403 whatever else is wrong.
func (rec records) rejectRevealing(w http.ResponseWriter, r *http.Request, query url.Values, err error) {
	rejectAt(w, r, rec.store, rec.revealing(pathOf(r), query.Get("reveal") == "true"), err)
}

// rejectAt is reject with the caller's access checked as p needs.
func rejectAt(w http.ResponseWriter, r *http.Request, s store.Store, p store.Path, err error) {
	if p.Project != "" && !p.Caller.IsZero() && r.Pattern != "POST "+pathP {
		p.Record = ""
		_, ferr := s.FindProject(r.Context(), p)
		if errors.Is(ferr, store.ErrPermissionDenied) {
			err = ferr
		}
	}
	envelope.Error(w, r, err)
}

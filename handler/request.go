package handler

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// pathOf returns the resource path named by the request's URL, on behalf
// of the authenticated user.
func pathOf(r *http.Request) store.Path {
	p := store.Path{
		Project:    r.PathValue("project"),
		Collection: r.PathValue("collection"),
		Cluster:    r.PathValue("cluster"),
		Record:     r.PathValue("record"),
	}
	if u := auth.UserFrom(r.Context()); u != nil {
		p.Caller.UserID, p.Caller.Name = u.ID, u.Username
	}
	p.Caller.RequestID = reqinfo.From(r.Context()).RequestID
	return p
}

// queryHandler serves a request given its query parameters, parsed once
// and strictly by withQuery.
type queryHandler func(w http.ResponseWriter, r *http.Request, query url.Values)

// withQuery parses the request's query string (parseQuery) and hands the
// parameters to h; a query string that does not parse, or a contract
// parameter given twice, is refused with 400 before h runs.
func withQuery(s store.Store, h queryHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query, err := parseQuery(r.URL.RawQuery)
		if err != nil {
			reject(w, r, s, err)
			return
		}
		h(w, r, query)
	})
}

// strictQuery is withQuery for the routes outside any project, which read
// no query parameter (login, refresh, the OpenAPI document).
func strictQuery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := parseQuery(r.URL.RawQuery); err != nil {
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
func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// reject answers a request refused before it reached the store. Every
// route under someone else's project is 403, whatever else is wrong with
// the request (API.md section 2), so the project's owner is looked up
// first: one lookup, on this error path only. Creating a project (POST P)
// is not a route under it: a taken name is 409 there.
func reject(w http.ResponseWriter, r *http.Request, s store.Store, err error) {
	if p := pathOf(r); p.Project != "" && p.Caller.UserID != "" && r.Pattern != "POST "+pathP {
		_, ferr := s.FindProject(r.Context(), store.Path{Caller: p.Caller, Project: p.Project})
		if errors.Is(ferr, store.ErrPermissionDenied) {
			err = ferr
		}
	}
	envelope.Error(w, r, err)
}

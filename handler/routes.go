package handler

import (
	"net/http"

	"github.com/hds-go/hds/handler/console"
	"github.com/hds-go/hds/store"
)

// The route table. routes registers every route of docs/api.md#4-routes,
// one function per resource, in this order; each function lives in its
// resource's file (containers.go, records.go, ...) and registers the
// resource's routes with rt.handle: pattern, the right the route needs on
// its project, the handler behind its middleware chain (deps), and the
// operation that describes it in the OpenAPI document (internal/openapi).

// Path prefixes of the resource routes (docs/api.md#4-routes).
const (
	pathP = "/api/v1/projects/{project}"
	pathC = pathP + "/collections/{collection}"
	pathK = pathC + "/clusters/{cluster}"
	pathR = pathK + "/records/{record}"
)

// Query parameter sets of the route table (keys of the document's query
// parameters).
var (
	listQuery   = []string{"limit", "offset", "search", "sortBy", "sortOrder", "count"}
	recordQuery = []string{"limit", "offset", "search", "recordSortBy", "sortOrder", "count", "typeFilter", "valueFilter", "valueContains", "minValue", "maxValue", "reveal", "resolve"}
)

// underProject are the error statuses of the routes under a project (P
// and below): a path name no resource can have may be refused (400), the
// project may belong to someone else (403), and a level of the path may be
// missing (404).
var underProject = []int{400, 403, 404}

// New returns the API's router: every route of docs/api.md#4-routes and the
// OpenAPI document that describes them (built from this one table: each
// route carries its operation), an enveloped 405 (with Allow) for a known
// path with a wrong method, an enveloped 404 for anything else, and no
// redirects for non-canonical paths.
func New(cfg Config) http.Handler {
	rt := routes(cfg)
	for _, run := range rt.background {
		go run()
	}
	return rt.finish()
}

// routes registers every route on a new router.
func routes(cfg Config) *router {
	d := newDeps(cfg)
	rt := newRouter(d.byIP)
	d.metaRoutes(rt)
	d.authRoutes(rt)
	d.userRoutes(rt)
	d.projectRoutes(rt)
	d.collectionRoutes(rt)
	d.clusterRoutes(rt)
	d.recordRoutes(rt)
	d.transferRoutes(rt)
	d.memberRoutes(rt)
	d.webhookRoutes(rt)
	d.snapshotRoutes(rt)
	d.eventRoutes(rt)
	d.auditRoutes(rt)

	// The console is static files for a browser, not an operation of the
	// API: it stays out of the route table and so out of the OpenAPI
	// document (whose clients it would only clutter), and it is neither
	// authenticated (its page logs in through the API) nor rate limited,
	// like /health.
	if cfg.Console {
		rt.console = console.New()
	}
	return rt
}

// noProject is the need of the routes that act on no existing project:
// the health check, the document, the session routes, user administration,
// the project list and project creation. There is no role on a project to
// check; their handlers check what they need themselves.
const noProject store.Right = -1

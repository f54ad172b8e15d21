package handler

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// routeNeeds is the right every route needs on its project
// (docs/api.md#sharing-and-api-tokens), noProject for the routes that
// act on no existing project. A route added without a line here fails
// TestRouteNeeds.
var routeNeeds = map[string]store.Right{
	"GET /health":                                                                                          noProject,
	"GET /api/v1/openapi.json":                                                                             noProject,
	"POST /api/v1/auth/login":                                                                              noProject,
	"POST /api/v1/auth/refresh":                                                                            noProject,
	"POST /api/v1/auth/logout":                                                                             noProject,
	"POST /api/v1/auth/password":                                                                           noProject,
	"GET /api/v1/auth/me":                                                                                  noProject,
	"GET /api/v1/users":                                                                                    noProject,
	"POST /api/v1/users":                                                                                   noProject,
	"GET /api/v1/users/{username}":                                                                         noProject,
	"PUT /api/v1/users/{username}":                                                                         noProject,
	"DELETE /api/v1/users/{username}":                                                                      noProject,
	"GET /api/v1/projects":                                                                                 noProject,
	"POST /api/v1/projects":                                                                                noProject,
	"POST /api/v1/projects/{project}":                                                                      noProject,
	"GET /api/v1/projects/{project}":                                                                       store.RightRead,
	"PUT /api/v1/projects/{project}":                                                                       store.RightAdmin,
	"DELETE /api/v1/projects/{project}":                                                                    store.RightOwn,
	"GET /api/v1/projects/{project}/collections":                                                           store.RightRead,
	"POST /api/v1/projects/{project}/collections":                                                          store.RightWrite,
	"POST /api/v1/projects/{project}/collections/{collection}":                                             store.RightWrite,
	"GET /api/v1/projects/{project}/collections/{collection}":                                              store.RightRead,
	"PUT /api/v1/projects/{project}/collections/{collection}":                                              store.RightWrite,
	"DELETE /api/v1/projects/{project}/collections/{collection}":                                           store.RightWrite,
	"GET /api/v1/projects/{project}/collections/{collection}/clusters":                                     store.RightRead,
	"POST /api/v1/projects/{project}/collections/{collection}/clusters":                                    store.RightWrite,
	"POST /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}":                          store.RightWrite,
	"GET /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}":                           store.RightRead,
	"PUT /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}":                           store.RightWrite,
	"DELETE /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}":                        store.RightWrite,
	"GET /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}/records":                   store.RightRead,
	"POST /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}/records":                  store.RightWrite,
	"POST /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}/records/{record}":         store.RightWrite,
	"GET /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}/records/{record}":          store.RightRead,
	"PUT /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}/records/{record}":          store.RightWrite,
	"DELETE /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}/records/{record}":       store.RightWrite,
	"GET /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}/records/{record}/versions": store.RightRead,
	"POST /api/v1/projects/{project}/collections/{collection}/clusters/{cluster}/records/{record}/restore": store.RightWrite,
	"POST /api/v1/projects/{project}/batch":                                                                store.RightWrite,
	"GET /api/v1/projects/{project}/export":                                                                store.RightRead,
	"POST /api/v1/projects/{project}/import":                                                               store.RightWrite,
	"GET /api/v1/projects/{project}/diff":                                                                  store.RightRead,
	"POST /api/v1/projects/{project}/promote":                                                              store.RightWrite,
	"POST /api/v1/projects/{project}/snapshots":                                                            store.RightWrite,
	"GET /api/v1/projects/{project}/snapshots":                                                             store.RightRead,
	"GET /api/v1/projects/{project}/snapshots/{name}":                                                      store.RightRead,
	"DELETE /api/v1/projects/{project}/snapshots/{name}":                                                   store.RightAdmin,
	"GET /api/v1/projects/{project}/members":                                                               store.RightRead,
	"PUT /api/v1/projects/{project}/members/{username}":                                                    store.RightAdmin,
	"DELETE /api/v1/projects/{project}/members/{username}":                                                 store.RightAdmin,
	"PUT /api/v1/projects/{project}/owner":                                                                 store.RightOwn,
	"POST /api/v1/projects/{project}/tokens":                                                               store.RightAdmin,
	"GET /api/v1/projects/{project}/tokens":                                                                store.RightAdmin,
	"DELETE /api/v1/projects/{project}/tokens/{id}":                                                        store.RightAdmin,
	"POST /api/v1/projects/{project}/webhooks":                                                             store.RightAdmin,
	"GET /api/v1/projects/{project}/webhooks":                                                              store.RightAdmin,
	"GET /api/v1/projects/{project}/webhooks/{id}":                                                         store.RightAdmin,
	"DELETE /api/v1/projects/{project}/webhooks/{id}":                                                      store.RightAdmin,
	"POST /api/v1/projects/{project}/webhooks/{id}/ping":                                                   store.RightAdmin,
	"GET /api/v1/projects/{project}/webhooks/{id}/deliveries":                                              store.RightAdmin,
	"GET /api/v1/projects/{project}/events":                                                                store.RightRead,
	"GET /api/v1/projects/{project}/audit":                                                                 store.RightAdmin,
}

// TestRouteNeeds lists every route with the right it declares and compares
// the list with routeNeeds: no route is registered without its need, and
// no need differs from the table (a store with every optional capability,
// and webhooks on, so that every route is registered).
func TestRouteNeeds(t *testing.T) {
	rt := routes(Config{Store: memory.New(), Webhooks: &Webhooks{}})
	got := map[string]store.Right{}
	for _, r := range rt.routes {
		got[r.Pattern] = rt.needs[r.Pattern]
	}
	assert.Equal(t, routeNeeds, got)
}

// TestHandleRefusesUndeclaredNeed checks that a route table that forgets
// what a route needs does not build: rt.handle panics for the zero
// store.Right, for a value that is no right, and for a right on a route
// that reads no token; it accepts noProject and every right.
func TestHandleRefusesUndeclaredNeed(t *testing.T) {
	h := http.NotFoundHandler()
	op := func(a openapi.Access) openapi.Operation { return openapi.Operation{ID: "x", Access: a} }
	for _, tt := range []struct {
		name   string
		need   store.Right
		access openapi.Access
		panics string
	}{
		{"zero", 0, openapi.Bearer, "hds: route GET /x declares no need: name the store.Right it needs on its project, or noProject"},
		{"not a right", store.RightOwn + 1, openapi.Bearer, "hds: route GET /x declares need 6, which is not a store.Right"},
		{"negative", -2, openapi.Bearer, "hds: route GET /x declares need -2, which is not a store.Right"},
		{"public with a right", store.RightRead, openapi.Public, "hds: route GET /x reads no token but needs a right on its project"},
		{"refresh with a right", store.RightRead, openapi.ExpiredBearer, "hds: route GET /x reads no token but needs a right on its project"},
	} {
		rt := newRouter(func(h http.Handler) http.Handler { return h })
		assert.PanicsWithValue(t, tt.panics, func() { rt.handle("GET /x", tt.need, h, op(tt.access)) }, tt.name)
		assert.Empty(t, rt.routes, "%s: nothing registered", tt.name)
	}
	for _, need := range []store.Right{noProject, store.RightRead, store.RightReveal, store.RightWrite, store.RightAdmin, store.RightOwn} {
		rt := newRouter(func(h http.Handler) http.Handler { return h })
		assert.NotPanics(t, func() { rt.handle("GET /x", need, h, op(openapi.Bearer)) }, "need %d", need)
		assert.Equal(t, need, rt.needs["GET /x"])
	}
}

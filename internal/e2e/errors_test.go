package e2e_test

// Errors (docs/api.md#errors): panics and store failures.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// faultyStore misbehaves for some project names.
type faultyStore struct {
	store.Store
	ping error
}

func (s faultyStore) FindProject(ctx context.Context, p store.Path) (*store.Project, error) {
	switch p.Project {
	case "boom":
		panic("kaboom: secret panic detail")
	case "leak":
		return nil, errors.New("secret sql detail")
	case "down":
		return nil, fmt.Errorf("find project: dial tcp 10.0.0.1:5432: %w", store.ErrUnavailable)
	}
	return s.Store.FindProject(ctx, p)
}

func (s faultyStore) FindProjects(ctx context.Context, owner string, q store.ListQuery) ([]*store.Project, int, error) {
	if q.Search == "down" {
		return nil, 0, fmt.Errorf("query: %w", store.ErrUnavailable)
	}
	return s.Store.FindProjects(ctx, owner, q)
}

func (s faultyStore) Ping(ctx context.Context) error {
	if s.ping != nil {
		return s.ping
	}
	return s.Store.Ping(ctx)
}

func TestPanicBecomes500(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServerWrapped(t, kind, func(s store.Store) store.Store { return faultyStore{Store: s} })
		alice := c.token("alice")
		for range 2 {
			status, _, env := c.do("GET", pathP("boom"), "", alice)
			wantError(t, "a panicking store", status, env, http.StatusInternalServerError, "SERVER_ERROR", "")
			assert.EqualValues(t, "", env.details(), "500 details %q, want empty", env.details())
			for _, leak := range []string{"kaboom", "secret", "goroutine", ".go:", "panic("} {
				assert.NotContains(t, string(env.raw), leak, "500 body leaks %q", leak)
			}
			// The server keeps serving.
			c.mustDo("GET", "/api/v1/projects", "", alice, http.StatusOK)
			c.mustDo("POST", pathP("fine"), "", alice, http.StatusCreated)
			c.mustDo("DELETE", pathP("fine"), "", alice, http.StatusNoContent)
		}
		// Over the wire, too: the connection survives the panic.
		srv := httptest.NewServer(c.h)
		defer srv.Close()
		for _, target := range []string{pathP("boom"), "/health"} {
			req, _ := http.NewRequest("GET", srv.URL+target, nil)
			req.Header.Set("Authorization", "Bearer "+alice)
			res, err := srv.Client().Do(req)
			require.NoError(t, err, "GET %s over the wire: %v", target, err)
			res.Body.Close()
			assert.Equal(t, map[bool]int{true: 500, false: 200}[target != "/health"], res.StatusCode, "GET %s over the wire", target)
		}
	})
}

func TestStoreErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServerWrapped(t, kind, func(s store.Store) store.Store { return faultyStore{Store: s} })
		alice := c.token("alice")

		status, _, env := c.do("GET", pathP("leak"), "", alice)
		wantError(t, "a store error", status, env, http.StatusInternalServerError, "SERVER_ERROR", "")
		assert.Empty(t, env.details(), "a store error leaks: details")
		assert.NotContains(t, string(env.raw), "secret sql detail", "a store error leaks")
		assert.NotContains(t, string(env.raw), "sql", "a store error leaks")

		status, _, env = c.do("GET", pathP("down"), "", alice)
		wantError(t, "an unavailable store", status, env, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "")
		assert.NotContains(t, string(env.raw), "10.0.0.1", "503 leaks the cause")
		status, _, env = c.do("GET", "/api/v1/projects?search=down", "", alice)
		wantError(t, "an unavailable store (list)", status, env, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "")

		// Health reports a store that does not answer.
		down := newServerWrapped(t, kind, func(s store.Store) store.Store {
			return faultyStore{Store: s, ping: fmt.Errorf("ping: %w", store.ErrUnavailable)}
		})
		res := down.raw(httptest.NewRequest("GET", "/health", nil))
		body, _ := io.ReadAll(res.Body)
		var h struct{ Status, Timestamp, Version string }
		_ = json.Unmarshal(body, &h)
		assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "GET /health with the store down: %s", body)
		assert.Equal(t, "unavailable", h.Status, "GET /health with the store down: status field")
		assert.Equal(t, jsonType, res.Header.Get("Content-Type"), "GET /health with the store down: Content-Type")
		wantTimestamps(t, "GET /health with the store down", h.Timestamp)
	})
}

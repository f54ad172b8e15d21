package e2e_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store/postgres"
)

// TestPostgresOutage cuts the connection to PostgreSQL under a running
// handler: /health answers 503 "unavailable", API requests 503
// SERVICE_UNAVAILABLE in the envelope with no SQL text, and when the
// database is back, hds recovers by itself.
func TestPostgresOutage(t *testing.T) {
	proxy, dbURL := pgtest.NewProxy(t, pgtest.NewURL(t))
	db, err := sqlx.Open("postgres", dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	pg := postgres.New(db)
	h := hds.New(hds.WithStore(pg), hds.WithUsers(pg),
		hds.WithSecurity(hds.Security{JWTSecret: testSecret, AllowAnonymous: true}))

	c := &client{t: t, h: h} // checks every answer against the OpenAPI document
	get := func(path string) (int, string) {
		res := c.raw(httptest.NewRequest(http.MethodGet, path, nil).WithContext(context.Background()))
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	status, _ := get("/health")
	require.Equal(t, http.StatusOK, status, "health before the outage")
	status, _ = get("/api/v1/projects")
	require.Equal(t, http.StatusOK, status, "list before the outage")

	proxy.Cut()
	status, body := get("/health")
	assert.Equal(t, http.StatusServiceUnavailable, status, "health during the outage")
	assert.Contains(t, body, `"status":"unavailable"`)
	for _, path := range []string{"/api/v1/projects", "/api/v1/projects/p", "/api/v1/projects/p/collections/c/clusters/k/records/r"} {
		status, body = get(path)
		assert.Equal(t, http.StatusServiceUnavailable, status, "GET %s during the outage", path)
		assert.Contains(t, body, `"code":"SERVICE_UNAVAILABLE"`, "GET %s", path)
		for _, leak := range []string{"SELECT", "hds_", "dial", "127.0.0.1", "connection"} {
			assert.NotContains(t, body, leak, "GET %s leaks %q", path, leak)
		}
	}

	proxy.Restore(t)
	for i := 0; i < 3; i++ { // the pool may hand out a dead connection first
		if status, _ = get("/health"); status == http.StatusOK {
			break
		}
	}
	assert.Equal(t, http.StatusOK, status, "health after the outage")
	status, body = get("/api/v1/projects")
	assert.Equal(t, http.StatusOK, status, "list after the outage: %s", body)
	assert.True(t, strings.Contains(body, `"success":true`))
}

package e2e_test

// Health (docs/api.md#health).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

func TestHealth(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		res := c.raw(httptest.NewRequest("GET", "/health", nil))
		body, _ := io.ReadAll(res.Body)
		require.EqualValues(t, http.StatusOK, res.StatusCode, "GET /health: status %d, want 200: %s", res.StatusCode, body)
		assert.Equal(t, jsonType, res.Header.Get("Content-Type"), "GET /health: Content-Type")
		wantFields(t, "GET /health (not enveloped)", body, "checks", "status", "timestamp", "version") // checks: v1.1, docs/api.md#health
		var h struct{ Status, Timestamp, Version string }
		require.NoError(t, json.Unmarshal(body, &h), "GET /health: %s", body)
		assert.EqualValues(t, "ok", h.Status, "GET /health: status %q, want ok", h.Status)
		wantTimestamps(t, "GET /health", h.Timestamp)
		assert.NotEqualValues(t, "", h.Version, "GET /health: empty version")
	})
}

func TestHealthRateLimitLocalWithoutRedis(t *testing.T) {
	code, hb := newServer(t, memoryKind).health()
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", hb.Status)
	assert.Equal(t, "ok", hb.Checks.Store, "checks.store")
	assert.Empty(t, hb.Checks.Storage, "no checks.storage while writes work: the contract's keys only")
	assert.Equal(t, "local", hb.Checks.RateLimit, "checks.rate_limit without a shared store")
}

// pingDown is a store whose Ping fails, like a database that went away.
type pingDown struct{ store.Store }

func (pingDown) Ping(context.Context) error { return store.ErrUnavailable }

func TestHealthStoreDownChecks(t *testing.T) {
	code, hb := newServerWrapped(t, memoryKind, func(st store.Store) store.Store { return pingDown{st} }).health()
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "unavailable", hb.Status)
	assert.Equal(t, "unavailable", hb.Checks.Store, "checks.store")
	assert.Equal(t, "local", hb.Checks.RateLimit, "checks.rate_limit")
}

// diskFull is a store whose disk is full: every record write fails with
// store.ErrStorageFull (as SQLITE_FULL or PostgreSQL's 53100 do), and it
// says so as a store.StorageChecker; reads work. It keeps the members and
// API tokens of the store it wraps (store.Projects), so that hds.New is
// given it as it is.
type diskFull struct{ store.Projects }

func (diskFull) StorageFull() bool { return true }

func (diskFull) CreateRecord(context.Context, store.Path, *store.Record, store.Write) (*store.Record, error) {
	return nil, fmt.Errorf("%w: database or disk is full", store.ErrStorageFull)
}

// TestHealthStorageFull: with the disk full, a write is 503
// SERVICE_UNAVAILABLE whose details say "storage full", and /health says
// degraded (200: reads work), checks.storage "full"
// (docs/api.md#health).
func TestHealthStorageFull(t *testing.T) {
	c := newServerWrapped(t, memoryKind, func(st store.Store) store.Store { return diskFull{st.(store.Projects)} })
	tok := c.token("alice")
	c.tree(tok, "p", "c", "k")
	res := c.call(req{method: http.MethodPost, target: pathK("p", "c", "k") + "/records", token: tok, body: `{"name":"r","type":"STRING","value":"v"}`})
	res.wantError(t, "a write with the disk full", http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "Service unavailable")
	assert.Equal(t, "storage full", res.env.details(), "details of a write with the disk full")

	code, hb := c.health()
	assert.Equal(t, http.StatusOK, code, "GET /health with the disk full: the store still answers")
	assert.Equal(t, "degraded", hb.Status)
	assert.Equal(t, "ok", hb.Checks.Store, "checks.store")
	assert.Equal(t, "full", hb.Checks.Storage, "checks.storage")
}

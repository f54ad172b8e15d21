package hds_test

// Health (API.md section 10).

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHealth(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		res := c.raw(httptest.NewRequest("GET", "/health", nil))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /health: status %d, want 200: %s", res.StatusCode, body)
		}
		if ct := res.Header.Get("Content-Type"); ct != jsonType {
			t.Errorf("GET /health: Content-Type %q, want %q", ct, jsonType)
		}
		wantFields(t, "GET /health (not enveloped)", body, "checks", "status", "timestamp", "version") // checks: v1.1, API.md section 10
		var h struct{ Status, Timestamp, Version string }
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatalf("GET /health: %v: %s", err, body)
		}
		if h.Status != "ok" {
			t.Errorf("GET /health: status %q, want ok", h.Status)
		}
		wantTimestamps(t, "GET /health", h.Timestamp)
		if h.Version == "" {
			t.Errorf("GET /health: empty version")
		}
	})
}

package handler

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// healthTimeout bounds the store's health check.
const healthTimeout = 2 * time.Second

// handleHealth serves GET /health (not enveloped, docs/api.md#10-health):
// 503 "unavailable" when the store does not answer its Ping; otherwise
// 200, "degraded" when the shared rate limit store cannot be reached
// (requests are then counted in this process) or when the store's writes
// fail for want of storage (store.StorageChecker: reads still work), and
// "ok" otherwise. checks gives each dependency's state as the contract
// lists them; "storage": "full" is added only while writes fail for want
// of storage, so that a healthy answer has exactly the contract's keys.
func handleHealth(s store.Store, limits *middleware.FallbackStore, version string) http.Handler {
	type checks struct {
		Store     string `json:"store"`
		Storage   string `json:"storage,omitempty"`
		RateLimit string `json:"rate_limit"`
	}
	type health struct {
		Status    string `json:"status"`
		Timestamp string `json:"timestamp"`
		Version   string `json:"version"`
		Checks    checks `json:"checks"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		defer cancel()
		out := health{Status: "ok", Version: version, Checks: checks{Store: "ok", RateLimit: "local"}}
		status := http.StatusOK
		if limits != nil {
			out.Checks.RateLimit = "ok"
			if !limits.Shared(ctx) {
				out.Status, out.Checks.RateLimit = "degraded", "unavailable"
			}
		}
		if sc, ok := s.(store.StorageChecker); ok && sc.StorageFull() {
			out.Status, out.Checks.Storage = "degraded", "full"
		}
		if err := s.Ping(ctx); err != nil {
			out.Status, out.Checks.Store, status = "unavailable", "unavailable", http.StatusServiceUnavailable
		}
		out.Timestamp = formatTime(time.Now())
		w.Header().Set("Content-Type", envelope.ContentType)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(out)
	})
}

// metaRoutes registers GET /health and the OpenAPI document of rt's
// routes.
func (d *deps) metaRoutes(rt *router) {
	cfg, s := d.cfg, d.cfg.Store
	rt.handle("GET /health", noProject, handleHealth(s, cfg.SharedLimits, cfg.Version), openapi.Operation{
		ID: "getHealth", Tag: "meta", Summary: "Health of the service and its store",
		Description: "Not enveloped. 200 with status \"ok\" when the store answers, \"degraded\" when it does but the shared rate limit store (Redis) does not or its writes fail for a full disk (checks.storage \"full\"), 503 with \"unavailable\" when the store does not answer; checks says which. Needs no token and is not rate limited.",
		Access:      openapi.Public, Status: 200, Success: "Health",
		Other: map[int]string{503: "HealthUnavailable", 413: openapi.DefaultResponse},
	})
	rt.handle("GET /api/v1/openapi.json", noProject, handleOpenAPI(rt, cfg.Version, !cfg.AllowAnonymous), openapi.Operation{
		ID: "getOpenAPI", Tag: "meta", Summary: "This OpenAPI document",
		Description: "Not enveloped. Needs no token and is not rate limited. Answers 304 to an If-None-Match that names the current ETag.",
		Access:      openapi.Public, Status: 200, Success: "OpenAPIDocument",
		Other: map[int]string{304: "NotModified", 413: openapi.DefaultResponse},
	})
}

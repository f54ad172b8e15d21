package handler

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/store"
)

// healthTimeout bounds the store's health check.
const healthTimeout = 2 * time.Second

// handleHealth serves GET /health (not enveloped): 200 with status "ok"
// when the store answers its Ping, 503 with "unavailable" otherwise.
func handleHealth(s store.Store, version string) http.Handler {
	type health struct {
		Status    string `json:"status"`
		Timestamp string `json:"timestamp"`
		Version   string `json:"version"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		defer cancel()
		out, status := health{Status: "ok", Version: version}, http.StatusOK
		if err := s.Ping(ctx); err != nil {
			out.Status, status = "unavailable", http.StatusServiceUnavailable
		}
		out.Timestamp = formatTime(time.Now())
		w.Header().Set("Content-Type", envelope.ContentType)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(out)
	})
}

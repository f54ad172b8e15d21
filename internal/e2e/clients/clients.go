// Package clients holds Go clients generated from the served OpenAPI
// document, so that the test suite can prove that generated clients work:
// openapi.json is the document hds serves (GET /api/v1/openapi.json),
// oapiclient is generated from it by oapi-codegen and ogenclient by ogen,
// both at the versions pinned by the tool directives of the test module's
// go.mod (internal/e2e/go.mod). The
// walk-through of the README runs through each against hds.New
// (clients_test.go of internal/e2e), and drift_test.go fails when any
// of the three files differs from what the generators make of the
// document served today. After changing the document, run
//
//	go -C internal/e2e generate ./clients
//
// and commit the result.
package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/hds-go/hds"
)

//go:generate go run ./dump openapi.json
//go:generate go tool oapi-codegen -generate types,client -package oapiclient -o oapiclient/client.gen.go openapi.json
//go:generate go tool ogen -loglevel error -config ogen.yaml -target ogenclient -package ogenclient -clean openapi.json

// Document returns the OpenAPI document that hds.New serves with its
// default options (a token required) and webhooks on, indented.
func Document() ([]byte, error) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop() // the webhook dispatcher
	h := hds.New(hds.WithLogger(slog.New(slog.DiscardHandler)), hds.WithWebhooks(hds.Webhooks{Enabled: true}), hds.WithShutdown(ctx))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET /api/v1/openapi.json: %d %s", rec.Code, rec.Body)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, rec.Body.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

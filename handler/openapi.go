package handler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
)

// The OpenAPI document of the API, served at GET /api/v1/openapi.json,
// is built by internal/openapi from the router's own table (routes.go):
// every route is registered with the operation that describes it, so the
// document lists exactly the registered routes (openapi_test.go proves
// the method and pattern sets equal).

// documentFacts are the handler's values the document states.
func documentFacts() openapi.Facts {
	return openapi.Facts{
		ExportFormat:         exportFormat,
		FormatEnv:            formatEnv,
		EventStreamType:      eventsMessage,
		SkippedRecordsHeader: skippedRecordsHeader,
		ContainerSortBy:      sortNames(containerSortFields),
		RecordSortBy:         sortNames(recordSortFields),
		Changes:              []string{changeAdded, changeRemoved, changeChanged, changeUnchanged},
		WebhookActions:       eventActions(),
		MaxTokenName:         maxTokenName,
		MaxExpiresIn:         maxExpiresIn,
		MaxBatchOps:          maxBatchOps,
		MinWebhookSecret:     minWebhookSecret,
		MaxWebhookSecret:     maxWebhookSecret,
		MaxWebhookURL:        maxWebhookURL,
	}
}

// servedDocument is the encoded document and its entity tag.
type servedDocument struct {
	body []byte
	etag string
}

// encodeDocument encodes the document of rt's routes.
func encodeDocument(rt *router, version string, requireAuth bool) servedDocument {
	body := openapi.Encode(rt.routes, documentFacts(), version, requireAuth)
	sum := sha256.Sum256(body)
	return servedDocument{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

// handleOpenAPI serves the document of rt's routes, not enveloped. It
// needs no token and is not counted by the rate limiter. The document is
// built once, on the first request, when every route is registered.
func handleOpenAPI(rt *router, version string, requireAuth bool) http.Handler {
	served := sync.OnceValue(func() servedDocument { return encodeDocument(rt, version, requireAuth) })
	return strictQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := served()
		h := w.Header()
		h.Set("Cache-Control", openapi.CacheControl)
		h.Set("ETag", d.etag)
		h.Set("Content-Type", envelope.ContentType)
		// ServeContent answers If-None-Match (304), HEAD and ranges.
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(d.body))
	}))
}

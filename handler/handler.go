// Package handler implements the routes of the hds HTTP API
// (docs/api.md#4-routes) on a net/http ServeMux. The other files hold one
// resource each. routes.go is the route list: it calls one function per
// resource, and the rule is that each resource's function lives in that
// resource's file (projectRoutes, collectionRoutes and clusterRoutes in
// containers.go, recordRoutes in records.go, webhookRoutes in
// webhooks_routes.go, ...) and registers every route of the resource with
// rt.handle, giving its pattern, the right it needs, its handler behind its
// middleware chain (deps.go) and its OpenAPI operation. router.go is the
// router; internal/openapi builds the OpenAPI document from its route
// table. Handlers decode and validate the request, make one store call
// where they can, and encode the response through internal/envelope.
package handler

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
)

// Config is what the handlers need. Every field is required.
type Config struct {
	Store store.Store
	Users store.UserDirectory
	// Sessions keeps the ends of sessions and the used refresh tokens;
	// usually the same value as Users, which is used when it is nil.
	Sessions store.Sessions
	Tokens   *auth.Tokens
	// Access keeps the members and API tokens of projects; usually the
	// same value as Store, which is used when it is nil.
	Access store.Access
	// AllowAnonymous lets requests without a token run as
	// auth.Anonymous. False, the zero value, requires a token.
	AllowAnonymous bool
	// Sealer seals credential values; nil when no credential key is
	// configured, and creating or updating CREDENTIAL records is refused.
	Sealer Sealer
	// RateLimiter counts requests per user once the token is verified and
	// per client IP before that. nil: no rate limiting at all (hds.New
	// and hds.NewHandler always set it; a host building a Config itself
	// must, or its API is unlimited).
	RateLimiter *middleware.RateLimiter
	// SharedLimits is the shared store the RateLimiter and LoginThrottle
	// count in, which /health reports on; nil when their counters live in
	// this process only (checks.rate_limit "local").
	SharedLimits *middleware.FallbackStore
	// LoginThrottle limits failed logins. nil: no throttling at all
	// (hds.New and hds.NewHandler always set it; a host building a Config
	// itself must, or passwords can be guessed without a bound).
	LoginThrottle *middleware.LoginThrottle
	// ClientIP finds a request's client address.
	ClientIP middleware.ClientIP
	// MaxBodyBytes limits request bodies (413 beyond it).
	MaxBodyBytes int64
	// MaxImportBytes limits the bodies of POST P/batch and POST P/import
	// instead (limits.max_import_bytes).
	MaxImportBytes int64
	// RequireIfMatch refuses PUT R, DELETE R and restore without If-Match
	// (428, concurrency.require_if_match).
	RequireIfMatch bool
	// MaxVersions is how many versions besides the current one each
	// record keeps (history.max_versions); 0 keeps none.
	MaxVersions int
	// MaxResolvedBytes bounds the resolved text of one answer with
	// resolve=true (limits.max_resolved_bytes,
	// docs/api.md#20-references-between-records): more is 422. 0 is
	// DefaultMaxResolvedBytes.
	MaxResolvedBytes int64
	// KeepAutomaticSnapshots is how many automatic snapshots, taken by
	// promotes, a project keeps (snapshots.keep_automatic,
	// docs/api.md#snapshots-and-rollback-v13): 0 takes
	// DefaultKeepAutomaticSnapshots, a negative number none (promotes
	// then take no snapshot).
	KeepAutomaticSnapshots int
	// Version is reported by /health.
	Version string
	// EventsKeepalive is how long a change feed stream may stay silent
	// before a keep-alive comment is sent (events.keepalive; default
	// DefaultEventsKeepalive when 0).
	EventsKeepalive time.Duration
	// MaxStreamsPerUser bounds the open change feed streams of one user
	// or API token on this instance (events.max_streams_per_user; default
	// DefaultMaxStreamsPerUser when 0).
	MaxStreamsPerUser int
	// Shutdown, when closed, ends every open change feed stream at once
	// (server shutdown); nil never does.
	Shutdown <-chan struct{}
	// Logger receives the audit lines of user changes
	// (docs/api.md#server-administrators-and-user-accounts-v12); nil writes
	// none.
	Logger *slog.Logger
	// Console serves the browser console at /console/ (package
	// handler/console, docs/api.md#19-the-console).
	Console bool
	// Webhooks, when not nil, serves the webhook routes
	// (docs/api.md#22-webhooks) and runs their dispatcher until Shutdown
	// is closed (for ever when Shutdown is nil). nil: webhooks are off
	// and their routes are 404.
	Webhooks *Webhooks
}

// Sealer seals the values of CREDENTIAL and []CREDENTIAL records before
// they reach the store and opens them for reveal=true. hds.New uses an
// AES-256-GCM keyring (hds.WithCredentialKey); a host may bring its own,
// for example one backed by a KMS.
//
// A value is the canonical JSON of its type: a string, or an array of
// strings for []CREDENTIAL. The sealed form must have the same shape (each
// string sealed on its own), since responses without reveal=true mask each
// string. recordID is the record's id; a sealed value should be bound to
// it so that it cannot be moved to another record.
type Sealer interface {
	// SealValue returns the sealed form of the plain value of a record of
	// credential type t.
	SealValue(t store.DataType, recordID string, value json.RawMessage) (json.RawMessage, error)
	// OpenValue returns the plain value of a sealed one. Its error is
	// logged, never sent, and must not contain the value.
	OpenValue(t store.DataType, recordID string, value json.RawMessage) (json.RawMessage, error)
}

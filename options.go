package hds

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ulule/limiter/v3"

	"github.com/hds-go/hds/handler"
	"github.com/hds-go/hds/internal/duration"
	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/internal/webhook"
	"github.com/hds-go/hds/store"
)

// Option configures New.
type Option func(*config)

// config is what the options build.
type config struct {
	store        store.Projects
	users        store.Accounts
	security     Security
	credKeys     [][]byte
	maxBodyBytes int64
	maxImport    int64
	// maxResolved is WithMaxResolvedBytes's bound; 0 takes the default.
	maxResolved int64
	// keepAutomatic is WithKeepAutomaticSnapshots's number as
	// handler.Config takes it: 0 the default, -1 none.
	keepAutomatic int
	logger        *slog.Logger
	corsOrigins   []string
	perHour       int
	perMinute     int
	limitStore    limiter.Store
	proxies       []string
	loginPerUser  int
	loginPerIP    int
	loginWindow   time.Duration
	requireMatch  bool
	maxVersions   int
	quotas        *store.Quotas
	// The change feed (WithEvents, WithShutdown).
	eventsKeepalive time.Duration
	maxStreams      int
	shutdown        <-chan struct{}
	console         bool
	webhooks        Webhooks
	errs            []error
}

func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// Security configures authentication. Durations take Go's forms ("90m",
// "1h") plus whole days ("7d"); an empty string means the default. Every
// field left out is the safe choice: Security{JWTSecret: s} keeps
// authentication on.
type Security struct {
	// JWTSecret signs and verifies tokens (HS256); at least 32 bytes.
	// Default: 32 random bytes made by New, so tokens do not survive a
	// restart.
	JWTSecret string
	// JWTExpiration is the token lifetime. Default "1h".
	JWTExpiration string
	// JWTIssuer is the iss claim. Default "hds".
	JWTIssuer string
	// AllowAnonymous, when true, turns authentication off: requests
	// without an Authorization header run as the built-in user
	// "anonymous". Default false: every request needs a token.
	AllowAnonymous bool
	// RefreshWindow is how long after its expiry a token may still be
	// refreshed. Default "7d".
	RefreshWindow string
	// MaxSessionAge is how long after the login that started it a session
	// may be refreshed. Default "30d".
	MaxSessionAge string
}

// Defaults of New.
const (
	DefaultJWTExpiration = "1h"
	DefaultJWTIssuer     = "hds"
	DefaultRefreshWindow = "7d"
	DefaultMaxSessionAge = "30d"
	// DefaultMaxBodyBytes is the default request body limit, 1 MiB.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxImportBytes is the default body limit of batches and
	// imports, 16 MiB.
	DefaultMaxImportBytes = 16 << 20
	// DefaultMaxResolvedBytes is the default bound of the resolved text
	// of one answer with resolve=true, 16 MiB (WithMaxResolvedBytes).
	DefaultMaxResolvedBytes = handler.DefaultMaxResolvedBytes
	// DefaultPerHour and DefaultPerMinute are the default rate limits
	// per user (or, before authentication, per client IP).
	DefaultPerHour   = 1000
	DefaultPerMinute = 100
	// DefaultLoginFailuresPerUser, DefaultLoginFailuresPerIP and
	// DefaultLoginWindow are the default login throttle.
	DefaultLoginFailuresPerUser = 10
	DefaultLoginFailuresPerIP   = 100
	DefaultLoginWindow          = 15 * time.Minute
	// CredentialKeyBytes is the length of a credential key (AES-256).
	CredentialKeyBytes = sealing.KeyBytes
	// DefaultMaxVersions is how many versions of each record, besides
	// the current one, are kept by default.
	DefaultMaxVersions = store.DefaultMaxVersions
)

// WithStore sets the store of projects, collections, clusters and
// records, with the members and API tokens of projects (store.Access),
// which its path resolution checks on every request: store.Projects
// lists what is required and what is optional. The memory, SQLite and
// PostgreSQL stores have it all. Default: a new, empty in-memory store
// (store/memory).
func WithStore(s store.Projects) Option {
	return func(c *config) {
		if s == nil {
			c.fail("WithStore: the store is nil")
		}
		c.store = s
	}
}

// WithUsers sets the directory of accounts that may log in, with the
// ends of sessions (logout, password change) and the used refresh tokens
// (store.Sessions), kept where every instance sharing the directory sees
// them: a store.Accounts. The memory, SQLite and PostgreSQL stores are one.
// Default: a new, empty in-memory directory (store/memory).
func WithUsers(u store.Accounts) Option {
	return func(c *config) {
		if u == nil {
			c.fail("WithUsers: the user directory is nil")
		}
		c.users = u
	}
}

// WithSecurity sets the authentication settings; see Security for each
// field's default. Default: a random JWT secret, "1h", "hds", AllowAnonymous
// false, "7d", "30d".
func WithSecurity(s Security) Option {
	return func(c *config) { c.security = s }
}

// WithCredentialKey sets the key that seals CREDENTIAL values (32 bytes,
// AES-256), and older keys that still open what they sealed. Default: no
// key, and creating or updating a credential record is refused.
func WithCredentialKey(primary []byte, previous ...[]byte) Option {
	return func(c *config) {
		c.credKeys = nil
		for i, k := range append([][]byte{primary}, previous...) {
			if len(k) != CredentialKeyBytes {
				c.fail("WithCredentialKey: key %d must be %d bytes, got %d", i, CredentialKeyBytes, len(k))
			}
			c.credKeys = append(c.credKeys, append([]byte(nil), k...))
		}
	}
}

// WithMaxBodyBytes sets the largest request body accepted; larger ones
// get 413. Default: DefaultMaxBodyBytes (1 MiB).
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) {
		if n <= 0 {
			c.fail("WithMaxBodyBytes: the limit must be positive, got %d", n)
		}
		c.maxBodyBytes = n
	}
}

// WithMaxImportBytes sets the largest body of POST P/batch and POST
// P/import (config limits.max_import_bytes); larger ones get 413. Every
// other route keeps WithMaxBodyBytes's limit. Default:
// DefaultMaxImportBytes (16 MiB).
func WithMaxImportBytes(n int64) Option {
	return func(c *config) {
		if n <= 0 {
			c.fail("WithMaxImportBytes: the limit must be positive, got %d", n)
		}
		c.maxImport = n
	}
}

// WithMaxResolvedBytes bounds what one answer with resolve=true may hold
// (config limits.max_resolved_bytes,
// docs/api.md#20-references-between-records): the UTF-8 bytes of the
// resolved text of its values that hold references, counted before
// masking. An answer that would pass it is 422 UNRESOLVED_REFERENCE
// (details "record NAME: too large") before anything is sent; one value's
// text is bounded by 1 MiB whatever n is. n must be positive. Default:
// DefaultMaxResolvedBytes (16 MiB).
func WithMaxResolvedBytes(n int64) Option {
	return func(c *config) {
		if n <= 0 {
			c.fail("WithMaxResolvedBytes: the limit must be positive, got %d", n)
		}
		c.maxResolved = n
	}
}

// WithLogger sets the logger of the one-line-per-request log and of
// internal errors. Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.fail("WithLogger: the logger is nil")
		}
		c.logger = l
	}
}

// WithCORS allows cross-origin requests from the given origins (exact
// match; "*" allows any origin). Default: none, and no Access-Control-*
// headers are sent.
func WithCORS(origins ...string) Option {
	return func(c *config) {
		for _, o := range origins {
			if o == "" || strings.TrimSpace(o) != o {
				c.fail("WithCORS: invalid origin %q", o)
			}
		}
		c.corsOrigins = append([]string(nil), origins...)
	}
}

// WithRateLimit sets how many requests each user (or, before
// authentication, each client IP) may make per hour and per minute; 0
// turns that window off. Default: DefaultPerHour (1000) and
// DefaultPerMinute (100).
func WithRateLimit(perHour, perMinute int) Option {
	return func(c *config) {
		if perHour < 0 || perMinute < 0 {
			c.fail("WithRateLimit: limits must not be negative, got %d and %d", perHour, perMinute)
		}
		c.perHour, c.perMinute = perHour, perMinute
	}
}

// WithRateLimitStore sets where rate limit and login throttle counters
// live, for example ulule/limiter's Redis store, so that several instances
// behind a load balancer share one budget per user. Default: a new
// in-memory store, private to this handler.
//
// While s fails or does not answer within
// middleware.DefaultFallbackTimeout, counting goes on in this process and
// /health reports "degraded" (middleware.FallbackStore); pass a
// *middleware.FallbackStore made with another timeout to choose it.
func WithRateLimitStore(s limiter.Store) Option {
	return func(c *config) {
		if s == nil {
			c.fail("WithRateLimitStore: the store is nil")
		}
		c.limitStore = s
	}
}

// WithTrustedProxies sets the proxies (CIDRs or addresses) whose
// X-Forwarded-For and X-Real-IP headers are believed when finding a
// client's IP. Default: none, and the client IP is the connection's
// remote address.
func WithTrustedProxies(cidrs ...string) Option {
	return func(c *config) { c.proxies = append([]string(nil), cidrs...) }
}

// WithLoginThrottle sets how many failed logins a username and a client IP
// may have in each window before every login for them is refused with
// 429. Default: DefaultLoginFailuresPerUser (10), DefaultLoginFailuresPerIP
// (100) and DefaultLoginWindow (15 minutes).
func WithLoginThrottle(perUser, perIP int, window time.Duration) Option {
	return func(c *config) {
		if perUser <= 0 || perIP <= 0 || window <= 0 {
			c.fail("WithLoginThrottle: limits and window must be positive")
		}
		c.loginPerUser, c.loginPerIP, c.loginWindow = perUser, perIP, window
	}
}

// WithRequireIfMatch, when true, refuses PUT R, DELETE R and restore
// requests without an If-Match header with 428 PRECONDITION_REQUIRED, so
// that no client overwrites a change it has not seen (config
// concurrency.require_if_match). Default: false.
func WithRequireIfMatch(require bool) Option {
	return func(c *config) { c.requireMatch = require }
}

// WithMaxVersions sets how many versions of each record, besides the
// current one, the store keeps (config history.max_versions); 0 keeps
// none. Older versions are dropped as new ones come. Default:
// DefaultMaxVersions (10).
func WithMaxVersions(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.fail("WithMaxVersions: the number of versions must not be negative, got %d", n)
		}
		c.maxVersions = n
	}
}

// WithConsole, when true, serves the browser console
// (docs/api.md#19-the-console) at /console/ below where the handler is
// mounted: a person logs in there and browses, edits and shares what the
// API holds. Its files are embedded in the module and it uses only the
// public API. Default: false (the standalone example turns it on with
// console.enabled).
func WithConsole(enabled bool) Option {
	return func(c *config) { c.console = enabled }
}

// WithQuotas sets the quotas of
// docs/api.md#8-limits-rate-limits-and-quotas (config limits.*): the
// records of a cluster, the bytes of a project (names and values, history
// included), the projects of a user, the webhooks of a project and the
// snapshots of a project that are not automatic (v1.3). A
// field left 0 keeps its default (store.DefaultQuotas), so that setting
// one bound does not lift the others; store.Unlimited means no bound
// (store.NoQuotas lifts all); MaxWebhooksPerProject also takes
// store.NoneAllowed (no webhook at all); any other
// negative is refused. A write that would pass one is refused with
// 403 QUOTA_EXCEEDED and changes nothing.
// The store enforces them, atomically with the write: New sets them on
// the store (which must implement store.QuotaSetter, as both shipped
// stores do; shared by every handler that serves it). Without the
// option: the store's own quotas, store.DefaultQuotas (100,000 records,
// 256 MiB, 1,000 projects) unless the store was built with others.
func WithQuotas(q store.Quotas) Option {
	return func(c *config) {
		bad := func(v int64) bool { return v < 0 && v != store.Unlimited }
		webhooks := int64(q.MaxWebhooksPerProject)
		if webhooks == store.NoneAllowed {
			webhooks = 0
		}
		if bad(int64(q.MaxRecordsPerCluster)) || bad(q.MaxBytesPerProject) || bad(int64(q.MaxProjectsPerUser)) || bad(webhooks) ||
			bad(int64(q.MaxSnapshotsPerProject)) {
			c.fail("WithQuotas: a quota must be more than 0, 0 (its default) or store.Unlimited")
		}
		c.quotas = &q
	}
}

// ParseDuration reads a duration in Go's forms ("1h30m") with days as
// one more unit ("7d", "1d12h", "1.5d"). It refuses negative durations.
func ParseDuration(s string) (time.Duration, error) { return duration.Parse(s) }

// durationOr parses s, or def when s is empty.
func (c *config) durationOr(field, s, def string) time.Duration {
	if s == "" {
		s = def
	}
	d, err := ParseDuration(s)
	if err != nil {
		c.fail("Security.%s: %v", field, err)
	}
	return d
}

// WithEvents configures the change feed, GET P/events
// (docs/api.md#18-audit-log-and-change-feed): keepalive is how long a
// stream may stay silent before a keep-alive comment is sent (config
// events.keepalive; default 15s), and maxStreamsPerUser bounds the streams
// one user or API token may have open on this instance (config
// events.max_streams_per_user; default 10): one more is 429. Both must be
// positive.
func WithEvents(keepalive time.Duration, maxStreamsPerUser int) Option {
	return func(c *config) {
		if keepalive <= 0 {
			c.fail("WithEvents: the keep-alive interval must be positive, got %s", keepalive)
		}
		if maxStreamsPerUser < 1 {
			c.fail("WithEvents: the streams per user must be at least 1, got %d", maxStreamsPerUser)
		}
		c.eventsKeepalive, c.maxStreams = keepalive, maxStreamsPerUser
	}
}

// WithShutdown ends every open change feed stream at once when ctx is
// done. Streams never end by themselves, and net/http's Server.Shutdown
// waits for the connections it serves: cancel ctx when the server shuts
// down (Server.RegisterOnShutdown does it at the right moment), and the
// streams end, their clients reconnect elsewhere with Last-Event-ID.
// Default: streams end only with their connection. A nil ctx is an
// invalid option.
func WithShutdown(ctx context.Context) Option {
	return func(c *config) {
		if ctx == nil {
			c.fail("WithShutdown: the context is nil")
			return
		}
		c.shutdown = ctx.Done()
	}
}

// Webhooks configures the webhooks of docs/api.md#22-webhooks
// (WithWebhooks). The zero value is off; every other field left zero
// takes its default.
type Webhooks struct {
	// Enabled serves the webhook routes and sends their deliveries
	// (config webhooks.enabled). Default false: the routes are 404.
	Enabled bool
	// Timeout bounds one attempt at a delivery: a 2xx answer within it
	// succeeds (webhooks.timeout). Default 10s.
	Timeout time.Duration
	// MaxBackoff bounds the wait between two attempts, which starts at
	// 1s and doubles (webhooks.max_backoff). Default 1h.
	MaxBackoff time.Duration
	// MaxAttempts is how many attempts a delivery gets before it is
	// recorded as failed (webhooks.max_attempts). Default 10.
	MaxAttempts int
	// AllowPrivateAddresses lets webhooks reach loopback, private,
	// link-local and the other special-use addresses of
	// docs/api.md#22-webhooks (webhooks.allow_private_addresses), but
	// never multicast, 255.255.255.255, 0.0.0.0/8 or ::. Default false:
	// every address that is not globally routable unicast is refused on
	// create, and a connection to one fails.
	AllowPrivateAddresses bool
	// MaxPending bounds the deliveries of each webhook not yet succeeded
	// or failed (webhooks.max_pending): once one more waits, the oldest
	// not in flight is recorded as failed with last_error "queue full".
	// Default (0) DefaultWebhookMaxPending, 10,000; store.Unlimited
	// lifts the bound. On PostgreSQL the bound is kept in the database,
	// shared by the instances (the last one started sets it).
	MaxPending int
	// KeepDeliveries is how long finished (succeeded or failed)
	// deliveries are kept before they are deleted
	// (webhooks.keep_deliveries). Default (0) 7 days.
	KeepDeliveries time.Duration
}

// Defaults of Webhooks: the dispatcher's own (internal/webhook), named
// here for hosts.
const (
	DefaultWebhookTimeout     = webhook.DefaultTimeout
	DefaultWebhookMaxBackoff  = webhook.DefaultMaxBackoff
	DefaultWebhookMaxAttempts = webhook.DefaultMaxAttempts
	// DefaultWebhookMaxPending is 10,000 deliveries per webhook.
	DefaultWebhookMaxPending     = webhook.DefaultMaxPending
	DefaultWebhookKeepDeliveries = webhook.DefaultKeepDeliveries
)

// WithWebhooks configures webhooks (docs/api.md#22-webhooks): with
// w.Enabled, admins create webhooks under their projects, and every
// change-feed event they ask for is POSTed to them, signed, at least
// once, by a dispatcher that runs until the WithShutdown context is done
// (for the life of the process without it). The store must implement
// store.Webhooks (the memory, SQLite and PostgreSQL stores do); on
// PostgreSQL, instances sharing the database share the sending. Default:
// off, the routes are 404.
func WithWebhooks(w Webhooks) Option {
	return func(c *config) {
		if w.Timeout < 0 || w.MaxBackoff < 0 || w.KeepDeliveries < 0 {
			c.fail("WithWebhooks: durations must not be negative")
		}
		if w.MaxPending < 0 && w.MaxPending != store.Unlimited {
			c.fail("WithWebhooks: MaxPending must be more than 0, 0 (its default) or store.Unlimited, got %d", w.MaxPending)
		}
		if w.MaxAttempts < 0 {
			c.fail("WithWebhooks: MaxAttempts must not be negative, got %d", w.MaxAttempts)
		}
		c.webhooks = w
	}
}

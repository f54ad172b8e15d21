// Package hds is a typed, hierarchical data store served as a JSON REST
// API: project > collection > cluster > record, where a record is a named
// value of a declared type (STRING, INTEGER, ..., CREDENTIAL, and arrays
// of them). Mount it in any Go HTTP server:
//
//	mux.Handle("/hds/", http.StripPrefix("/hds", hds.New(opts...)))
//
// The HTTP contract is API.md; the storage is pluggable (store.Projects
// and store.Accounts), with an in-memory implementation as the default.
package hds

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ulule/limiter/v3"
	limitmemory "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/handler"
	"github.com/hds-go/hds/internal/observe"
	"github.com/hds-go/hds/internal/sealing"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// Version is the version of hds that /health and the OpenAPI document's
// info.version report when the build does not record the module's own
// (a build inside this repository, or a host that replaces the module
// by a directory); otherwise they report the recorded one (v1.3.0 as
// 1.3.0).
const Version = "1.3.0"

// New returns the API as an http.Handler. With no options it serves an
// empty in-memory store and user directory, signs tokens with a random
// secret made now, has no credential key, requires authentication and
// limits bodies to 1 MiB. An invalid option makes New panic with a message
// starting "hds: ": the options of a program are fixed when it is written.
// A program that builds its options from configuration calls NewHandler,
// which returns the problem as an error instead (regexp.MustCompile and
// regexp.Compile are the same pair).
func New(opts ...Option) http.Handler {
	h, err := NewHandler(opts...)
	if err != nil {
		panic(err.Error())
	}
	return h
}

// NewHandler is New returning an error instead of panicking when an
// option is invalid: a JWT secret under 32 bytes, a credential key not of
// 32 bytes, a duration that does not parse, a nil store, and so on. The
// error's message starts with "hds: " and names every invalid option; it
// never holds a secret or a key. On error NewHandler has started nothing.
func NewHandler(opts ...Option) (http.Handler, error) {
	c := config{
		maxBodyBytes: DefaultMaxBodyBytes,
		maxImport:    DefaultMaxImportBytes,
		logger:       slog.Default(),
		perHour:      DefaultPerHour,
		perMinute:    DefaultPerMinute,
		loginPerUser: DefaultLoginFailuresPerUser,
		loginPerIP:   DefaultLoginFailuresPerIP,
		loginWindow:  DefaultLoginWindow,
		maxVersions:  DefaultMaxVersions,
	}
	for _, opt := range opts {
		opt(&c)
	}
	tokens := c.tokens()
	var keyring *sealing.Keyring
	if len(c.errs) == 0 { // the options already reported bad keys
		keyring = c.keyring()
	}
	clientIP, err := middleware.NewClientIP(c.proxies...)
	if err != nil {
		c.fail("WithTrustedProxies: %v", err)
	}
	var quotaSetter store.QuotaSetter
	if c.quotas != nil && c.store != nil {
		var ok bool
		if quotaSetter, ok = c.store.(store.QuotaSetter); !ok {
			c.fail("WithQuotas: the store does not enforce quotas (it implements no store.QuotaSetter)")
		}
	}
	if c.webhooks.Enabled && c.store != nil {
		if _, ok := c.store.(store.Webhooks); !ok {
			c.fail("WithWebhooks: the store keeps no webhooks (it implements no store.Webhooks)")
		}
	}
	if err := errors.Join(c.errs...); err != nil {
		return nil, fmt.Errorf("hds: %w", err)
	}
	if c.store == nil || c.users == nil {
		mem := memory.New()
		if c.store == nil {
			c.store, quotaSetter = mem, mem
		}
		if c.users == nil {
			c.users = mem
		}
	}
	if c.quotas != nil {
		quotaSetter.SetQuotas(*c.quotas)
	}
	if ls, ok := c.store.(store.AuditLogSetter); ok {
		ls.SetAuditLogger(c.logger) // every audit entry also goes to the server log
	}

	// A configured store (Redis) is shared between instances; while it is
	// down, counting goes on in this process
	// (docs/api.md#limits-rate-limits-and-quotas).
	var shared *middleware.FallbackStore
	if c.limitStore == nil {
		c.limitStore = limitmemory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "hds", CleanUpInterval: time.Minute})
	} else {
		var ok bool
		if shared, ok = c.limitStore.(*middleware.FallbackStore); !ok {
			shared = middleware.NewFallbackStore(c.limitStore, 0, c.logger)
		}
		c.limitStore = shared
	}
	obs := observe.New(observe.Hooks(c.observer), c.logger)
	if shared != nil {
		shared.Observe(obs.RateLimitShared) // told at once, then at each switch
	} else {
		obs.RateLimitShared(false)
	}
	var sealer handler.Sealer
	if keyring != nil { // never a nil *Keyring in the interface
		sealer = keyring
	}
	api, err := handler.New(handler.Config{
		Store:          c.store,
		Users:          c.users,
		Sessions:       c.users,
		Access:         c.store,
		Tokens:         tokens,
		AllowAnonymous: c.security.AllowAnonymous,
		Sealer:         sealer,
		Version:        moduleVersion(),
		RateLimiter: middleware.NewRateLimiter(c.limitStore,
			limiter.Rate{Period: time.Hour, Limit: int64(c.perHour)},
			limiter.Rate{Period: time.Minute, Limit: int64(c.perMinute)}),
		LoginThrottle: middleware.NewLoginThrottle(c.limitStore,
			int64(c.loginPerUser), int64(c.loginPerIP), c.loginWindow),
		SharedLimits:           shared,
		ClientIP:               clientIP,
		MaxBodyBytes:           c.maxBodyBytes,
		MaxImportBytes:         c.maxImport,
		MaxResolvedBytes:       c.maxResolved,
		KeepAutomaticSnapshots: c.keepAutomatic,
		RequireIfMatch:         c.requireMatch,
		Logger:                 c.logger,
		MaxVersions:            c.maxVersions,
		EventsKeepalive:        c.eventsKeepalive,
		MaxStreamsPerUser:      c.maxStreams,
		Shutdown:               c.shutdown,
		Console:                c.console,
		Webhooks:               c.webhooksConfig(),
		Observer:               handlerObserver(obs),
		AdminRoutes:            c.adminRoutes,
	})
	if err != nil { // the fields handler.New requires are all set above
		return nil, fmt.Errorf("hds: %w", err)
	}
	// Everything is checked: the background work (the webhook
	// dispatcher) starts now, and runs until WithShutdown's channel
	// closes.
	api.Start()
	if c.security.AllowAnonymous {
		c.logger.Warn("hds: authentication is not required: requests without a token run as the user \"anonymous\" " +
			"(hds.Security.AllowAnonymous is true)")
	}
	// The chain, outermost first. NoStore marks every answer under
	// /api/v1/ uncacheable. CORS answers preflights before anything is
	// authenticated or counted; rate limiting and the body limit run
	// inside the router, by user once the token verifies and by client IP
	// before that.
	return chain(api,
		middleware.RequestID(),
		middleware.Logging(c.logger),
		middleware.Observe(requestObserver(obs)),
		middleware.Recover(),
		middleware.NoStore("/api/v1/"),
		middleware.CORS(c.corsOrigins...),
	), nil
}

// tokens builds the token issuer from the security settings.
func (c *config) tokens() *auth.Tokens {
	s := c.security
	secret := []byte(s.JWTSecret)
	if s.JWTSecret == "" {
		secret = make([]byte, auth.MinSecretBytes)
		_, _ = rand.Read(secret) // crypto/rand never fails on supported platforms
	}
	issuer := s.JWTIssuer
	if issuer == "" {
		issuer = DefaultJWTIssuer
	}
	cfg := auth.TokenConfig{
		Secret:        secret,
		Issuer:        issuer,
		Expiration:    c.durationOr("JWTExpiration", s.JWTExpiration, DefaultJWTExpiration),
		RefreshWindow: c.durationOr("RefreshWindow", s.RefreshWindow, DefaultRefreshWindow),
		MaxSessionAge: c.durationOr("MaxSessionAge", s.MaxSessionAge, DefaultMaxSessionAge),
	}
	if len(c.errs) > 0 {
		return nil
	}
	t, err := auth.NewTokens(cfg)
	if err != nil {
		c.fail("Security: %v", err)
	}
	return t
}

// webhooksConfig is the handler's webhook configuration: nil when they
// are off.
func (c *config) webhooksConfig() *handler.Webhooks {
	w := c.webhooks
	if !w.Enabled {
		return nil
	}
	return &handler.Webhooks{Timeout: w.Timeout, MaxBackoff: w.MaxBackoff, MaxAttempts: w.MaxAttempts,
		AllowPrivateAddresses: w.AllowPrivateAddresses, MaxPending: w.MaxPending, KeepDeliveries: w.KeepDeliveries}
}

// keyring builds the credential keyring, or nil without a key.
func (c *config) keyring() *sealing.Keyring {
	if len(c.credKeys) == 0 {
		return nil
	}
	k, err := sealing.NewKeyring(c.credKeys[0], c.credKeys[1:]...)
	if err != nil {
		c.fail("WithCredentialKey: %v", err)
	}
	return k
}

// handlerObserver is obs for the handler: nil (nobody told) without one.
func handlerObserver(obs *observe.Observer) handler.Observer {
	if obs == nil {
		return nil
	}
	return obs
}

// requestObserver is obs for the request middleware: nil (no middleware)
// unless the host wants request facts.
func requestObserver(obs *observe.Observer) middleware.RequestObserver {
	if !obs.WantsRequests() {
		return nil
	}
	return obs
}

// chain wraps h in middleware, the first one outermost.
func chain(h http.Handler, mw ...func(http.Handler) http.Handler) http.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

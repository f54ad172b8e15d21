package handler

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// API is the hds API built from a Config: an http.Handler serving every
// route of docs/api.md#routes, and the background work those routes rely
// on, which Start starts.
type API struct {
	router     http.Handler
	background []func()
	start      sync.Once
}

// New returns the API's router: every route of docs/api.md#routes and the
// OpenAPI document that describes them (built from this one table: each
// route carries its operation), an enveloped 405 (with Allow) for a known
// path with a wrong method, an enveloped 404 for anything else, and no
// redirects for non-canonical paths.
//
// New refuses a Config that leaves out what the API cannot run without or
// what would turn a protection off: its error starts with "handler: " and
// names every such field (see Config), and nothing is built. New starts no
// goroutine: the owner of the API's lifetime calls Start.
func New(cfg Config) (*API, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	rt := routes(cfg)
	return &API{router: rt.finish(), background: rt.background}, nil
}

// ServeHTTP serves a request of the API.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.router.ServeHTTP(w, r) }

// Start starts the API's background work, each in its own goroutine until
// Config.Shutdown is closed (for ever when it is nil): the webhook
// dispatcher, when Config.Webhooks is set and there is a store to send
// from. Without Start the API serves every route, but webhook deliveries
// wait in the store and are not sent. Calls after the first do nothing.
// hds.New and hds.NewHandler call it.
func (a *API) Start() {
	a.start.Do(func() {
		for _, run := range a.background {
			go run()
		}
	})
}

// check reports every field of c that New refuses: the store, the user
// directory and the token issuer, without which no request can be
// served, and the rate limiter and login throttle, whose absence would
// leave the API without rate limits or passwords without a bound on
// guesses. A host that wants no limit says so with a limiter of no rate.
func (c *Config) check() error {
	var errs []error
	missing := func(field, why string) { errs = append(errs, fmt.Errorf("Config.%s is nil: %s", field, why)) }
	if c.Store == nil {
		missing("Store", "the API has nothing to serve")
	}
	if c.Users == nil {
		missing("Users", "no user can log in")
	}
	if c.Tokens == nil {
		missing("Tokens", "no token can be issued or verified")
	}
	if c.RateLimiter == nil {
		missing("RateLimiter", "requests would not be rate limited (for no limit, pass middleware.NewRateLimiter with no rate)")
	}
	if c.LoginThrottle == nil {
		missing("LoginThrottle", "failed logins would not be limited")
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("handler: %w", err)
	}
	return nil
}

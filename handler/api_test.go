package handler

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulule/limiter/v3"
	limitmemory "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/middleware"
	"github.com/hds-go/hds/store/memory"
)

// testConfig returns cfg with what New requires filled in where cfg
// leaves it out: an in-memory store and user directory, a token issuer,
// a rate limiter and a login throttle.
func testConfig(t testing.TB, cfg Config) Config {
	t.Helper()
	if cfg.Store == nil || cfg.Users == nil {
		m := memory.New()
		if cfg.Store == nil {
			cfg.Store = m
		}
		if cfg.Users == nil {
			cfg.Users = m
		}
	}
	if cfg.Tokens == nil {
		tokens, err := auth.NewTokens(auth.TokenConfig{Secret: []byte(strings.Repeat("s", auth.MinSecretBytes)), Issuer: "test", Expiration: time.Hour})
		require.NoError(t, err)
		cfg.Tokens = tokens
	}
	limits := limitmemory.NewStore()
	if cfg.RateLimiter == nil {
		cfg.RateLimiter = middleware.NewRateLimiter(limits, limiter.Rate{Period: time.Minute, Limit: 1000})
	}
	if cfg.LoginThrottle == nil {
		cfg.LoginThrottle = middleware.NewLoginThrottle(limits, 10, 100, time.Minute)
	}
	return cfg
}

// mustNew is New of testConfig(cfg).
func mustNew(t testing.TB, cfg Config) *API {
	t.Helper()
	api, err := New(testConfig(t, cfg))
	require.NoError(t, err)
	return api
}

// TestNewRefusesMissingFields checks that New refuses a Config that leaves
// out a field the API cannot run without or whose absence would turn a
// protection off (a nil rate limiter would mean no rate limits, a nil
// login throttle unbounded password guessing), naming every such field,
// and builds nothing.
func TestNewRefusesMissingFields(t *testing.T) {
	api, err := New(Config{})
	assert.Nil(t, api)
	require.Error(t, err)
	assert.Equal(t, "handler: Config.Store is nil: the API has nothing to serve\n"+
		"Config.Users is nil: no user can log in\n"+
		"Config.Tokens is nil: no token can be issued or verified\n"+
		"Config.RateLimiter is nil: requests would not be rate limited (for no limit, pass middleware.NewRateLimiter with no rate)\n"+
		"Config.LoginThrottle is nil: failed logins would not be limited", err.Error())

	full := testConfig(t, Config{})
	for field, clear := range map[string]func(*Config){
		"Store":         func(c *Config) { c.Store = nil },
		"Users":         func(c *Config) { c.Users = nil },
		"Tokens":        func(c *Config) { c.Tokens = nil },
		"RateLimiter":   func(c *Config) { c.RateLimiter = nil },
		"LoginThrottle": func(c *Config) { c.LoginThrottle = nil },
	} {
		cfg := full
		clear(&cfg)
		api, err := New(cfg)
		assert.Nil(t, api, field)
		if assert.Error(t, err, field) {
			assert.True(t, strings.HasPrefix(err.Error(), "handler: Config."+field+" is nil: "), "%s: %v", field, err)
			assert.NotContains(t, err.Error(), "\n", "%s: the one missing field alone", field)
		}
	}
	api, err = New(full)
	require.NoError(t, err, "every required field set")
	assert.NotNil(t, api)
}

// dispatchers counts the goroutines running a webhook dispatcher.
func dispatchers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("internal/webhook.(*Dispatcher).Run("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// waitDispatchers polls, with a deadline, until want goroutines run a
// webhook dispatcher.
func waitDispatchers(t *testing.T, want int, msg string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for dispatchers() != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	assert.Equal(t, want, dispatchers(), msg)
}

// TestNewStartsNothing checks that New starts no background work: the
// webhook dispatcher runs from API.Start, once however often it is called,
// until Config.Shutdown closes.
func TestNewStartsNothing(t *testing.T) {
	require.Zero(t, dispatchers(), "no dispatcher before the test")
	shutdown := make(chan struct{})
	api := mustNew(t, Config{Webhooks: &Webhooks{}, Shutdown: shutdown})
	require.Len(t, api.background, 1, "webhooks on, with a store that keeps them: one dispatcher to run")
	assert.Zero(t, dispatchers(), "New started no dispatcher")
	api.Start()
	api.Start()
	waitDispatchers(t, 1, "Start started the dispatcher, once")
	close(shutdown)
	waitDispatchers(t, 0, "the dispatcher stopped with Shutdown")
}

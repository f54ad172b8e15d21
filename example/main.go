// Command example is the standalone hds server (API.md section 12). It
// serves the API with the in-memory store:
//
//	go run ./example                    # serve on 127.0.0.1:8080
//	go run ./example -config hds.json   # serve with a configuration file
//	go run ./example -config hds.json serve
//
// and manages accounts of a configured database (not with the in-memory
// store, which lives only inside a running server):
//
//	go run ./example -config FILE user add NAME    # password: first line of stdin
//	go run ./example -config FILE user disable NAME
//	go run ./example -config FILE user enable NAME
//	go run ./example -config FILE user delete NAME
//	go run ./example -config FILE user list
//
// Configuration comes from the JSON file given with -config and from the
// environment variables HDS_ADDR, HDS_DATABASE_URL, HDS_JWT_SECRET,
// HDS_CREDENTIAL_KEY and HDS_REDIS_URL, the environment winning. See
// README.md for every key and its default.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	limiterredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/postgres"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal stops the process at once
	}()
	if err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// Server timeouts and the time given to requests in flight at shutdown.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 10 * time.Second
)

const usageText = `Usage:
  %[1]s [-config FILE] [serve]          serve the API
  %[1]s [-config FILE] user add NAME    add a user; password: first line of stdin
  %[1]s [-config FILE] user disable NAME
  %[1]s [-config FILE] user enable NAME
  %[1]s [-config FILE] user delete NAME
  %[1]s [-config FILE] user list
  %[1]s [-config FILE] credentials rotate [AFTER_ID]
                                         re-seal every credential under the primary
                                         key (resume after AFTER_ID if interrupted)

Environment (wins over the file): HDS_ADDR, HDS_DATABASE_URL, HDS_JWT_SECRET,
HDS_CREDENTIAL_KEY, HDS_REDIS_URL.

Flags:
`

// run is the whole program: main only adds the process's arguments,
// environment, standard streams and a context cancelled by SIGINT or
// SIGTERM. args[0] is the program name.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	name := "example"
	if len(args) > 0 {
		name, args = filepath.Base(args[0]), args[1:]
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "read the configuration from this JSON `FILE`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), usageText, fs.Name())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err // flag has printed the problem and the usage
	}
	cmd, err := parseCommand(fs.Args())
	if err != nil {
		fs.Usage()
		return err
	}
	cfg, err := loadConfig(*configPath, getenv)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	switch cmd.name {
	case "serve":
		return serve(ctx, cfg, logger, stdout)
	case "credentials":
		return rotateCredentials(ctx, cfg, cmd.username, stdout)
	}
	return manageUsers(ctx, cfg, cmd, stdin, stdout)
}

// command is a parsed subcommand: "serve"; "user" with its action and,
// except for list, a username; or "credentials rotate" with, in username,
// the record id to resume after.
type command struct {
	name     string
	action   string
	username string
}

// parseCommand reads the arguments left after the flags.
func parseCommand(args []string) (command, error) {
	if len(args) == 0 {
		return command{name: "serve"}, nil
	}
	switch args[0] {
	case "serve":
		if len(args) > 1 {
			return command{}, fmt.Errorf("usage: serve takes no arguments, got %q", args[1:])
		}
		return command{name: "serve"}, nil
	case "user":
		if len(args) < 2 {
			return command{}, errors.New("usage: user needs an action: add, disable, enable, delete or list")
		}
		action := args[1]
		switch action {
		case "add", "disable", "enable", "delete":
			if len(args) != 3 {
				return command{}, fmt.Errorf("usage: user %s takes exactly one argument, the username", action)
			}
			return command{name: "user", action: action, username: args[2]}, nil
		case "list":
			if len(args) != 2 {
				return command{}, errors.New("usage: user list takes no arguments")
			}
			return command{name: "user", action: action}, nil
		}
		return command{}, fmt.Errorf("usage: unknown user action %q: use add, disable, enable, delete or list", action)
	case "credentials":
		if len(args) < 2 || args[1] != "rotate" || len(args) > 3 {
			return command{}, errors.New("usage: credentials rotate [AFTER_ID]")
		}
		cmd := command{name: "credentials", action: "rotate"}
		if len(args) == 3 {
			cmd.username = args[2]
		}
		return cmd, nil
	}
	return command{}, fmt.Errorf("usage: unknown command %q: use serve, user or credentials", args[0])
}

// --- configuration ---

// fileConfig is the JSON configuration file (API.md section 12). Every key
// is optional; unknown keys are refused.
type fileConfig struct {
	Addr        string          `json:"addr"`
	DatabaseURL string          `json:"database_url"`
	Database    databaseConfig  `json:"database"`
	Security    securityConfig  `json:"security"`
	CORS        corsConfig      `json:"cors"`
	RateLimit   rateLimitConfig `json:"rate_limit"`
	Users       []userConfig    `json:"users"`
	Concurrency struct {
		RequireIfMatch bool `json:"require_if_match"`
	} `json:"concurrency"`
	History struct {
		MaxVersions *int `json:"max_versions"`
	} `json:"history"`
}

type securityConfig struct {
	JWTSecret     string `json:"jwt_secret"`
	JWTExpiration string `json:"jwt_expiration"`
	JWTIssuer     string `json:"jwt_issuer"`
	// RequireAuth is a pointer so that a file that leaves it out keeps the
	// default, true.
	RequireAuth            *bool    `json:"require_auth"`
	RefreshWindow          string   `json:"refresh_window"`
	MaxSessionAge          string   `json:"max_session_age"`
	CredentialKey          string   `json:"credential_key"`
	PreviousCredentialKeys []string `json:"previous_credential_keys"`
}

// databaseConfig tunes the PostgreSQL connection pool. Not in API.md's
// example file; an addition documented in the README.
type databaseConfig struct {
	// MaxOpenConns is the pool size. Default 4: with the database on the
	// same machine, small pools keep tail latency low.
	MaxOpenConns *int `json:"max_open_conns"`
}

type corsConfig struct {
	AllowedOrigins []string `json:"allowed_origins"`
}

type rateLimitConfig struct {
	PerHour              *int     `json:"per_hour"`
	PerMinute            *int     `json:"per_minute"`
	RedisURL             string   `json:"redis_url"`
	TrustedProxies       []string `json:"trusted_proxies"`
	LoginFailuresPerUser *int     `json:"login_failures_per_user"`
	LoginFailuresPerIP   *int     `json:"login_failures_per_ip"`
	LoginWindow          string   `json:"login_window"`
}

type userConfig struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// defaultAddr is where the example listens by default. The other
// defaults are hds's own (hds.Default*).
const defaultAddr = "127.0.0.1:8080"

// config is the checked configuration, defaults applied and the
// environment merged in.
type config struct {
	addr        string
	databaseURL string
	// databaseURLFrom names where databaseURL came from, for messages
	// (the URL itself may hold a password and is never shown).
	databaseURLFrom string
	security        hds.Security
	// credentialKeys are the decoded keys, the primary first; none when no
	// key is configured.
	credentialKeys [][]byte
	users          []userConfig
	// dbMaxOpenConns is the PostgreSQL pool size.
	dbMaxOpenConns int

	perHour, perMinute                       int
	loginFailuresPerUser, loginFailuresPerIP int
	loginWindow                              time.Duration
	// redisURL, when set, holds the rate limit counters in Redis;
	// redisURLFrom names where it came from (the URL is never shown).
	redisURL, redisURLFrom string
	trustedProxies         []string
	corsOrigins            []string
	// requireIfMatch and maxVersions are concurrency.require_if_match and
	// history.max_versions (API.md sections 13 and 14).
	requireIfMatch bool
	maxVersions    int
}

// loadConfig reads the file at path (none when path is empty), merges in
// the environment and checks everything. Its errors never contain a
// secret.
func loadConfig(path string, getenv func(string) string) (*config, error) {
	var fc fileConfig
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if err := decodeConfig(data, &fc); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	cfg, err := resolve(fc, getenv)
	if err != nil {
		if path != "" {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// decodeConfig reads a configuration file strictly: keys must match
// exactly (encoding/json alone would match them in any case and ignore
// unknown ones).
func decodeConfig(data []byte, fc *fileConfig) error {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return jsonError(err)
	}
	if _, ok := raw.(map[string]any); !ok {
		return errors.New("the configuration must be a JSON object")
	}
	if err := checkKeys(raw, reflect.TypeFor[fileConfig](), ""); err != nil {
		return err
	}
	if err := json.Unmarshal(data, fc); err != nil {
		return jsonError(err)
	}
	return nil
}

// jsonError describes a JSON decoding error without quoting the file,
// which may hold secrets.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("invalid JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Errorf("%s must be %s, not %s", typ.Field, kindName(typ.Type), typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("expected %s, not %s", kindName(typ.Type), typ.Value)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a " + t.Kind().String()
}

// checkKeys reports the first key of v (decoded JSON) that is not a field
// of t, by its dotted path.
func checkKeys(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type error, reported by the second decoding
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			field, ok := fieldByTag(t, k)
			if !ok {
				return fmt.Errorf("unknown key %q", joinPath(path, k))
			}
			if err := checkKeys(obj[k], field.Type, joinPath(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, e := range arr {
			if err := checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// resolve applies the environment and the defaults to the file's
// configuration and checks the result.
func resolve(fc fileConfig, getenv func(string) string) (*config, error) {
	sec := fc.Security
	rl := fc.RateLimit
	cfg := &config{
		addr:            fc.Addr,
		databaseURL:     fc.DatabaseURL,
		databaseURLFrom: "database_url",
		users:           fc.Users,
		dbMaxOpenConns:  defaultMaxOpenConns,
		requireIfMatch:  fc.Concurrency.RequireIfMatch,
		maxVersions:     hds.DefaultMaxVersions,
	}
	if n := fc.History.MaxVersions; n != nil {
		if *n < 0 {
			return nil, fmt.Errorf("history.max_versions must not be negative, got %d", *n)
		}
		cfg.maxVersions = *n
	}
	if n := fc.Database.MaxOpenConns; n != nil {
		if *n < 1 {
			return nil, fmt.Errorf("database.max_open_conns must be at least 1, got %d", *n)
		}
		cfg.dbMaxOpenConns = *n
	}
	jwtSecretFrom, keyFrom, redisFrom := "security.jwt_secret", "security.credential_key", "rate_limit.redis_url"
	if v := getenv("HDS_ADDR"); v != "" {
		cfg.addr = v
	}
	if v := getenv("HDS_DATABASE_URL"); v != "" {
		cfg.databaseURL, cfg.databaseURLFrom = v, "HDS_DATABASE_URL"
	}
	if v := getenv("HDS_JWT_SECRET"); v != "" {
		sec.JWTSecret, jwtSecretFrom = v, "HDS_JWT_SECRET"
	}
	if v := getenv("HDS_CREDENTIAL_KEY"); v != "" {
		sec.CredentialKey, keyFrom = v, "HDS_CREDENTIAL_KEY"
	}
	if v := getenv("HDS_REDIS_URL"); v != "" {
		rl.RedisURL, redisFrom = v, "HDS_REDIS_URL"
	}
	if cfg.addr == "" {
		cfg.addr = defaultAddr
	}
	if cfg.databaseURL != "" {
		if u, err := url.Parse(cfg.databaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, fmt.Errorf("%s must be a postgres:// URL, or empty for the in-memory store "+
				"(the value is not shown, it may hold a password)", cfg.databaseURLFrom)
		}
	}

	// Security.
	if n := len(sec.JWTSecret); n > 0 && n < auth.MinSecretBytes {
		return nil, fmt.Errorf("%s must be at least %d bytes, got %d (the secret is not shown)", jwtSecretFrom, auth.MinSecretBytes, n)
	}
	cfg.security = hds.Security{
		JWTSecret:     sec.JWTSecret,
		JWTExpiration: cmpOr(sec.JWTExpiration, hds.DefaultJWTExpiration),
		JWTIssuer:     cmpOr(sec.JWTIssuer, hds.DefaultJWTIssuer),
		RequireAuth:   sec.RequireAuth == nil || *sec.RequireAuth,
		RefreshWindow: cmpOr(sec.RefreshWindow, hds.DefaultRefreshWindow),
		MaxSessionAge: cmpOr(sec.MaxSessionAge, hds.DefaultMaxSessionAge),
	}
	if err := checkDuration("security.jwt_expiration", cfg.security.JWTExpiration, true); err != nil {
		return nil, err
	}
	if err := checkDuration("security.refresh_window", cfg.security.RefreshWindow, false); err != nil {
		return nil, err
	}
	if err := checkDuration("security.max_session_age", cfg.security.MaxSessionAge, false); err != nil {
		return nil, err
	}
	if sec.CredentialKey == "" && len(sec.PreviousCredentialKeys) > 0 {
		return nil, errors.New("security.previous_credential_keys needs a primary key in security.credential_key (or HDS_CREDENTIAL_KEY)")
	}
	if sec.CredentialKey != "" {
		k, err := decodeKey(keyFrom, sec.CredentialKey)
		if err != nil {
			return nil, err
		}
		cfg.credentialKeys = append(cfg.credentialKeys, k)
		for i, s := range sec.PreviousCredentialKeys {
			k, err := decodeKey(fmt.Sprintf("security.previous_credential_keys[%d]", i), s)
			if err != nil {
				return nil, err
			}
			cfg.credentialKeys = append(cfg.credentialKeys, k)
		}
	}

	// Rate limits and CORS.
	limits := []struct {
		key string
		v   *int
		dst *int
	}{
		{"rate_limit.per_hour", rl.PerHour, &cfg.perHour},
		{"rate_limit.per_minute", rl.PerMinute, &cfg.perMinute},
		{"rate_limit.login_failures_per_user", rl.LoginFailuresPerUser, &cfg.loginFailuresPerUser},
		{"rate_limit.login_failures_per_ip", rl.LoginFailuresPerIP, &cfg.loginFailuresPerIP},
	}
	cfg.perHour, cfg.perMinute = hds.DefaultPerHour, hds.DefaultPerMinute
	cfg.loginFailuresPerUser, cfg.loginFailuresPerIP = hds.DefaultLoginFailuresPerUser, hds.DefaultLoginFailuresPerIP
	for _, l := range limits {
		if l.v == nil {
			continue
		}
		if *l.v <= 0 {
			return nil, fmt.Errorf("%s must be a positive number, got %d", l.key, *l.v)
		}
		*l.dst = *l.v
	}
	cfg.loginWindow = hds.DefaultLoginWindow
	if rl.LoginWindow != "" {
		if err := checkDuration("rate_limit.login_window", rl.LoginWindow, true); err != nil {
			return nil, err
		}
		cfg.loginWindow, _ = hds.ParseDuration(rl.LoginWindow)
	}
	if rl.RedisURL != "" {
		if _, err := redis.ParseURL(rl.RedisURL); err != nil {
			return nil, fmt.Errorf("%s must be a redis:// or rediss:// URL (the value is not shown, it may hold a password)", redisFrom)
		}
		cfg.redisURL, cfg.redisURLFrom = rl.RedisURL, redisFrom
	}
	for i, p := range rl.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return nil, fmt.Errorf("rate_limit.trusted_proxies[%d] must be an IP address or a CIDR prefix, got %q", i, p)
			}
		}
	}
	cfg.trustedProxies = rl.TrustedProxies
	for i, o := range fc.CORS.AllowedOrigins {
		if err := checkOrigin(o); err != nil {
			return nil, fmt.Errorf("cors.allowed_origins[%d]: %w", i, err)
		}
	}
	cfg.corsOrigins = fc.CORS.AllowedOrigins

	// Users.
	seen := make(map[string]bool)
	for i, u := range cfg.users {
		if err := checkUsername(u.Username); err != nil {
			return nil, fmt.Errorf("users[%d]: %w", i, err)
		}
		if seen[u.Username] {
			return nil, fmt.Errorf("users[%d]: user %q is listed twice", i, u.Username)
		}
		seen[u.Username] = true
		if err := checkPassword(u.Password); err != nil {
			return nil, fmt.Errorf("users[%d] (%q): %w", i, u.Username, err)
		}
	}
	return cfg, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkDuration checks a duration setting; positive requires more than
// zero.
func checkDuration(key, s string, positive bool) error {
	d, err := hds.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%s: %w (use Go's forms such as \"90m\" or \"1h30m\", or days such as \"7d\")", key, err)
	}
	if positive && d <= 0 {
		return fmt.Errorf("%s must be longer than zero, got %q", key, s)
	}
	return nil
}

// decodeKey decodes a credential key: the standard base64 of exactly
// CredentialKeyBytes bytes. Its errors never show the key.
func decodeKey(from, s string) ([]byte, error) {
	const hint = "(the key is not shown; make one with: openssl rand -base64 32)"
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid standard base64 %s", from, hint)
	}
	if len(k) != hds.CredentialKeyBytes {
		return nil, fmt.Errorf("%s must be the base64 of exactly %d bytes, it decodes to %d bytes %s",
			from, hds.CredentialKeyBytes, len(k), hint)
	}
	return k, nil
}

// checkOrigin accepts "*" or an origin: scheme, host and optional port.
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an origin such as https://app.example.com, nor \"*\"", o)
	}
	return nil
}

// checkUsername requires a non-empty username without control characters
// or surrounding white space.
func checkUsername(name string) error {
	if name == "" {
		return errors.New("the username must not be empty")
	}
	if !utf8.ValidString(name) {
		return errors.New("the username must be valid UTF-8")
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return fmt.Errorf("the username %q must not contain control characters", name)
	}
	if strings.TrimSpace(name) != name {
		return fmt.Errorf("the username %q must not begin or end with white space", name)
	}
	return nil
}

// checkPassword applies the rules of auth.HashPassword without spending
// the time of a hash.
func checkPassword(pw string) error {
	switch {
	case pw == "":
		return errors.New("the password must not be empty")
	case len(pw) > auth.MaxPasswordBytes:
		return fmt.Errorf("the password is %d bytes long; at most %d bytes are allowed (bcrypt ignores the rest)",
			len(pw), auth.MaxPasswordBytes)
	}
	return nil
}

// --- storage ---

// defaultMaxOpenConns is the default size of the PostgreSQL connection
// pool (database.max_open_conns): pools of 2 to 4 kept p99 low when the
// database shares the machine, larger ones drove it up.
const defaultMaxOpenConns = 4

// openStore returns the store and user directory the configuration
// names: the in-memory store when database_url is empty, otherwise the
// PostgreSQL database, migrated. close releases it.
func openStore(ctx context.Context, cfg *config) (st store.Store, users store.UserDirectory, closeFn func(), err error) {
	if cfg.databaseURL == "" {
		mem := memory.New()
		return mem, mem, func() {}, nil
	}
	pg, err := postgres.Open(ctx, cfg.databaseURL, cfg.dbMaxOpenConns)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %s", cfg.databaseURLFrom, redact(err, cfg.databaseURL))
	}
	if err := pg.Migrate(ctx); err != nil {
		_ = pg.Close()
		return nil, nil, nil, fmt.Errorf("%s: migrate the database: %s", cfg.databaseURLFrom, redact(err, cfg.databaseURL))
	}
	return pg, pg, func() { _ = pg.Close() }, nil
}

// redact returns err's message with the password of the URL rawURL
// masked, should the driver ever quote it.
func redact(err error, rawURL string) string {
	msg := err.Error()
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// --- serve ---

// serve runs the server until ctx is done, then shuts it down gracefully.
func serve(ctx context.Context, cfg *config, logger *slog.Logger, stdout io.Writer) error {
	st, users, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	inMemory := cfg.databaseURL == ""
	if !inMemory {
		logger.Info("using PostgreSQL (migrated)", "from", cfg.databaseURLFrom)
	}
	if err := ensureUsers(ctx, users, cfg.users, logger); err != nil {
		return err
	}
	adminPassword, err := ensureAdmin(ctx, users, cfg)
	if err != nil {
		return err
	}

	opts := []hds.Option{
		hds.WithStore(st),
		hds.WithUsers(users),
		hds.WithSecurity(cfg.security), // an empty JWTSecret makes hds.New pick a random one
		hds.WithLogger(logger),
		hds.WithRateLimit(cfg.perHour, cfg.perMinute),
		hds.WithLoginThrottle(cfg.loginFailuresPerUser, cfg.loginFailuresPerIP, cfg.loginWindow),
		hds.WithTrustedProxies(cfg.trustedProxies...),
		hds.WithCORS(cfg.corsOrigins...),
		hds.WithRequireIfMatch(cfg.requireIfMatch),
		hds.WithMaxVersions(cfg.maxVersions),
	}
	if cfg.security.JWTSecret == "" {
		logger.Warn("no jwt_secret configured: tokens are signed with a random secret made at start; " +
			"they will not survive a restart, nor be accepted by another instance")
	}
	switch keys := cfg.credentialKeys; {
	case len(keys) > 0:
		opts = append(opts, hds.WithCredentialKey(keys[0], keys[1:]...))
	case inMemory:
		// The in-memory store forgets the values sealed with this key
		// when the process ends, just as the process forgets the key.
		key := make([]byte, hds.CredentialKeyBytes)
		_, _ = rand.Read(key) // crypto/rand never fails on supported platforms
		opts = append(opts, hds.WithCredentialKey(key))
		logger.Warn("no credential_key configured: CREDENTIAL values are sealed with a random key made at start")
	default:
		// Never invent a key for a database: what it sealed could not be
		// read after a restart.
		logger.Warn("no credential_key configured: CREDENTIAL and []CREDENTIAL records are disabled")
	}
	if !cfg.security.RequireAuth {
		logger.Warn("require_auth is false: requests without a token run as the built-in user \"anonymous\"")
	}
	if cfg.redisURL != "" {
		limits, closeRedis, err := redisLimitStore(ctx, cfg)
		if err != nil {
			return err
		}
		defer closeRedis()
		opts = append(opts, hds.WithRateLimitStore(limits))
		logger.Info("rate limit counters are kept in Redis", "from", cfg.redisURLFrom)
	}
	h, err := newHandler(opts...)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	base := baseURL(ln.Addr())
	fmt.Fprintf(stdout, "hds listening on %s\n", base)
	printLogin(stdout, base, cfg.users, adminPassword, inMemory)
	logger.Info("listening", "addr", ln.Addr().String())

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in flight", "timeout", shutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// redisLimitStore connects to the Redis server of cfg.redisURL and returns
// ulule/limiter's Redis store on it, so that several instances share their
// rate limit counters, and a function that closes the connection.
func redisLimitStore(ctx context.Context, cfg *config) (limiter.Store, func(), error) {
	opts, err := redis.ParseURL(cfg.redisURL)
	if err != nil { // checked by resolve already
		return nil, nil, fmt.Errorf("%s is not a valid Redis URL", cfg.redisURLFrom)
	}
	client := redis.NewClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		_ = client.Close()
		return nil, nil, fmt.Errorf("%s: cannot reach Redis: %s", cfg.redisURLFrom, redact(err, cfg.redisURL))
	}
	s, err := limiterredis.NewStoreWithOptions(client, limiter.StoreOptions{Prefix: "hds"})
	if err != nil {
		_ = client.Close()
		return nil, nil, fmt.Errorf("%s: Redis rate limit store: %s", cfg.redisURLFrom, redact(err, cfg.redisURL))
	}
	return s, func() { _ = client.Close() }, nil
}

// newHandler calls hds.New, turning its panic on an invalid option into an
// error. The configuration is checked beforehand, so this is a safety net.
func newHandler(opts ...hds.Option) (h http.Handler, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	return hds.New(opts...), nil
}

// ensureUsers creates each user that does not exist yet; existing users
// are left as they are.
func ensureUsers(ctx context.Context, users store.UserDirectory, list []userConfig, logger *slog.Logger) error {
	for _, u := range list {
		_, err := users.FindUserByName(ctx, u.Username)
		switch {
		case err == nil:
			logger.Info("user exists, left unchanged", "username", u.Username)
			continue
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("find user %q: %w", u.Username, err)
		}
		if err := addUser(ctx, users, u.Username, u.Password); err != nil {
			return err
		}
		logger.Info("user created", "username", u.Username)
	}
	return nil
}

// addUser creates an active user with a bcrypt hash of password.
func addUser(ctx context.Context, users store.UserDirectory, username, password string) error {
	if err := checkUsername(username); err != nil {
		return err
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return fmt.Errorf("user %q: %w", username, err)
	}
	if _, err := users.CreateUser(ctx, &store.User{Username: username, PasswordHash: hash, Active: true}); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("user %q already exists", username)
		}
		return fmt.Errorf("create user %q: %w", username, err)
	}
	return nil
}

// baseURL is the URL a local client reaches the listener at.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// ensureAdmin creates the user "admin" with a random password when no
// users are configured and the directory has none (always so for the
// in-memory store), and returns the password; otherwise it returns "".
func ensureAdmin(ctx context.Context, users store.UserDirectory, cfg *config) (string, error) {
	if len(cfg.users) > 0 {
		return "", nil
	}
	existing, err := users.FindUsers(ctx)
	if err != nil {
		return "", fmt.Errorf("list users: %w", err)
	}
	if len(existing) > 0 {
		return "", nil
	}
	password := rand.Text()
	if err := addUser(ctx, users, "admin", password); err != nil {
		return "", err
	}
	return password, nil
}

// printLogin tells the operator how to log in. The only secret it shows
// is the generated admin password, which the operator needs.
func printLogin(w io.Writer, base string, users []userConfig, adminPassword string, inMemory bool) {
	username, password := "USERNAME", "PASSWORD"
	switch {
	case adminPassword != "":
		username, password = "admin", adminPassword
		fmt.Fprintf(w, "No users are configured, so user %q was created with the password:\n    %s\n", username, password)
		if inMemory {
			fmt.Fprintln(w, "It lives in the in-memory store and is gone when the server stops.")
		}
	case len(users) > 0:
		username = users[0].Username
	}
	fmt.Fprintf(w, "Log in (the token is in data.token):\n"+
		"    curl -s -X POST %s/api/v1/auth/login -H 'Content-Type: application/json' -d '{\"username\":\"%s\",\"password\":\"%s\"}'\n",
		base, username, password)
	fmt.Fprintf(w, "then send it on every request:\n    curl -s %s/api/v1/projects -H \"Authorization: Bearer $TOKEN\"\n", base)
}

// --- credential rotation ---

// rotateCredentials re-seals every credential of the configured database
// under the primary credential key, in batches, reporting progress, so
// that previous keys can then be removed from the configuration.
func rotateCredentials(ctx context.Context, cfg *config, after string, stdout io.Writer) error {
	if cfg.databaseURL == "" {
		return errors.New("credentials rotate: no database_url is configured, and the in-memory store lives only " +
			"inside a running server process; configure database_url (or HDS_DATABASE_URL)")
	}
	if len(cfg.credentialKeys) == 0 {
		return errors.New("credentials rotate: no credential key is configured: set security.credential_key " +
			"(or HDS_CREDENTIAL_KEY) to the new key and list the old ones in security.previous_credential_keys")
	}
	st, _, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("credentials rotate: %w", err)
	}
	defer closeStore()
	p, err := hds.RotateCredentials(ctx, st, hds.Rotation{
		Primary:   cfg.credentialKeys[0],
		Previous:  cfg.credentialKeys[1:],
		BatchSize: 500,
		After:     after,
		Progress: func(p hds.RotationProgress) {
			fmt.Fprintf(stdout, "%d credential records seen, %d re-sealed (resume after %s)\n", p.Seen, p.Resealed, p.LastID)
		},
	})
	if err != nil {
		if p.LastID != "" {
			return fmt.Errorf("%w (run again with AFTER_ID %s to resume)", err, p.LastID)
		}
		return err
	}
	fmt.Fprintf(stdout, "done: %d credential records seen, %d re-sealed under the primary key; "+
		"the previous keys can now be removed\n", p.Seen, p.Resealed)
	return nil
}

// --- user management ---

// manageUsers runs a user subcommand against the configured database.
func manageUsers(ctx context.Context, cfg *config, cmd command, stdin io.Reader, stdout io.Writer) error {
	if cfg.databaseURL == "" {
		return fmt.Errorf("user %s: no database_url is configured, and the in-memory store lives only inside a "+
			"running server process, so accounts cannot be managed from the command line; configure database_url "+
			"(or HDS_DATABASE_URL), or list the accounts under \"users\" in the config file to have the server create them at start",
			cmd.action)
	}
	_, users, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("user %s: %w", cmd.action, err)
	}
	defer closeStore()
	return runUserCommand(ctx, users, cmd, stdin, stdout)
}

// runUserCommand performs one user action on users.
func runUserCommand(ctx context.Context, users store.UserDirectory, cmd command, stdin io.Reader, stdout io.Writer) error {
	notFound := func(err error) error {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("user %q not found", cmd.username)
		}
		return fmt.Errorf("user %s %q: %w", cmd.action, cmd.username, err)
	}
	switch cmd.action {
	case "add":
		password, err := readPassword(stdin)
		if err != nil {
			return err
		}
		if err := checkPassword(password); err != nil {
			return fmt.Errorf("user %q: %w", cmd.username, err)
		}
		if err := addUser(ctx, users, cmd.username, password); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "user %q added\n", cmd.username)
	case "disable", "enable":
		if err := users.SetUserActive(ctx, cmd.username, cmd.action == "enable"); err != nil {
			return notFound(err)
		}
		fmt.Fprintf(stdout, "user %q %sd\n", cmd.username, cmd.action)
	case "delete":
		if err := users.DeleteUser(ctx, cmd.username); err != nil {
			return notFound(err)
		}
		fmt.Fprintf(stdout, "user %q deleted (the projects they own are kept)\n", cmd.username)
	case "list":
		list, err := users.FindUsers(ctx)
		if err != nil {
			return fmt.Errorf("user list: %w", err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "USERNAME\tSTATUS\tID\tCREATED")
		for _, u := range list {
			status := "active"
			if !u.Active {
				status = "disabled"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Username, status, u.ID, u.CreatedAt.UTC().Format(time.RFC3339))
		}
		return tw.Flush()
	default:
		return fmt.Errorf("unknown user action %q", cmd.action)
	}
	return nil
}

// readPassword reads the first line of r, without its line ending.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password: give it as the first line of stdin")
	}
	return line, nil
}

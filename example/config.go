package main

import (
	"cmp"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/store"
)

// fileConfig is the JSON configuration file
// (docs/api.md#14-the-standalone-server, the v1.1 keys included). Every
// key is optional; unknown keys are refused. Pointers tell a key left out
// (the default) from a zero.
type fileConfig struct {
	Addr        string            `json:"addr"`
	DatabaseURL *string           `json:"database_url"`
	Database    databaseConfig    `json:"database"`
	Server      serverConfig      `json:"server"`
	Security    securityConfig    `json:"security"`
	CORS        corsConfig        `json:"cors"`
	RateLimit   rateLimitConfig   `json:"rate_limit"`
	Concurrency concurrencyConfig `json:"concurrency"`
	History     historyConfig     `json:"history"`
	Events      eventsConfig      `json:"events"`
	Limits      limitsConfig      `json:"limits"`
	Console     consoleConfig     `json:"console"`
	Webhooks    webhooksConfig    `json:"webhooks"`
	Snapshots   snapshotsConfig   `json:"snapshots"`
	TLS         tlsConfig         `json:"tls"`
	Users       []userConfig      `json:"users"`
}

type securityConfig struct {
	JWTSecret              string   `json:"jwt_secret"`
	JWTExpiration          string   `json:"jwt_expiration"`
	JWTIssuer              string   `json:"jwt_issuer"`
	RequireAuth            *bool    `json:"require_auth"`
	RefreshWindow          string   `json:"refresh_window"`
	MaxSessionAge          string   `json:"max_session_age"`
	CredentialKey          string   `json:"credential_key"`
	PreviousCredentialKeys []string `json:"previous_credential_keys"`
}

// databaseConfig tunes the PostgreSQL connection pool and deadlines.
type databaseConfig struct {
	MaxOpenConns *int   `json:"max_open_conns"`
	Timeout      string `json:"timeout"`
}

// serverConfig bounds what clients can hold of the server
// (docs/api.md#8-limits-rate-limits-and-quotas). API.md names
// max_connections and idle_timeout; the other keys are this example's,
// documented in docs/server.md.
type serverConfig struct {
	MaxConnections    *int   `json:"max_connections"`
	IdleTimeout       string `json:"idle_timeout"`
	ReadHeaderTimeout string `json:"read_header_timeout"`
	ReadTimeout       string `json:"read_timeout"`
	WriteTimeout      string `json:"write_timeout"`
	MaxHeaderBytes    *int   `json:"max_header_bytes"`
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

type concurrencyConfig struct {
	RequireIfMatch *bool `json:"require_if_match"`
}

type historyConfig struct {
	MaxVersions *int `json:"max_versions"`
}

type eventsConfig struct {
	Keepalive         string `json:"keepalive"`
	MaxStreamsPerUser *int   `json:"max_streams_per_user"`
}

type limitsConfig struct {
	MaxImportBytes       *int64 `json:"max_import_bytes"`
	MaxRecordsPerCluster *int64 `json:"max_records_per_cluster"`
	MaxBytesPerProject   *int64 `json:"max_bytes_per_project"`
	MaxProjectsPerUser   *int64 `json:"max_projects_per_user"`
	// MaxResolvedBytes (v1.3) bounds the resolved text of one answer with
	// resolve=true (docs/api.md#20-references-between-records).
	MaxResolvedBytes *int64 `json:"max_resolved_bytes"`
	// MaxWebhooksPerProject: 0 is no bound, as for every quota of
	// limits.* (docs/api.md#22-webhooks).
	MaxWebhooksPerProject *int64 `json:"max_webhooks_per_project"`
	// MaxSnapshotsPerProject (v1.3) bounds the snapshots of a project
	// that are not automatic; 0 is no bound
	// (docs/api.md#snapshots-and-rollback-v13).
	MaxSnapshotsPerProject *int64 `json:"max_snapshots_per_project"`
}

// snapshotsConfig is docs/api.md#snapshots-and-rollback-v13:
// keep_automatic is how many automatic snapshots a project keeps (0 takes
// none).
type snapshotsConfig struct {
	KeepAutomatic *int `json:"keep_automatic"`
}

type consoleConfig struct {
	Enabled *bool `json:"enabled"`
}

// webhooksConfig is docs/api.md#22-webhooks: on by default here, unlike
// in the library.
type webhooksConfig struct {
	Enabled               *bool  `json:"enabled"`
	Timeout               string `json:"timeout"`
	MaxBackoff            string `json:"max_backoff"`
	MaxAttempts           *int   `json:"max_attempts"`
	AllowPrivateAddresses *bool  `json:"allow_private_addresses"`
	MaxPending            *int   `json:"max_pending"`
	KeepDeliveries        string `json:"keep_deliveries"`
}

// tlsConfig is docs/api.md#serving-over-tls-v13: HTTPS with a
// certificate and key file pair, and whether plain HTTP may be served on
// an address other than loopback.
type tlsConfig struct {
	CertFile       string `json:"cert_file"`
	KeyFile        string `json:"key_file"`
	MinVersion     string `json:"min_version"`
	AllowPlainHTTP *bool  `json:"allow_plain_http"`
}

type userConfig struct {
	Username string `json:"username"`
	Password string `json:"password"`
	// Admin makes the user a server administrator
	// (docs/api.md#server-administrators-and-user-accounts-v12) when it is
	// created; an existing user is left as it is.
	Admin bool `json:"admin"`
}

// Defaults of the keys that are the example's own; the others are hds's
// (hds.Default*).
const (
	defaultAddr = "127.0.0.1:8080"
	// defaultMaxOpenConns is the PostgreSQL pool size: pools of 2 to 4
	// kept p99 low when the database shares the machine, larger ones
	// drove it up.
	defaultMaxOpenConns = 4
	defaultDBTimeout    = 5 * time.Second

	defaultMaxConnections    = 10000
	defaultIdleTimeout       = 60 * time.Second
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = 30 * time.Second
	defaultWriteTimeout      = 30 * time.Second
	// defaultMaxHeaderBytes bounds request headers: a token is well under
	// 1 KiB, net/http's own default is 1 MiB.
	defaultMaxHeaderBytes = 64 << 10

	defaultHistoryMaxVersions      = 10
	defaultEventsKeepalive         = 15 * time.Second
	defaultEventsMaxStreamsPerUser = 10
	defaultMaxImportBytes          = 16 << 20
	defaultMaxRecordsPerCluster    = 100_000
	defaultMaxBytesPerProject      = 256 << 20
	defaultMaxProjectsPerUser      = 1000
)

// config is the checked configuration, defaults applied and the
// environment merged in. What hds checks itself (the length of the JWT
// secret, the security durations, the trusted proxies, the login
// throttle) is passed on as it is and checked by hds.NewHandler.
type config struct {
	addr        string
	databaseURL string
	// databaseURLFrom names where databaseURL came from, for messages
	// (the URL itself may hold a password and is never shown).
	databaseURLFrom string
	// storeKind is the store databaseURL selects
	// (docs/api.md#14-the-standalone-server); sqlitePath the database file
	// of storeSQLite.
	storeKind  storeKind
	sqlitePath string
	db         dbSettings
	server     serverSettings
	security   hds.Security
	// credentialKeys are the decoded keys, the primary first; none when no
	// key is configured.
	credentialKeys [][]byte
	users          []userConfig
	// path is the configuration file given with -config, "" for none,
	// for the command lines the server prints.
	path string

	perHour, perMinute                       int
	loginFailuresPerUser, loginFailuresPerIP int
	loginWindow                              time.Duration
	// redisURL, when set, holds the rate limit counters in Redis;
	// redisURLFrom names where it came from (the URL is never shown).
	redisURL, redisURLFrom string
	trustedProxies         []string
	corsOrigins            []string

	// The v1.1 settings of docs/api.md#14-the-standalone-server.
	requireIfMatch          bool
	historyMaxVersions      int
	eventsKeepalive         time.Duration
	eventsMaxStreamsPerUser int
	limits                  limitSettings
	consoleEnabled          bool
	// webhooks are the webhooks.* keys.
	webhooks hds.Webhooks
	// keepAutomaticSnapshots is snapshots.keep_automatic.
	keepAutomaticSnapshots int
	// tls are the tls.* keys.
	tls tlsSettings
}

// tlsSettings are the tls.* keys, checked: both files or neither.
type tlsSettings struct {
	// certFile and keyFile are the PEM files of the pair; both empty
	// without TLS. certFrom and keyFrom name the key or the environment
	// variable each came from, for messages.
	certFile, keyFile, certFrom, keyFrom string
	// minVersion is tls.VersionTLS12 or tls.VersionTLS13.
	minVersion uint16
	// allowPlainHTTP lets the server answer plain HTTP on an address
	// other than loopback (behind a proxy that terminates TLS).
	allowPlainHTTP bool
}

// enabled reports whether the server serves HTTPS.
func (s tlsSettings) enabled() bool { return s.certFile != "" }

// dbSettings are the database.* keys.
type dbSettings struct {
	maxOpenConns int
	timeout      time.Duration
}

// serverSettings are the server.* keys.
type serverSettings struct {
	maxConnections                                            int
	idleTimeout, readHeaderTimeout, readTimeout, writeTimeout time.Duration
	maxHeaderBytes                                            int
}

// limitSettings are the limits.* keys; 0 means no quota.
type limitSettings struct {
	maxImportBytes, maxRecordsPerCluster, maxBytesPerProject, maxProjectsPerUser, maxWebhooksPerProject int64
	// maxSnapshotsPerProject is limits.max_snapshots_per_project (v1.3).
	maxSnapshotsPerProject int64
	// maxResolvedBytes is limits.max_resolved_bytes: always positive.
	maxResolvedBytes int64
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
		if err := envelope.DecodeJSON(data, &fc, "the configuration"); err != nil {
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
	cfg.path = path
	return cfg, nil
}

// resolve applies the environment and the defaults to the file's
// configuration and checks the result.
func resolve(fc fileConfig, getenv func(string) string) (*config, error) {
	sec := fc.Security
	rl := fc.RateLimit
	cfg := &config{
		addr:            fc.Addr,
		databaseURL:     defaultDatabaseURL,
		databaseURLFrom: "the default database_url (" + defaultDatabaseURL + ")",
		users:           fc.Users,
	}
	if fc.DatabaseURL != nil {
		cfg.databaseURL, cfg.databaseURLFrom = *fc.DatabaseURL, "database_url"
	}
	keyFrom, redisFrom := "security.credential_key", "rate_limit.redis_url"
	if v := getenv("HDS_ADDR"); v != "" {
		cfg.addr = v
	}
	if v := getenv("HDS_DATABASE_URL"); v != "" {
		cfg.databaseURL, cfg.databaseURLFrom = v, "HDS_DATABASE_URL"
	}
	if v := getenv("HDS_JWT_SECRET"); v != "" {
		sec.JWTSecret = v
	}
	if v := getenv("HDS_CREDENTIAL_KEY"); v != "" {
		sec.CredentialKey, keyFrom = v, "HDS_CREDENTIAL_KEY"
	}
	if v := getenv("HDS_REDIS_URL"); v != "" {
		rl.RedisURL, redisFrom = v, "HDS_REDIS_URL"
	}
	if err := cfg.resolveTLS(fc.TLS, getenv); err != nil {
		return nil, err
	}
	if cfg.addr == "" {
		cfg.addr = defaultAddr
	}
	if err := cfg.selectStore(); err != nil {
		return nil, err
	}
	// Numbers and durations: each key's value, its default and, for
	// numbers, its least value. Every problem is reported at once.
	errs := []error{
		setNumber(&cfg.db.maxOpenConns, "database.max_open_conns", fc.Database.MaxOpenConns, defaultMaxOpenConns, 1),
		setNumber(&cfg.server.maxConnections, "server.max_connections", fc.Server.MaxConnections, defaultMaxConnections, 1),
		setNumber(&cfg.server.maxHeaderBytes, "server.max_header_bytes", fc.Server.MaxHeaderBytes, defaultMaxHeaderBytes, 1),
		setNumber(&cfg.perHour, "rate_limit.per_hour", rl.PerHour, hds.DefaultPerHour, 1),
		setNumber(&cfg.perMinute, "rate_limit.per_minute", rl.PerMinute, hds.DefaultPerMinute, 1),
		setNumber(&cfg.historyMaxVersions, "history.max_versions", fc.History.MaxVersions, defaultHistoryMaxVersions, 0),
		setNumber(&cfg.eventsMaxStreamsPerUser, "events.max_streams_per_user", fc.Events.MaxStreamsPerUser, defaultEventsMaxStreamsPerUser, 1),
		setNumber(&cfg.limits.maxImportBytes, "limits.max_import_bytes", fc.Limits.MaxImportBytes, defaultMaxImportBytes, 1),
		setNumber(&cfg.limits.maxRecordsPerCluster, "limits.max_records_per_cluster", fc.Limits.MaxRecordsPerCluster, defaultMaxRecordsPerCluster, 0),
		setNumber(&cfg.limits.maxBytesPerProject, "limits.max_bytes_per_project", fc.Limits.MaxBytesPerProject, defaultMaxBytesPerProject, 0),
		setNumber(&cfg.limits.maxProjectsPerUser, "limits.max_projects_per_user", fc.Limits.MaxProjectsPerUser, defaultMaxProjectsPerUser, 0),
		setNumber(&cfg.limits.maxResolvedBytes, "limits.max_resolved_bytes", fc.Limits.MaxResolvedBytes, hds.DefaultMaxResolvedBytes, 1),
		setNumber(&cfg.limits.maxWebhooksPerProject, "limits.max_webhooks_per_project", fc.Limits.MaxWebhooksPerProject,
			int64(store.DefaultQuotas.MaxWebhooksPerProject), 0),
		setNumber(&cfg.limits.maxSnapshotsPerProject, "limits.max_snapshots_per_project", fc.Limits.MaxSnapshotsPerProject,
			int64(store.DefaultQuotas.MaxSnapshotsPerProject), 0),
		setNumber(&cfg.keepAutomaticSnapshots, "snapshots.keep_automatic", fc.Snapshots.KeepAutomatic, hds.DefaultKeepAutomaticSnapshots, 0),
		setNumber(&cfg.webhooks.MaxPending, "webhooks.max_pending", fc.Webhooks.MaxPending, hds.DefaultWebhookMaxPending, 1),
		setDuration(&cfg.webhooks.KeepDeliveries, "webhooks.keep_deliveries", fc.Webhooks.KeepDeliveries, hds.DefaultWebhookKeepDeliveries),

		setDuration(&cfg.db.timeout, "database.timeout", fc.Database.Timeout, defaultDBTimeout),
		setDuration(&cfg.server.idleTimeout, "server.idle_timeout", fc.Server.IdleTimeout, defaultIdleTimeout),
		setDuration(&cfg.server.readHeaderTimeout, "server.read_header_timeout", fc.Server.ReadHeaderTimeout, defaultReadHeaderTimeout),
		setDuration(&cfg.server.readTimeout, "server.read_timeout", fc.Server.ReadTimeout, defaultReadTimeout),
		setDuration(&cfg.server.writeTimeout, "server.write_timeout", fc.Server.WriteTimeout, defaultWriteTimeout),
		setDuration(&cfg.loginWindow, "rate_limit.login_window", rl.LoginWindow, hds.DefaultLoginWindow),
		setDuration(&cfg.eventsKeepalive, "events.keepalive", fc.Events.Keepalive, defaultEventsKeepalive),
		setNumber(&cfg.webhooks.MaxAttempts, "webhooks.max_attempts", fc.Webhooks.MaxAttempts, hds.DefaultWebhookMaxAttempts, 1),
		setDuration(&cfg.webhooks.Timeout, "webhooks.timeout", fc.Webhooks.Timeout, hds.DefaultWebhookTimeout),
		setDuration(&cfg.webhooks.MaxBackoff, "webhooks.max_backoff", fc.Webhooks.MaxBackoff, hds.DefaultWebhookMaxBackoff),
	}
	// hds.WithLoginThrottle checks the login throttle.
	cfg.loginFailuresPerUser, cfg.loginFailuresPerIP = hds.DefaultLoginFailuresPerUser, hds.DefaultLoginFailuresPerIP
	if v := rl.LoginFailuresPerUser; v != nil {
		cfg.loginFailuresPerUser = *v
	}
	if v := rl.LoginFailuresPerIP; v != nil {
		cfg.loginFailuresPerIP = *v
	}
	cfg.requireIfMatch = fc.Concurrency.RequireIfMatch != nil && *fc.Concurrency.RequireIfMatch
	cfg.consoleEnabled = fc.Console.Enabled == nil || *fc.Console.Enabled
	cfg.webhooks.Enabled = fc.Webhooks.Enabled == nil || *fc.Webhooks.Enabled
	cfg.webhooks.AllowPrivateAddresses = fc.Webhooks.AllowPrivateAddresses != nil && *fc.Webhooks.AllowPrivateAddresses
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	// Security: the durations and the secret's length are hds's to check.
	cfg.security = hds.Security{
		JWTSecret:      sec.JWTSecret,
		JWTExpiration:  cmp.Or(sec.JWTExpiration, hds.DefaultJWTExpiration),
		JWTIssuer:      cmp.Or(sec.JWTIssuer, hds.DefaultJWTIssuer),
		AllowAnonymous: sec.RequireAuth != nil && !*sec.RequireAuth,
		RefreshWindow:  cmp.Or(sec.RefreshWindow, hds.DefaultRefreshWindow),
		MaxSessionAge:  cmp.Or(sec.MaxSessionAge, hds.DefaultMaxSessionAge),
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
	if rl.RedisURL != "" {
		if _, err := redis.ParseURL(rl.RedisURL); err != nil {
			return nil, fmt.Errorf("%s must be a redis:// or rediss:// URL (the value is not shown, it may hold a password)", redisFrom)
		}
		cfg.redisURL, cfg.redisURLFrom = rl.RedisURL, redisFrom
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

// resolveTLS checks the tls.* keys and their environment variables
// (HDS_TLS_CERT_FILE, HDS_TLS_KEY_FILE and HDS_ALLOW_PLAIN_HTTP, each
// winning over its key) into cfg.tls. The files are read when the server
// starts (newTLSServing), not here: the user commands never read them.
func (cfg *config) resolveTLS(fc tlsConfig, getenv func(string) string) error {
	s := tlsSettings{certFile: fc.CertFile, keyFile: fc.KeyFile, certFrom: "tls.cert_file", keyFrom: "tls.key_file"}
	if v := getenv("HDS_TLS_CERT_FILE"); v != "" {
		s.certFile, s.certFrom = v, "HDS_TLS_CERT_FILE"
	}
	if v := getenv("HDS_TLS_KEY_FILE"); v != "" {
		s.keyFile, s.keyFrom = v, "HDS_TLS_KEY_FILE"
	}
	switch {
	case s.certFile != "" && s.keyFile == "":
		return fmt.Errorf("tls.key_file (or HDS_TLS_KEY_FILE) is missing: %s is set, and HTTPS needs both files of the pair", s.certFrom)
	case s.keyFile != "" && s.certFile == "":
		return fmt.Errorf("tls.cert_file (or HDS_TLS_CERT_FILE) is missing: %s is set, and HTTPS needs both files of the pair", s.keyFrom)
	}
	switch fc.MinVersion {
	case "", "1.2":
		s.minVersion = tls.VersionTLS12
	case "1.3":
		s.minVersion = tls.VersionTLS13
	default:
		return fmt.Errorf("tls.min_version must be \"1.2\" or \"1.3\", got %q", fc.MinVersion)
	}
	s.allowPlainHTTP = fc.AllowPlainHTTP != nil && *fc.AllowPlainHTTP
	switch v := getenv("HDS_ALLOW_PLAIN_HTTP"); v {
	case "":
	case "true":
		s.allowPlainHTTP = true
	case "false":
		s.allowPlainHTTP = false
	default:
		return fmt.Errorf("HDS_ALLOW_PLAIN_HTTP must be true or false, got %q", v)
	}
	cfg.tls = s
	return nil
}

// setNumber sets *dst to *v, or to def when the key is left out (v nil),
// and requires *v >= least.
func setNumber[T int | int64](dst *T, key string, v *T, def, least T) error {
	*dst = def
	if v == nil {
		return nil
	}
	*dst = *v
	switch {
	case *v >= least:
		return nil
	case least == 1:
		return fmt.Errorf("%s must be a positive number, got %d", key, *v)
	case least == 0:
		return fmt.Errorf("%s must not be negative (0 means none), got %d", key, *v)
	}
	return fmt.Errorf("%s must be at least %d, got %d", key, least, *v)
}

// setDuration sets *dst to the duration s, or to def when s is empty.
func setDuration(dst *time.Duration, key, s string, def time.Duration) error {
	*dst = def
	if s == "" {
		return nil
	}
	d, err := parseDuration(key, s)
	*dst = d
	return err
}

// parseDuration reads the duration setting key, which must be longer
// than zero.
func parseDuration(key, s string) (time.Duration, error) {
	d, err := hds.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w (use Go's forms such as \"90m\" or \"1h30m\", or days such as \"7d\")", key, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s must be longer than zero, got %q", key, s)
	}
	return d, nil
}

// decodeKey decodes a credential key: the standard base64 of exactly
// CredentialKeyBytes bytes (docs/api.md#14-the-standalone-server's form of
// a key). Its errors never show the key.
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

// storeKind is a kind of store (docs/api.md#14-the-standalone-server).
type storeKind int

// The stores database_url selects.
const (
	storeMemory storeKind = iota
	storeSQLite
	storePostgres
)

// defaultDatabaseURL is the store of a configuration without any
// database_url (no key in the file, no HDS_DATABASE_URL): a SQLite file
// under the working directory, so that the standalone server keeps its
// data.
var defaultDatabaseURL = "sqlite:hds-data/hds.db"

// selectStore sets the store kind of cfg.databaseURL: postgres:// and
// postgresql:// URLs PostgreSQL, sqlite:PATH SQLite, memory: and the
// empty string the in-memory store; anything else is refused, and so is
// sqlite://..., whose "path" would be at the root of the file system.
func (cfg *config) selectStore() error {
	u := cfg.databaseURL
	switch {
	case u == "" || u == "memory:":
		cfg.storeKind = storeMemory
	case strings.HasPrefix(u, "sqlite:"):
		cfg.storeKind, cfg.sqlitePath = storeSQLite, strings.TrimPrefix(u, "sqlite:")
		if cfg.sqlitePath == "" {
			return fmt.Errorf("%s: sqlite: needs the path of the database file, as in sqlite:hds-data/hds.db", cfg.databaseURLFrom)
		}
		if strings.HasPrefix(cfg.sqlitePath, "//") {
			return fmt.Errorf("%s: sqlite: takes a path, not a URL: sqlite:hds-data/hds.db or sqlite:/var/lib/hds/hds.db "+
				"(sqlite://PATH would be read as the path //PATH, at the root of the file system)", cfg.databaseURLFrom)
		}
	default:
		if p, err := url.Parse(u); err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") {
			return fmt.Errorf("%s must be a postgres:// or postgresql:// URL, sqlite:PATH, memory: or empty "+
				"(the value is not shown, it may hold a password)", cfg.databaseURLFrom)
		}
		cfg.storeKind = storePostgres
	}
	return nil
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

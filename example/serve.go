package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	limiterredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/backups"
	"github.com/hds-go/hds/store/sqlite"
)

const serveUsage = `[serve]             serve the API (the default command)
`

// shutdownTimeout is the time given to requests in flight at shutdown.
const shutdownTimeout = 10 * time.Second

// runServe runs the server until ctx is done.
func runServe(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return usagef("serve takes no arguments, got %q", args)
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	logs := newLogWriter(e.stderr, logFlushInterval)
	defer logs.Close()
	return serve(ctx, cfg, logs, e.stdout)
}

// serve runs the server until ctx is done, then shuts it down gracefully.
// It logs to logs, which it lets buffer once it listens: a line per
// request written on its own is a system call per request (see
// logWriter), while what it says as it starts is seen at once.
func serve(ctx context.Context, cfg *config, logs *logWriter, stdout io.Writer) error {
	logger := slog.New(newLineHandler(logs))
	// HTTPS, or plain HTTP where it is allowed: checked before anything
	// else starts; SIGHUP is caught from here on.
	serving, err := newTLSServing(cfg, logger)
	if err != nil {
		return err
	}
	stopFollowing := serving.follow(ctx)
	defer stopFollowing()
	// streams ends every open change feed stream (hds.WithShutdown).
	streams, endStreams := context.WithCancel(context.WithoutCancel(ctx))
	defer endStreams()
	if cfg.storeKind == storeSQLite {
		// Said before the lock makes the directory (0700) when missing.
		if warning := openDirWarning(filepath.Dir(cfg.sqlitePath)); warning != "" {
			logger.Warn(warning)
		}
		// One server per database file; the commands open it beside.
		release, err := sqlite.Lock(cfg.sqlitePath)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.databaseURLFrom, err)
		}
		defer release()
	}
	st, users, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	inMemory := cfg.storeKind == storeMemory
	keysUsed := false
	switch cfg.storeKind {
	case storePostgres:
		logger.Info("using PostgreSQL (migrated)", "from", cfg.databaseURLFrom)
	case storeSQLite:
		if keysUsed, err = standaloneKeys(ctx, cfg, st); err != nil {
			return err
		}
		logger.Info("using SQLite (migrated)", "file", cfg.sqlitePath, "from", cfg.databaseURLFrom)
	}
	var mx *metrics // metrics.addr: built on the observer
	if cfg.metricsAddr != "" {
		mx = newMetrics(hds.BuildVersion())
	}
	// Backups (backups.go): the SQLite store's alone.
	var bk *backups.Dir
	if lite, ok := st.(*sqlite.Store); ok {
		bk = &backups.Dir{Source: lite, Dir: cfg.backups.dir, Keep: cfg.backups.keep, Every: cfg.backups.every,
			AllowDownload: cfg.backups.allowDownload, Logger: logger, Outcome: mx.backupOutcome}
		if cfg.backups.every > 0 {
			if err := os.MkdirAll(bk.Dir, 0o700); err != nil {
				return fmt.Errorf("backups.dir: %w", err)
			}
		}
	}

	opts := []hds.Option{
		hds.WithStore(st),
		hds.WithUsers(users),
		hds.WithSecurity(cfg.security), // an empty JWTSecret makes hds pick a random one
		hds.WithLogger(logger),
		hds.WithRateLimit(cfg.perHour, cfg.perMinute),
		hds.WithLoginThrottle(cfg.loginFailuresPerUser, cfg.loginFailuresPerIP, cfg.loginWindow),
		hds.WithTrustedProxies(cfg.trustedProxies...),
		hds.WithCORS(cfg.corsOrigins...),
		hds.WithRequireIfMatch(cfg.requireIfMatch),
		hds.WithMaxVersions(cfg.historyMaxVersions),
		hds.WithMaxImportBytes(cfg.limits.maxImportBytes),
		hds.WithMaxResolvedBytes(cfg.limits.maxResolvedBytes),
		hds.WithEvents(cfg.eventsKeepalive, cfg.eventsMaxStreamsPerUser),
		hds.WithShutdown(streams),
		hds.WithConsole(cfg.consoleEnabled),
		hds.WithWebhooks(cfg.webhooks),
		hds.WithKeepAutomaticSnapshots(cfg.keepAutomaticSnapshots),
	}
	if bk != nil {
		opts = append(opts, hds.WithAdminRoutes(bk.Routes(logger)...))
	}
	// database.timeout and the quotas of limits.* are the store's
	// (openStore).
	var keyWarning string // logged once the handler is built
	switch keys := cfg.credentialKeys; {
	case len(keys) > 0:
		opts = append(opts, hds.WithCredentialKey(keys[0], keys[1:]...))
	case inMemory:
		// The in-memory store forgets the values sealed with this key
		// when the process ends, just as the process forgets the key.
		key := make([]byte, hds.CredentialKeyBytes)
		_, _ = rand.Read(key) // crypto/rand never fails on supported platforms
		opts = append(opts, hds.WithCredentialKey(key))
		keyWarning = "no credential_key configured: CREDENTIAL values are sealed with a random key made at start"
	default:
		// Never invent a key for a database: what it sealed could not be
		// read after a restart.
		keyWarning = "no credential_key configured: CREDENTIAL and []CREDENTIAL records are disabled, " +
			"and so is creating webhooks (their secrets are sealed with it)"
	}
	redisAnswered := false
	if cfg.redisURL != "" {
		limits, closeRedis, answered, err := redisLimitStore(ctx, cfg, logger)
		if err != nil {
			return err
		}
		defer closeRedis()
		redisAnswered = answered
		opts = append(opts, hds.WithRateLimitStore(limits))
	}
	if mx != nil {
		opts = append(opts, hds.WithObserver(mx.observer()))
	}
	h, err := hds.NewHandler(opts...)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if redisAnswered {
		// Unreachable, redisLimitStore has said where the counters are.
		logger.Info("rate limit counters are kept in Redis", "from", cfg.redisURLFrom)
	}
	if cfg.security.JWTSecret == "" {
		logger.Warn("no jwt_secret configured: tokens are signed with a random secret made at start; " +
			"they will not survive a restart, nor be accepted by another instance")
	}
	if keyWarning != "" {
		logger.Warn(keyWarning)
	}
	if cfg.security.AllowAnonymous {
		logger.Warn("require_auth is false: requests without a token run as the built-in user \"anonymous\"")
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	var msrv *metricsServer
	if mx != nil {
		if msrv, err = listenMetrics(cfg.metricsAddr, mx, logger); err != nil {
			_ = ln.Close()
			return err
		}
		defer msrv.close()
	}
	// Users are created once the address is the server's, so that a start
	// that fails creates none (docs/api.md#the-standalone-server)
	// and the start that creates admin is one that prints its password.
	// Connections wait in the listen queue meanwhile.
	if err := ensureUsers(ctx, users, cfg.users, logger, exampleCommand(cfg)); err != nil {
		_ = ln.Close()
		return err
	}
	adminPassword, err := ensureAdmin(ctx, users, cfg)
	if err != nil {
		_ = ln.Close()
		return err
	}
	oldAdmin := false
	if adminPassword == "" && len(cfg.users) == 0 {
		_, err := users.FindUserByName(ctx, "admin")
		oldAdmin = err == nil
	}
	ln = newLimitListener(ln, cfg.server.maxConnections, logger)
	srv := newHTTPServer(cfg.server, h, logger)
	// Shutdown waits for the connections it serves to go idle, which an
	// open change feed stream never does: the streams end as it starts.
	srv.RegisterOnShutdown(endStreams)
	served := make(chan error, 1)
	go func() { served <- serving.serve(srv, ln) }()

	base := baseURL(serving.scheme(), ln.Addr())
	// The banner is written at once: whoever sees its first line (a
	// script, a test waiting for "listening") sees all of it.
	var banner bytes.Buffer
	fmt.Fprintf(&banner, "hds listening on %s\n", base)
	printData(&banner, cfg, keysUsed)
	printLogin(&banner, base, cfg.users, adminPassword, oldAdmin, cfg)
	if cfg.consoleEnabled {
		fmt.Fprintf(&banner, "Console (in a browser): %s/console/\n", base)
	}
	if msrv != nil {
		fmt.Fprintf(&banner, "Metrics (Prometheus, no authentication): %s%s\n", baseURL("http", msrv.addr()), metricsPath)
	}
	if _, err := stdout.Write(banner.Bytes()); err != nil {
		return fmt.Errorf("stdout: %w", err)
	}
	logger.Info("listening", "addr", ln.Addr().String(), "max_connections", cfg.server.maxConnections)
	if bk != nil && bk.Every > 0 {
		stopBackups := bk.Start(ctx)
		defer stopBackups() // before the store closes
		logger.Info("scheduled backups", "every", bk.Every.String(), "keep", bk.Keep, "dir", bk.Dir)
	}
	logs.Buffer()

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
	if err := msrv.shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown of the metrics listener: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// newHTTPServer returns the server of h with the server.* settings: the
// time a client may take to send its headers and its body, the time an
// idle keep-alive connection is kept, the time a response may take, and
// the largest request header.
func newHTTPServer(s serverSettings, h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.readHeaderTimeout,
		ReadTimeout:       s.readTimeout,
		WriteTimeout:      s.writeTimeout,
		IdleTimeout:       s.idleTimeout,
		MaxHeaderBytes:    s.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
}

// redisLimitStore returns ulule/limiter's Redis store on the Redis server
// of cfg.redisURL, so that several instances share their rate limit
// counters, a function that closes the connection, and whether Redis
// answered at start (when it did not, the log has said so). A Redis server
// that does not answer at start does not stop the server
// (docs/api.md#limits-rate-limits-and-quotas's fallback applies at start
// too): the store is made on the first call after Redis answers, and until
// then its calls fail, so that hds counts in this process and /health says
// "degraded" (middleware.FallbackStore, which hds.WithRateLimitStore puts
// in front of it).
func redisLimitStore(ctx context.Context, cfg *config, logger *slog.Logger) (limiter.Store, func(), bool, error) {
	opts, err := redis.ParseURL(cfg.redisURL)
	if err != nil { // checked by resolve already
		return nil, nil, false, fmt.Errorf("%s is not a valid Redis URL", cfg.redisURLFrom)
	}
	client := redis.NewClient(opts)
	l := &lazyRedisStore{client: client}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		logger.Warn("cannot reach Redis: rate limit counters are kept in this process, not shared with other instances, "+
			"until Redis answers; then they are kept in Redis",
			"from", cfg.redisURLFrom, "error", redact(err, cfg.redisURL))
		return l, func() { _ = client.Close() }, false, nil
	}
	if _, err := l.store(); err != nil {
		_ = client.Close()
		return nil, nil, false, fmt.Errorf("%s: Redis rate limit store: %s", cfg.redisURLFrom, redact(err, cfg.redisURL))
	}
	return l, func() { _ = client.Close() }, true, nil
}

// lazyRedisStore is ulule/limiter's Redis store, made on the first call
// that finds Redis answering (making it loads scripts into Redis).
type lazyRedisStore struct {
	client *redis.Client
	mu     sync.Mutex
	made   limiter.Store
}

// store returns the Redis store, making it if it is not yet.
func (l *lazyRedisStore) store() (limiter.Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.made == nil {
		s, err := limiterredis.NewStoreWithOptions(l.client, limiter.StoreOptions{Prefix: "hds"})
		if err != nil {
			return nil, err
		}
		l.made = s
	}
	return l.made, nil
}

// Get implements limiter.Store.
func (l *lazyRedisStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s, err := l.store()
	if err != nil {
		return limiter.Context{}, err
	}
	return s.Get(ctx, key, rate)
}

// Peek implements limiter.Store.
func (l *lazyRedisStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s, err := l.store()
	if err != nil {
		return limiter.Context{}, err
	}
	return s.Peek(ctx, key, rate)
}

// Reset implements limiter.Store.
func (l *lazyRedisStore) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	s, err := l.store()
	if err != nil {
		return limiter.Context{}, err
	}
	return s.Reset(ctx, key, rate)
}

// Increment implements limiter.Store.
func (l *lazyRedisStore) Increment(ctx context.Context, key string, n int64, rate limiter.Rate) (limiter.Context, error) {
	s, err := l.store()
	if err != nil {
		return limiter.Context{}, err
	}
	return s.Increment(ctx, key, n, rate)
}

// baseURL is the URL a local client reaches the listener at, with scheme
// http or https.
func baseURL(scheme string, addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String()
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// printData says where the data is kept: for SQLite, the database file
// and, when it is used, keys.json, how to back up, and that keys.json is
// never in a backup.
func printData(w io.Writer, cfg *config, keysUsed bool) {
	switch {
	case cfg.storeKind == storeMemory:
		fmt.Fprintln(w, "Data: in memory (database_url is memory: or empty); nothing is kept when the server stops.")
	case cfg.storeKind == storeSQLite && keysUsed:
		fmt.Fprintf(w, "Data: SQLite database %s; keys not configured are kept in %s.\n"+
			"    Back up while it serves: %s backup OUT; keys.json is never in a backup: keep a copy of %s apart.\n",
			cfg.sqlitePath, keysPath(cfg), exampleCommand(cfg), keysPath(cfg))
	case cfg.storeKind == storeSQLite:
		fmt.Fprintf(w, "Data: SQLite database %s (the keys are configured: back them up with it).\n", cfg.sqlitePath)
	}
}

// exampleCommand is the command line of this program with the
// configuration of cfg, as the README runs it.
func exampleCommand(cfg *config) string {
	if cfg.path == "" {
		return "go run ./example"
	}
	return "go run ./example -config " + shellQuote(cfg.path)
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and ./_-.
func shellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("./_-", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printLogin tells the operator how to log in. The only secret it shows
// is the generated admin password, which the operator needs.
// oldAdmin says that no users are configured and the store holds the
// admin of an earlier start, whose password is not shown again.
func printLogin(w io.Writer, base string, users []userConfig, adminPassword string, oldAdmin bool, cfg *config) {
	username, password := "USERNAME", "PASSWORD"
	switch {
	case adminPassword != "":
		username, password = "admin", adminPassword
		fmt.Fprintf(w, "No users are configured, so user %q was created with the password:\n    %s\n", username, password)
		switch cfg.storeKind {
		case storeMemory:
			fmt.Fprintln(w, "It lives in the in-memory store and is gone when the server stops.")
		case storeSQLite:
			fmt.Fprintf(w, "It is kept in %s; the password is shown only this once.\n", cfg.sqlitePath)
		}
	case len(users) > 0:
		username = users[0].Username
	case oldAdmin:
		// The generated admin of an earlier start: its password was printed
		// then (or never, when that start failed before v1.3 listened
		// first), and is never shown again. Name the way out.
		username = "admin"
		fmt.Fprintf(w, "User %q was created by an earlier start, which printed its password. Lost it, or never saw it?\n"+
			"Set a new one (the first line of stdin; it ends the user's sessions), beside this server or not:\n"+
			"    printf '%%s\\n' 'NEW PASSWORD' | %s user password admin\n", username, exampleCommand(cfg))
	}
	fmt.Fprintf(w, "Log in (the token is in data.token):\n"+
		"    curl -s -X POST %s/api/v1/auth/login -H 'Content-Type: application/json' -d '{\"username\":\"%s\",\"password\":\"%s\"}'\n",
		base, username, password)
	fmt.Fprintf(w, "then send it on every request:\n    curl -s %s/api/v1/projects -H \"Authorization: Bearer $TOKEN\"\n", base)
}

// openDirWarning says, in one line, that the data directory dir exists
// with a mode more open than 0700 (docs/api.md#the-standalone-server):
// the files in it are 0600, but others may list it, and the server
// leaves a directory it did not make as it is. It returns "" when dir is
// missing (it is then made 0700) or closed to others.
func openDirWarning(dir string) string {
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() || info.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("the data directory %s has mode %04o, more open than 0700: other users of this machine "+
		"can list it; run chmod 700 %s", dir, info.Mode().Perm(), dir)
}

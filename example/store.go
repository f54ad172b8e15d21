package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/sqlite"
)

// openStore returns the store and user directory the configuration
// names (config.selectStore): the in-memory store, the SQLite database
// file (made when missing, migrated) or the PostgreSQL database
// (migrated), the last two with database.timeout as the deadline of each
// call; all enforce the quotas of limits.*. close releases it. It takes
// no lock: a server takes the SQLite file's lock first (serve), the
// commands open the file beside it.
func openStore(ctx context.Context, cfg *config) (st store.Projects, users store.Accounts, closeFn func(), err error) {
	quotas := cfg.quotas()
	switch cfg.storeKind {
	case storeMemory:
		mem := memory.New(memory.WithQuotas(quotas))
		return mem, mem, func() {}, nil
	case storeSQLite:
		lite, err := sqlite.Open(ctx, cfg.sqlitePath, sqlite.WithTimeout(cfg.db.timeout), sqlite.WithQuotas(quotas))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", cfg.databaseURLFrom, err)
		}
		return lite, lite, func() { _ = lite.Close() }, nil
	}
	pg, err := postgres.Open(ctx, cfg.databaseURL, cfg.db.maxOpenConns, postgres.WithTimeout(cfg.db.timeout), postgres.WithQuotas(quotas))
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

// quotas returns the store.Quotas of limits.*, where 0 means no bound
// (docs/api.md#8-limits-rate-limits-and-quotas): a configured 0 is store.Unlimited (a store.Quotas
// field left 0 would take its default).
func (cfg *config) quotas() store.Quotas {
	bound := func(n int64) int64 {
		if n == 0 {
			return store.Unlimited
		}
		return n
	}
	return store.Quotas{
		MaxRecordsPerCluster:   int(bound(cfg.limits.maxRecordsPerCluster)),
		MaxBytesPerProject:     bound(cfg.limits.maxBytesPerProject),
		MaxProjectsPerUser:     int(bound(cfg.limits.maxProjectsPerUser)),
		MaxWebhooksPerProject:  int(bound(cfg.limits.maxWebhooksPerProject)),
		MaxSnapshotsPerProject: int(bound(cfg.limits.maxSnapshotsPerProject)),
	}
}

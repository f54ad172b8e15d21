package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/postgres"
)

// openStore returns the store and user directory the configuration
// names: the in-memory store when database_url is empty, otherwise the
// PostgreSQL database, migrated, with database.timeout as the deadline
// of each call; both enforce the quotas of limits.*. close releases it.
func openStore(ctx context.Context, cfg *config) (st store.Projects, users store.Accounts, closeFn func(), err error) {
	quotas := store.Quotas{
		MaxRecordsPerCluster: int(cfg.limits.maxRecordsPerCluster),
		MaxBytesPerProject:   cfg.limits.maxBytesPerProject,
		MaxProjectsPerUser:   int(cfg.limits.maxProjectsPerUser),
	}
	if cfg.databaseURL == "" {
		mem := memory.New(memory.WithQuotas(quotas))
		return mem, mem, func() {}, nil
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

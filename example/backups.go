package main

import (
	"fmt"
	"path/filepath"
	"time"
)

// The backups.* keys of docs/api.md#backups-v13: the backups of the
// SQLite store, their directory and schedule (package internal/backups).

// backupsConfig is the backups.* block of the configuration file.
type backupsConfig struct {
	Every         string `json:"every"`
	Keep          *int   `json:"keep"`
	Dir           string `json:"dir"`
	AllowDownload *bool  `json:"allow_download"`
}

// backupSettings are the backups.* keys, checked.
type backupSettings struct {
	// every is the interval of scheduled backups; 0: none.
	every time.Duration
	// keep is how many scheduled backups pruning keeps (at least 1).
	keep int
	// dir is the directory of the backups: backups.dir, or backups/
	// beside the database file.
	dir string
	// allowDownload serves GET /api/v1/backups/{name}.
	allowDownload bool
}

// Defaults and bounds of the backups.* keys.
const (
	defaultBackupKeep = 7
	minBackupEvery    = time.Minute
)

// resolveBackups checks the backups.* block into cfg.backups; the store
// is selected already.
func (cfg *config) resolveBackups(fc backupsConfig) error {
	b := backupSettings{keep: defaultBackupKeep, dir: fc.Dir}
	if fc.Keep != nil {
		if *fc.Keep < 1 {
			return fmt.Errorf("backups.keep must be at least 1, got %d", *fc.Keep)
		}
		b.keep = *fc.Keep
	}
	if fc.Every != "" {
		d, err := parseDuration("backups.every", fc.Every)
		if err != nil {
			return err
		}
		if d < minBackupEvery {
			return fmt.Errorf("backups.every must be at least 1m, got %q", fc.Every)
		}
		if cfg.storeKind != storeSQLite {
			return fmt.Errorf("backups.every: scheduled backups are the SQLite store's, and %s selects %s "+
				"(back PostgreSQL up with pg_dump; the in-memory store keeps nothing)", cfg.databaseURLFrom, cfg.storeKind)
		}
		b.every = d
	}
	if b.dir == "" && cfg.storeKind == storeSQLite {
		b.dir = filepath.Join(filepath.Dir(cfg.sqlitePath), "backups")
	}
	b.allowDownload = fc.AllowDownload != nil && *fc.AllowDownload
	cfg.backups = b
	return nil
}

// String names the store kind in messages.
func (k storeKind) String() string {
	switch k {
	case storeSQLite:
		return "the SQLite store"
	case storePostgres:
		return "PostgreSQL"
	}
	return "the in-memory store"
}

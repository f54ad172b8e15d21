package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// The backup and restore commands (docs/api.md#backups-v13).

const backupUsage = `backup [-config FILE] OUT   write a consistent copy of the SQLite database to OUT (never overwritten), beside a running server
`

const restoreUsage = `restore [-config FILE] IN   replace the SQLite database with the backup IN (no server may be running on it)
`

// backupFlags parses the flags of backup and restore (-config, which may
// also stand before the subcommand) and returns the one argument, the
// file.
func backupFlags(e *env, name string, args []string) (string, error) {
	fset := flag.NewFlagSet(name, flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	configPath := fset.String("config", "", "read the configuration from this JSON `FILE`")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", &helpError{flags: fset}
		}
		return "", usagef("%s: %v", name, err)
	}
	if *configPath != "" {
		e.configPath = *configPath
	}
	if fset.NArg() != 1 {
		what := "OUT, the file to write"
		if name == "restore" {
			what = "IN, the backup to restore"
		}
		return "", usagef("%s takes exactly one file, %s; got %d arguments", name, what, fset.NArg())
	}
	return fset.Arg(0), nil
}

// sqliteOnly returns the error of backup or restore (cmd) for a
// configuration whose store is not SQLite, said without connecting.
func sqliteOnly(cmd string, cfg *config) error {
	switch cfg.storeKind {
	case storePostgres:
		return fmt.Errorf("%s: %s is a PostgreSQL database: back it up and restore it with PostgreSQL's own tools (pg_dump, pg_restore); "+
			"this command is for the SQLite store", cmd, cfg.databaseURLFrom)
	case storeMemory:
		return fmt.Errorf("%s: %s selects the in-memory store, which keeps nothing: there is nothing to back up or restore", cmd, cfg.databaseURLFrom)
	}
	return nil
}

// runBackup writes a backup of the configured SQLite database.
func runBackup(ctx context.Context, e *env, args []string) error {
	out, err := backupFlags(e, "backup", args)
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if err := sqliteOnly("backup", cfg); err != nil {
		return err
	}
	if _, err := os.Stat(cfg.sqlitePath); err != nil {
		return fmt.Errorf("backup: no database at %s (%s): %w", cfg.sqlitePath, cfg.databaseURLFrom, err)
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("backup: %s exists already: a backup never overwrites a file", out)
	}
	// Opened beside a running server, as the user commands are: the copy
	// is one read transaction, which the server's writes do not wait for.
	st, err := sqlite.Open(ctx, cfg.sqlitePath, sqlite.WithTimeout(cfg.db.timeout))
	if err != nil {
		return fmt.Errorf("backup: %s: %w", cfg.databaseURLFrom, err)
	}
	defer st.Close()
	if err := st.Backup(ctx, out); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("backup: %s exists already: a backup never overwrites a file", out)
		}
		return fmt.Errorf("backup: %w", err)
	}
	info, err := os.Stat(out)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(e.stdout, "backup %s: %d bytes; %s\n", out, info.Size(), keysApart(cfg))
	return nil
}

// keysApart says that keys.json is not in a backup and where to find it.
func keysApart(cfg *config) string {
	kp := keysPath(cfg)
	if _, err := os.Stat(kp); err == nil {
		return fmt.Sprintf("%s is not in it: keep a copy of %s apart (sealed values and tokens of the backup need it)", keysFileName, kp)
	}
	return keysFileName + " is never in a backup: keep the configured keys apart (sealed values and tokens of the backup need them)"
}

// runRestore replaces the configured SQLite database with a backup, when
// no server holds it.
func runRestore(ctx context.Context, e *env, args []string) error {
	in, err := backupFlags(e, "restore", args)
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if err := sqliteOnly("restore", cfg); err != nil {
		return err
	}
	if _, err := os.Stat(in); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore: no file %s; nothing changed", in)
		}
		return fmt.Errorf("restore: %w; nothing changed", err)
	}
	// The server lock: no server starts while the file is replaced, and
	// none may be running on it.
	release, err := sqlite.Lock(cfg.sqlitePath)
	if err != nil {
		return fmt.Errorf("restore: %w: stop the server first; nothing changed", err)
	}
	defer release()
	kept, err := sqlite.Restore(ctx, in, cfg.sqlitePath, time.Now())
	if err != nil {
		return fmt.Errorf("restore: %w; nothing changed", err)
	}
	old := "there was no database before"
	if kept != "" {
		old = "the old file is kept as " + kept
	}
	fmt.Fprintf(e.stdout, "restored %s from %s (%s); tokens revoked and sessions ended after the backup was made are valid again\n",
		cfg.sqlitePath, in, old)
	return nil
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/hds-go/hds/store"
)

// Backups (docs/api.md#backups-v13) are made with VACUUM INTO, not the
// online backup API. Both copy the database inside one read transaction
// of their own connection, which in WAL mode never blocks the writer: it
// goes on committing to the WAL meanwhile. The online backup API copies
// page by page, and when it copies in steps (to let go of the lock
// between them), a write through another connection, the writer's, makes
// it start over from the first page: under a steady stream of writes it
// might never end. Copying in one step holds the snapshot as VACUUM INTO
// does, so the difference left is the copy: VACUUM INTO writes only the
// pages in use, rebuilt and in order (a smaller file than the database),
// in plain SQL on a connection of its own, without the driver's raw
// connection.

// ErrNotBackup is the error of Verify and Restore for a file that cannot
// be restored: not an SQLite database, not hds's, one that fails SQLite's
// integrity check (a truncated copy), or one whose schema is newer than
// this program's.
var ErrNotBackup = errors.New("not a backup this program can restore")

// Backup writes a consistent copy of the database, as of one moment, to
// path, a new file (mode 0600) in an existing directory, while the Store
// goes on serving reads and writes. A path that exists already is refused
// with an error matching store.ErrAlreadyExists (and fs.ErrExist); no
// existing file is ever overwritten. The copy is written beside path
// under a temporary name, synced, and then linked to path, so that path
// never names a partial copy. Backup is bounded by ctx alone, not by the
// store's timeout: a copy takes as long as the database is large.
func (s *Store) Backup(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if _, err := os.Lstat(abs); err == nil {
		return fmt.Errorf("backup %s: %w: %w", path, store.ErrAlreadyExists, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), ".hds-backup-*.tmp") // 0600
	if err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName) // gone after the link, or a failure
	if err := s.vacuumInto(ctx, tmpName); err != nil {
		return fmt.Errorf("backup %s: %w", path, classify(ctx, err))
	}
	if err := syncFile(tmpName); err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if err := os.Link(tmpName, abs); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("backup %s: %w: %w", path, store.ErrAlreadyExists, fs.ErrExist)
		}
		// A file system without hard links: a rename, once more checked
		// not to replace a file.
		if _, serr := os.Lstat(abs); serr == nil {
			return fmt.Errorf("backup %s: %w: %w", path, store.ErrAlreadyExists, fs.ErrExist)
		}
		if rerr := os.Rename(tmpName, abs); rerr != nil {
			return fmt.Errorf("backup %s: %w", path, errors.Join(err, rerr))
		}
	}
	syncDir(filepath.Dir(abs))
	return nil
}

// vacuumInto copies the database into the empty file at abs, on a
// connection of its own (the read pool's serve requests meanwhile).
func (s *Store) vacuumInto(ctx context.Context, abs string) error {
	db, err := sql.Open("sqlite", s.path+fmt.Sprintf("?_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// The copy is flushed to disk as it is written (flushEvery), so that
	// the sync at its end, which the writer's own syncs of the WAL would
	// wait behind, has little left to write.
	done := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		f, err := os.OpenFile(abs, os.O_RDWR, 0)
		if err != nil {
			return
		}
		defer f.Close()
		t := time.NewTicker(flushEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = f.Sync()
			}
		}
	}()
	// An absolute path never starts with "file:", so SQLite takes it as
	// a file name, not a URI.
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, abs)
	close(done)
	<-flushed
	return err
}

// flushEvery is how often the copy a backup writes is flushed to disk
// while it is written.
const flushEvery = 50 * time.Millisecond

// syncFile flushes the file at path to disk and makes it 0600.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	return f.Sync()
}

// syncDir flushes the directory dir (a new name in it) to disk, as far
// as the system allows.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Verify checks that the file at path is a database this program can
// restore (Restore): an SQLite database that passes SQLite's integrity
// check, holds hds's schema, and whose migrations are all this program's
// (a newer schema is refused). It opens the file read-only and changes
// nothing, not even companion files. Its errors match ErrNotBackup, but
// for a file that cannot be read.
func Verify(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	header := make([]byte, 16)
	_, herr := io.ReadFull(f, header)
	f.Close()
	if herr != nil || string(header) != "SQLite format 3\x00" {
		return fmt.Errorf("%s: %w: the file is not an SQLite database", path, ErrNotBackup)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// immutable: read as it is, no -wal or -shm looked for nor made.
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check(10)`)
	if err != nil {
		return fmt.Errorf("%s: %w: it fails SQLite's integrity check (%v)", path, ErrNotBackup, err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return fmt.Errorf("%s: %w: it fails SQLite's integrity check (%v)", path, ErrNotBackup, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("%s: %w: it fails SQLite's integrity check (%v)", path, ErrNotBackup, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %w: it fails SQLite's integrity check (%s)", path, ErrNotBackup, problems[0])
	}
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'hds_schema_migrations'`).Scan(&tables); err != nil {
		return fmt.Errorf("%s: %w: %v", path, ErrNotBackup, err)
	}
	if tables == 0 {
		return fmt.Errorf("%s: %w: it is not an hds database (no hds schema)", path, ErrNotBackup)
	}
	known := map[string]bool{}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	for _, n := range names {
		known[n] = true
	}
	applied, err := db.QueryContext(ctx, `SELECT name FROM hds_schema_migrations ORDER BY name`)
	if err != nil {
		return fmt.Errorf("%s: %w: %v", path, ErrNotBackup, err)
	}
	defer applied.Close()
	for applied.Next() {
		var name string
		if err := applied.Scan(&name); err != nil {
			return fmt.Errorf("%s: %w: %v", path, ErrNotBackup, err)
		}
		if !known[name] {
			return fmt.Errorf("%s: %w: its schema is newer than this program's (migration %s): "+
				"restore it with the version of hds that made it, or a later one", path, ErrNotBackup, filepath.Base(name))
		}
	}
	if err := applied.Err(); err != nil {
		return fmt.Errorf("%s: %w: %v", path, ErrNotBackup, err)
	}
	return nil
}

// Restore replaces the database file at path with a copy of the backup
// at backup, once Verify has found it restorable; the caller makes sure
// that no Store has path open (a server holds Lock). The current file,
// when there is one, is kept beside it as
// path+".before-restore-YYYYMMDDTHHMMSSZ" (now, in UTC), and its -wal and
// -shm companions, when present, under that name plus "-wal" and "-shm",
// so that no companion of the old file is ever read with the new one.
// kept is that name ("" when there was no file). The copy is made beside
// path (0600) and synced before anything is moved; on any error nothing
// at path has changed.
func Restore(ctx context.Context, backup, path string, now time.Time) (kept string, err error) {
	if err := Verify(ctx, backup); err != nil {
		return "", err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".hds-restore-*.tmp") // 0600
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename, or a failure
	if err := copyInto(tmp, backup); err != nil {
		tmp.Close()
		return "", fmt.Errorf("%s: copy %s: %w", path, backup, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if _, err := os.Lstat(path); err == nil {
		kept = path + ".before-restore-" + now.UTC().Format("20060102T150405Z")
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if _, err := os.Lstat(kept + suffix); err == nil {
				return "", fmt.Errorf("%s: %s exists already (a restore in the same second): try again", path, kept+suffix)
			}
		}
		// The old file stays at path (a hard link keeps it at kept too)
		// until the new one replaces it in one rename.
		if err := os.Link(path, kept); err != nil {
			return "", fmt.Errorf("%s: keep it as %s: %w", path, kept, err)
		}
		var moved []string
		undo := func() {
			for _, suffix := range moved {
				_ = os.Rename(kept+suffix, path+suffix)
			}
			_ = os.Remove(kept)
		}
		for _, suffix := range []string{"-wal", "-shm"} {
			if _, err := os.Lstat(path + suffix); err != nil {
				continue
			}
			if err := os.Rename(path+suffix, kept+suffix); err != nil {
				undo()
				return "", fmt.Errorf("%s: keep %s as %s: %w", path, path+suffix, kept+suffix, err)
			}
			moved = append(moved, suffix)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			undo()
			return "", fmt.Errorf("%s: %w", path, err)
		}
	} else if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	syncDir(dir)
	return kept, nil
}

// copyInto copies the file at src into f and syncs f.
func copyInto(f *os.File, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if _, err := io.Copy(f, in); err != nil {
		return err
	}
	return f.Sync()
}

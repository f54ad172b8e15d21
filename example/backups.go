package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// Backups of the SQLite store (docs/api.md#backups-v13): the backups.*
// keys, the backups of a directory (listed, made, opened, deleted and
// pruned by name, never by a path), and the schedule.

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

// backupName is the name pattern of the backups of a directory:
// hds-YYYYMMDDTHHMMSSZ.db, the UTC time the backup was started.
var backupName = regexp.MustCompile(`^hds-[0-9]{8}T[0-9]{6}Z\.db$`)

// backupTimeLayout is the time in a backup's name.
const backupTimeLayout = "20060102T150405Z"

// backupItem is a backup as the API shows it.
type backupItem struct {
	Name      string `json:"name"`
	Size      int64  `json:"size"`
	CreatedAt string `json:"created_at"`
	created   time.Time
}

// noBackup is the error for a name that is not a backup of the
// directory (the API's 404).
func noBackup(name string) error { return &store.NotFoundError{Kind: "backup", Name: name} }

// backupTime is the time in the name of a backup, and whether name is one.
func backupTime(name string) (time.Time, bool) {
	if !backupName.MatchString(name) {
		return time.Time{}, false
	}
	t, err := time.Parse(backupTimeLayout, name[len("hds-"):len(name)-len(".db")])
	return t, err == nil
}

// backups are the backups of one SQLite store in one directory.
type backups struct {
	store *sqlite.Store
	dir   string
	keep  int
	// every, when not 0, is the schedule's interval (run).
	every  time.Duration
	logger *slog.Logger
	now    func() time.Time
	// outcome, when not nil, is told the outcome of every backup made,
	// scheduled or asked for over HTTP: nil when it succeeded. It is the
	// one place to count backups (a metric).
	outcome func(error)
	// mu makes one backup at a time, and pruning wait for it.
	mu sync.Mutex
}

// newBackups returns the backups of st that cfg describes.
func newBackups(cfg *config, st *sqlite.Store, logger *slog.Logger) *backups {
	return &backups{store: st, dir: cfg.backups.dir, keep: cfg.backups.keep, every: cfg.backups.every,
		logger: logger, now: time.Now}
}

// item describes the backup file name of info.
func item(name string, created time.Time, size int64) backupItem {
	return backupItem{Name: name, Size: size, CreatedAt: created.UTC().Format("2006-01-02T15:04:05.000000Z"), created: created}
}

// list returns the backups in the directory, newest first: the regular
// files whose name is of the pattern. A directory not made yet holds
// none.
func (b *backups) list() ([]backupItem, error) {
	entries, err := os.ReadDir(b.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []backupItem{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the backups in %s: %w", b.dir, err)
	}
	items := []backupItem{}
	for _, e := range entries {
		created, ok := backupTime(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		items = append(items, item(e.Name(), created, info.Size()))
	}
	slices.SortFunc(items, func(x, y backupItem) int { return y.created.Compare(x.created) })
	return items, nil
}

// path returns the file of the backup name: a name of the pattern, a
// regular file of the directory (no other file of the disk can be
// named). Otherwise noBackup.
func (b *backups) path(name string) (string, error) {
	if _, ok := backupTime(name); !ok {
		return "", noBackup(name)
	}
	p := filepath.Join(b.dir, name)
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		return "", noBackup(name)
	}
	return p, nil
}

// create makes a backup now, named after the time it starts. A name
// taken (two in one second) is store.ErrAlreadyExists.
func (b *backups) create(ctx context.Context) (backupItem, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	it, err := b.make(ctx)
	if b.outcome != nil {
		b.outcome(err)
	}
	return it, err
}

// make writes the backup; b.mu is held.
func (b *backups) make(ctx context.Context) (backupItem, error) {
	started := b.now().UTC().Truncate(time.Second)
	name := "hds-" + started.Format(backupTimeLayout) + ".db"
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return backupItem{}, fmt.Errorf("backup %s: %w", name, err)
	}
	p := filepath.Join(b.dir, name)
	if err := b.store.Backup(ctx, p); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			return backupItem{}, &store.ExistsError{Kind: "backup", Name: name}
		}
		return backupItem{}, err
	}
	info, err := os.Stat(p)
	if err != nil {
		return backupItem{}, fmt.Errorf("backup %s: %w", name, err)
	}
	return item(name, started, info.Size()), nil
}

// remove deletes the backup name.
func (b *backups) remove(name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return noBackup(name)
		}
		return fmt.Errorf("delete backup %s: %w", name, err)
	}
	return nil
}

// prune deletes the oldest backups beyond the newest keep, and nothing
// else: only files of the name pattern.
func (b *backups) prune() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	items, err := b.list()
	if err != nil {
		return err
	}
	var errs []error
	for _, it := range items[min(b.keep, len(items)):] {
		if err := os.Remove(filepath.Join(b.dir, it.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// run makes a backup every b.every, the first one b.every after it is
// called, and prunes after each, until ctx ends. A backup that fails is
// logged ("backup failed") and tried again at the next interval.
func (b *backups) run(ctx context.Context) {
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b.scheduled(ctx)
	}
}

// scheduled makes one scheduled backup and prunes, logging the outcome.
func (b *backups) scheduled(ctx context.Context) {
	it, err := b.create(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down
		}
		b.logger.Error("backup failed", "dir", b.dir, "error", err, "next_in", b.every.String())
		return
	}
	b.logger.Info("backup made", "name", it.Name, "size", it.Size, "dir", b.dir)
	if err := b.prune(); err != nil {
		b.logger.Error("backup pruning failed", "dir", b.dir, "error", err)
	}
}

// start runs the schedule, when there is one, until stop is called;
// stop returns once no scheduled backup runs.
func (b *backups) start(ctx context.Context) (stop func()) {
	if b.every <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

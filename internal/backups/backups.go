// Package backups keeps the backups of a database in one directory
// (docs/api.md#backups-v13): files named hds-YYYYMMDDTHHMMSSZ.db after
// the UTC second each was started, listed, made, opened, deleted and
// pruned by name, never by a path, on a schedule or when asked; and the
// routes for server administrators that serve them
// (handler.AdminRoute). The standalone server (example/) uses it with
// the SQLite store.
package backups

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
)

// Source writes a consistent copy of a database to a new file at path
// (sqlite.Store.Backup), refusing a path that exists with an error
// matching store.ErrAlreadyExists.
type Source interface {
	Backup(ctx context.Context, path string) error
}

// namePattern is the name pattern of the backups of a directory:
// hds-YYYYMMDDTHHMMSSZ.db, the UTC time the backup was started.
var namePattern = regexp.MustCompile(`^hds-[0-9]{8}T[0-9]{6}Z\.db$`)

// timeLayout is the time in a backup's name.
const timeLayout = "20060102T150405Z"

// Item is a backup as the API shows it.
type Item struct {
	Name      string `json:"name"`
	Size      int64  `json:"size"`
	CreatedAt string `json:"created_at"`
	created   time.Time
}

// noBackup is the error for a name that is not a backup of the
// directory (the API's 404).
func noBackup(name string) error { return &store.NotFoundError{Kind: "backup", Name: name} }

// timeOf is the time in the name of a backup, and whether name is one.
func timeOf(name string) (time.Time, bool) {
	if !namePattern.MatchString(name) {
		return time.Time{}, false
	}
	t, err := time.Parse(timeLayout, name[len("hds-"):len(name)-len(".db")])
	return t, err == nil
}

// Dir is the backups of one database in one directory. Set its fields
// before first use; they are not changed afterwards.
type Dir struct {
	// Source is the database.
	Source Source
	// Dir is the directory of the backups, made 0700 when missing.
	Dir string
	// Keep is how many backups pruning keeps, the newest (at least 1).
	Keep int
	// Every, when not 0, is the interval of the schedule (Start).
	Every time.Duration
	// AllowDownload serves GET /api/v1/backups/{name} (otherwise 404).
	AllowDownload bool
	// Logger receives the schedule's lines ("backup made", "backup
	// failed").
	Logger *slog.Logger
	// Now returns the current time; nil is time.Now.
	Now func() time.Time
	// Outcome, when not nil, is told the outcome of every backup made,
	// scheduled or asked for over HTTP: nil when it succeeded. It is the
	// one place to count backups (a metric).
	Outcome func(error)
	// mu makes one backup at a time, and pruning wait for it.
	mu sync.Mutex
}

// now is the current time, by Now.
func (b *Dir) now() time.Time {
	if b.Now == nil {
		return time.Now()
	}
	return b.Now()
}

// newItem describes the backup name, started at created, of size bytes.
func newItem(name string, created time.Time, size int64) Item {
	return Item{Name: name, Size: size, CreatedAt: created.UTC().Format("2006-01-02T15:04:05.000000Z"), created: created}
}

// List returns the backups in the directory, newest first: the regular
// files whose name is of the pattern. A directory not made yet holds
// none.
func (b *Dir) List() ([]Item, error) {
	entries, err := os.ReadDir(b.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Item{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the backups in %s: %w", b.Dir, err)
	}
	items := []Item{}
	for _, e := range entries {
		created, ok := timeOf(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		items = append(items, newItem(e.Name(), created, info.Size()))
	}
	slices.SortFunc(items, func(x, y Item) int { return y.created.Compare(x.created) })
	return items, nil
}

// Path returns the file of the backup name: a name of the pattern, a
// regular file of the directory (no other file of the disk can be
// named). Otherwise noBackup.
func (b *Dir) Path(name string) (string, error) {
	if _, ok := timeOf(name); !ok {
		return "", noBackup(name)
	}
	p := filepath.Join(b.Dir, name)
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		return "", noBackup(name)
	}
	return p, nil
}

// Create makes a backup now, named after the time it starts, and tells
// Outcome how it went. A name taken (two in one second) is a
// *store.ExistsError (store.ErrAlreadyExists).
func (b *Dir) Create(ctx context.Context) (Item, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	it, err := b.make(ctx)
	// A backup cut short by the end of ctx (shutdown) neither succeeded
	// nor failed.
	if b.Outcome != nil && (err == nil || ctx.Err() == nil) {
		b.Outcome(err)
	}
	return it, err
}

// make writes the backup; b.mu is held.
func (b *Dir) make(ctx context.Context) (Item, error) {
	started := b.now().UTC().Truncate(time.Second)
	name := "hds-" + started.Format(timeLayout) + ".db"
	if err := os.MkdirAll(b.Dir, 0o700); err != nil {
		return Item{}, fmt.Errorf("backup %s: %w", name, err)
	}
	p := filepath.Join(b.Dir, name)
	if err := b.Source.Backup(ctx, p); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			return Item{}, &store.ExistsError{Kind: "backup", Name: name}
		}
		return Item{}, err
	}
	info, err := os.Stat(p)
	if err != nil {
		return Item{}, fmt.Errorf("backup %s: %w", name, err)
	}
	return newItem(name, started, info.Size()), nil
}

// Remove deletes the backup name.
func (b *Dir) Remove(name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.Path(name)
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

// Prune deletes the oldest backups beyond the newest keep, and nothing
// else: only files of the name pattern.
func (b *Dir) Prune() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	items, err := b.List()
	if err != nil {
		return err
	}
	var errs []error
	for _, it := range items[min(b.Keep, len(items)):] {
		if err := os.Remove(filepath.Join(b.Dir, it.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// run makes a backup every b.Every, the first one b.Every after it is
// called, and prunes after each, until ctx ends. A backup that fails is
// logged ("backup failed") and tried again at the next interval.
func (b *Dir) run(ctx context.Context) {
	t := time.NewTicker(b.Every)
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
func (b *Dir) scheduled(ctx context.Context) {
	it, err := b.Create(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down
		}
		b.Logger.Error("backup failed", "dir", b.Dir, "error", err, "next_in", b.Every.String())
		return
	}
	b.Logger.Info("backup made", "name", it.Name, "size", it.Size, "dir", b.Dir)
	if err := b.Prune(); err != nil {
		b.Logger.Error("backup pruning failed", "dir", b.Dir, "error", err)
	}
}

// Start runs the schedule, when there is one, until stop is called;
// stop returns once no scheduled backup runs.
func (b *Dir) Start(ctx context.Context) (stop func()) {
	if b.Every <= 0 {
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

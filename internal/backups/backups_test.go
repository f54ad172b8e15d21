package backups

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// syncBuffer is an io.Writer safe for concurrent writes and reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testBackups returns the backups of a new SQLite store in dir, every
// interval, whose clock starts at 2026-01-02 03:04:05 UTC and moves one
// second each time it is read, and the buffer its log goes to.
func testBackups(t *testing.T, dir string, keep int, every time.Duration) (*Dir, *syncBuffer) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hds.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	var mu sync.Mutex
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	logs := &syncBuffer{}
	return &Dir{Source: st, Dir: dir, Keep: keep, Every: every,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			clock = clock.Add(time.Second)
			return clock
		}}, logs
}

// outcomes records what a backups' outcome hook was told.
type outcomes struct {
	mu   sync.Mutex
	errs []error
}

func (o *outcomes) hook(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errs = append(o.errs, err)
}

// count returns how many succeeded and how many failed.
func (o *outcomes) count() (ok, failed int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, err := range o.errs {
		if err == nil {
			ok++
		} else {
			failed++
		}
	}
	return ok, failed
}

// poll waits until cond holds, failing the test after a minute.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after a minute", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestScheduledBackupsPrune: the schedule makes backups named after
// their time and keeps the newest keep of the name pattern, deleting
// older ones of the pattern and never any other file; each outcome
// reaches the hook.
func TestScheduledBackupsPrune(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "backups")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	others := []string{"notes.txt", "hds-old.db", "hds-20000101T000000Z.db.txt", ".hidden"}
	for _, name := range append(others, "hds-20000101T000000Z.db") {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "hds-19990101T000000Z.db"), 0o700)) // a directory of the pattern
	b, logs := testBackups(t, dir, 2, 10*time.Millisecond)
	var o outcomes
	b.Outcome = o.hook
	stop := b.Start(t.Context())
	poll(t, "3 scheduled backups", func() bool { ok, _ := o.count(); return ok >= 3 })
	stop()

	items, err := b.List()
	require.NoError(t, err)
	require.Len(t, items, 2, "the newest keep")
	assert.Greater(t, items[0].Name, items[1].Name, "newest first")
	for _, it := range items {
		assert.Regexp(t, `^hds-20260102T0304[0-9]{2}Z\.db$`, it.Name)
		created, _ := timeOf(it.Name)
		assert.Equal(t, created.Format("2006-01-02T15:04:05")+".000000Z", it.CreatedAt)
		info, err := os.Stat(filepath.Join(dir, it.Name))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		assert.Equal(t, info.Size(), it.Size)
	}
	for _, name := range append(others, "hds-19990101T000000Z.db") {
		_, err := os.Stat(filepath.Join(dir, name))
		assert.NoError(t, err, "%s is not a backup: never deleted", name)
	}
	_, err = os.Stat(filepath.Join(dir, "hds-20000101T000000Z.db"))
	assert.True(t, errors.Is(err, os.ErrNotExist), "the oldest backup beyond keep is deleted")
	_, failed := o.count()
	assert.Zero(t, failed, "%v", o.errs)
	assert.Contains(t, logs.String(), "msg=\"backup made\"")
}

// TestScheduledBackupFailsAndRetries: a backup that fails is logged
// ("backup failed"), told to the hook, and tried again at the next
// interval, which succeeds once the cause is gone.
func TestScheduledBackupFailsAndRetries(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, []byte("x"), 0o600))
	b, logs := testBackups(t, filepath.Join(blocker, "backups"), 7, 10*time.Millisecond) // a directory under a file
	var o outcomes
	b.Outcome = o.hook
	stop := b.Start(t.Context())
	defer stop()
	poll(t, "two failed backups", func() bool { _, failed := o.count(); return failed >= 2 })
	assert.Contains(t, logs.String(), `level=ERROR msg="backup failed"`)
	require.NoError(t, os.Remove(blocker))
	poll(t, "a backup after the failures", func() bool { ok, _ := o.count(); return ok >= 1 })
	items, err := b.List()
	require.NoError(t, err)
	assert.NotEmpty(t, items)
}

// TestBackupNames: only a regular file of the directory whose name is of
// the pattern can be named; two backups in one second are
// store.ErrAlreadyExists.
func TestBackupNames(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "backups")
	b, _ := testBackups(t, dir, 7, 0)
	it, err := b.Create(context.Background())
	require.NoError(t, err)
	p, err := b.Path(it.Name)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, it.Name), p)

	outside := filepath.Join(root, "secret.db")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "hds-20300101T000000Z.db")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "hds-20310101T000000Z.db"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.db"), nil, 0o600))
	for _, name := range []string{"../secret.db", "hds-20300101T000000Z.db", "hds-20310101T000000Z.db", "notes.db",
		"hds-20990101T000000Z.db", "", ".", "hds-20261301T000000Z.db", strings.ToUpper(it.Name), it.Name + "/"} {
		_, err := b.Path(name)
		assert.ErrorIs(t, err, store.ErrNotFound, "%q", name)
		assert.ErrorIs(t, b.Remove(name), store.ErrNotFound, "%q", name)
	}
	_, err = os.Stat(outside)
	assert.NoError(t, err, "a file a link points to is never deleted")
	items, err := b.List()
	require.NoError(t, err)
	require.Len(t, items, 1, "a link or a directory is not a backup")

	// The same second twice.
	b.Now = func() time.Time { return time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC) }
	_, err = b.Create(context.Background())
	require.NoError(t, err)
	_, err = b.Create(context.Background())
	assert.ErrorIs(t, err, store.ErrAlreadyExists)

	require.NoError(t, b.Remove(it.Name))
	_, err = b.Path(it.Name)
	assert.ErrorIs(t, err, store.ErrNotFound, "deleted")
}

// TestBackupRouteNameTaken: two backups in one second: the second is 409
// RESOURCE_EXISTS, and both outcomes reach the hook.
func TestBackupRouteNameTaken(t *testing.T) {
	b, _ := testBackups(t, filepath.Join(t.TempDir(), "backups"), 7, 0)
	b.Now = func() time.Time { return time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC) }
	var o outcomes
	b.Outcome = o.hook
	create := b.Routes(nil)[1]
	require.Equal(t, "POST /api/v1/backups", create.Pattern)
	rec := httptest.NewRecorder()
	create.Handler.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/backups", nil))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	rec = httptest.NewRecorder()
	create.Handler.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/backups", nil))
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.JSONEq(t, `{"success": false, "error": {"code": "RESOURCE_EXISTS", "message": "Resource already exists",
		"details": "backup \"hds-20260506T070809Z.db\" already exists"}}`, rec.Body.String())
	ok, failed := o.count()
	assert.Equal(t, [2]int{1, 1}, [2]int{ok, failed})
}

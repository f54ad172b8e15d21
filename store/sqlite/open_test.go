package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

func TestOpenMakesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "hds.db")
	s := openAt(t, path)
	_, err := s.CreateProject(context.Background(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p"})
	require.NoError(t, err)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "directory")
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(name)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), name)
	}
}

func TestOpenRefusesBadFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	corrupt := filepath.Join(dir, "corrupt.db")
	require.NoError(t, os.WriteFile(corrupt, []byte(strings.Repeat("not a database ", 400)), 0o600))
	_, err := sqlite.Open(ctx, corrupt)
	require.Error(t, err)
	assert.Equal(t, "sqlite "+corrupt+": the file is not an SQLite database", err.Error())

	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = sqlite.Open(ctx, foreign)
	require.Error(t, err)
	assert.Equal(t, "sqlite "+foreign+": the file is an SQLite database of another application (it has tables but no hds schema)", err.Error())

	if os.Geteuid() == 0 {
		t.Log("running as root: file permissions are not enforced, the read-only case is skipped")
		return
	}
	readOnly := filepath.Join(dir, "ro.db")
	s, err := sqlite.Open(ctx, readOnly)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, os.Chmod(readOnly, 0o400))
	_, err = sqlite.Open(ctx, readOnly)
	require.Error(t, err)
	assert.Equal(t, "sqlite "+readOnly+": the file cannot be written (permission denied)", err.Error())
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hds.db")
	release, err := sqlite.Lock(path)
	require.NoError(t, err)
	_, err = sqlite.Lock(path)
	require.Error(t, err)
	assert.Equal(t, "sqlite "+path+": another hds server is using this database ("+path+".lock is locked)", err.Error())
	// Administrative commands open the store beside the server.
	s := openAt(t, path)
	_, err = s.CreateUser(context.Background(), &store.User{Username: "ann", PasswordHash: []byte("h"), Active: true})
	require.NoError(t, err)
	release()
	release, err = sqlite.Lock(path)
	require.NoError(t, err)
	release()
}

// TestLockThroughSymlinks: a second server that names the same file
// through a symbolic link, to the file or to its directory, is refused
// too; the lock is beside the file itself.
func TestLockThroughSymlinks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "hds.db")
	openAt(t, path)
	release, err := sqlite.Lock(path)
	require.NoError(t, err)
	defer release()
	fileLink := filepath.Join(dir, "link.db")
	require.NoError(t, os.Symlink(path, fileLink))
	dirLink := filepath.Join(dir, "linkdir")
	require.NoError(t, os.Symlink(filepath.Join(dir, "data"), dirLink))
	for _, other := range []string{fileLink, filepath.Join(dirLink, "hds.db")} {
		_, err = sqlite.Lock(other)
		require.Error(t, err, other)
		assert.Equal(t, "sqlite "+other+": another hds server is using this database ("+path+".lock is locked)", err.Error())
	}
}

// TestWriteLockedIsUnavailable holds the database's write lock from
// another connection: a write that cannot get it in time is
// store.ErrUnavailable, and writes nothing.
func TestWriteLockedIsUnavailable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hds.db")
	s := openAt(t, path, sqlite.WithTimeout(300*time.Millisecond))
	other, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)

	_, err = s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, store.ErrUnavailable), "%v", err)

	_, err = conn.ExecContext(ctx, `ROLLBACK`)
	require.NoError(t, err)
	_, err = s.FindProject(ctx, store.Path{Project: "p"})
	assert.True(t, errors.Is(err, store.ErrNotFound), "%v", err)
	_, err = s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p"})
	require.NoError(t, err)
}

// TestMigrationsRecorded checks the runner: every migration is recorded
// once, and opening again (a later start) changes nothing and keeps the
// data.
func TestMigrationsRecorded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hds.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	_, err = s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p"})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = openAt(t, path)
	_, err = s.FindProject(ctx, store.Path{Project: "p"})
	require.NoError(t, err)
	names, err := os.ReadDir("migrations")
	require.NoError(t, err)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM hds_schema_migrations`).Scan(&n))
	assert.Equal(t, len(names), n)
}

// TestMigrationRunnerUpgrade runs a later migration over a database
// built by the current ones with data in it: the new migration sees the
// rows and is recorded; one that fails changes nothing and is not
// recorded, so the next start runs it again.
func TestMigrationRunnerUpgrade(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	_, err := s.CreateProject(ctx, store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p"})
	require.NoError(t, err)

	later := fstest.MapFS{}
	entries, err := fs.ReadDir(sqlite.Migrations, "migrations")
	require.NoError(t, err)
	for _, e := range entries {
		body, err := fs.ReadFile(sqlite.Migrations, "migrations/"+e.Name())
		require.NoError(t, err)
		later["migrations/"+e.Name()] = &fstest.MapFile{Data: body}
	}
	later["migrations/9998_broken.sql"] = &fstest.MapFile{Data: []byte(
		`ALTER TABLE hds_projects ADD COLUMN half TEXT; UPDATE hds_projects SET half = 'x'; SELECT no_such_function();`)}
	err = s.MigrateFrom(ctx, later)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "migrate migrations/9998_broken.sql")
	require.Error(t, s.Exec(ctx, `UPDATE hds_projects SET half = 'y'`), "the failed migration left no column")

	delete(later, "migrations/9998_broken.sql")
	later["migrations/9999_label.sql"] = &fstest.MapFile{Data: []byte(
		`ALTER TABLE hds_projects ADD COLUMN label TEXT NOT NULL DEFAULT ''; UPDATE hds_projects SET label = upper(name);`)}
	require.NoError(t, s.MigrateFrom(ctx, later))
	require.NoError(t, s.MigrateFrom(ctx, later), "a second run finds the work done")
	label, err := s.QueryString(ctx, `SELECT label FROM hds_projects WHERE name = 'p'`)
	require.NoError(t, err)
	assert.Equal(t, "P", label, "the migration saw the existing row")
	n, err := s.QueryString(ctx, `SELECT count(*) FROM hds_schema_migrations WHERE name = 'migrations/9999_label.sql'`)
	require.NoError(t, err)
	assert.Equal(t, "1", n)
	p, err := s.FindProject(ctx, store.Path{Project: "p"})
	require.NoError(t, err)
	assert.Equal(t, "p", p.Name)
}

// TestDiskFullIsUnavailable fills the database up to a page limit
// (PRAGMA max_page_count, on the one writing connection, as a full disk
// would): the write that does not fit is store.ErrUnavailable and leaves
// nothing half written; the store goes on serving reads and smaller
// writes.
func TestDiskFullIsUnavailable(t *testing.T) {
	ctx := context.Background()
	s := open(t, sqlite.WithQuotas(store.NoQuotas))
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k"}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	_, err = s.Apply(ctx, p, store.Batch{Ops: []store.Op{{Kind: store.OpEnsureCluster, Collection: "c", Cluster: "k"}}})
	require.NoError(t, err)
	pages, err := s.QueryString(ctx, `PRAGMA page_count`)
	require.NoError(t, err)
	require.NoError(t, s.Exec(ctx, `PRAGMA max_page_count = `+pages))
	before, err := s.FindProject(ctx, store.Path{Project: "p"})
	require.NoError(t, err)

	big := json.RawMessage(`"` + strings.Repeat("x", 200_000) + `"`)
	batch := store.Batch{Ops: []store.Op{
		{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: "small", New: &store.Record{Type: store.String, Value: json.RawMessage(`"s"`)}},
		{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: "big", New: &store.Record{Type: store.String, Value: big}},
	}}
	_, err = s.Apply(ctx, p, batch)
	require.Error(t, err)
	assert.True(t, errors.Is(err, store.ErrUnavailable), "%v", err)

	recs, total, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: store.NewListQuery()})
	require.NoError(t, err)
	assert.Empty(t, recs)
	assert.Equal(t, 0, total)
	after, err := s.FindProject(ctx, store.Path{Project: "p"})
	require.NoError(t, err)
	assert.Equal(t, before.Revision, after.Revision, "no audit entry of the failed batch")
}

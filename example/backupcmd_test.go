package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sqliteConfig writes a configuration of a SQLite database in a new
// directory, with the users alice (an administrator) and bob (not one),
// keys configured and
// extra keys added to the JSON object, and returns the file and the
// database's path.
func sqliteConfig(t *testing.T, extra string) (cfgPath, dbPath string) {
	t.Helper()
	dbPath = filepath.Join(t.TempDir(), "data", "hds.db")
	if extra != "" {
		extra = ", " + extra
	}
	cfgPath = writeConfig(t, fmt.Sprintf(`{"addr": "127.0.0.1:0", "database_url": "sqlite:%s",
		"security": {"jwt_secret": %q, "credential_key": %q},
		"users": [{"username": "alice", "password": %q, "admin": true}, {"username": "bob", "password": %q}]%s}`,
		dbPath, testJWTSecret, testKey, testPassword, testPassword, extra))
	return cfgPath, dbPath
}

// names lists the names in dir, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// createProject creates the project name as token's user.
func createProject(t *testing.T, base, token, name string) {
	t.Helper()
	status, body := call(t, "POST", base+"/api/v1/projects", token, map[string]string{"name": name})
	require.Equal(t, http.StatusCreated, status, "create project %s: %v", name, body)
}

// projectStatus is the status of GET project name.
func projectStatus(t *testing.T, base, token, name string) int {
	t.Helper()
	status, _ := call(t, "GET", base+"/api/v1/projects/"+name, token, nil)
	return status
}

// TestBackupAndRestoreCommands: backup beside a running server writes one
// 0600 file and one line, never overwriting; restore is refused while a
// server holds the database and for a bad backup (nothing changed), and
// otherwise puts the backup in place, the old file kept, so that the
// next server serves the backup's data.
func TestBackupAndRestoreCommands(t *testing.T) {
	cfg, db := sqliteConfig(t, "")
	s := start(t, []string{"-config", cfg}, nil)
	token := login(t, s.url, "alice", testPassword)
	createProject(t, s.url, token, "before")

	out := filepath.Join(t.TempDir(), "b.db")
	stdout, _, err := runOnce(t, []string{"-config", cfg, "backup", out}, nil, "")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 1, "backup prints one line: %q", stdout)
	info, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("backup %s: %d bytes; keys.json is never in a backup: keep the configured keys apart "+
		"(sealed values and tokens of the backup need them)", out, info.Size()), lines[0])
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	// -config after the subcommand; an existing file is never overwritten.
	before, err := os.ReadFile(out)
	require.NoError(t, err)
	_, _, err = runOnce(t, []string{"backup", "-config", cfg, out}, nil, "")
	require.EqualError(t, err, "backup: "+out+" exists already: a backup never overwrites a file")
	after, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the existing file is unchanged")

	// The server kept serving, reads and writes.
	createProject(t, s.url, token, "after")

	// No restore while the server holds the database.
	dataDir := filepath.Dir(db)
	listed := names(t, dataDir)
	_, _, err = runOnce(t, []string{"-config", cfg, "restore", out}, nil, "")
	require.Error(t, err)
	assert.Regexp(t, `^restore: sqlite .*another hds server is using this database .*: stop the server first; nothing changed$`, err.Error())
	assert.Equal(t, listed, names(t, dataDir), "nothing changed")
	require.NoError(t, s.stop(t))

	// A bad backup changes nothing.
	bad := filepath.Join(t.TempDir(), "bad.db")
	require.NoError(t, os.WriteFile(bad, before[:len(before)/2], 0o600))
	listed = names(t, dataDir)
	_, _, err = runOnce(t, []string{"-config", cfg, "restore", bad}, nil, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "restore: "+bad+": not a backup this program can restore")
	assert.True(t, strings.HasSuffix(err.Error(), "; nothing changed"), err.Error())
	assert.Equal(t, listed, names(t, dataDir), "nothing changed")

	stdout, _, err = runOnce(t, []string{"restore", "-config", cfg, out}, nil, "")
	require.NoError(t, err)
	m := regexp.MustCompile(`^restored (\S+) from (\S+) \(the old file is kept as (\S+)\); ` +
		`tokens revoked and sessions ended after the backup was made are valid again\n$`).FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	assert.Equal(t, db, m[1])
	assert.Equal(t, out, m[2])
	assert.Regexp(t, `^`+regexp.QuoteMeta(db)+`\.before-restore-[0-9]{8}T[0-9]{6}Z$`, m[3])
	_, err = os.Stat(m[3])
	assert.NoError(t, err, "the old file is kept")

	s = start(t, []string{"-config", cfg}, nil)
	token = login(t, s.url, "alice", testPassword)
	assert.Equal(t, http.StatusOK, projectStatus(t, s.url, token, "before"), "the backup's project")
	assert.Equal(t, http.StatusNotFound, projectStatus(t, s.url, token, "after"), "a project made after the backup is gone")
}

// TestBackupCommandsOtherStores: with PostgreSQL (never connected to) or
// the in-memory store, backup and restore are one line and a non-zero
// exit; bad command lines are usage errors.
func TestBackupCommandsOtherStores(t *testing.T) {
	pg := writeConfig(t, `{"database_url": "postgres://u:secret-pw@db.invalid:1/hds"}`)
	mem := writeConfig(t, `{"database_url": "memory:"}`)
	for _, cmd := range []string{"backup", "restore"} {
		_, _, err := runOnce(t, []string{"-config", pg, cmd, "x.db"}, nil, "")
		require.Error(t, err, cmd)
		assert.Equal(t, cmd+": database_url is a PostgreSQL database: back it up and restore it with PostgreSQL's own tools "+
			"(pg_dump, pg_restore); this command is for the SQLite store", err.Error())
		_, _, err = runOnce(t, []string{"-config", mem, cmd, "x.db"}, nil, "")
		require.Error(t, err, cmd)
		assert.Equal(t, cmd+": database_url selects the in-memory store, which keeps nothing: there is nothing to back up or restore", err.Error())
		_, _, err = runOnce(t, []string{"-config", mem, cmd}, nil, "")
		assert.ErrorContains(t, err, cmd+" takes exactly one file", cmd)
		_, _, err = runOnce(t, []string{"-config", mem, cmd, "a", "b"}, nil, "")
		assert.ErrorContains(t, err, cmd+" takes exactly one file", cmd)
	}
	_, err := os.Stat("x.db")
	assert.True(t, os.IsNotExist(err), "no file written")

	// A missing database, a missing backup.
	cfg, db := sqliteConfig(t, "")
	_, _, err = runOnce(t, []string{"-config", cfg, "backup", filepath.Join(t.TempDir(), "b.db")}, nil, "")
	assert.ErrorContains(t, err, "backup: no database at "+db)
	missing := filepath.Join(t.TempDir(), "none.db")
	_, _, err = runOnce(t, []string{"-config", cfg, "restore", missing}, nil, "")
	assert.EqualError(t, err, "restore: no file "+missing+"; nothing changed")
}

// TestBackupsConfig: the backups.* keys' checks, each naming its key,
// and their defaults.
func TestBackupsConfig(t *testing.T) {
	db := filepath.Join(t.TempDir(), "hds.db")
	lite := `"database_url": "sqlite:` + db + `"`
	for _, tt := range []struct{ config, want string }{
		{`{` + lite + `, "backups": {"every": "30s"}}`, `backups.every must be at least 1m, got "30s"`},
		{`{` + lite + `, "backups": {"every": "soon"}}`, `backups.every: `},
		{`{` + lite + `, "backups": {"every": "-1h"}}`, `backups.every: duration must not be negative`},
		{`{` + lite + `, "backups": {"keep": 0}}`, `backups.keep must be at least 1, got 0`},
		{`{"database_url": "memory:", "backups": {"every": "1h"}}`, `backups.every: scheduled backups are the SQLite store's, and database_url selects the in-memory store`},
		{`{"database_url": "postgres://u@h/db", "backups": {"every": "1h"}}`, `backups.every: scheduled backups are the SQLite store's, and database_url selects PostgreSQL`},
		{`{` + lite + `, "backups": {"often": "1h"}}`, `often`},
	} {
		_, err := loadConfig(writeConfig(t, tt.config), environ(nil))
		if assert.Error(t, err, tt.config) {
			assert.Contains(t, err.Error(), tt.want, tt.config)
		}
	}
	cfg, err := loadConfig(writeConfig(t, `{`+lite+`}`), environ(nil))
	require.NoError(t, err)
	assert.Equal(t, backupSettings{keep: 7, dir: filepath.Join(filepath.Dir(db), "backups")}, cfg.backups, "the defaults")
	cfg, err = loadConfig(writeConfig(t, `{`+lite+`, "backups": {"every": "1m", "keep": 2, "dir": "/srv/b", "allow_download": true}}`), environ(nil))
	require.NoError(t, err)
	assert.Equal(t, backupSettings{every: 60e9, keep: 2, dir: "/srv/b", allowDownload: true}, cfg.backups)
}

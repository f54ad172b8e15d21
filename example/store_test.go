package main

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/migrate"
	"github.com/hds-go/hds/store/sqlite"
)

// standaloneDefault is the store of a configuration without database_url,
// as the program has it (TestMain makes the other tests use memory:).
var standaloneDefault = defaultDatabaseURL

// useStandaloneDefault makes the program's default store the standalone
// one, in a new working directory, until the test ends. The test must not
// be parallel.
func useStandaloneDefault(t *testing.T) string {
	dir := t.TempDir()
	t.Chdir(dir)
	saved := defaultDatabaseURL
	defaultDatabaseURL = standaloneDefault
	t.Cleanup(func() { defaultDatabaseURL = saved })
	return dir
}

func TestDatabaseURLSchemes(t *testing.T) {
	for _, tt := range []struct {
		url  string
		kind storeKind
		path string
	}{
		{"", storeMemory, ""},
		{"memory:", storeMemory, ""},
		{"sqlite:data/hds.db", storeSQLite, "data/hds.db"},
		{"sqlite:/var/lib/hds/hds.db", storeSQLite, "/var/lib/hds/hds.db"},
		{"postgres://u@h/db", storePostgres, ""},
		{"postgresql://u@h/db", storePostgres, ""},
	} {
		cfg, err := loadConfig(writeConfig(t, `{"database_url": "`+tt.url+`"}`), environ(nil))
		require.NoError(t, err, tt.url)
		assert.Equal(t, tt.kind, cfg.storeKind, tt.url)
		assert.Equal(t, tt.path, cfg.sqlitePath, tt.url)
	}
	for _, tt := range []struct{ url, want string }{
		{"mysql://root:pw@db/hds", "database_url must be a postgres:// or postgresql:// URL, sqlite:PATH, memory: or empty (the value is not shown, it may hold a password)"},
		{"sqlite3:x.db", "database_url must be a postgres:// or postgresql:// URL, sqlite:PATH, memory: or empty (the value is not shown, it may hold a password)"},
		{"memory", "database_url must be a postgres:// or postgresql:// URL, sqlite:PATH, memory: or empty (the value is not shown, it may hold a password)"},
		{"sqlite:", "database_url: sqlite: needs the path of the database file, as in sqlite:hds-data/hds.db"},
		// Not a path: sqlite://hds.db would put the database (and keys.json) in /.
		{"sqlite://hds.db", "database_url: sqlite: takes a path, not a URL: sqlite:hds-data/hds.db or sqlite:/var/lib/hds/hds.db " +
			"(sqlite://PATH would be read as the path //PATH, at the root of the file system)"},
		{"sqlite:///var/lib/hds/hds.db", "database_url: sqlite: takes a path, not a URL: sqlite:hds-data/hds.db or sqlite:/var/lib/hds/hds.db " +
			"(sqlite://PATH would be read as the path //PATH, at the root of the file system)"},
	} {
		_, err := loadConfig("", environ(map[string]string{"HDS_DATABASE_URL": tt.url}))
		require.Error(t, err, tt.url)
		want := strings.Replace(tt.want, "database_url", "HDS_DATABASE_URL", 1)
		assert.Equal(t, "config: "+want, err.Error(), tt.url)
		assert.NotContains(t, err.Error(), "pw@", tt.url)
	}

	// No database_url at all: the standalone default.
	useStandaloneDefault(t)
	cfg, err := loadConfig("", environ(nil))
	require.NoError(t, err)
	assert.Equal(t, storeSQLite, cfg.storeKind)
	assert.Equal(t, "hds-data/hds.db", cfg.sqlitePath)
	// An empty database_url in the file is the in-memory store.
	cfg, err = loadConfig(writeConfig(t, `{"database_url": ""}`), environ(nil))
	require.NoError(t, err)
	assert.Equal(t, storeMemory, cfg.storeKind)
}

// TestStandaloneDefault runs `go run ./example` as a new user would, twice:
// the data, an old token and a revealed credential are as before the
// restart; the keys are generated once into keys.json; a second server on
// the same file refuses to start; the user commands run beside a server.
func TestStandaloneDefault(t *testing.T) {
	dir := useStandaloneDefault(t)
	env := map[string]string{"HDS_ADDR": "127.0.0.1:0"}
	s := start(t, nil, env)
	out := s.stdout.String()
	m := regexp.MustCompile(`user "admin" was created with the password:\n\s+(\S+)\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	password := m[1]
	assert.Contains(t, out, "Data: SQLite database hds-data/hds.db; keys not configured are kept in hds-data/keys.json.\n"+
		"    Back up while it serves: go run ./example backup OUT; keys.json is never in a backup: keep a copy of hds-data/keys.json apart.\n")
	assert.Contains(t, out, "It is kept in hds-data/hds.db; the password is shown only this once.")
	for name, mode := range map[string]os.FileMode{"hds-data": 0o700, "hds-data/hds.db": 0o600, "hds-data/keys.json": 0o600} {
		info, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, mode, info.Mode().Perm(), name)
	}
	keys, err := os.ReadFile(filepath.Join(dir, "hds-data/keys.json"))
	require.NoError(t, err)

	token := login(t, s.url, "admin", password)
	records := s.url + "/api/v1/projects/demo/collections/prod/clusters/db/records"
	for _, path := range []string{"/api/v1/projects/demo", "/api/v1/projects/demo/collections/prod", "/api/v1/projects/demo/collections/prod/clusters/db"} {
		status, body := call(t, "POST", s.url+path, token, nil)
		require.Equal(t, http.StatusCreated, status, "%s: %v", path, body)
	}
	status, body := call(t, "POST", records, token, map[string]any{"name": "pw", "type": "CREDENTIAL", "value": "s3cret"})
	require.Equal(t, http.StatusCreated, status, body)

	// A second server on the same file refuses to start, in one line.
	_, _, err = runOnce(t, []string{"serve"}, map[string]string{"HDS_ADDR": "this would fail later"}, "")
	require.Error(t, err)
	assert.Equal(t, "the default database_url (sqlite:hds-data/hds.db): sqlite hds-data/hds.db: another hds server is using this database "+
		"(hds-data/hds.db.lock is locked)", err.Error())
	// The user commands run beside it, and the server sees the change.
	_, _, err = runOnce(t, []string{"user", "add", "bob"}, nil, "bob-password\n")
	require.NoError(t, err)
	login(t, s.url, "bob", "bob-password")
	require.NoError(t, s.stop(t))

	// Restart: nothing generated again, everything as before.
	s = start(t, nil, env)
	out = s.stdout.String()
	assert.NotContains(t, out, `user "admin" was created`)
	again, err := os.ReadFile(filepath.Join(dir, "hds-data/keys.json"))
	require.NoError(t, err)
	assert.Equal(t, string(keys), string(again), "keys.json is written once")
	records = s.url + "/api/v1/projects/demo/collections/prod/clusters/db/records"
	status, body = call(t, "GET", records+"/pw?reveal=true", token, nil)
	require.Equal(t, http.StatusOK, status, "the old token and the old key still work: %v", body)
	assert.Equal(t, "s3cret", body["data"].(map[string]any)["value"])
	require.NoError(t, s.stop(t))
	for _, secret := range []string{"s3cret", strings.TrimSpace(string(keys))} {
		assert.NotContains(t, s.stdout.String()+s.stderr.String(), secret)
	}
}

// TestSQLiteBadFiles: a file that is not a database, one of another
// application, one a newer release migrated and a keys file that is not
// one are refused at start, in one line that names the file.
func TestSQLiteBadFiles(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.db")
	require.NoError(t, os.WriteFile(corrupt, []byte(strings.Repeat("garbage ", 1000)), 0o600))
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE notes (body TEXT)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	newer := filepath.Join(dir, "newer", "hds.db")
	s, err := sqlite.Open(context.Background(), newer)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	db, err = sql.Open("sqlite", newer)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO hds_schema_migrations (name, applied_at) VALUES ('migrations/9999_future.sql', 0)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	known, err := migrate.Newest(os.DirFS("../store/sqlite"))
	require.NoError(t, err)
	badKeys := filepath.Join(dir, "keys", "hds.db")
	s, err = sqlite.Open(context.Background(), badKeys)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keys", "keys.json"), []byte("{not json"), 0o600))

	for _, tt := range []struct{ path, want string }{
		{corrupt, "HDS_DATABASE_URL: sqlite " + corrupt + ": the file is not an SQLite database"},
		{foreign, "HDS_DATABASE_URL: sqlite " + foreign + ": the file is an SQLite database of another application (it has tables but no hds schema)"},
		{newer, "HDS_DATABASE_URL: sqlite " + newer + ": the SQLite database's schema is version 9999, newer than this program knows (version " +
			strconv.Itoa(known) + "): run the hds release that wrote it, or a newer one"},
		{badKeys, filepath.Join(dir, "keys", "keys.json") + " is not a valid keys file (a JSON object with jwt_secret and credential_key): " +
			"restore it from the backup made with the database, or move it away to have new keys generated " +
			"(tokens then end, and sealed values cannot be read)"},
	} {
		_, _, err := runOnce(t, []string{"serve"}, map[string]string{"HDS_DATABASE_URL": "sqlite:" + tt.path, "HDS_ADDR": "127.0.0.1:0"}, "")
		require.Error(t, err, tt.path)
		assert.Equal(t, tt.want, err.Error())
		assert.NotContains(t, err.Error(), "\n")
	}
}

// TestSQLiteLostKeys: a database restored without its keys.json (or with
// one that no longer holds the credential key) while it holds CREDENTIAL
// values must not start with a new key, which would answer every reveal
// with a server error; it refuses in one line. A database without such
// values starts and gets new keys.
func TestSQLiteLostKeys(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "hds.db")
	keys := filepath.Join(dir, "keys.json")
	env := map[string]string{"HDS_DATABASE_URL": "sqlite:" + db, "HDS_ADDR": "127.0.0.1:0"}
	s := start(t, nil, env)
	m := regexp.MustCompile(`user "admin" was created with the password:\n\s+(\S+)\n`).FindStringSubmatch(s.stdout.String())
	require.NotNil(t, m)
	token := login(t, s.url, "admin", m[1])
	for _, path := range []string{"/api/v1/projects/demo", "/api/v1/projects/demo/collections/prod", "/api/v1/projects/demo/collections/prod/clusters/db"} {
		status, body := call(t, "POST", s.url+path, token, nil)
		require.Equal(t, http.StatusCreated, status, "%s: %v", path, body)
	}
	require.NoError(t, s.stop(t))

	// Data but no CREDENTIAL value: without keys.json, new keys are
	// generated and the server starts.
	require.NoError(t, os.Remove(keys))
	s = start(t, nil, env)
	_, err := os.Stat(keys)
	require.NoError(t, err, "keys.json is written again")
	token = login(t, s.url, "admin", m[1])
	status, body := call(t, "POST", s.url+"/api/v1/projects/demo/collections/prod/clusters/db/records", token,
		map[string]any{"name": "pw", "type": "CREDENTIAL", "value": "s3cret"})
	require.Equal(t, http.StatusCreated, status, body)
	require.NoError(t, s.stop(t))

	want := db + ": no credential_key is configured or kept in " + keys + ", but the database holds CREDENTIAL values sealed with one: " +
		"restore " + keys + " from the backup made with the database, or configure security.credential_key " +
		"(a new key lets the server start; the values sealed with the lost one cannot be read)"
	for _, content := range []string{"", "{}\n"} {
		if err := os.Remove(keys); !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		if content != "" {
			require.NoError(t, os.WriteFile(keys, []byte(content), 0o600))
		}
		_, _, err := runOnce(t, []string{"serve"}, env, "")
		require.Error(t, err, "keys.json %q", content)
		assert.Equal(t, want, err.Error())
		data, err := os.ReadFile(keys)
		if content == "" {
			assert.ErrorIs(t, err, os.ErrNotExist, "no key is written")
		} else {
			require.NoError(t, err)
			assert.Equal(t, content, string(data), "keys.json is left as it was")
		}
	}
}

// TestSQLiteOpenDirectoryWarning: a data directory that already exists
// with a mode more open than 0700 is left so, and the start says it in
// one warning line naming the mode; a directory the server makes (0700),
// or one closed to others, draws none.
func TestSQLiteOpenDirectoryWarning(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode os.FileMode // 0: the directory does not exist before the start
		want string
	}{
		{"0755", 0o755, "has mode 0755, more open than 0700"},
		{"0750", 0o750, "has mode 0750, more open than 0700"},
		{"0700", 0o700, ""},
		{"missing", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if tc.mode != 0 {
				require.NoError(t, os.Mkdir(dir, 0o700))
				require.NoError(t, os.Chmod(dir, tc.mode))
			}
			s := start(t, nil, map[string]string{"HDS_DATABASE_URL": "sqlite:" + filepath.Join(dir, "hds.db"),
				"HDS_ADDR": "127.0.0.1:0", "HDS_JWT_SECRET": testJWTSecret})
			require.NoError(t, s.stop(t))
			var lines []string
			for _, l := range strings.Split(s.stderr.String(), "\n") {
				if strings.Contains(l, "the data directory") {
					lines = append(lines, l)
				}
			}
			if tc.want == "" {
				assert.Empty(t, lines, "no warning")
				return
			}
			if assert.Len(t, lines, 1, "one warning line") {
				assert.Contains(t, lines[0], "level=WARN")
				assert.Contains(t, lines[0], tc.want)
				assert.Contains(t, lines[0], dir)
			}
			info, err := os.Stat(dir)
			require.NoError(t, err)
			assert.Equal(t, tc.mode, info.Mode().Perm(), "left as it was")
		})
	}
}

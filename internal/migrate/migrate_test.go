package migrate_test

// The runner against a database is tested by each store, on its engine
// (store/sqlite and store/postgres: migrate_runner_test.go), so that this
// package's tests import no driver: a host importing one store does not
// pay for the other's modules.

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/migrate"
)

func TestVersion(t *testing.T) {
	for name, want := range map[string]int{
		"migrations/0001_schema.sql":      1,
		"migrations/0014_something.sql":   14,
		"0120_other.sql":                  120,
		"migrations/10000_after_9999.sql": 10000,
	} {
		got, err := migrate.Version(name)
		if assert.NoError(t, err, name) {
			assert.Equal(t, want, got, name)
		}
	}
	for _, name := range []string{"migrations/schema.sql", "migrations/0000_zero.sql", "migrations/0003-dash.sql", "migrations/0003.sql", "migrations/_0003_x.sql"} {
		_, err := migrate.Version(name)
		if assert.Error(t, err, name) {
			assert.Equal(t, "migration "+name+": the file name does not start with its number (NNNN_name.sql)", err.Error())
		}
	}
}

func TestNewest(t *testing.T) {
	n, err := migrate.Newest(fstest.MapFS{})
	require.NoError(t, err)
	assert.Equal(t, 0, n, "no migration: version 0")

	fsys := fstest.MapFS{
		"migrations/0001_schema.sql": {Data: []byte("SELECT 1")},
		"migrations/0007_later.sql":  {Data: []byte("SELECT 1")},
		"migrations/0002_next.sql":   {Data: []byte("SELECT 1")},
		"migrations/README":          {Data: []byte("not a migration")},
		"other/0009_elsewhere.sql":   {Data: []byte("SELECT 1")},
	}
	n, err = migrate.Newest(fsys)
	require.NoError(t, err)
	assert.Equal(t, 7, n, "the newest number of migrations/*.sql, whatever the gaps")

	fsys["migrations/0007_twin.sql"] = &fstest.MapFile{Data: []byte("SELECT 1")}
	_, err = migrate.Newest(fsys)
	if assert.Error(t, err, "two migrations of one number") {
		assert.Equal(t, "migrations migrations/0007_later.sql and migrations/0007_twin.sql have one number (7): renumber one", err.Error())
	}

	delete(fsys, "migrations/0007_twin.sql")
	fsys["migrations/x_schema.sql"] = &fstest.MapFile{Data: []byte("SELECT 1")}
	_, err = migrate.Newest(fsys)
	assert.EqualError(t, err, "migration migrations/x_schema.sql: the file name does not start with its number (NNNN_name.sql)")
}

func TestTooNewErrorNamesBothVersions(t *testing.T) {
	err := &migrate.TooNewError{Engine: "SQLite", Current: 9, Newest: 7}
	assert.Equal(t, "the SQLite database's schema is version 9, newer than this program knows (version 7): run the hds release that wrote it, or a newer one", err.Error())
}

package postgres_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateFromVersion1 builds a database at schema version 1, fills it
// as version 1 wrote it (sort_text holding whole texts of up to the 2.7 kB
// its index allowed), migrates it, and checks that the data is intact,
// that sortBy=value and value= stay exact, that the new index is there, and
// that values of any size can now be written.
func TestMigrateFromVersion1(t *testing.T) {
	db := emptyDatabase(t)
	s := postgres.New(db)
	ctx := t.Context()
	migrateBefore(t, db, "0002")

	// The containers as version 1 held them (the Store's statements are
	// written for the current schema: migration 0004 added a column).
	in := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "p", Collection: "c", Cluster: "k"}
	projectID, collectionID, clusterID := store.NewID(), store.NewID(), store.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES ($1, 'p', 'p', 'alice', now(), now())`, []any{projectID}},
		{`INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'c', 'c', now(), now())`, []any{collectionID, projectID}},
		{`INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'k', 'k', now(), now())`, []any{clusterID, collectionID}},
	} {
		_, err := db.ExecContext(ctx, q.sql, q.args...)
		require.NoError(t, err, "fill version 1: %s", q.sql)
	}

	common := strings.Repeat("0123456789abcdef", 100) // 1,600 bytes
	values := map[string]struct {
		typ store.DataType
		v   string
	}{
		"long b":  {store.String, common + "b"},
		"long a":  {store.String, common + "a"},
		"long":    {store.String, common},
		"long a2": {store.String, common + "a" + strings.Repeat("z", 600)},
		"cut":     {store.String, common[:256] + "~"},
		"short":   {store.String, "x"},
		"number":  {store.Integer, "12"},
		"float":   {store.Float, "12"},
		"array":   {store.ArrayOf(store.String), ""},
		"null":    {store.Null, ""},
	}
	before := map[string]*store.Record{}
	for name, c := range values {
		js := c.v
		switch {
		case c.typ == store.String:
			b, _ := json.Marshal(c.v)
			js = string(b)
		case c.typ == store.Null:
			js = "null"
		case c.typ.IsArray():
			b, _ := json.Marshal([]string{common, "y"})
			js = string(b)
		}
		v, err := c.typ.ParseJSON([]byte(js))
		require.NoError(t, err)
		r := &store.Record{ID: store.NewID(), Name: name, Type: c.typ, Value: v, Version: 1, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
		require.NoError(t, postgres.InsertRecordV1(ctx, db, clusterID, r), "create %q at version 1", name)
		before[name] = r
	}
	var longest int
	require.NoError(t, db.Get(&longest, `SELECT max(length(sort_text)) FROM hds_records`))
	require.Greater(t, longest, 2000, "the version 1 data holds whole texts in sort_text")

	require.NoError(t, s.Migrate(ctx), "migrate version 1 to the current version")
	require.NoError(t, s.Migrate(ctx), "migrating again changes nothing")

	var applied []string
	require.NoError(t, db.Select(&applied, `SELECT name FROM hds_schema_migrations ORDER BY name`))
	all, err := filepath.Glob("migrations/*.sql")
	require.NoError(t, err)
	slices.Sort(all)
	assert.Equal(t, all, applied, "every migration is recorded")
	require.NoError(t, db.Get(&longest, `SELECT max(length(sort_text)) FROM hds_records`))
	assert.Equal(t, postgres.SortTextPrefix, longest, "sort_text holds at most the prefix after the migration")
	var indexed bool
	require.NoError(t, db.Get(&indexed, `SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = 'hds_records_vtext_prefix')`))
	assert.True(t, indexed, "the value prefix index exists")

	for name, want := range before {
		got, err := s.FindRecord(ctx, withRecord(in, name))
		if assert.NoError(t, err, "record %q after the migration", name) {
			assert.Equal(t, want.ID, got.ID, "record %q keeps its id", name)
			assert.Equal(t, string(want.Value), string(got.Value), "record %q keeps its value", name)
			assert.Equal(t, want.Version, got.Version, "record %q keeps its version", name)
		}
	}

	names := make([]string, 0, len(before))
	for name := range before {
		names = append(names, name)
	}
	for _, desc := range []bool{false, true} {
		want := slices.Clone(names)
		slices.SortFunc(want, func(a, b string) int {
			c := sortkey.Compare(store.KeyOf(before[a].Type, before[a].Value), store.KeyOf(before[b].Type, before[b].Value))
			if desc {
				c = -c
			}
			if c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		q := store.RecordQuery{ListQuery: store.NewListQuery()}
		q.SortBy, q.Desc = store.SortValue, desc
		rs, _, err := s.FindRecords(ctx, in, q)
		if assert.NoError(t, err, "sortBy=value desc=%v after the migration", desc) {
			got := []string{}
			for _, r := range rs {
				got = append(got, r.Name)
			}
			assert.Equal(t, want, got, "sortBy=value desc=%v after the migration orders by the whole text", desc)
		}
	}
	for _, tc := range []struct{ value, want string }{{common + "a", "long a"}, {common, "long"}, {"12", "float,number"}} {
		q := store.RecordQuery{ListQuery: store.NewListQuery(), Value: tc.value, HasValue: true}
		rs, _, err := s.FindRecords(ctx, in, q)
		if assert.NoError(t, err, "value= after the migration") {
			got := []string{}
			for _, r := range rs {
				got = append(got, r.Name)
			}
			assert.Equal(t, tc.want, strings.Join(got, ","), "value= a text of %d bytes after the migration matches the whole text", len(tc.value))
		}
	}

	big, err := store.String.ParseJSON(fmt.Appendf(nil, "%q", strings.Repeat("é", 300_000)))
	require.NoError(t, err)
	_, err = s.CreateRecord(ctx, withRecord(in, "big"), &store.Record{Type: store.String, Value: big}, store.Write{})
	assert.NoError(t, err, "a value of 600 kB can be written after the migration")
}

// emptyDatabase creates a database with no schema, dropped when t ends.
func emptyDatabase(t *testing.T) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", pgtest.NewEmptyURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// migrateBefore applies, as Migrate does, every migration whose file name
// sorts before first.
func migrateBefore(t *testing.T, db *sqlx.DB, first string) {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql")
	require.NoError(t, err)
	slices.Sort(files)
	last := ""
	for _, f := range files {
		if filepath.Base(f) >= first {
			break
		}
		last = filepath.ToSlash(f)
	}
	require.NotEmpty(t, last, "a migration sorts before %s", first)
	require.NoError(t, postgres.New(db).MigrateTo(t.Context(), last), "migrate to %s", last)
}

func withRecord(p store.Path, record string) store.Path {
	p.Record = record
	return p
}

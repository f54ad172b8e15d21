package postgres_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateTrigramLongTexts upgrades a database filled under the schema
// before migration 0015, with a short text and one of 5,000 characters in
// it: the trigram index then holds only texts of 4,096 characters at
// most, and valueContains still finds both, and a long text written
// after the upgrade.
func TestMigrateTrigramLongTexts(t *testing.T) {
	db := emptyDatabase(t)
	ctx := context.Background()
	migrateBefore(t, db, "0015")
	proj, coll, clus := store.NewID(), store.NewID(), store.NewID()
	long := strings.Repeat("x", 5000) + "NeedLE"
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES ($1, 'web', 'web', 'owner-1', now(), now())`, []any{proj}},
		{`INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'prod', 'prod', now(), now())`, []any{coll, proj}},
		{`INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'k', 'k', now(), now())`, []any{clus, coll}},
		{`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at, updated_by)
			VALUES ($1, $2, 'short', 'short', 'STRING', '"a needle"', 1, 'a needle', 'a needle', 1, NULL, 'a needle', now(), now(), 'owner-1')`, []any{store.NewID(), clus}},
		{`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at, updated_by)
			VALUES ($1, $2, 'long', 'long', 'STRING', $3, 1, $4, $5, 1, NULL, left($4, 256), now(), now(), 'owner-1')`,
			[]any{store.NewID(), clus, strconv.Quote(long), long, strings.ToLower(long)}},
	} {
		_, err := db.Exec(q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %s", q.sql)
	}

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	require.NoError(t, s.Migrate(ctx), "Migrate again changes nothing")
	var def string
	require.NoError(t, db.Get(&def, `SELECT indexdef FROM pg_indexes WHERE indexname = 'hds_records_vtext_trgm'`))
	assert.Contains(t, def, "WHERE (length(vtext_lower) <= 4096)", "the trigram index leaves long texts out")
	var longIndexed int
	require.NoError(t, db.Get(&longIndexed, `SELECT count(*) FROM pg_indexes WHERE indexname = 'hds_records_long_text'`))
	assert.Equal(t, 1, longIndexed, "the long texts' index")

	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "owner-1"}, Project: "web", Collection: "prod", Cluster: "k"}
	rp := p
	rp.Record = "later"
	_, err := s.CreateRecord(ctx, rp, &store.Record{Type: store.String, Value: json.RawMessage(strconv.Quote(strings.Repeat("y", 6000) + "NEEDLE"))}, store.Write{})
	require.NoError(t, err)
	find := func(contains string) []string {
		t.Helper()
		rs, n, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: store.ListQuery{Limit: 10, SortBy: store.SortName}, ValueContains: contains})
		require.NoError(t, err)
		names := []string{}
		for _, r := range rs {
			names = append(names, r.Name)
		}
		assert.Equal(t, len(names), n, "total")
		return names
	}
	assert.Equal(t, []string{"later", "long", "short"}, find("needle"), "short and long texts, before and after the upgrade")
	assert.Equal(t, []string{"long"}, find("xneedle"), "a long text's end")
	assert.Equal(t, []string{"short"}, find("a nee"))
	assert.Empty(t, find("needles"))
}

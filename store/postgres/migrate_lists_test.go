package postgres_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// TestMigrateListIndexes upgrades a database filled under the schema
// before migration 0008 (the list indexes): the records written before it
// are found by the DATETIME and INTEGER range filters and paged by
// created_at, and each sort and range the migration is for is read from
// its index, in order, with no sort of the cluster.
func TestMigrateListIndexes(t *testing.T) {
	db := emptyDatabase(t)
	ctx := t.Context()
	migrateBefore(t, db, "0008")
	proj, coll, clus := store.NewID(), store.NewID(), store.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES ($1, 'web', 'web', 'alice', now(), now())`, []any{proj}},
		{`INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'prod', 'prod', now(), now())`, []any{coll, proj}},
		{`INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'k', 'k', now(), now())`, []any{clus, coll}},
	} {
		_, err := db.ExecContext(ctx, q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %s", q.sql)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	records := []struct {
		name string
		typ  store.DataType
		json string
	}{ // created one minute apart, in this order
		{"d1", store.DateTime, `"2026-01-01T10:00:00+02:00"`}, // 08:00Z
		{"n1", store.Integer, `5`},
		{"d2", store.DateTime, `"2026-01-01T09:00:00Z"`}, // 09:00Z
		{"f1", store.Float, `4.5`},
		{"d3", store.DateTime, `"2026-01-01T07:30:00-01:00"`}, // 08:30Z
		{"n2", store.Integer, `-3`},
		{"d4", store.DateTime, `"2025-12-31T23:00:00.5Z"`},
		{"s1", store.String, `"08:30"`},
	}
	for i, r := range records {
		v, err := r.typ.ParseJSON([]byte(r.json))
		require.NoError(t, err)
		rec := &store.Record{ID: store.NewID(), Name: r.name, Type: r.typ, Value: v, Version: 1, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		require.NoError(t, postgres.InsertRecordV1(ctx, db, clus, rec), "create %q before 0008", r.name)
	}

	s := postgres.New(db)
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	require.NoError(t, s.Migrate(ctx), "Migrate again changes nothing")

	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "web", Collection: "prod", Cluster: "k"}
	names := func(rs []*store.Record) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	key := func(t store.DataType, js string) *store.ValueKey {
		k := store.KeyOf(t, json.RawMessage(js))
		return &k
	}

	rq := store.RecordQuery{ListQuery: store.NewListQuery(), Type: store.DateTime,
		Min: key(store.DateTime, `"2026-01-01T09:15:00+01:00"`), Max: key(store.DateTime, `"2026-01-01T09:00:00Z"`)}
	got, total, err := s.FindRecords(ctx, p, rq)
	require.NoError(t, err, "a DATETIME range over records written before 0008")
	assert.Equal(t, []string{"d2", "d3"}, names(got), "08:15Z to 09:00Z, offsets taken into account")
	assert.Equal(t, 2, total)

	rq = store.RecordQuery{ListQuery: store.NewListQuery(), Type: store.Integer, Min: key(store.Integer, `-3`), Max: key(store.Integer, `4`)}
	rq.SortBy = store.SortValue
	got, _, err = s.FindRecords(ctx, p, rq)
	require.NoError(t, err, "an INTEGER range")
	assert.Equal(t, []string{"n2"}, names(got), "-3 to 4: the FLOAT 4.5 is another type")

	// sortBy=created_at desc, two at a time by cursor.
	lq := store.NewListQuery()
	lq.SortBy, lq.Desc, lq.Limit, lq.NoCount = store.SortCreatedAt, true, 2, true
	var walked []string
	for range len(records) {
		page, _, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: lq})
		require.NoError(t, err, "a page by created_at")
		if len(page) == 0 {
			break
		}
		walked = append(walked, names(page)...)
		pos := store.RecordAt(store.SortCreatedAt, page[len(page)-1])
		lq.After = &pos
	}
	assert.Equal(t, []string{"s1", "d4", "n2", "d3", "f1", "d2", "n1", "d1"}, walked, "newest first")

	// Each order and range the migration is for comes from its index, in
	// order: with sequential scans, bitmaps and sorts priced out, the plan
	// names the index and sorts nothing.
	conn, err := db.Connx(ctx)
	require.NoError(t, err)
	defer conn.Close()
	for _, set := range []string{`SET enable_seqscan = off`, `SET enable_bitmapscan = off`, `SET enable_sort = off`, `SET enable_incremental_sort = off`} {
		_, err := conn.ExecContext(ctx, set)
		require.NoError(t, err, set)
	}
	for _, c := range []struct{ query, index string }{
		{`SELECT id FROM hds_records WHERE cluster_id = $1 ORDER BY id LIMIT 10`, "hds_records_cluster_id"},
		{`SELECT id FROM hds_records WHERE cluster_id = $1 ORDER BY created_at, name, id LIMIT 10`, "hds_records_created"},
		{`SELECT id FROM hds_records WHERE cluster_id = $1 ORDER BY updated_at, name, id LIMIT 10`, "hds_records_updated"},
		{`SELECT id FROM hds_records WHERE cluster_id = $1 AND type = 'INTEGER' AND sort_num >= 1 ORDER BY sort_num, name, id LIMIT 10`, "hds_records_number"},
		{`SELECT id FROM hds_records WHERE cluster_id = $1 AND type = 'DATETIME' AND hds_datetime_instant(type, vtext) >= 0 LIMIT 10`, "hds_records_datetime"},
		{`SELECT id FROM hds_collections WHERE project_id = $1 ORDER BY id LIMIT 10`, "hds_collections_id"},
		{`SELECT id FROM hds_collections WHERE project_id = $1 ORDER BY created_at, name, id LIMIT 10`, "hds_collections_created"},
		{`SELECT id FROM hds_collections WHERE project_id = $1 ORDER BY updated_at, name, id LIMIT 10`, "hds_collections_updated"},
		{`SELECT id FROM hds_clusters WHERE collection_id = $1 ORDER BY id LIMIT 10`, "hds_clusters_id"},
		{`SELECT id FROM hds_clusters WHERE collection_id = $1 ORDER BY created_at, name, id LIMIT 10`, "hds_clusters_created"},
		{`SELECT id FROM hds_clusters WHERE collection_id = $1 ORDER BY updated_at, name, id LIMIT 10`, "hds_clusters_updated"},
	} {
		var lines []string
		require.NoError(t, conn.SelectContext(ctx, &lines, `EXPLAIN (COSTS OFF) `+c.query, clus), "EXPLAIN %s", c.query)
		plan := ""
		for _, l := range lines {
			plan += l + "\n"
		}
		assert.Regexp(t, `Index (Only )?Scan (Backward )?using `+c.index+` `, plan, "%s\n%s", c.query, plan)
		assert.NotContains(t, plan, "Sort", "%s\n%s", c.query, plan)
	}
}

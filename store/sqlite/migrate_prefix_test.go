package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/sqlite"
)

// TestMigrateIndexPrefix upgrades a database made by schema 5, with
// records of big values in it (whole keys, every text lower-cased), to
// migration 0007: their keys are cut, the long texts' lower-cased copies
// dropped, and they are still listed by value exactly as the memory store
// lists them, found by value= and by valueContains beyond the prefix.
func TestMigrateIndexPrefix(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hds.db")
	prev, err := sqlite.Open(ctx, path, sqlite.WithMigrationsTo("migrations/0005_webhook_bounds.sql"))
	require.NoError(t, err)
	exec := func(query string, args ...any) {
		t.Helper()
		require.NoError(t, prev.Exec(ctx, query, args...), query)
	}
	cases := prefixCases()
	exec(`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES ('p1', 'p', 'p', 'u', 1, 1)`)
	exec(`INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at) VALUES ('c1', 'p1', 'c', 'c', 1, 1)`)
	exec(`INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at, records) VALUES ('k1', 'c1', 'k', 'k', 1, 1, ?)`,
		len(cases))
	mem := memory.New()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k"}
	_, err = mem.CreateProject(ctx, p)
	require.NoError(t, err)
	ops := []store.Op{{Kind: store.OpEnsureCluster, Collection: "c", Cluster: "k"}}
	for i, r := range cases {
		vk, rk, vtext, vlower := sqlite.UncutRecordKeys(r.Type, r.Value)
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
		exec(`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, vkey, rkey,
			bytes, created_at, updated_at, updated_by, seq) VALUES (?, 'k1', ?, ?, ?, ?, 1, ?, ?, ?, ?, 0, ?, ?, 'u', ?)`,
			id, r.Name, strings.ToLower(r.Name), string(r.Type), string(r.Value), vtext, vlower, vk, rk, i+1, i+1, i+1)
		r.ID = id
		ops = append(ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: r.Name, New: &r})
	}
	_, err = mem.Apply(ctx, p, store.Batch{Ops: ops})
	require.NoError(t, err)
	long, err := prev.QueryString(ctx, `SELECT count(*) FROM hds_records WHERE length(vkey) > 64 AND length(vtext_lower) > 4096`)
	require.NoError(t, err)
	require.Equal(t, "3", long, "the old schema held whole keys and long lower-cased texts")
	require.NoError(t, prev.Close())

	s := openAt(t, path)
	for query, want := range map[string]string{
		`SELECT max(length(vkey)) FROM hds_records`:                                        "64",
		`SELECT max(length(rkey)) FROM hds_records`:                                        "64",
		`SELECT count(*) FROM hds_records WHERE vtext_lower IS NULL AND vtext IS NOT NULL`: "3",
		`SELECT count(*) FROM hds_records WHERE length(vtext_lower) > 4096`:                "0",
	} {
		got, err := s.QueryString(ctx, query)
		require.NoError(t, err)
		assert.Equal(t, want, got, query)
	}
	names := func(st store.Store, q store.RecordQuery) []string {
		t.Helper()
		rs, n, err := st.FindRecords(ctx, p, q)
		require.NoError(t, err)
		out := []string{}
		for _, r := range rs {
			out = append(out, r.Name)
		}
		assert.Equal(t, len(out), n, "total")
		return out
	}
	base := strings.Repeat("x", 60)
	for _, q := range []store.RecordQuery{
		{},
		{ListQuery: store.ListQuery{Desc: true}},
		{Type: store.String},
		{Type: store.String, ListQuery: store.ListQuery{Desc: true}},
		{HasValue: true, Value: base + strings.Repeat("Q", 5000)},
		{ValueContains: "needle"},
		{ValueContains: "aab"},
	} {
		q.SortBy, q.Limit = store.SortValue, 1000
		want := names(mem, q)
		assert.NotEmpty(t, want)
		assert.Equal(t, want, names(s, q), "%+v", q)
	}
	assert.Len(t, names(s, store.RecordQuery{ValueContains: "needle", ListQuery: store.ListQuery{Limit: 10}}), 2,
		"a long text is lower-cased as it is read")
}

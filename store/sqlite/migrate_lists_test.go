package sqlite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// TestMigrateListSpeed upgrades a database made by schema 2, with
// records in it, to migration 0003: the records it held are found by
// search and valueContains (through the trigram index it builds, and
// past it for a long text) in every order, records written after it are
// numbered after them, and the index follows renames, new values,
// deletes and a deleted cluster.
func TestMigrateListSpeed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hds.db")
	prev, err := sqlite.Open(ctx, path, sqlite.WithMigrationsTo("migrations/0002_cluster_state.sql"))
	require.NoError(t, err)
	exec := func(query string, args ...any) {
		t.Helper()
		require.NoError(t, prev.Exec(ctx, query, args...), query)
	}
	exec(`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES ('p1', 'p', 'p', 'u', 1, 1)`)
	exec(`INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at) VALUES ('c1', 'p1', 'c', 'c', 1, 1)`)
	exec(`INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at, records) VALUES ('k1', 'c1', 'k', 'k', 1, 1, 4)`)
	long := `"` + strings.Repeat("x", 5000) + `Needle"`
	old := []struct {
		id, name string
		typ      store.DataType
		value    string
	}{
		{"00000000-0000-4000-8000-000000000001", "Alpha", store.String, `"Hello World"`},
		{"00000000-0000-4000-8000-000000000002", "beta", store.Integer, `42`},
		{"00000000-0000-4000-8000-000000000003", "Gamma", store.String, long},
		{"00000000-0000-4000-8000-000000000004", "delta", store.Credential, `"sealed world"`},
	}
	for i, r := range old {
		vk, rk, vtext, vlower := sqlite.RecordKeys(r.typ, json.RawMessage(r.value))
		exec(`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, vkey, rkey,
			bytes, created_at, updated_at, updated_by) VALUES (?, 'k1', ?, ?, ?, ?, 1, ?, ?, ?, ?, 0, ?, ?, 'u')`,
			r.id, r.name, strings.ToLower(r.name), string(r.typ), r.value, vtext, vlower, vk, rk, i+1, i+1)
	}
	require.NoError(t, prev.Close())

	s := openAt(t, path)
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k"}
	find := func(q store.RecordQuery) []string {
		t.Helper()
		q.Limit = 100
		rs, n, err := s.FindRecords(ctx, p, q)
		require.NoError(t, err)
		names := []string{}
		for _, r := range rs {
			names = append(names, r.Name)
		}
		assert.Equal(t, len(names), n, "total")
		return names
	}
	search := func(s string, by store.SortField, desc bool) store.RecordQuery {
		return store.RecordQuery{ListQuery: store.ListQuery{Search: s, SortBy: by, Desc: desc}}
	}
	contains := func(s string, by store.SortField, desc bool) store.RecordQuery {
		return store.RecordQuery{ListQuery: store.ListQuery{SortBy: by, Desc: desc}, ValueContains: s}
	}
	assert.Equal(t, []string{"Alpha"}, find(search("LPH", store.SortName, false)), "a name the migration indexed")
	assert.Equal(t, []string{"delta", "Gamma", "beta", "Alpha"}, find(search("a", store.SortCreatedAt, true)))
	assert.Equal(t, []string{"Alpha"}, find(contains("o wor", store.SortValue, false)), "a text the migration indexed; not the credential")
	assert.Equal(t, []string{"Gamma"}, find(contains("needle", store.SortUpdatedAt, true)), "a text too long for the index")
	assert.Equal(t, []string{"beta"}, find(contains("42", store.SortID, false)))
	assert.Equal(t, []string{"Alpha", "Gamma", "beta", "delta"}, find(store.RecordQuery{ListQuery: store.ListQuery{SortBy: store.SortType, Desc: true}}),
		"the descending indexes")

	mustCreate := func(name, value string) {
		t.Helper()
		_, err := s.CreateRecord(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "p", Collection: "c", Cluster: "k", Record: name},
			&store.Record{Type: store.String, Value: json.RawMessage(value)}, store.Write{})
		require.NoError(t, err)
	}
	mustCreate("epsilon", `"world peace"`)
	seq, err := s.QueryString(ctx, `SELECT seq FROM hds_records WHERE name = 'epsilon'`)
	require.NoError(t, err)
	assert.Equal(t, "5", seq, "numbered after the records the migration numbered")
	unnumbered, err := s.QueryString(ctx, `SELECT count(*) FROM hds_records WHERE seq IS NULL`)
	require.NoError(t, err)
	assert.Equal(t, "0", unnumbered)
	assert.Equal(t, []string{"Alpha", "epsilon"}, find(contains("world", store.SortName, false)))

	_, err = s.UpdateRecord(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "p", Collection: "c", Cluster: "k", Record: "Alpha"}, store.Write{},
		func(r *store.Record) error {
			r.Name, r.Value = "omega", json.RawMessage(`"Goodbye"`)
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, []string{"epsilon"}, find(contains("world", store.SortName, false)), "the old text is gone from the index")
	assert.Equal(t, []string{"omega"}, find(search("ome", store.SortName, false)), "the new name is in it")
	assert.Empty(t, find(search("alpha", store.SortName, false)))
	require.NoError(t, s.DeleteRecord(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: "p", Collection: "c", Cluster: "k", Record: "epsilon"}, store.Write{}))
	assert.Empty(t, find(contains("world", store.SortName, false)))

	require.NoError(t, s.DeleteCluster(ctx, p))
	left, err := s.QueryString(ctx, `SELECT count(*) FROM hds_records_text WHERE hds_records_text MATCH '"ome" OR "eta" OR "xxx"'`)
	require.NoError(t, err)
	assert.Equal(t, "0", left, "a deleted cluster's records leave the index")
}

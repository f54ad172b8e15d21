package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// recountSQL computes every project's bytes from scratch, as migration
// 0004 does.
const recountSQL = `SELECT p.name,
    (SELECT coalesce(sum(octet_length(c.name)), 0) FROM hds_collections c WHERE c.project_id = p.id)
  + (SELECT coalesce(sum(octet_length(k.name)), 0)
     FROM hds_clusters k JOIN hds_collections c ON c.id = k.collection_id WHERE c.project_id = p.id)
  + (SELECT coalesce(sum(octet_length(r.name) + octet_length(r.value)), 0)
     FROM hds_records r JOIN hds_clusters k ON k.id = r.cluster_id JOIN hds_collections c ON c.id = k.collection_id
     WHERE c.project_id = p.id)
  + (SELECT coalesce(sum(octet_length(v.name) + octet_length(v.value)), 0)
     FROM hds_record_versions v JOIN hds_records r ON r.id = v.record_id JOIN hds_clusters k ON k.id = r.cluster_id
     JOIN hds_collections c ON c.id = k.collection_id WHERE c.project_id = p.id),
  p.bytes
FROM hds_projects p ORDER BY p.name`

// TestMigrateQuotas upgrades a database filled under the schema before
// migration 0004: every project's byte count is computed from what it
// holds (names, values, history), and the byte quota applies at once.
func TestMigrateQuotas(t *testing.T) {
	db := emptyDatabase(t)
	ctx := context.Background()
	migrateBefore(t, db, "0004")
	proj, empty, coll, clus := store.NewID(), store.NewID(), store.NewID(), store.NewID()
	rec1, rec2 := store.NewID(), store.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES ($1, 'web', 'web', 'owner-1', now(), now())`, []any{proj}},
		{`INSERT INTO hds_projects (id, name, name_lower, owner_id, created_at, updated_at) VALUES ($1, 'empty', 'empty', 'owner-1', now(), now())`, []any{empty}},
		{`INSERT INTO hds_collections (id, project_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'prod', 'prod', now(), now())`, []any{coll, proj}},
		{`INSERT INTO hds_clusters (id, collection_id, name, name_lower, created_at, updated_at) VALUES ($1, $2, 'k', 'k', now(), now())`, []any{clus, coll}},
		{`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at, updated_by)
			VALUES ($1, $2, 'port', 'port', 'INTEGER', '8080', 2, '8080', '8080', 0, 8080, NULL, now(), now(), 'owner-1')`, []any{rec1, clus}},
		{`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower, sort_group, sort_num, sort_text, created_at, updated_at, updated_by)
			VALUES ($1, $2, 'host', 'host', 'STRING', '"db.local"', 1, 'db.local', 'db.local', 1, NULL, 'db.local', now(), now(), 'owner-1')`, []any{rec2, clus}},
		{`INSERT INTO hds_record_versions (record_id, version, name, type, value, changed_at, changed_by)
			VALUES ($1, 1, 'old-port', 'INTEGER', '80', now(), 'owner-1')`, []any{rec1}},
	} {
		_, err := db.Exec(q.sql, q.args...)
		require.NoError(t, err, "fill the old schema: %s", q.sql)
	}
	// prod 4 + k 1 + port 4+4 + host 4+10 + old-port 8+2 = 37
	const want = 37

	s := postgres.New(db, postgres.WithQuotas(store.Quotas{MaxBytesPerProject: want + 5}))
	require.NoError(t, s.Migrate(ctx), "Migrate the filled database")
	require.NoError(t, s.Migrate(ctx), "Migrate again changes nothing")
	var web, none int64
	require.NoError(t, db.Get(&web, `SELECT bytes FROM hds_projects WHERE name = 'web'`))
	require.NoError(t, db.Get(&none, `SELECT bytes FROM hds_projects WHERE name = 'empty'`))
	assert.Equal(t, int64(want), web, "the bytes of web, history included")
	assert.Equal(t, int64(0), none, "an empty project holds 0 bytes")

	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "owner-1"}, Project: "web", Collection: "prod", Cluster: "k", Record: "x"}
	_, err := s.CreateRecord(ctx, p, &store.Record{Type: store.String, Value: json.RawMessage(`"abc"`)}, store.Write{})
	var qe *store.QuotaError
	require.ErrorAs(t, err, &qe, "6 bytes onto 37 of 42")
	assert.Equal(t, store.QuotaBytesPerProject, qe.Quota)
	_, err = s.CreateRecord(ctx, p, &store.Record{Type: store.String, Value: json.RawMessage(`"ab"`)}, store.Write{})
	require.NoError(t, err, "5 bytes onto 37 of 42")
	assertCounted(t, s)
}

// TestQuotaBytesCounted runs every kind of write and checks after each
// that every project's byte counter equals what the project holds.
func TestQuotaBytesCounted(t *testing.T) {
	s := postgres.New(pgtest.New(t))
	ctx := t.Context()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "o"}, Project: "p", Collection: "c", Cluster: "k", Record: "r"}
	steps := []func() error{
		func() error { _, err := s.CreateProject(ctx, p); return err },
		func() error { _, err := s.CreateCollection(ctx, p); return err },
		func() error { _, err := s.CreateCluster(ctx, p); return err },
		func() error {
			_, err := s.CreateRecord(ctx, p, &store.Record{Type: store.String, Value: json.RawMessage(`"héllo"`)}, store.Write{})
			return err
		},
		func() error {
			_, err := s.UpdateRecord(ctx, p, store.Write{MaxVersions: 2}, func(r *store.Record) error {
				r.Name, r.Value = "renamed", json.RawMessage(`"a longer value"`)
				return nil
			})
			p.Record = "renamed"
			return err
		},
		func() error {
			for range 3 {
				if _, err := s.UpdateRecord(ctx, p, store.Write{MaxVersions: 2}, func(r *store.Record) error {
					r.Value = json.RawMessage(`"x` + string(r.Value[1:]))
					return nil
				}); err != nil {
					return err
				}
			}
			return nil
		},
		func() error { _, err := s.RestoreRecord(ctx, p, 4, store.Write{MaxVersions: 1}); return err },
		func() error {
			_, err := s.ResealRecord(ctx, mustID(t, s, p), func(store.DataType, json.RawMessage) (json.RawMessage, bool, error) {
				return json.RawMessage(`"resealed, longer"`), true, nil
			})
			return err
		},
		func() error { _, err := s.RenameCluster(ctx, p, "cluster"); p.Cluster = "cluster"; return err },
		func() error { _, err := s.RenameCollection(ctx, p, "c2"); p.Collection = "c2"; return err },
		func() error {
			q := p
			q.Record = "second"
			_, err := s.CreateRecord(ctx, q, &store.Record{Type: store.Integer, Value: json.RawMessage(`12`)}, store.Write{})
			return err
		},
		func() error { return s.DeleteRecord(ctx, p, store.Write{}) },
		func() error { return s.DeleteCluster(ctx, p) },
		func() error { _, err := s.CreateCluster(ctx, p); return err },
		func() error { return s.DeleteCollection(ctx, p) },
	}
	for i, step := range steps {
		require.NoError(t, step(), "step %d", i)
		assertCounted(t, s)
	}
}

func mustID(t *testing.T, s *postgres.Store, p store.Path) string {
	t.Helper()
	r, err := s.FindRecord(t.Context(), p)
	require.NoError(t, err)
	return r.ID
}

// assertCounted checks every project's counter against a recount.
func assertCounted(t *testing.T, s *postgres.Store) {
	t.Helper()
	rows, err := s.DB().Query(recountSQL)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var name string
		var want, got int64
		require.NoError(t, rows.Scan(&name, &want, &got))
		assert.Equal(t, want, got, "the byte counter of project %q", name)
	}
	require.NoError(t, rows.Err())
}

// TestQuotaBytesCountedBatches is TestQuotaBytesCounted for batches:
// after batches that create, update and delete records, clusters and
// collections, one refused and one dry run, every project's counter
// equals what the project holds.
func TestQuotaBytesCountedBatches(t *testing.T) {
	s := postgres.New(pgtest.New(t), postgres.WithQuotas(store.Quotas{MaxBytesPerProject: 1000}))
	ctx := t.Context()
	pp := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "o"}, Project: "p"}
	_, err := s.CreateProject(ctx, pp)
	require.NoError(t, err)
	create := func(kind store.OpKind, coll, clus, name, value string) store.Op {
		return store.Op{Kind: kind, Collection: coll, Cluster: clus, Record: name,
			New: &store.Record{Type: store.String, Value: json.RawMessage(value)}}
	}
	set := func(coll, clus, name, rename, value string) store.Op {
		return store.Op{Kind: store.OpUpdate, Collection: coll, Cluster: clus, Record: name,
			Update: func(r *store.Record) error { r.Name, r.Value = rename, json.RawMessage(value); return nil }}
	}
	grow := []store.Op{
		create(store.OpCreate, "c1", "k1", "a", `"héllo"`),
		create(store.OpUpsert, "c1", "k1", "b", `"b"`),
		create(store.OpCreate, "c2", "k2", "a", `"x"`),
		{Kind: store.OpEnsureCollection, Collection: "c3"},
		{Kind: store.OpEnsureCluster, Collection: "c3", Cluster: "k3"},
	}
	for i, b := range []struct {
		batch store.Batch
		fails bool
	}{
		{store.Batch{CreateParents: true, Ops: grow}, false},
		{store.Batch{Write: store.Write{MaxVersions: 2}, Ops: []store.Op{
			set("c1", "k1", "a", "renamed", `"a longer value"`),
			set("c1", "k1", "b", "b", `"bb"`),
			set("c1", "k1", "b", "b", `"bbb"`),
			{Kind: store.OpDelete, Collection: "c2", Cluster: "k2", Record: "a"},
		}}, false},
		{store.Batch{CreateParents: true, Write: store.Write{MaxVersions: 2}, Ops: []store.Op{
			create(store.OpCreate, "c4", "k4", "n", `"new"`),
			set("c1", "k1", "renamed", "again", `"y"`),
			{Kind: store.OpDeleteCollection, Collection: "c2"},
			create(store.OpCreate, "c1", "k1", "big", `"`+strings.Repeat("z", 1000)+`"`),
		}}, true},
		{store.Batch{DryRun: true, CreateParents: true, Ops: []store.Op{
			create(store.OpCreate, "c5", "k5", "n", `"new"`),
			{Kind: store.OpDeleteCluster, Collection: "c3", Cluster: "k3"},
		}}, false},
		{store.Batch{Ops: []store.Op{
			{Kind: store.OpDeleteCluster, Collection: "c3", Cluster: "k3"},
			{Kind: store.OpDelete, Collection: "c1", Cluster: "k1", Record: "b"},
			{Kind: store.OpDeleteCollection, Collection: "c2"},
		}}, false},
		{store.Batch{Ops: []store.Op{{Kind: store.OpDeleteCollection, Collection: "c1"}}}, false},
	} {
		_, err := s.Apply(ctx, pp, b.batch)
		if b.fails {
			require.ErrorIs(t, err, store.ErrQuotaExceeded, "batch %d", i)
		} else {
			require.NoError(t, err, "batch %d", i)
		}
		assertCounted(t, s)
	}
	var bytes int64
	require.NoError(t, s.DB().Get(&bytes, `SELECT bytes FROM hds_projects WHERE name = 'p'`))
	assert.Equal(t, int64(len("c3")), bytes, "only the empty collection c3 is left")
}

package postgres_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// faultBound is how long a test waits for a call that must end at the
// store's timeout before it calls it stuck. It bounds the wait; it is not
// the timing asserted.
const faultBound = 20 * time.Second

// proxiedStore opens a Store (postgres.Open) with a timeout of 300 ms on
// a fresh database through a proxy, fills a record, and returns the
// proxy, the store, the record's path, the project's id and a Store on
// the same database that does not go through the proxy.
func proxiedStore(t *testing.T) (*pgtest.Proxy, *postgres.Store, store.Path, string, *postgres.Store) {
	t.Helper()
	url := pgtest.NewURL(t)
	proxy, proxied := pgtest.NewProxy(t, url)
	s, err := postgres.Open(t.Context(), proxied, 2, postgres.WithTimeout(300*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	direct, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Close() })
	// The data is made through the direct store, whose deadline is the
	// default: the proxied store's 300 ms is for the faults, and a loaded
	// machine may take longer to create a project.
	d := postgres.New(direct)
	ctx := t.Context()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "proj", Collection: "coll", Cluster: "clus", Record: "rec"}
	proj, err := d.CreateProject(ctx, p)
	require.NoError(t, err)
	_, err = d.CreateCollection(ctx, p)
	require.NoError(t, err)
	_, err = d.CreateCluster(ctx, p)
	require.NoError(t, err)
	_, err = d.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
	require.NoError(t, err)
	return proxy, s, p, proj.ID, d
}

// storeCalls are calls of every kind (ping, read, list, single write,
// batch) on the record at p.
func storeCalls(s *postgres.Store, p store.Path) []struct {
	name string
	do   func(ctx context.Context) error
} {
	return []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"Ping", s.Ping},
		{"FindRecord", func(ctx context.Context) error { _, err := s.FindRecord(ctx, p); return err }},
		{"FindRecords", func(ctx context.Context) error {
			_, _, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: store.NewListQuery()})
			return err
		}},
		{"UpdateRecord", func(ctx context.Context) error {
			_, err := s.UpdateRecord(ctx, p, store.Write{}, func(r *store.Record) error { r.Value = json.RawMessage("2"); return nil })
			return err
		}},
		{"Apply", func(ctx context.Context) error {
			_, err := s.Apply(ctx, store.Path{Need: store.RightRead, Caller: p.Caller, Project: p.Project}, store.Batch{Ops: []store.Op{
				{Kind: store.OpDelete, Collection: p.Collection, Cluster: p.Cluster, Record: "nope"}}})
			return err
		}},
	}
}

// assertEndsUnavailable runs do and checks that it ends, with
// store.ErrUnavailable, while the database does not answer.
func assertEndsUnavailable(t *testing.T, name string, do func(ctx context.Context) error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- do(context.Background()) }()
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, store.ErrUnavailable, "%s while the database does not answer", name)
	case <-time.After(faultBound):
		t.Fatalf("%s is still waiting for a database that does not answer, %v after its timeout of 300ms", name, faultBound)
	}
}

// TestStalledDatabaseTimesOut: while the database accepts and holds
// every byte (it answers late), every call ends at the store's timeout
// with ErrUnavailable, new connections included; once the database
// answers again, the store serves.
func TestStalledDatabaseTimesOut(t *testing.T) {
	proxy, s, p, _, _ := proxiedStore(t)
	proxy.Stall()
	for _, c := range storeCalls(s, p) {
		assertEndsUnavailable(t, c.name, c.do)
	}
	proxy.Resume()
	require.Eventually(t, func() bool { return s.Ping(t.Context()) == nil }, faultBound, 20*time.Millisecond,
		"the store answers again once the database does")
	_, err := s.FindRecord(t.Context(), p)
	assert.NoError(t, err)
}

// TestBlackHoledDatabaseRecovers: while the database accepts TCP and never
// answers, neither on the open connections nor in the startup handshake
// of new ones, every call ends with ErrUnavailable; once it is back, the
// pool and the change feed recover without a restart: Ping answers, and
// a commit made meanwhile by another instance reaches a subscriber.
func TestBlackHoledDatabaseRecovers(t *testing.T) {
	proxy, s, p, projectID, other := proxiedStore(t)
	var got atomic.Int64
	unsubscribe, err := s.Subscribe(t.Context(), projectID, func(e *store.AuditEntry) { got.Store(e.Revision) })
	require.NoError(t, err)
	defer unsubscribe()
	proxy.BlackHole()
	for _, c := range storeCalls(s, p) {
		assertEndsUnavailable(t, c.name, c.do)
	}
	// The calls above opened connections that are black-holed in their
	// handshake too.
	proxy.Heal()
	require.Eventually(t, func() bool { return s.Ping(t.Context()) == nil }, faultBound, 20*time.Millisecond,
		"Ping answers again once the database does")
	_, err = other.UpdateRecord(t.Context(), p, store.Write{}, func(r *store.Record) error { r.Value = json.RawMessage("3"); return nil })
	require.NoError(t, err, "a write of another instance")
	proj, err := other.FindProject(t.Context(), p)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return got.Load() >= proj.Revision }, faultBound, 20*time.Millisecond,
		"the change feed delivers the other instance's write after the outage")
}

// TestRecoversAtOnceAfterOutage: connections that sat idle in the pool
// through an outage are dead (the database swallowed their bytes), so a
// call handed one after the database is back would wait its whole timeout
// and fail (issue 37: 503 for another database.timeout after a stall).
// Once a call has found the database silent, the pool's idle connections
// are dropped: the first call after the database answers again succeeds,
// on a new connection.
func TestRecoversAtOnceAfterOutage(t *testing.T) {
	proxy, s, p, _, _ := proxiedStore(t)
	// Two connections in the pool, idle.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			_, _, err := s.FindRecords(t.Context(), p, store.RecordQuery{ListQuery: store.NewListQuery()})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	proxy.BlackHole() // the idle ones swallow every byte, for good
	assertEndsUnavailable(t, "FindRecord", func(ctx context.Context) error { _, err := s.FindRecord(ctx, p); return err })
	proxy.Heal()
	_, err := s.FindRecord(t.Context(), p)
	assert.NoError(t, err, "the first call once the database answers again")
	assert.NoError(t, s.Ping(t.Context()), "and the next")
}

package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
	"github.com/hds-go/hds/store/storetest"
)

// open returns a new store on a new file of the test's directory, and
// closes it when the test ends.
func open(t testing.TB, opts ...sqlite.Option) *sqlite.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "hds.db"), opts...)
}

// testTimeout is the deadline of a store call in tests (unless a test
// sets its own): a shared CI machine, loaded many times over and running
// the race detector, may take seconds for what takes milliseconds alone,
// and no test may fail because the machine is slow.
const testTimeout = time.Minute

// openAt opens the store on path, closed when the test ends. Its calls
// have testTimeout unless opts say otherwise.
func openAt(t testing.TB, path string, opts ...sqlite.Option) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, append([]sqlite.Option{sqlite.WithTimeout(testTimeout)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pair returns two stores on one file, as two instances of a server
// would be if they could share it: their state is the database's.
func pair(t *testing.T) (*sqlite.Store, *sqlite.Store) {
	path := filepath.Join(t.TempDir(), "hds.db")
	return openAt(t, path), openAt(t, path)
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

func TestUsersConformance(t *testing.T) {
	storetest.RunUsers(t, func(t *testing.T) store.UserDirectory { return open(t) })
}

func TestQuotas(t *testing.T) {
	storetest.RunQuotas(t, func(t *testing.T, q store.Quotas) store.Store { return open(t, sqlite.WithQuotas(q)) })
}

// TestSessionChecks runs the deferred session check's suite: the store
// checks the sessions it keeps in the statement that resolves a path.
func TestSessionChecks(t *testing.T) {
	storetest.RunSessionChecks(t, func(t *testing.T) storetest.SessionCheckStore { return open(t) })
}

func TestSessionsConformance(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T) (storetest.SessionStore, storetest.SessionStore) { return pair(t) })
}

func TestAuditConformance(t *testing.T) {
	storetest.RunAudit(t, func(t *testing.T) storetest.AuditStore { return open(t) })
}

// TestEventsConformance runs the event suite on one store: events are
// published in process, and one server process owns a file.
func TestEventsConformance(t *testing.T) {
	storetest.RunEvents(t, func(t *testing.T) (storetest.EventStore, storetest.EventStore) {
		s := open(t)
		return s, s
	})
}

func TestAccessConformance(t *testing.T) {
	storetest.RunAccess(t, func(t *testing.T) (storetest.AccessStore, storetest.AccessStore) { return pair(t) })
}

func TestUserAdminConformance(t *testing.T) {
	storetest.RunUserAdmin(t, func(t *testing.T) (storetest.UserAdminStore, storetest.UserAdminStore) { return pair(t) })
}

func TestWebhooksConformance(t *testing.T) {
	storetest.RunWebhooks(t, func(t *testing.T) (storetest.WebhookStore, storetest.WebhookStore) { return pair(t) })
}

func TestSnapshotsConformance(t *testing.T) {
	storetest.RunSnapshots(t, func(t *testing.T) storetest.SnapshotStore { return open(t) })
}

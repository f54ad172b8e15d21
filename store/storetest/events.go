package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// EventStore is what RunEvents tests: a Store, its audit log and its
// event source on one value.
type EventStore interface {
	store.Store
	store.AuditLog
	store.EventSource
}

// eventWait is how long an event may take to arrive
// (docs/api.md#audit-log-and-change-feed: within 1 second of its
// commit), with room for a loaded machine.
const eventWait = 3 * time.Second

// next returns the watcher's next event, failing the test when none
// comes in time.
func next(t *testing.T, w *store.Watcher, what string) *store.AuditEntry {
	t.Helper()
	select {
	case e, ok := <-w.C:
		if !ok {
			require.FailNow(t, "the watch ended", "%s: %v", what, w.Err())
		}
		return e
	case <-time.After(eventWait):
		require.FailNow(t, "no event", "%s: nothing within %s", what, eventWait)
	}
	return nil
}

// assertQuiet checks that no event comes for a while.
func assertQuiet(t *testing.T, w *store.Watcher, what string) {
	t.Helper()
	select {
	case e, ok := <-w.C:
		if ok {
			assert.Fail(t, "unexpected event", "%s: revision %d %s", what, e.Revision, e.Action)
		} else {
			assert.Fail(t, "the watch ended", "%s: %v", what, w.Err())
		}
	case <-time.After(200 * time.Millisecond):
	}
}

// RunEvents runs the conformance suite of store.EventSource, through
// store.WatchProject. newStores must return two handles on one fresh,
// empty storage, as for RunSessions: the same store twice for a store held
// in process, two stores on one database for PostgreSQL, so that a
// change made through one is heard through the other (two instances).
func RunEvents(t *testing.T, newStores func(t *testing.T) (EventStore, EventStore)) {
	setup := func(t *testing.T) (EventStore, EventStore) {
		a, b := newStores(t)
		_, err := a.CreateProject(t.Context(), auditPath(0))
		require.NoError(t, err, "CreateProject")
		mustCollection(t, a, auditPath(1))
		mustCluster(t, a, auditPath(2))
		return a, b
	}
	write := func(t *testing.T, s EventStore, name string) {
		t.Helper()
		mustRecord(t, s, setLevel(auditPath(3), 3, name), store.Integer, "1")
	}

	t.Run("ReplayThenLive", func(t *testing.T) {
		a, b := setup(t)
		write(t, a, "r1")
		require.NoError(t, a.RecordReveal(t.Context(), auditPath(0), nil), "a reveal: a revision, not an event")
		write(t, a, "r2")
		w, err := store.WatchProject(t.Context(), b, b, auditPath(0), 0, 0)
		require.NoError(t, err, "WatchProject from 0")
		defer w.Close()
		var got []string
		for range 5 {
			e := next(t, w, "replay")
			got = append(got, fmt.Sprintf("%d %s %s", e.Revision, e.Action, e.Record))
		}
		assert.Equal(t, []string{"1 project.create ", "2 collection.create ", "3 cluster.create ",
			"4 record.create r1", "6 record.create r2"}, got, "the log replayed in order, without the reveal")
		write(t, a, "r3")
		e := next(t, w, "live")
		assert.Equal(t, int64(7), e.Revision, "then the next change, live")
		assert.Equal(t, "r3", e.Record)
		assert.Equal(t, owner, e.Actor, "with who made it")
		assert.Equal(t, "req-1", e.RequestID, "and in which request")
		assertQuiet(t, w, "nothing more")
	})

	t.Run("FromTheNextChange", func(t *testing.T) {
		a, b := setup(t)
		w, err := store.WatchProject(t.Context(), b, b, auditPath(0), -1, 0)
		require.NoError(t, err, "WatchProject from now")
		defer w.Close()
		assertQuiet(t, w, "nothing before the next change")
		write(t, a, "r1")
		assert.Equal(t, int64(4), next(t, w, "the next change").Revision)
	})

	t.Run("BeyondTheNewest", func(t *testing.T) {
		a, b := setup(t)
		w, err := store.WatchProject(t.Context(), b, b, auditPath(0), 5, 0)
		require.NoError(t, err, "WatchProject from 5")
		defer w.Close()
		write(t, a, "r4")
		write(t, a, "r5")
		assertQuiet(t, w, "revisions 4 and 5 are not after 5")
		write(t, a, "r6")
		assert.Equal(t, int64(6), next(t, w, "revision 6").Revision, "waits for the revision after 5")
	})

	t.Run("Errors", func(t *testing.T) {
		_, b := newStores(t)
		_, err := store.WatchProject(t.Context(), b, b, auditPath(0), 0, 0)
		assertNotFound(t, err, "project", projName, "WatchProject of a missing project")
		_, err = b.Subscribe(t.Context(), store.NewID(), func(*store.AuditEntry) {})
		assert.ErrorIs(t, err, store.ErrNotFound, "Subscribe to an unknown project id")
		es, err := b.AuditEntriesAfter(t.Context(), store.NewID(), 0, 10)
		assert.NoError(t, err, "AuditEntriesAfter of an unknown project")
		assert.Empty(t, es, "has no entries")
		mustProject(t, b, owner, projName)
		stranger := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "mallory"}, Project: projName}
		_, err = store.WatchProject(t.Context(), b, b, stranger, 0, 0)
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "WatchProject of someone else's project")
	})

	t.Run("ConcurrentWriters", func(t *testing.T) {
		a, b := setup(t)
		w, err := store.WatchProject(t.Context(), b, b, auditPath(0), 3, 1000)
		require.NoError(t, err, "WatchProject")
		defer w.Close()
		const writers, each = 8, 5
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				for j := range each {
					p := setLevel(auditPath(3), 3, fmt.Sprintf("w%d-%d", i, j))
					_, err := a.CreateRecord(t.Context(), p, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
					assert.NoError(t, err, "writer %d", i)
				}
			})
		}
		wg.Wait()
		for rev := int64(4); rev < 4+writers*each; rev++ {
			e := next(t, w, fmt.Sprint("revision ", rev))
			require.Equal(t, rev, e.Revision, "every revision once, in order")
		}
		assertQuiet(t, w, "no duplicate")
	})

	t.Run("RenameGoesOn", func(t *testing.T) {
		a, b := setup(t)
		w, err := store.WatchProject(t.Context(), b, b, auditPath(0), -1, 0)
		require.NoError(t, err, "WatchProject")
		defer w.Close()
		_, err = a.RenameProject(t.Context(), auditPath(0), "renamed")
		require.NoError(t, err, "RenameProject")
		e := next(t, w, "the rename")
		assert.Equal(t, store.ActionProjectRename, e.Action)
		assert.Equal(t, "renamed", e.Project, "the entry names the project as renamed")
		p := store.Path{Need: store.RightRead, Caller: auditCaller, Project: "renamed", Collection: collName, Cluster: clusName, Record: "r"}
		mustRecord(t, a, p, store.Integer, "1")
		assert.Equal(t, "r", next(t, w, "after the rename").Record, "the watch follows the project by id")
	})

	t.Run("EndsWhenTheProjectIsDeleted", func(t *testing.T) {
		a, b := setup(t)
		w, err := store.WatchProject(t.Context(), b, b, auditPath(0), -1, 0)
		require.NoError(t, err, "WatchProject")
		require.NoError(t, a.DeleteProject(t.Context(), auditPath(0)), "DeleteProject")
		select {
		case _, ok := <-w.C:
			assert.False(t, ok, "no event, the end")
		case <-time.After(eventWait):
			require.FailNow(t, "the watch goes on after the project was deleted")
		}
		assertNotFound(t, w.Err(), "project", projName, "the watch's error")
	})

	// docs/api.md#audit-log-and-change-feed: a deletion ends the
	// stream with no further event, but every event committed before it
	// is delivered first, even when the deletion follows at once.
	t.Run("EventsBeforeTheDeletion", func(t *testing.T) {
		a, b := setup(t)
		w, err := store.WatchProject(t.Context(), b, b, auditPath(0), -1, 0)
		require.NoError(t, err, "WatchProject")
		const n = 20
		for i := range n {
			write(t, a, fmt.Sprint("r", i))
		}
		logged, _, err := a.FindAuditEntries(t.Context(), auditPath(0), store.AuditQuery{Limit: n})
		require.NoError(t, err)
		require.NoError(t, a.DeleteProject(t.Context(), auditPath(0)), "DeleteProject")
		var got []string
		var entries []*store.AuditEntry
		deadline := time.After(eventWait)
		for open := true; open; {
			select {
			case e, ok := <-w.C:
				if open = ok; ok {
					got = append(got, e.Record)
					entries = append(entries, e)
				}
			case <-deadline:
				require.FailNow(t, "the watch goes on after the project was deleted", "events: %v", got)
			}
		}
		want := make([]string, n)
		for i := range want {
			want[i] = fmt.Sprint("r", i)
		}
		assert.Equal(t, want, got, "every event before the deletion, in order, then the end")
		slices.Reverse(logged) // oldest first
		if assert.Len(t, entries, len(logged)) {
			for i, e := range entries {
				assert.Equal(t, *logged[i], *e, "event %d is the entry of the log", i)
			}
		}
		assertNotFound(t, w.Err(), "project", projName, "the watch's error")
	})

	t.Run("SlowReaderCatchesUp", func(t *testing.T) {
		// A burst of 20 events past a buffer of 2, read slowly: the watch
		// catches up from the log and goes on, every event in order, none
		// twice, and the live ones after it too
		// (docs/api.md#audit-log-and-change-feed).
		a, b := setup(t)
		w, err := store.WatchProject(t.Context(), b, b, auditPath(0), -1, 2)
		require.NoError(t, err, "WatchProject with a buffer of 2")
		defer w.Close()
		var want []string
		for i := range 20 {
			name := fmt.Sprint("r", i)
			write(t, a, name)
			want = append(want, name)
		}
		var got []string
		var last int64
		for range want {
			e := next(t, w, fmt.Sprintf("event %d of the burst", len(got)))
			time.Sleep(20 * time.Millisecond) // a slow reader
			if last != 0 {
				assert.Equal(t, last+1, e.Revision, "the revision after %d", last)
			}
			last = e.Revision
			got = append(got, e.Record)
		}
		assert.Equal(t, want, got, "every event of the burst, in order")
		write(t, a, "after")
		e := next(t, w, "the event after the burst")
		assert.Equal(t, "after", e.Record, "the watch goes on live")
		assert.Equal(t, last+1, e.Revision, "no gap after the burst")
		assertQuiet(t, w, "no duplicate")
	})

	t.Run("CloseEnds", func(t *testing.T) {
		_, b := setup(t)
		w, err := store.WatchProject(t.Context(), b, b, auditPath(0), -1, 0)
		require.NoError(t, err, "WatchProject")
		w.Close()
		_, ok := <-w.C
		assert.False(t, ok, "C is closed")
		assert.Error(t, w.Err(), "Close ends the watch")
	})
}

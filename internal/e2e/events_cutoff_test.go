package e2e_test

// Where a change feed stream stops when its caller loses access
// (docs/api.md#audit-log-and-change-feed, v1.2): never after the entry
// that took the access away.

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// untilEnd reads the events of s until it ends, each as "action target"
// (the record's name for record events), failing when it goes on.
func (s *sseStream) untilEnd(what string) []string {
	s.t.Helper()
	var got []string
	deadline := time.After(eventWait)
	for {
		select {
		case ev := <-s.events:
			got = append(got, eventLabel(ev))
		case <-s.done:
			for {
				select {
				case ev := <-s.events:
					got = append(got, eventLabel(ev))
				default:
					return got
				}
			}
		case <-deadline:
			require.FailNow(s.t, "the stream goes on", "%s; events so far: %v", what, got)
		}
	}
}

// eventLabel is "action target" of ev, the record's name for record
// events.
func eventLabel(ev sseEvent) string {
	if ev.data.Record != nil {
		return ev.event + " " + *ev.data.Record
	}
	return ev.event + " " + str(ev.data.Target)
}

// removeMember deletes the membership of username in project p.
func (c *client) removeMember(token, p, username string) {
	c.t.Helper()
	c.mustDo("DELETE", pathP(p)+"/members/"+username, "", token, http.StatusNoContent)
}

// TestEventsCutAtMemberDelete checks that the stream of a member removed
// from the project sends the member.delete naming it as its last event,
// and nothing of what follows, even when the next change is made at once;
// a removal of someone else does not end it, and a stream whose filters
// hide the member.delete ends there without it.
func TestEventsCutAtMemberDelete(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		c.addUser("frank", "frank-password")
		for _, u := range []string{"frank", "bob"} {
			c.mustDo("PUT", pathP("p")+"/members/"+u, `{"role":"viewer"}`, alice, http.StatusOK)
		}
		frank := c.token("frank")
		all := stream(t, base, pathP("p")+"/events", frank)
		narrowed := stream(t, base, pathP("p")+"/events?collection=c", frank)
		kpath := pathK("p", "c", "k")

		c.removeMember(alice, "p", "bob")
		c.addRecord(alice, kpath, "before", "INTEGER", "1")
		c.removeMember(alice, "p", "frank")
		c.addRecord(alice, kpath, "after", "INTEGER", "2")
		c.addRecord(alice, kpath, "later", "INTEGER", "3")

		assert.Equal(t, []string{"member.delete bob", "record.create before", "member.delete frank"},
			all.untilEnd("frank is removed"), "the member.delete naming frank is the last event")
		assert.Equal(t, []string{"record.create before"}, narrowed.untilEnd("frank is removed (narrowed stream)"),
			"a stream that may not see the member.delete ends there without it")
	})
}

// TestEventsCutAtTokenDelete checks that the stream of an API token sends
// the token.delete of that token as its last event; a revocation of
// another token does not end it, and a scoped token's stream, which does
// not see token entries, ends there without it.
func TestEventsCutAtTokenDelete(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		kpath := pathK("p", "c", "k")
		other := c.apiToken(alice, "p", `{"name":"other","role":"viewer"}`)
		own := c.apiToken(alice, "p", `{"name":"feed","role":"viewer"}`)
		scoped := c.apiToken(alice, "p", `{"name":"scoped","role":"viewer","collection":"c"}`)
		s := stream(t, base, pathP("p")+"/events", own.Token)
		ss := stream(t, base, pathP("p")+"/events", scoped.Token)

		c.mustDo("DELETE", pathP("p")+"/tokens/"+other.ID, "", alice, http.StatusNoContent)
		c.addRecord(alice, kpath, "before", "INTEGER", "1")
		c.mustDo("DELETE", pathP("p")+"/tokens/"+own.ID, "", alice, http.StatusNoContent)
		c.mustDo("DELETE", pathP("p")+"/tokens/"+scoped.ID, "", alice, http.StatusNoContent)
		c.addRecord(alice, kpath, "after", "INTEGER", "2")

		assert.Equal(t, []string{"token.delete " + other.ID, "record.create before", "token.delete " + own.ID},
			s.untilEnd("the stream's token is revoked"), "its own token.delete is the last event")
		assert.Equal(t, []string{"record.create before"}, ss.untilEnd("the scoped token is revoked"),
			"the scoped stream ends at its token's revocation, which it does not see")
	})
}

// TestEventsCutProjectDelete checks that a deleted project's streams end
// with no event after the deletion, not even those of a new project of
// the same name.
func TestEventsCutProjectDelete(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		c.mustDo("PUT", pathP("p")+"/members/bob", `{"role":"viewer"}`, alice, http.StatusOK)
		s := stream(t, base, pathP("p")+"/events", c.token("bob"))
		c.addRecord(alice, pathK("p", "c", "k"), "before", "INTEGER", "1")
		assert.Equal(t, "before", str(s.next("a change before the deletion").data.Record))
		c.mustDo("DELETE", pathP("p"), "", alice, http.StatusNoContent)
		// A new project of the same name, and a change in it, are not the
		// deleted project's.
		c.tree(alice, "p", "c", "k")
		c.mustDo("PUT", pathP("p")+"/members/bob", `{"role":"viewer"}`, alice, http.StatusOK)
		c.addRecord(alice, pathK("p", "c", "k"), "after", "INTEGER", "2")
		assert.Empty(t, s.untilEnd("the project is deleted"), "no event after the deletion")
	})
}

// quietFeed is a store whose change feed never delivers a live entry (as
// a slow or cut LISTEN connection would not), while its log reads work:
// a stream then learns of a lost access by its recheck alone.
type quietFeed struct {
	store.Store
	store.Access
	src store.EventSource
}

func (q quietFeed) AuditEntriesAfter(ctx context.Context, projectID string, after int64, limit int) ([]*store.AuditEntry, error) {
	return q.src.AuditEntriesAfter(ctx, projectID, after, limit)
}

func (q quietFeed) Subscribe(ctx context.Context, projectID string, _ func(*store.AuditEntry)) (func(), error) {
	return q.src.Subscribe(ctx, projectID, func(*store.AuditEntry) {})
}

// TestEventsCutOnRecheck checks the cut when the recheck finds the access
// gone before the entry reaches the stream: the stream still sends every
// event up to the entry that took the access away, that entry last, and
// nothing after it.
func TestEventsCutOnRecheck(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServerWrapped(t, kind, func(s store.Store) store.Store {
			return quietFeed{Store: s, Access: s.(store.Access), src: s.(store.EventSource)}
		})
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		c.addUser("frank", "frank-password")
		c.mustDo("PUT", pathP("p")+"/members/frank", `{"role":"viewer"}`, alice, http.StatusOK)
		own := c.apiToken(alice, "p", `{"name":"feed","role":"viewer"}`)
		member := stream(t, base, pathP("p")+"/events", c.token("frank"))
		token := stream(t, base, pathP("p")+"/events", own.Token)
		kpath := pathK("p", "c", "k")
		c.addRecord(alice, kpath, "before", "INTEGER", "1")
		c.removeMember(alice, "p", "frank")
		c.mustDo("DELETE", pathP("p")+"/tokens/"+own.ID, "", alice, http.StatusNoContent)
		c.addRecord(alice, kpath, "after", "INTEGER", "2")
		assert.Equal(t, []string{"record.create before", "member.delete frank"}, member.untilEnd("frank is removed"))
		assert.Equal(t, []string{"record.create before", "member.delete frank", "token.delete " + own.ID},
			token.untilEnd("the token is revoked"))
	})
}

// TestEventsCutTwoInstances checks the cut on a stream of one instance
// when the member is removed through another instance on the same
// PostgreSQL database.
func TestEventsCutTwoInstances(t *testing.T) {
	url := pgtest.NewURL(t)
	open := func() *postgres.Store {
		db, err := sqlx.Open("postgres", url)
		require.NoError(t, err)
		db.SetMaxOpenConns(4)
		s := postgres.New(db, postgres.WithListenURL(url))
		t.Cleanup(func() { s.Close() })
		return s
	}
	pg1, pg2 := open(), open()
	one := startServer(t, storeKind{name: "pg1", new: func(testing.TB) (store.Projects, store.Accounts) { return pg1, pg1 }}, serverSetup{})
	two := &client{t: t, store: pg2, users: pg2, ids: one.ids, tokens: one.tokens}
	two.h = hds.New(baseOptions(pg2, pg2, serverSetup{})...)
	two.api = contractOf(t, two.h, "")
	alice := one.token("alice")
	one.tree(alice, "p", "c", "k")
	one.mustDo("PUT", pathP("p")+"/members/bob", `{"role":"viewer"}`, alice, http.StatusOK)
	own := one.apiToken(alice, "p", `{"name":"feed","role":"viewer"}`)
	base := two.serve()
	member := stream(t, base, pathP("p")+"/events", one.token("bob"))
	token := stream(t, base, pathP("p")+"/events", own.Token)
	kpath := pathK("p", "c", "k")
	one.removeMember(alice, "p", "bob")
	one.mustDo("DELETE", pathP("p")+"/tokens/"+own.ID, "", alice, http.StatusNoContent)
	one.addRecord(alice, kpath, "after", "INTEGER", "1")
	assert.Equal(t, []string{"member.delete bob"}, member.untilEnd("bob is removed on the other instance"))
	assert.Equal(t, []string{"member.delete bob", "token.delete " + own.ID}, token.untilEnd("the token is revoked on the other instance"))
}

// TestEventsBeforeDeletionTwoInstances: changes made through one instance
// just before it deletes the project all reach a stream open on another
// instance sharing the PostgreSQL database, in order, and then the stream
// ends (docs/api.md#audit-log-and-change-feed): the deletion, which
// takes the project's audit log with it, loses none of them.
func TestEventsBeforeDeletionTwoInstances(t *testing.T) {
	url := pgtest.NewURL(t)
	open := func() *postgres.Store {
		db, err := sqlx.Open("postgres", url)
		require.NoError(t, err)
		db.SetMaxOpenConns(4)
		s := postgres.New(db, postgres.WithListenURL(url))
		t.Cleanup(func() { s.Close() })
		return s
	}
	pg1, pg2 := open(), open()
	one := startServer(t, storeKind{name: "pg1", new: func(testing.TB) (store.Projects, store.Accounts) { return pg1, pg1 }}, serverSetup{})
	two := &client{t: t, store: pg2, users: pg2, ids: one.ids, tokens: one.tokens}
	two.h = hds.New(baseOptions(pg2, pg2, serverSetup{})...)
	two.api = contractOf(t, two.h, "")
	alice := one.token("alice")
	for round := range 5 {
		one.tree(alice, "p", "c", "k")
		s := stream(t, two.serve(), pathP("p")+"/events", alice)
		var want []string
		for i := range 10 {
			name := fmt.Sprint("r", i)
			one.addRecord(alice, pathK("p", "c", "k"), name, "INTEGER", "1")
			want = append(want, "record.create "+name)
		}
		one.mustDo("DELETE", pathP("p"), "", alice, http.StatusNoContent)
		assert.Equal(t, want, s.untilEnd("the project is deleted"), "round %d: every event before the deletion, then the end", round)
	}
}

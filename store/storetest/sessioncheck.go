package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// SessionCheckStore is what RunSessionChecks tests: a store that makes
// the deferred session check (store.SessionChecker) of the users and
// sessions it keeps itself.
type SessionCheckStore interface {
	store.SessionChecker
	store.UserDirectory
	store.Sessions
}

// RunSessionChecks runs the conformance suite of store.SessionChecker:
// a Caller whose Session is due is checked before anything else of the
// call, a session that is not live (an unknown, disabled or deleted user,
// an ended session, a generation a password change left behind) is
// store.ErrSessionInvalid whatever else is wrong with the path and
// changes nothing, and a live one passes with the user's name, once per
// request. newStore returns a fresh, empty store; it is called once per
// subtest.
func RunSessionChecks(t *testing.T, newStore func(t *testing.T) SessionCheckStore) {
	// setup gives the store alice's project p (c/k/r) and bob's project
	// q, and returns a path to p's record r on behalf of alice with a
	// deferred check of her session "sid".
	setup := func(t *testing.T) (SessionCheckStore, *store.User, store.Path) {
		s := newStore(t)
		require.True(t, s.ChecksSessions(s), "ChecksSessions of its own sessions")
		alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
		mustProject(t, s, bob.ID, "q")
		mustProject(t, s, alice.ID, "p")
		p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: alice.ID}, Project: "p", Collection: "c", Cluster: "k", Record: "r"}
		mustCollection(t, s, p)
		mustCluster(t, s, p)
		mustRecord(t, s, p, store.Integer, "7")
		p.Caller.Session = &store.SessionCheck{UserID: alice.ID, SessionID: "sid"}
		return s, alice, p
	}
	// with returns p with a fresh check like p's, changed by f.
	with := func(p store.Path, f func(p *store.Path)) store.Path {
		c := p.Caller.Session // a new check: its state starts due
		p.Caller.Session = &store.SessionCheck{UserID: c.UserID, SessionID: c.SessionID, Generation: c.Generation}
		f(&p)
		return p
	}
	// calls are the reads the check is made in, each returning its error.
	calls := map[string]func(s store.Store, p store.Path) error{
		"FindRecord": func(s store.Store, p store.Path) error {
			_, err := s.FindRecord(t.Context(), p)
			return err
		},
		"FindRecords": func(s store.Store, p store.Path) error {
			_, _, err := s.FindRecords(t.Context(), p, store.RecordQuery{ListQuery: store.ListQuery{Limit: 10}})
			return err
		},
		"StreamRecords": func(s store.Store, p store.Path) error {
			_, _, err := store.StreamRecords(t.Context(), s, p, store.RecordQuery{ListQuery: store.ListQuery{Limit: 10}})
			return err
		},
	}

	t.Run("Live", func(t *testing.T) {
		s, _, p := setup(t)
		for name, call := range calls {
			p := with(p, func(*store.Path) {})
			require.NoError(t, call(s, p), "%s with a live session", name)
			assert.True(t, p.Caller.Session.Passed(), "%s: the check passed", name)
			assert.Equal(t, "alice", p.Caller.Session.Username(), "%s: the user's name comes with it", name)
			assert.Equal(t, "alice", p.Caller.ActorName(), "%s: the caller's name for audit entries", name)
			require.NoError(t, call(s, p), "%s again, in the same request", name)
			for _, other := range []struct {
				what string
				f    func(p *store.Path)
				want error
			}{
				{"a missing record", func(p *store.Path) { p.Record = "nope" }, store.ErrNotFound},
				{"an unknown project", func(p *store.Path) { p.Project = "nope" }, store.ErrNotFound},
				{"a project without access", func(p *store.Path) { p.Project = "q" }, store.ErrPermissionDenied},
			} {
				if name != "FindRecord" && other.what == "a missing record" {
					continue
				}
				q := with(p, other.f)
				assert.ErrorIs(t, call(s, q), other.want, "%s of %s with a live session", name, other.what)
				assert.True(t, q.Caller.Session.Passed(), "%s of %s: the check passed first", name, other.what)
			}
		}
	})

	t.Run("NotLive", func(t *testing.T) {
		ends := []struct {
			name string
			// end ends alice's session and returns the path that asks for
			// it.
			end func(t *testing.T, s SessionCheckStore, alice *store.User, p store.Path) store.Path
		}{
			{"unknown user", func(_ *testing.T, _ SessionCheckStore, _ *store.User, p store.Path) store.Path {
				return with(p, func(p *store.Path) { p.Caller.UserID = store.NewID(); p.Caller.Session.UserID = p.Caller.UserID })
			}},
			{"ended session", func(t *testing.T, s SessionCheckStore, alice *store.User, p store.Path) store.Path {
				require.NoError(t, s.EndSession(t.Context(), alice.ID, "sid", time.Now().Add(time.Hour)))
				return p
			}},
			{"old generation", func(t *testing.T, s SessionCheckStore, alice *store.User, p store.Path) store.Path {
				_, err := s.SetPassword(t.Context(), alice.ID, []byte("new hash"))
				require.NoError(t, err)
				return p
			}},
			{"disabled user", func(t *testing.T, s SessionCheckStore, _ *store.User, p store.Path) store.Path {
				require.NoError(t, s.SetUserActive(t.Context(), "alice", false))
				return p
			}},
			{"deleted user", func(t *testing.T, s SessionCheckStore, _ *store.User, p store.Path) store.Path {
				// A user who owns projects cannot be deleted: bob takes p
				// over first (alice stays an admin member until her delete).
				acc, ok := s.(store.Access)
				require.True(t, ok, "the store keeps members (store.Access)")
				_, err := acc.TransferProject(t.Context(), store.Path{Project: p.Project, Need: store.RightOwn}, "bob")
				require.NoError(t, err, "transfer p to bob")
				require.NoError(t, s.DeleteUser(t.Context(), "alice"))
				return p
			}},
		}
		for _, e := range ends {
			t.Run(e.name, func(t *testing.T) {
				s, alice, p := setup(t)
				p = e.end(t, s, alice, p)
				for name, call := range calls {
					for _, other := range []struct {
						what string
						f    func(p *store.Path)
					}{
						{"the record", func(*store.Path) {}},
						{"a missing record", func(p *store.Path) { p.Record = "nope" }},
						{"a missing cluster", func(p *store.Path) { p.Cluster = "nope" }},
						{"an unknown project", func(p *store.Path) { p.Project = "nope" }},
						{"a project without access", func(p *store.Path) { p.Project = "q" }},
					} {
						q := with(p, other.f)
						err := call(s, q)
						assert.ErrorIs(t, err, store.ErrSessionInvalid, "%s of %s: %v", name, other.what, err)
						assert.True(t, q.Caller.Session.Failed(), "%s of %s: the check failed", name, other.what)
						assert.Empty(t, q.Caller.Session.Username(), "%s of %s: no user's name", name, other.what)
						assert.ErrorIs(t, call(s, q), store.ErrSessionInvalid, "%s of %s again, in the same request", name, other.what)
					}
				}
				// A write with the check due, or failed, changes nothing.
				failed := with(p, func(p *store.Path) { _ = p.Caller.Session.Fail() })
				for _, q := range []store.Path{with(p, func(*store.Path) {}), failed} {
					q.Record = "new"
					_, err := s.CreateRecord(t.Context(), q, &store.Record{Type: store.Null, Value: mustValue(t, store.Null, "null")}, store.Write{})
					assert.ErrorIs(t, err, store.ErrSessionInvalid, "CreateRecord")
				}
				owner := store.Path{Project: "p", Collection: "c", Cluster: "k", Record: "new"} // the zero Caller: a tool
				_, err := s.FindRecord(t.Context(), owner)
				assert.True(t, errors.Is(err, store.ErrNotFound), "no record was created: %v", err)
			})
		}
	})

	t.Run("Generation", func(t *testing.T) {
		s, alice, p := setup(t)
		_, err := s.SetPassword(t.Context(), alice.ID, []byte("new hash"))
		require.NoError(t, err)
		q := with(p, func(p *store.Path) { p.Caller.Session.Generation = 1 })
		require.NoError(t, calls["FindRecord"](s, q), "a session begun in the current generation")
		assert.True(t, q.Caller.Session.Passed())
	})
}

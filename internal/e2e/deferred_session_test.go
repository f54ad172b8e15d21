package e2e_test

// The read routes GET R and GET K/records leave the session check to the
// statement that resolves the path when the store can make it
// (store.SessionChecker: the PostgreSQL or SQLite store serving as its
// own user directory). These tests hold them to what authentication answered
// before (docs/api.md#authentication and
// docs/api.md#sharing-and-api-tokens), on every store, and count the
// round trips the PostgreSQL store makes for them.

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
)

// readTargets are the deferred reads a user's token is tried on, with
// what each answers while its session is live: the record and the list of
// project p (shared with the user as viewer), the same in project q
// (alice's, not shared: 403), in an unknown project (404), and a request
// with a bad query (400).
func readTargets() []struct {
	what, target string
	live         int
} {
	return []struct {
		what, target string
		live         int
	}{
		{"record", pathR("p", "c", "k", "r"), http.StatusOK},
		{"list", pathK("p", "c", "k") + "/records", http.StatusOK},
		{"missing record", pathR("p", "c", "k", "nope"), http.StatusNotFound},
		{"record of a project without access", pathR("q", "c", "k", "r"), http.StatusForbidden},
		{"list of a project without access", pathK("q", "c", "k") + "/records", http.StatusForbidden},
		{"record of an unknown project", pathR("nope", "c", "k", "r"), http.StatusNotFound},
		{"list of an unknown project", pathK("nope", "c", "k") + "/records", http.StatusNotFound},
		{"record with a bad query", pathR("p", "c", "k", "r") + "?reveal=maybe", http.StatusBadRequest},
		{"list with a bad query", pathK("p", "c", "k") + "/records?limit=0", http.StatusBadRequest},
	}
}

// readFixture gives c alice's projects p and q (each with c/k/r) and
// shares p with username as viewer.
func readFixture(c *client, username string) {
	c.t.Helper()
	alice := c.token("alice")
	for _, p := range []string{"p", "q"} {
		c.tree(alice, p, "c", "k")
		c.addRecord(alice, pathK(p, "c", "k"), "r", "INTEGER", "7")
	}
	c.share(alice, "p", username, "viewer")
}

// TestReadRoutesRefuseEndedSessions: a token whose session ended (a
// logout, a password change since it was issued), or whose user was
// disabled or deleted, is refused on GET R and GET K/records with 401
// "Invalid or expired token", whatever else is wrong with the request: a
// missing path, no access, a bad query.
func TestReadRoutesRefuseEndedSessions(t *testing.T) {
	ends := []struct {
		name string
		end  func(c *client, username, token string)
	}{
		{"logout", func(c *client, _, token string) {
			c.mustDo("POST", "/api/v1/auth/logout", "", token, http.StatusNoContent)
		}},
		{"password change", func(c *client, username, token string) {
			c.mustDo("POST", "/api/v1/auth/password", passwordBody(username+"-password", "a-new-password"), token, http.StatusOK)
		}},
		{"disabled user", func(c *client, username, _ string) {
			require.NoError(c.t, c.users.SetUserActive(c.t.Context(), username, false))
		}},
		{"deleted user", func(c *client, username, _ string) {
			require.NoError(c.t, c.users.DeleteUser(c.t.Context(), username))
		}},
	}
	forEachKind(t, func(t *testing.T, kind storeKind) {
		for _, e := range ends {
			t.Run(e.name, func(t *testing.T) {
				c := newServer(t, kind)
				c.addUser("carol", "carol-password")
				readFixture(c, "carol")
				token := c.login("carol", "carol-password")
				for _, tg := range readTargets() {
					status, _, env := c.do("GET", tg.target, "", token)
					require.Equal(t, tg.live, status, "%s while the session is live: %s", tg.what, env.raw)
				}
				e.end(c, "carol", token)
				for _, tg := range readTargets() {
					status, _, env := c.do("GET", tg.target, "", token)
					wantError(t, tg.what+" after "+e.name, status, env,
						http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
				}
				status, h, env := c.sendWith("GET", pathR("p", "c", "k", "r"), "", token, "If-None-Match", "*")
				wantError(t, "a conditional GET after "+e.name, status, env,
					http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
				assert.Empty(t, h.Get("ETag"), "a refused request tells nothing of the record")
			})
		}
	})
}

// TestReadRoutesRefusalCountsAgainstIP: a request refused for an ended
// session is counted against the client IP, not against its user, and
// is refused with 401 even when the user's rate limit is used up (not
// 429), as authentication refused it before.
func TestReadRoutesRefusalCountsAgainstIP(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithRateLimit(1000, 5))
		alice := c.loginAt(ipA, "alice", "alice-password")
		c.tree(alice, "p", "c", "k") // 3 requests of alice
		ended := c.loginAt(ipA, "alice", "alice-password")
		c.mustDo("POST", "/api/v1/auth/logout", "", ended, http.StatusNoContent) // the 4th

		for i, target := range []string{pathR("p", "c", "k", "r"), pathK("p", "c", "k") + "/records"} {
			res := c.call(req{method: "GET", target: target, token: ended, remote: ipB})
			wantError(t, target+" with an ended session", res.status, res.env,
				http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
			assert.Equal(t, strconv.Itoa(4-i), res.header.Get("X-RateLimit-Remaining"),
				"%s: the refusal is counted against the client IP (5 a minute), with its headers", target)
		}
		res := c.call(req{method: "GET", target: pathK("p", "c", "k") + "/records", token: alice, remote: ipA})
		require.Equal(t, http.StatusOK, res.status, "alice's 5th request: %s", res.env.raw)
		assert.Equal(t, "0", res.header.Get("X-RateLimit-Remaining"), "the refusals were not counted against alice")
		res = c.call(req{method: "GET", target: pathR("p", "c", "k", "r"), token: alice, remote: ipA})
		assert.Equal(t, http.StatusTooManyRequests, res.status, "alice's 6th request: %s", res.env.raw)

		res = c.call(req{method: "GET", target: pathR("p", "c", "k", "r"), token: ended, remote: ipB})
		wantError(t, "an ended session of a user past the limit", res.status, res.env,
			http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
		assert.Equal(t, "2", res.header.Get("X-RateLimit-Remaining"), "counted against the client IP")
		assert.Empty(t, res.header.Get("Retry-After"), "the user's 429 does not show through")
	})
}

// TestReadRoutesSessionEndsOnEveryInstance: a logout or a password change
// on one instance is refused at once on GET R and GET K/records of
// another sharing the database.
func TestReadRoutesSessionEndsOnEveryInstance(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		a, b := twoInstances(t, kind)
		alice := a.token("alice")
		a.tree(alice, "p", "c", "k")
		a.addRecord(alice, pathK("p", "c", "k"), "r", "STRING", `"x"`)
		targets := []string{pathR("p", "c", "k", "r"), pathK("p", "c", "k") + "/records"}

		loggedOut := a.login("alice", "alice-password")
		for _, target := range targets {
			b.mustDo("GET", target, "", loggedOut, http.StatusOK)
		}
		a.mustDo("POST", "/api/v1/auth/logout", "", loggedOut, http.StatusNoContent)
		for _, target := range targets {
			status, _, env := b.do("GET", target, "", loggedOut)
			wantError(t, "GET "+target+" on the other instance after a logout", status, env,
				http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
			b.mustDo("GET", target, "", alice, http.StatusOK) // another session goes on
		}

		fresh := b.mustDo("POST", "/api/v1/auth/password", passwordBody("alice-password", "alice-new-password"), alice, http.StatusOK)
		var out struct {
			Token string `json:"token"`
		}
		fresh.decode(t, &out)
		for _, target := range targets {
			status, _, env := a.do("GET", target, "", alice)
			wantError(t, "GET "+target+" on the other instance after a password change", status, env,
				http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid or expired token")
			a.mustDo("GET", target, "", out.Token, http.StatusOK)
		}
	})
}

// proxiedPostgres returns newServer on a fresh PostgreSQL store reached
// through a proxy that counts round trips, over one connection (every
// statement is prepared on it by a warm-up request).
func proxiedPostgres(t *testing.T) (*pgtest.Proxy, *client) {
	t.Helper()
	proxy, url := pgtest.NewProxy(t, pgtest.NewURL(t))
	db, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	pg := postgres.New(db)
	return proxy, newServer(t, storeKind{name: "postgres", new: func(testing.TB) (store.Projects, store.Accounts) { return pg, pg }})
}

// recordID is the id of record name in p/c/k.
func (c *client) recordID(token, p, name string) string {
	c.t.Helper()
	var r recordJSON
	c.mustDo("GET", pathR(p, "c", "k", name), "", token, http.StatusOK).decode(c.t, &r)
	return r.ID
}

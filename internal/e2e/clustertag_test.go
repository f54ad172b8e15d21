package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
)

// The cluster tags of docs/api.md#cluster-tags: GET K and GET
// K?format=env carry an ETag naming the cluster's stored state, and
// honour If-None-Match.

// clusterTag returns the tag of cluster k (with query q, "" or "&..."),
// checking that the JSON and the env form, masked and revealed, all give
// that one strong tag.
func (c *client) clusterTag(t *testing.T, what, k, q, token string) string {
	t.Helper()
	var tag string
	for i, form := range []string{"?x=1", "?reveal=true", "?format=env", "?format=env&reveal=true"} {
		res := c.raw(request("GET", k+form+q, "", token))
		res.Body.Close()
		status, h := res.StatusCode, res.Header
		require.Equal(t, http.StatusOK, status, "%s: GET K%s%s", what, form, q)
		got := etagOf(t, what+": GET K"+form+q, h)
		if i == 0 {
			tag = got
		}
		assert.Equal(t, tag, got, "%s: GET K%s%s has the tag of the JSON form", what, form, q)
	}
	return tag
}

func TestClusterTag(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		// Sealed under first, which key rotation replaces by testKey.
		first := credKey(t)
		c := newServer(t, kind, hds.WithCredentialKey(first, testKey), hds.WithMaxVersions(10))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.mustDo("POST", pathK("web", "prod", "other"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathC("web", "stage"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("web", "stage", "k"), "", alice, http.StatusCreated)
		c.tree(alice, "api", "prod", "k")
		K := pathK("web", "prod", "k")
		R := pathR("web", "prod", "k", "port")
		c.addRecord(alice, K, "port", "INTEGER", "1")
		c.addRecord(alice, K, "pw", "CREDENTIAL", `"s3cret"`)

		cur := c.clusterTag(t, "start", K, "", alice)
		seen := map[string]string{cur: "start"}
		for _, other := range []string{pathK("web", "prod", "other"), pathK("web", "stage", "k"), pathK("api", "prod", "k")} {
			tag := c.clusterTag(t, "another cluster", other, "", alice)
			assert.NotEqual(t, cur, tag, "%s has the tag of %s", other, K)
			seen[tag] = other
		}
		changes := func(what string, do func()) {
			t.Helper()
			do()
			got := c.clusterTag(t, what, K, "", alice)
			if prev, dup := seen[got]; dup {
				t.Errorf("%s: the tag %s is the one of %s", what, got, prev)
			}
			seen[got] = what
			cur = got
		}
		keeps := func(what string, do func()) {
			t.Helper()
			do()
			assert.Equal(t, cur, c.clusterTag(t, what, K, "", alice), "%s changed the cluster's tag", what)
		}

		changes("POST R", func() {
			c.mustDo("POST", pathR("web", "prod", "k", "host")+"?type=STRING&value=db", "", alice, http.StatusCreated)
		})
		changes("PUT R to the same value", func() { c.mustDo("PUT", R+"?value=1", "", alice, http.StatusOK) })
		changes("PUT R to another value", func() { c.mustDo("PUT", R+"?value=2", "", alice, http.StatusOK) })
		changes("PUT R rename", func() { c.mustDo("PUT", R+"?rename=port2", "", alice, http.StatusOK) })
		R = pathR("web", "prod", "k", "port2")
		changes("restore", func() { c.mustDo("POST", R+"/restore?version=1", "", alice, http.StatusOK) })
		changes("DELETE R", func() { c.mustDo("DELETE", pathR("web", "prod", "k", "host"), "", alice, http.StatusNoContent) })
		changes("a batch", func() {
			c.mustDo("POST", pathP("web")+"/batch", batchBody(
				`{"op":"create","collection":"prod","cluster":"k","record":"b","type":"STRING","value":"x"}`), alice, http.StatusOK)
		})
		changes("an import", func() {
			c.importDoc(t, "web", "", `{"format":"hds/1","collections":{"prod":{"clusters":{"k":{"records":{
				"b":{"type":"STRING","value":"y"}}}}}}}`, alice)
		})

		keeps("reads and reveals", func() {
			c.mustDo("GET", R+"?reveal=true", "", alice, http.StatusOK)
			c.mustDo("GET", K+"/records?reveal=true", "", alice, http.StatusOK)
			res := c.raw(request("GET", pathP("web")+"/export?reveal=true", "", alice))
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode, "export")
		})
		keeps("a write refused by If-Match", func() {
			status, _, _ := c.sendWith("PUT", R+"?value=9", "", alice, "If-Match", `"nope"`)
			require.Equal(t, http.StatusPreconditionFailed, status)
		})
		keeps("a dry-run import", func() {
			c.importDoc(t, "web", "?dry_run=true", `{"format":"hds/1","collections":{"prod":{"clusters":{"k":{"records":{
				"b":{"type":"STRING","value":"z"}}}}}}}`, alice)
		})
		keeps("an import that finds nothing to change", func() {
			c.importDoc(t, "web", "", `{"format":"hds/1","collections":{"prod":{"clusters":{"k":{"records":{
				"b":{"type":"STRING","value":"y"}}}}}}}`, alice)
		})
		keeps("renames to the same name", func() {
			c.mustDo("PUT", K+"?rename=k", "", alice, http.StatusOK)
			c.mustDo("PUT", pathC("web", "prod")+"?rename=prod", "", alice, http.StatusOK)
			c.mustDo("PUT", pathP("web")+"?rename=web", "", alice, http.StatusOK)
		})
		keeps("changes elsewhere", func() {
			c.addRecord(alice, pathK("web", "prod", "other"), "x", "INTEGER", "1")
			c.addRecord(alice, pathK("web", "stage", "k"), "port", "INTEGER", "1")
			c.addRecord(alice, pathK("api", "prod", "k"), "port", "INTEGER", "1")
			c.mustDo("PUT", pathK("web", "prod", "other")+"?rename=other2", "", alice, http.StatusOK)
			c.mustDo("PUT", pathC("web", "stage")+"?rename=stage2", "", alice, http.StatusOK)
			c.mustDo("PUT", pathP("api")+"?rename=api2", "", alice, http.StatusOK)
		})
		keeps("key rotation", func() {
			st, ok := c.store.(store.Store)
			require.True(t, ok, "the store is a store.Store")
			p, err := hds.RotateCredentials(t.Context(), st, hds.Rotation{Primary: testKey, Previous: [][]byte{first}})
			require.NoError(t, err, "RotateCredentials")
			require.Positive(t, p.Resealed, "RotateCredentials re-sealed the credential")
		})

		rename := func(target, name string, k string) func() {
			return func() {
				c.mustDo("PUT", target+"?rename="+name, "", alice, http.StatusOK)
				K = k
			}
		}
		changes("renaming the cluster", rename(K, "k2", pathK("web", "prod", "k2")))
		changes("renaming the cluster back", rename(K, "k", pathK("web", "prod", "k")))
		changes("renaming the collection", rename(pathC("web", "prod"), "live", pathK("web", "live", "k")))
		changes("renaming the project", rename(pathP("web"), "site", pathK("site", "live", "k")))
		changes("renaming the project back", rename(pathP("site"), "web", pathK("web", "live", "k")))
		changes("DELETE R of the last change", func() { c.mustDo("DELETE", pathR("web", "live", "k", "b"), "", alice, http.StatusNoContent) })

		// Lists carry no tag.
		_, h, _ := c.do("GET", K+"/records", "", alice)
		assert.Empty(t, h.Get("ETag"), "GET K/records carries no ETag")
	})
}

// getRaw sends GET target with If-None-Match inm and returns the status,
// the headers and the body.
func (c *client) getRaw(t *testing.T, target, token, inm string) (int, http.Header, []byte) {
	t.Helper()
	r := request("GET", target, "", token)
	r.Header.Set("If-None-Match", inm)
	res := c.raw(r)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, body
}

func TestClusterTagIfNoneMatch(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		c.addRecord(alice, K, "port", "INTEGER", "1")
		c.addRecord(alice, K, "pw", "CREDENTIAL", `"s3cret"`)
		tag := c.clusterTag(t, "start", K, "", alice)
		forms := []string{"", "?format=env", "?reveal=true", "?format=env&reveal=true"}
		reveals := c.auditLog("web", "?action=credential.reveal").Total
		for _, form := range forms {
			for _, inm := range []string{tag, "*", "W/" + tag, `"x", ` + tag, `W/"x",` + tag} {
				status, h, body := c.getRaw(t, K+form, alice, inm)
				assert.Equal(t, http.StatusNotModified, status, "GET K%s, If-None-Match %s: status", form, inm)
				assert.Empty(t, body, "GET K%s, If-None-Match %s: no body", form, inm)
				assert.Equal(t, tag, h.Get("ETag"), "GET K%s, If-None-Match %s: ETag", form, inm)
				assert.Empty(t, h.Get("X-Hds-Skipped-Records"), "GET K%s, If-None-Match %s: no skipped-records header", form, inm)
			}
		}
		assert.Equal(t, reveals, c.auditLog("web", "?action=credential.reveal").Total, "a 304 reveals nothing, and writes no reveal entry")
		for _, form := range forms {
			r := request("GET", K+form, "", alice)
			r.Header.Add("If-None-Match", `"x", , W/"y"`)
			r.Header.Add("If-None-Match", tag)
			res := c.raw(r)
			res.Body.Close()
			assert.Equal(t, http.StatusNotModified, res.StatusCode, "GET K%s, the tag on a second If-None-Match line: status", form)
			assert.Equal(t, tag, res.Header.Get("ETag"), "GET K%s, the tag on a second If-None-Match line: ETag", form)
		}
		for _, form := range forms {
			status, h, body := c.getRaw(t, K+form, alice, `"other", W/"nope"`)
			assert.Equal(t, http.StatusOK, status, "GET K%s with tags that do not match: status", form)
			assert.NotEmpty(t, body, "GET K%s with tags that do not match: a body", form)
			assert.Equal(t, tag, h.Get("ETag"), "GET K%s with tags that do not match: ETag", form)
		}

		c.mustDo("PUT", pathR("web", "prod", "k", "port")+"?value=2", "", alice, http.StatusOK)
		for _, form := range []string{"", "?format=env"} {
			status, h, body := c.getRaw(t, K+form, alice, tag)
			assert.Equal(t, http.StatusOK, status, "GET K%s with the tag of an earlier state: status", form)
			assert.NotEmpty(t, body, "GET K%s with the tag of an earlier state: the new state", form)
			assert.NotEqual(t, tag, h.Get("ETag"), "GET K%s with the tag of an earlier state: a new tag", form)

			status, _, env := c.sendWith("GET", K+form, "", alice, "If-None-Match", "nope")
			wantError(t, "GET K"+form+" with a malformed If-None-Match", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			status, _, env = c.sendWith("GET", pathK("web", "prod", "missing")+form, "", alice, "If-None-Match", "*")
			wantError(t, "GET K"+form+" of a missing cluster with If-None-Match *", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		}
		status, _, env := c.sendWith("GET", K+"?format=yaml", "", alice, "If-None-Match", "*")
		wantError(t, "a bad format comes before If-None-Match", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
	})
}

func TestClusterTagResolve(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, app := refsFixture(t, kind)
		tok := c.token("alice")
		db, stage := pathK("web", "prod", "db"), pathK("web", "stage", "db")
		// A record the env form skips, with a reference into db.
		c.addRecord(tok, app, "api-url", "STRING", `"http://${db/host}:${db/port}/"`)

		plain := c.clusterTag(t, "plain", app, "", tok)
		cur := c.clusterTag(t, "resolved", app, "&resolve=true", tok)
		assert.NotEqual(t, plain, cur, "the resolved answer holds references: its tag covers them")
		status, h, body := c.getRaw(t, app+"?format=env&resolve=true", tok, cur)
		assert.Equal(t, http.StatusNotModified, status, "GET K?format=env&resolve=true with its tag: status")
		assert.Empty(t, body, "304: no body")
		assert.Equal(t, cur, h.Get("ETag"), "304: the ETag")

		changes := func(what string, do func()) {
			t.Helper()
			do()
			got := c.clusterTag(t, what, app, "&resolve=true", tok)
			assert.NotEqual(t, cur, got, "%s changed the resolved tag", what)
			assert.Equal(t, plain, c.clusterTag(t, what, app, "", tok), "%s (outside the cluster) kept its plain tag", what)
			cur = got
		}
		changes("an update of a referenced record of another cluster", func() {
			c.mustDo("PUT", pathR("web", "prod", "db", "host")+"?value=db2.internal", "", tok, http.StatusOK)
		})
		changes("an update of a referenced record of another collection", func() {
			c.mustDo("PUT", pathR("web", "stage", "db", "host")+"?value=stage2", "", tok, http.StatusOK)
		})
		changes("an update of a referenced credential", func() {
			c.mustDo("PUT", pathR("web", "prod", "db", "password")+"?value=other", "", tok, http.StatusOK)
		})
		changes("an update of a record only a skipped record refers to", func() {
			c.mustDo("PUT", pathR("web", "prod", "db", "port")+"?value=6543", "", tok, http.StatusOK)
		})

		c.addRecord(tok, db, "unused", "INTEGER", "1")
		c.addRecord(tok, stage, "unused", "INTEGER", "1")
		assert.Equal(t, cur, c.clusterTag(t, "records nothing refers to", app, "&resolve=true", tok),
			"records the answer was not built from leave the resolved tag")

		c.mustDo("PUT", pathR("web", "prod", "app", "user")+"?value=root", "", tok, http.StatusOK)
		got := c.clusterTag(t, "a change in the cluster", app, "&resolve=true", tok)
		assert.NotEqual(t, cur, got, "a change of the cluster changes the resolved tag")
		assert.NotEqual(t, plain, c.clusterTag(t, "a change in the cluster", app, "", tok), "and its plain tag")

		// A cluster without references: the resolved tag is the plain one.
		assert.Equal(t, c.clusterTag(t, "no references", db, "", tok), c.clusterTag(t, "no references", db, "&resolve=true", tok),
			"a cluster whose values hold no reference has one tag")
	})
}

// TestClusterTagTwoInstances: two handlers on one PostgreSQL database give
// a cluster the same tag, and each sees the other's writes in it.
func TestClusterTagTwoInstances(t *testing.T) {
	one, two := pgtest.Pair(t)
	a := newServer(t, storeKind{name: "postgres", new: func(testing.TB) (store.Projects, store.Accounts) { return one, one }})
	b := &client{t: t, h: hds.New(hds.WithStore(two), hds.WithUsers(two),
		hds.WithSecurity(hds.Security{JWTSecret: testSecret}),
		hds.WithLogger(quietLogger), hds.WithRateLimit(1_000_000, 1_000_000)),
		store: two, users: two, ids: a.ids, tokens: a.tokens}
	b.api = contractOf(t, b.h, "")
	alice := a.token("alice")
	a.tree(alice, "web", "prod", "k")
	K := pathK("web", "prod", "k")
	a.addRecord(alice, K, "port", "INTEGER", "1")

	tag := a.clusterTag(t, "a", K, "", alice)
	assert.Equal(t, tag, b.clusterTag(t, "b", K, "", alice), "both instances give the same tag")
	status, _, _ := b.getRaw(t, K, alice, tag)
	assert.Equal(t, http.StatusNotModified, status, "b answers 304 to a's tag")

	for i, w := range []*client{b, a, b} {
		w.mustDo("PUT", pathR("web", "prod", "k", "port")+fmt.Sprintf("?value=%d", i+2), "", alice, http.StatusOK)
		got := a.clusterTag(t, "after a write", K, "", alice)
		assert.NotEqual(t, tag, got, "write %d changed the tag", i)
		assert.Equal(t, got, b.clusterTag(t, "after a write", K, "", alice), "both instances agree after write %d", i)
		tag = got
	}
}

// stateless is a store that does not say it keeps Cluster.State, as a
// host's own store may be: its State never moves.
type stateless struct{ store.Store }

// TestClusterTagStatelessStore: on a store without
// store.ClusterStateKeeper, GET K carries no ETag and answers 200 to any
// If-None-Match, so that a client polling with the tag it once had is
// never told 304 about a cluster that changed.
func TestClusterTagStatelessStore(t *testing.T) {
	c := newServerWrapped(t, memoryKind, func(st store.Store) store.Store { return stateless{st} })
	alice := c.token("alice")
	c.tree(alice, "web", "prod", "k")
	K := pathK("web", "prod", "k")
	c.addRecord(alice, K, "port", "INTEGER", "1")
	for _, form := range []string{"", "?format=env", "?resolve=true", "?format=env&resolve=true"} {
		status, h, body := c.getRaw(t, K+form, alice, "*")
		assert.Equal(t, http.StatusOK, status, "GET K%s, If-None-Match *: status", form)
		assert.NotEmpty(t, body, "GET K%s: a body", form)
		assert.Empty(t, h.Get("ETag"), "GET K%s: no tag", form)
	}
}

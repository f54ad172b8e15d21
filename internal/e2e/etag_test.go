package e2e_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
)

// The conditional requests of
// docs/api.md#concurrency-control-and-record-history.

// strongTag is a strong entity tag as RFC 9110 writes one.
var strongTag = regexp.MustCompile(`^"[\x21\x23-\x7e\x80-\xff]*"$`)

// etagOf returns the ETag of a one-record response, failing when there is
// none or it is not a strong tag.
func etagOf(t *testing.T, what string, h http.Header) string {
	t.Helper()
	tag := h.Get("ETag")
	assert.Len(t, h.Values("ETag"), 1, "%s: ETag, want one strong entity tag", what)
	assert.Regexp(t, strongTag, tag, "%s: ETag, want one strong entity tag", what)
	return tag
}

func TestETag(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K, R := pathK("web", "prod", "k"), pathR("web", "prod", "k", "port")

		status, h, _ := c.do("POST", R+"?type=INTEGER&value=1", "", alice)
		require.Equal(t, http.StatusCreated, status, "POST R")
		created := etagOf(t, "POST R", h)
		_, h, _ = c.do("GET", R, "", alice)
		assert.Equal(t, created, etagOf(t, "GET R", h), "GET R: ETag, want the one POST R gave")
		_, h, _ = c.do("GET", R+"?reveal=true", "", alice)
		assert.Equal(t, created, etagOf(t, "GET R?reveal=true", h), "GET R?reveal=true: ETag: the tag names the state, not the representation")
		_, h, _ = c.do("PUT", R+"?value=1", "", alice)
		same := etagOf(t, "PUT R to the same value", h)
		assert.NotEqual(t, created, same, "an update to the same value kept the tag")
		_, h, _ = c.do("PUT", R+"?rename=port2", "", alice)
		renamed := etagOf(t, "PUT R rename", h)
		assert.NotEqual(t, same, renamed, "a rename kept the tag")
		c.mustDo("DELETE", pathR("web", "prod", "k", "port2"), "", alice, http.StatusNoContent)
		_, h, _ = c.do("POST", K+"/records", `{"name":"port2","type":"INTEGER","value":1}`, alice)
		again := etagOf(t, "POST K/records", h)
		for _, old := range []string{created, same, renamed} {
			assert.NotEqual(t, old, again, "a record deleted and created again has an old tag")
		}
		_, h, _ = c.do("POST", pathR("web", "prod", "k", "other"), `{"type":"INTEGER","value":1}`, alice)
		assert.NotEqual(t, again, etagOf(t, "POST R (body)", h), "two records share the tag")
		_, h, _ = c.do("POST", K+"/records", `{"name":"pw","type":"CREDENTIAL","value":"s3cret"}`, alice)
		pw := etagOf(t, "POST credential", h)
		_, h, _ = c.do("GET", pathR("web", "prod", "k", "pw")+"?reveal=true", "", alice)
		assert.Equal(t, pw, etagOf(t, "GET credential revealed", h), "a revealed credential has the tag of the masked one")
		// Lists carry no ETag; the cluster's data carries the cluster's
		// (clustertag_test.go), never a record's.
		_, h, _ = c.do("GET", K+"/records", "", alice)
		assert.Empty(t, h.Get("ETag"), "GET K/records: ETag on a response that is not one record")
		_, h, _ = c.do("GET", K, "", alice)
		assert.NotContains(t, []string{created, same, renamed, again, pw}, etagOf(t, "GET K", h), "GET K has the tag of a record")
	})
}

func TestIfMatch(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "web", "prod", "k")
		c.tree(bob, "bobs", "c", "k")
		K, R := pathK("web", "prod", "k"), pathR("web", "prod", "k", "port")
		c.addRecord(alice, K, "taken", "INTEGER", "0")
		_, h, _ := c.do("POST", R+"?type=INTEGER&value=1", "", alice)
		v1 := etagOf(t, "create", h)
		_, h, _ = c.do("PUT", R+"?value=2", "", alice)
		v2 := etagOf(t, "update", h)

		wantValue := func(what, want string) {
			t.Helper()
			var r recordJSON
			c.mustDo("GET", R, "", alice, http.StatusOK).decode(t, &r)
			assert.Equal(t, want, string(r.Value), "%s: value", what)
		}
		for _, tt := range []struct{ name, ifMatch string }{
			{"stale tag", v1},
			{"weak current tag", "W/" + v2},
			{"unknown tags", `"a", "b"`},
		} {
			status, h, env := c.sendWith("PUT", R+"?value=99", "", alice, "If-Match", tt.ifMatch)
			wantError(t, "PUT with "+tt.name, status, env, http.StatusPreconditionFailed, "PRECONDITION_FAILED", "Precondition failed")
			assert.Equal(t, "current version is 2", env.details(), "PUT with %s: details", tt.name)
			assert.Equal(t, v2, h.Get("ETag"), "PUT with %s: 412 carries the current ETag", tt.name)
			wantValue("after a 412", "2")
		}
		status, h, _ := c.sendWith("PUT", R+"?value=3", "", alice, "If-Match", v2)
		require.Equal(t, http.StatusOK, status, "PUT with the current tag")
		v3 := etagOf(t, "PUT with the current tag", h)
		status, h, _ = c.sendWith("PUT", R+"?value=4", "", alice, "If-Match", `"x", W/`+v3+`, `+v3)
		require.Equal(t, http.StatusOK, status, "PUT with a list holding the current tag")
		v4 := etagOf(t, "PUT with a list", h)
		status, h, _ = c.sendWith("PUT", R+"?value=5", "", alice, "If-Match", `"x"`, "If-Match", v4)
		require.Equal(t, http.StatusOK, status, "PUT with two If-Match lines")
		v5 := etagOf(t, "PUT with two lines", h)
		status, _, _ = c.sendWith("PUT", R+"?value=6", "", alice, "If-Match", "*")
		assert.Equal(t, http.StatusOK, status, "PUT with If-Match: *")
		// A rename to the current name changes nothing but is still conditional.
		status, _, env := c.sendWith("PUT", R+"?rename=port", "", alice, "If-Match", v5)
		wantError(t, "no-op rename with a stale tag", status, env, http.StatusPreconditionFailed, "PRECONDITION_FAILED", "Precondition failed")

		for _, bad := range []string{`abc`, `"unterminated`, `W/abc`, `"a" "b"`, `,`, `*, "a"`, `"a b"`, `w/"a"`, `"a"x`} {
			status, _, env := c.sendWith("PUT", R+"?value=7", "", alice, "If-Match", bad)
			wantError(t, "PUT with If-Match "+bad, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			status, _, env = c.sendWith("DELETE", R, "", alice, "If-Match", bad)
			wantError(t, "DELETE with If-Match "+bad, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		}
		wantValue("after refused requests", "6")

		// Preconditions come last.
		status, _, env = c.sendWith("PUT", pathR("web", "prod", "k", "missing")+"?value=1", "", alice, "If-Match", v1)
		wantError(t, "stale tag on a missing record", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		status, _, env = c.sendWith("PUT", R, `{"value":"x"}`, alice, "If-Match", v1)
		wantError(t, "stale tag and a value not fitting", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
		status, _, env = c.sendWith("PUT", R+"?value=1", `{"value":1}`, alice, "If-Match", v1)
		wantError(t, "stale tag and a mixed request", status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
		status, _, env = c.sendWith("PUT", R+"?rename=taken", "", alice, "If-Match", v1)
		wantError(t, "stale tag and a taken name", status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
		status, _, env = c.sendWith("PUT", pathR("bobs", "c", "k", "x")+"?value=1", "", alice, "If-Match", "garbage")
		wantError(t, "a malformed tag under someone else's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		status, _, env = c.sendWith("DELETE", pathR("web", "prod", "k", "missing"), "", alice, "If-Match", v1)
		wantError(t, "DELETE of a missing record with a tag", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")

		// DELETE.
		_, h, _ = c.do("GET", R, "", alice)
		cur := etagOf(t, "GET", h)
		status, h, env = c.sendWith("DELETE", R, "", alice, "If-Match", v1)
		wantError(t, "DELETE with a stale tag", status, env, http.StatusPreconditionFailed, "PRECONDITION_FAILED", "Precondition failed")
		assert.Equal(t, cur, h.Get("ETag"), "DELETE 412: ETag")
		assert.Equal(t, "current version is 6", env.details(), "DELETE 412: details")
		wantValue("after a refused delete", "6")
		status, _, _ = c.sendWith("DELETE", R, "", alice, "If-Match", cur)
		assert.Equal(t, http.StatusNoContent, status, "DELETE with the current tag")
		status, _, env = c.sendWith("DELETE", R, "", alice, "If-Match", "*")
		wantError(t, "DELETE * of a deleted record", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
	})
}

func TestIfNoneMatch(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		R := pathR("web", "prod", "k", "port")
		_, h, _ := c.do("POST", R+"?type=INTEGER&value=1", "", alice)
		v1 := etagOf(t, "create", h)
		for _, inm := range []string{v1, "*", "W/" + v1, `"x", ` + v1} {
			r := request("GET", R, "", alice)
			r.Header.Set("If-None-Match", inm)
			res := c.raw(r)
			body := make([]byte, 1)
			n, _ := res.Body.Read(body)
			assert.Equal(t, http.StatusNotModified, res.StatusCode, "GET with If-None-Match %s: status", inm)
			assert.Zero(t, n, "GET with If-None-Match %s: body bytes", inm)
			assert.Equal(t, v1, res.Header.Get("ETag"), "GET with If-None-Match %s: ETag", inm)
		}
		c.mustDo("PUT", R+"?value=2", "", alice, http.StatusOK)
		status, h, _ := c.sendWith("GET", R, "", alice, "If-None-Match", v1)
		assert.Equal(t, http.StatusOK, status, "GET with an old tag in If-None-Match: status")
		assert.NotEqual(t, v1, h.Get("ETag"), "GET with an old tag in If-None-Match: a new tag")
		status, _, env := c.sendWith("GET", R, "", alice, "If-None-Match", "nope")
		wantError(t, "malformed If-None-Match", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		status, _, env = c.sendWith("GET", pathR("web", "prod", "k", "missing"), "", alice, "If-None-Match", "*")
		wantError(t, "If-None-Match * on a missing record", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
	})
}

func TestRequireIfMatch(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithRequireIfMatch(true))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		R := pathR("web", "prod", "k", "port")
		_, h, _ := c.do("POST", R+"?type=INTEGER&value=1", "", alice)
		v1 := etagOf(t, "create (never conditional)", h)
		for _, tt := range []struct{ method, target, body string }{
			{"PUT", R + "?value=2", ""},
			{"PUT", R, `{"name":"port"}`},
			{"DELETE", R, ""},
			{"POST", R + "/restore?version=1", ""},
		} {
			status, _, env := c.do(tt.method, tt.target, tt.body, alice)
			wantError(t, tt.method+" "+tt.target+" without If-Match", status, env,
				http.StatusPreconditionRequired, "PRECONDITION_REQUIRED", "Precondition required")
		}
		status, _, env := c.do("PUT", pathR("web", "prod", "k", "missing")+"?value=1", "", alice)
		wantError(t, "missing record without If-Match", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		status, _, env = c.do("PUT", R, `{"value":"x"}`, alice)
		wantError(t, "bad value without If-Match", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
		status, _, env = c.do("POST", R+"/restore?version=9", "", alice)
		wantError(t, "restore of a missing version without If-Match", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		status, _, env = c.sendWith("PUT", R+"?value=2", "", alice, "If-Match", `"stale"`)
		wantError(t, "stale If-Match", status, env, http.StatusPreconditionFailed, "PRECONDITION_FAILED", "")
		status, h, _ = c.sendWith("PUT", R+"?value=2", "", alice, "If-Match", v1)
		require.Equal(t, http.StatusOK, status, "PUT with If-Match")
		v2 := etagOf(t, "PUT", h)
		status, _, _ = c.sendWith("POST", R+"/restore?version=1", "", alice, "If-Match", v2)
		assert.Equal(t, http.StatusOK, status, "restore with If-Match")
		status, _, _ = c.sendWith("DELETE", R, "", alice, "If-Match", "*")
		assert.Equal(t, http.StatusNoContent, status, "DELETE with If-Match *")
		// Without the option nothing is required.
		d := newServer(t, kind)
		dt := d.token("alice")
		d.tree(dt, "web", "prod", "k")
		d.mustDo("POST", R+"?type=INTEGER&value=1", "", dt, http.StatusCreated)
		d.mustDo("PUT", R+"?value=2", "", dt, http.StatusOK)
		d.mustDo("DELETE", R, "", dt, http.StatusNoContent)
	})
}

// TestConcurrentIfMatchTwoInstances runs two handlers, each with its own
// connection pool, on one PostgreSQL database: of 50 concurrent PUTs with
// the same tag exactly one succeeds and 49 get 412; without If-Match
// every update is applied, each with its own version.
func TestConcurrentIfMatchTwoInstances(t *testing.T) {
	one, two := pgtest.Pair(t)
	a := newServer(t, storeKind{name: "postgres", new: func(testing.TB) (store.Projects, store.Accounts) { return one, one }})
	b := &client{t: t, h: hds.New(hds.WithStore(two), hds.WithUsers(two),
		hds.WithSecurity(hds.Security{JWTSecret: testSecret}),
		hds.WithLogger(quietLogger), hds.WithRateLimit(1_000_000, 1_000_000)),
		store: two, users: two, ids: a.ids, tokens: a.tokens}
	b.api = contractOf(t, b.h, "")
	alice := a.token("alice")
	a.tree(alice, "web", "prod", "k")
	R := pathR("web", "prod", "k", "n")
	_, h, _ := a.do("POST", R+"?type=INTEGER&value=0", "", alice)
	tag := etagOf(t, "create", h)

	const n = 50
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		c := a
		if i%2 == 1 {
			c = b
		}
		wg.Go(func() {
			status, _, env := c.sendWith("PUT", fmt.Sprintf("%s?value=%d", R, i+1), "", alice, "If-Match", tag)
			statuses[i] = status
			if status == http.StatusPreconditionFailed {
				wantError(t, fmt.Sprintf("PUT %d", i), status, env, http.StatusPreconditionFailed, "PRECONDITION_FAILED", "Precondition failed")
			}
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: 1, http.StatusPreconditionFailed: n - 1}, count,
		"%d concurrent PUTs with one tag on two instances: statuses, want 1 x 200 and %d x 412", n, n-1)
	var r recordJSON
	b.mustDo("GET", R, "", alice, http.StatusOK).decode(t, &r)
	assert.EqualValues(t, 2, r.Version, "after the race: version")

	versions := make([]int64, 20)
	for i := range versions {
		c := a
		if i%2 == 1 {
			c = b
		}
		wg.Go(func() {
			status, _, env := c.do("PUT", fmt.Sprintf("%s?value=%d", R, i), "", alice)
			if !assert.Equal(t, http.StatusOK, status, "unconditional PUT %d: %s", i, env.raw) {
				return
			}
			var r recordJSON
			env.decode(t, &r)
			versions[i] = r.Version
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, v := range versions {
		assert.False(t, seen[v], "two concurrent updates both report version %d", v)
		seen[v] = true
	}
	b.mustDo("GET", R, "", alice, http.StatusOK).decode(t, &r)
	assert.EqualValues(t, 22, r.Version, "after 20 unconditional updates: version")
}

// TestPreconditionsLast checks that 412 and 428 come after every
// other answer (docs/api.md#concurrency-control-and-record-history): the
// request's own input (400), existence (404, a version not kept included)
// and, as docs/api.md says, a taken name (409), on every store.
func TestPreconditionsLast(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		for _, required := range []bool{false, true} {
			c := newServer(t, kind, hds.WithMaxVersions(1), hds.WithRequireIfMatch(required))
			alice := c.token("alice")
			c.tree(alice, "p", "c", "k")
			k := pathK("p", "c", "k")
			c.addRecord(alice, k, "n", "INTEGER", "1")
			c.addRecord(alice, k, "taken", "INTEGER", "1")
			for i := 2; i <= 4; i++ {
				status, _, _ := c.sendWith("PUT", pathR("p", "c", "k", "n")+"?value="+strconv.Itoa(i), "", alice, "If-Match", "*")
				require.Equal(t, http.StatusOK, status)
			}
			stale := []string{"If-Match", `"stale"`}
			if required {
				stale = nil // no If-Match at all: 428 would come last too
			}
			for _, tc := range []struct {
				method, target string
				status         int
				code           string
			}{
				{"PUT", pathR("p", "c", "k", "n") + "?value=x", http.StatusBadRequest, "VALIDATION_ERROR"},
				{"PUT", pathR("p", "c", "k", "gone") + "?value=1", http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"DELETE", pathR("p", "c", "k", "gone"), http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"PUT", pathR("p", "c", "k", "n") + "?rename=taken", http.StatusConflict, "RESOURCE_EXISTS"},
				{"POST", pathR("p", "c", "k", "n") + "/restore?version=1", http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"POST", pathR("p", "c", "k", "n") + "/restore?version=99", http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"POST", pathR("p", "c", "k", "gone") + "/restore?version=1", http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"POST", pathR("p", "c", "k", "n") + "/restore?version=0", http.StatusBadRequest, "INVALID_REQUEST"},
			} {
				status, _, env := c.sendWith(tc.method, tc.target, "", alice, stale...)
				assert.Equal(t, tc.status, status, "require_if_match %v: %s %s: %s", required, tc.method, tc.target, env.raw)
				assert.Equal(t, tc.code, env.code(), "require_if_match %v: %s %s", required, tc.method, tc.target)
			}
		}
	})
}

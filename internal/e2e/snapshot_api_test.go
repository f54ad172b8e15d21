package e2e_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// POST, GET and DELETE P/snapshots and rollback by promote,
// docs/api.md#snapshots-and-rollback-v13: the HTTP contract, every
// error path with its status, code and message.

// snapshotAPIJSON is a snapshot as the API answers it.
type snapshotAPIJSON struct {
	Name        string  `json:"name"`
	Collection  string  `json:"collection"`
	Cluster     *string `json:"cluster"`
	Description string  `json:"description"`
	Revision    int64   `json:"revision"`
	Records     int     `json:"records"`
	Automatic   bool    `json:"automatic"`
	CreatedAt   string  `json:"created_at"`
	CreatedBy   string  `json:"created_by"`
	Clusters    map[string]struct {
		Records map[string]struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"records"`
	} `json:"clusters"`
}

// snapshotFields are the fields of a snapshot.
var snapshotFields = []string{"name", "collection", "cluster", "description", "revision", "records", "automatic", "created_at", "created_by"}

// snapAPICreate takes a snapshot with body as token and returns it.
func (c *client) snapAPICreate(t *testing.T, p, body, token string) snapshotAPIJSON {
	t.Helper()
	env := c.mustDo("POST", pathP(p)+"/snapshots", body, token, http.StatusCreated)
	wantFields(t, "created snapshot", env.Data, snapshotFields...)
	var s snapshotAPIJSON
	env.decode(t, &s)
	return s
}

// snapAPIPromote promotes and returns the summary and the snapshot named
// in the answer.
func (c *client) snapAPIPromote(t *testing.T, p, body, token string) (importSummary, *string) {
	t.Helper()
	env := c.mustDo("POST", pathP(p)+"/promote", body, token, http.StatusOK)
	wantFields(t, "promote", env.Data, "created", "updated", "deleted", "unchanged", "changes", "revision", "snapshot")
	var s importSummary
	env.decode(t, &s)
	var named struct {
		Snapshot *string `json:"snapshot"`
	}
	env.decode(t, &named)
	return s, named.Snapshot
}

func TestSnapshotAPIRollback(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		stagingAndProd(c, alice)
		before := c.export(t, "web", "?reveal=true", alice)
		revision := c.exportRevision(t, "web", alice)

		s := c.snapAPICreate(t, "web", `{"name":"release-1","collection":"prod","description":"before 1.4"}`, alice)
		assert.Equal(t, "release-1", s.Name)
		assert.Equal(t, "prod", s.Collection)
		assert.Nil(t, s.Cluster)
		assert.Equal(t, "before 1.4", s.Description)
		assert.Equal(t, revision, s.Revision, "the newest revision before its own entry")
		assert.Equal(t, 7, s.Records)
		assert.False(t, s.Automatic)
		assert.Equal(t, "alice", s.CreatedBy)
		wantTimestamps(t, "created_at", s.CreatedAt)
		log := c.auditLog("web", "?limit=1")
		require.Len(t, log.Items, 1)
		e := log.Items[0]
		assert.Equal(t, "snapshot.create", e.Action)
		assert.Equal(t, revision+1, e.Revision)
		assert.Equal(t, []string{"prod", "release-1"}, []string{str(e.Collection), str(e.Target)})
		assert.Nil(t, e.Cluster)
		assert.Nil(t, e.Record)

		// Read it: every cluster, credentials masked unless reveal=true.
		env := c.mustDo("GET", pathP("web")+"/snapshots/release-1", "", alice, http.StatusOK)
		wantFields(t, "snapshot", env.Data, append(snapshotFields, "clusters")...)
		var got snapshotAPIJSON
		env.decode(t, &got)
		assert.Equal(t, []string{"app", "legacy"}, keysOf(got.Clusters))
		assert.JSONEq(t, `"prod.example"`, string(got.Clusters["app"].Records["host"].Value))
		assert.NotContains(t, string(env.Data), "old-secret", "masked")
		env = c.mustDo("GET", pathP("web")+"/snapshots/release-1?reveal=true", "", alice, http.StatusOK)
		env.decode(t, &got)
		assert.JSONEq(t, `"old-secret"`, string(got.Clusters["app"].Records["pw"].Value))
		log = c.auditLog("web", "?limit=1")
		e = log.Items[0]
		assert.Equal(t, []string{"credential.reveal", "prod", "release-1"}, []string{e.Action, str(e.Collection), str(e.Target)})

		// The release goes wrong: staging promoted onto prod.
		_, auto := c.snapAPIPromote(t, "web", `{"from":"staging","to":"prod","delete":true}`, alice)
		require.NotNil(t, auto, "a promote that changes something takes an automatic snapshot")
		assert.Regexp(t, `^auto-[0-9]+$`, *auto)

		// What a rollback would change, then a dry run, then the rollback.
		d := c.diff(t, "web", "from_snapshot=release-1&to=prod", alice)
		assert.Equal(t, "snapshot:release-1", d.From)
		assert.Equal(t, "prod", d.To)
		assert.NotZero(t, d.Summary.Added+d.Summary.Changed+d.Summary.Removed)
		sum, none := c.snapAPIPromote(t, "web", `{"from_snapshot":"release-1","to":"prod","delete":true,"dry_run":true}`, alice)
		assert.Nil(t, none, "a dry run takes none")
		assert.NotEmpty(t, sum.Changes)
		rollback, undo := c.snapAPIPromote(t, "web",
			`{"from_snapshot":"release-1","to":"prod","delete":true,"if_revision":`+strconv.FormatInt(d.Revision, 10)+`}`, alice)
		assert.Equal(t, sum.changeList(), rollback.changeList(), "what the dry run said")
		require.NotNil(t, undo, "the rollback takes its own automatic snapshot")
		// The cluster the promote created stays, empty (section 27).
		c.mustDo("GET", pathK("web", "prod", "jobs"), "", alice, http.StatusOK)
		c.mustDo("DELETE", pathK("web", "prod", "jobs"), "", alice, http.StatusNoContent)
		assert.Equal(t, collectionsOf(t, before), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)), "prod is back as the snapshot holds it")
		d = c.diff(t, "web", "from_snapshot=release-1&to=prod", alice)
		assert.Zero(t, d.Summary.Added+d.Summary.Changed+d.Summary.Removed, "nothing left to roll back")
		sum, none = c.snapAPIPromote(t, "web", `{"from_snapshot":"release-1","to":"prod","delete":true}`, alice)
		assert.Nil(t, none, "nothing changed: no snapshot")
		assert.Empty(t, sum.Changes)

		// Undo the rollback with its automatic snapshot.
		c.snapAPIPromote(t, "web", `{"from_snapshot":"`+*undo+`","to":"prod","delete":true}`, alice)
		d = c.diff(t, "web", "from=staging&to=prod", alice)
		assert.Zero(t, d.Summary.Added+d.Summary.Changed+d.Summary.Removed, "prod holds what staging held again")

		// The list: newest first, automatic ones included.
		env = c.mustDo("GET", pathP("web")+"/snapshots?collection=prod&limit=2", "", alice, http.StatusOK)
		var page listJSON[snapshotAPIJSON]
		env.decode(t, &page)
		require.Len(t, page.Items, 2)
		assert.True(t, page.Items[0].Automatic)
		assert.GreaterOrEqual(t, page.Total, 3)
		env = c.mustDo("GET", pathP("web")+"/snapshots?search=RELEASE", "", alice, http.StatusOK)
		env.decode(t, &page)
		require.Len(t, page.Items, 1)
		assert.Equal(t, "release-1", page.Items[0].Name)

		// A snapshot of a cluster, promoted to another cluster.
		k := c.snapAPICreate(t, "web", `{"name":"jobs","collection":"staging","cluster":"jobs"}`, alice)
		require.NotNil(t, k.Cluster)
		assert.Equal(t, "jobs", *k.Cluster)
		sum, _ = c.snapAPIPromote(t, "web", `{"from_snapshot":"jobs","to":"prod/legacy","records":["cron"]}`, alice)
		assert.Equal(t, []string{"create prod/legacy/cron"}, sum.changeList())

		// Delete: 204, audited, the name free again.
		c.mustDo("DELETE", pathP("web")+"/snapshots/release-1", "", alice, http.StatusNoContent)
		e = c.auditLog("web", "?limit=1").Items[0]
		assert.Equal(t, []string{"snapshot.delete", "prod", "release-1"}, []string{e.Action, str(e.Collection), str(e.Target)})
		c.snapAPICreate(t, "web", `{"name":"release-1","collection":"staging"}`, alice)
	})
}

// keysOf returns the keys of m, sorted.
func keysOf[V any](m map[string]V) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestSnapshotAPIErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey), hds.WithQuotas(store.Quotas{MaxSnapshotsPerProject: 2}))
		alice, bob := c.token("alice"), c.token("bob")
		stagingAndProd(c, alice)
		c.snapAPICreate(t, "web", `{"name":"v1","collection":"prod"}`, alice)
		c.snapAPICreate(t, "web", `{"name":"k1","collection":"prod","cluster":"app"}`, alice)
		snaps := pathP("web") + "/snapshots"

		for _, tc := range []struct{ name, body, details string }{
			{"empty body", ``, `the body must be {"name", "collection"}, with "cluster" and "description" optional`},
			{"no name", `{"collection":"prod"}`, "name is required"},
			{"no collection", `{"name":"x"}`, "collection is required"},
			{"unknown field", `{"name":"x","collection":"prod","force":true}`, `unknown field "force"`},
		} {
			status, _, env := c.do("POST", snaps, tc.body, alice)
			wantError(t, tc.name, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			assert.Equal(t, tc.details, env.details(), tc.name)
		}
		// Empty names break the name rules, as every name's do.
		for _, body := range []string{`{"name":"","collection":"prod"}`, `{"name":"x","collection":""}`, `{"name":"x","collection":"prod","cluster":""}`} {
			status, _, env := c.do("POST", snaps, body, alice)
			wantError(t, body, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		}
		// What is taken must exist before its name is checked, on every store.
		status, _, env := c.do("POST", snaps, `{"name":"v1","collection":"gone"}`, alice)
		wantError(t, "taken name, missing collection", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		status, _, env = c.do("POST", snaps, `{"name":"auto-7","collection":"prod"}`, alice)
		wantError(t, "auto- prefix", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		assert.Equal(t, `snapshot names starting with "auto-" are kept for automatic snapshots`, env.details())
		status, _, env = c.do("POST", snaps, `{"name":"v1","collection":"staging"}`, alice)
		wantError(t, "name taken", status, env, http.StatusConflict, "RESOURCE_EXISTS", "Resource already exists")
		assert.Equal(t, `snapshot "v1" already exists`, env.details())
		status, _, env = c.do("POST", snaps, `{"name":"x","collection":"gone"}`, alice)
		wantError(t, "missing collection", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `collection "gone" not found`, env.details())
		status, _, env = c.do("POST", snaps, `{"name":"x","collection":"prod","cluster":"gone"}`, alice)
		wantError(t, "missing cluster", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `cluster "gone" not found`, env.details())
		status, _, env = c.do("POST", snaps, `{"name":"v3","collection":"prod"}`, alice)
		wantError(t, "over the quota", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		assert.Equal(t, "max_snapshots_per_project: at most 2 snapshots per project", env.details())
		for _, target := range []string{snaps + "/gone", snaps + "/gone?reveal=true"} {
			status, _, env = c.do("GET", target, "", alice)
			wantError(t, "unknown snapshot", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
			assert.Equal(t, `snapshot "gone" not found`, env.details())
		}
		status, _, env = c.do("DELETE", snaps+"/gone", "", alice)
		wantError(t, "delete unknown", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")

		// from_snapshot in diff and promote.
		for _, tc := range []struct{ name, query, details string }{
			{"both", "from=staging&from_snapshot=v1&to=prod", "give from or from_snapshot, not both"},
			{"neither", "to=prod", "from and to are required: two collections (COLLECTION) or two clusters (COLLECTION/CLUSTER)"},
			{"mixed", "from_snapshot=v1&to=prod/app", "a snapshot of a collection pairs with a collection, of a cluster with a cluster"},
			{"mixed cluster", "from_snapshot=k1&to=prod", "a snapshot of a collection pairs with a collection, of a cluster with a cluster"},
		} {
			status, _, env = c.do("GET", pathP("web")+"/diff?"+tc.query, "", alice)
			wantError(t, "diff "+tc.name, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			assert.Equal(t, tc.details, env.details(), "diff %s", tc.name)
		}
		status, _, env = c.do("GET", pathP("web")+"/diff?from_snapshot=gone&to=prod", "", alice)
		wantError(t, "diff unknown snapshot", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `snapshot "gone" not found`, env.details())
		for _, tc := range []struct{ name, body, details string }{
			{"both", `{"from":"staging","from_snapshot":"v1","to":"prod"}`, "give from or from_snapshot, not both"},
			{"neither", `{"to":"prod"}`, "from and to are required: two collections (COLLECTION) or two clusters (COLLECTION/CLUSTER)"},
			{"mixed", `{"from_snapshot":"v1","to":"prod/app"}`, "a snapshot of a collection pairs with a collection, of a cluster with a cluster"},
			{"records for collections", `{"from_snapshot":"v1","to":"prod","records":["host"]}`, "records narrows a promote between two clusters only"},
		} {
			status, _, env = c.do("POST", pathP("web")+"/promote", tc.body, alice)
			wantError(t, "promote "+tc.name, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			assert.Equal(t, tc.details, env.details(), "promote %s", tc.name)
		}
		status, _, env = c.do("POST", pathP("web")+"/promote", `{"from_snapshot":"gone","to":"prod"}`, alice)
		wantError(t, "promote unknown snapshot", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `snapshot "gone" not found`, env.details())
		status, _, env = c.do("POST", pathP("web")+"/promote", `{"from_snapshot":"v1","to":"gone"}`, alice)
		wantError(t, "promote to a missing collection", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `collection "gone" not found`, env.details())

		// Rights: a viewer lists and reads (masked), a reader reveals, an
		// editor takes, an admin deletes; a scoped token is 403 on every
		// snapshot route.
		forbiddenTo(t, c, "a stranger", "GET", snaps, "", bob)
		c.share(alice, "web", "bob", "viewer")
		c.mustDo("GET", snaps, "", bob, http.StatusOK)
		c.mustDo("GET", snaps+"/v1", "", bob, http.StatusOK)
		forbiddenTo(t, c, "a viewer revealing", "GET", snaps+"/v1?reveal=true", "", bob)
		forbiddenTo(t, c, "a viewer taking", "POST", snaps, `{"name":"b1","collection":"prod"}`, bob)
		forbiddenTo(t, c, "a viewer with a bad body", "POST", snaps, `{"name":"auto-1"}`, bob)
		c.share(alice, "web", "bob", "reader")
		c.mustDo("GET", snaps+"/v1?reveal=true", "", bob, http.StatusOK)
		c.share(alice, "web", "bob", "editor")
		c.mustDo("DELETE", snaps+"/k1", "", alice, http.StatusNoContent)
		s := c.snapAPICreate(t, "web", `{"name":"b1","collection":"prod"}`, bob)
		assert.Equal(t, "bob", s.CreatedBy)
		forbiddenTo(t, c, "an editor deleting", "DELETE", snaps+"/b1", "", bob)
		c.share(alice, "web", "bob", "admin")
		c.mustDo("DELETE", snaps+"/b1", "", bob, http.StatusNoContent)
		editor := c.apiToken(alice, "web", `{"name":"e","role":"editor"}`).Token
		c.snapAPICreate(t, "web", `{"name":"t1","collection":"prod"}`, editor)
		for _, scope := range []string{`"collection":"prod"`, `"collection":"prod","cluster":"app"`} {
			scoped := c.apiToken(alice, "web", `{"name":"s","role":"editor",`+scope+`}`).Token
			forbiddenTo(t, c, "a scoped token listing", "GET", snaps, "", scoped)
			forbiddenTo(t, c, "a scoped token reading", "GET", snaps+"/t1", "", scoped)
			forbiddenTo(t, c, "a scoped token taking", "POST", snaps, `{"name":"s1","collection":"prod","cluster":"app"}`, scoped)
			forbiddenTo(t, c, "a scoped token diffing", "GET", pathP("web")+"/diff?from_snapshot=t1&to=prod", "", scoped)
		}
	})
}

// TestSnapshotAPIKeepAutomatic: WithKeepAutomaticSnapshots bounds the
// automatic snapshots; 0 takes none.
func TestSnapshotAPIKeepAutomatic(t *testing.T) {
	c := newServer(t, kindNamed(t, "memory"), hds.WithCredentialKey(testKey), hds.WithKeepAutomaticSnapshots(1))
	alice := c.token("alice")
	stagingAndProd(c, alice)
	_, first := c.snapAPIPromote(t, "web", `{"from":"staging/jobs","to":"prod/legacy"}`, alice)
	require.NotNil(t, first)
	_, second := c.snapAPIPromote(t, "web", `{"from":"staging/app","to":"prod/app"}`, alice)
	require.NotNil(t, second)
	env := c.mustDo("GET", pathP("web")+"/snapshots", "", alice, http.StatusOK)
	var page listJSON[snapshotAPIJSON]
	env.decode(t, &page)
	require.Len(t, page.Items, 1)
	assert.Equal(t, *second, page.Items[0].Name)
	assert.Equal(t, "prod", page.Items[0].Collection)
	assert.Equal(t, "app", *page.Items[0].Cluster)
	e := c.auditLog("web", "?action=snapshot.delete").Items[0]
	assert.Equal(t, *first, str(e.Target), "the oldest one deleted, audited")

	none := newServer(t, kindNamed(t, "memory"), hds.WithCredentialKey(testKey), hds.WithKeepAutomaticSnapshots(0))
	alice = none.token("alice")
	stagingAndProd(none, alice)
	_, name := none.snapAPIPromote(t, "web", `{"from":"staging","to":"prod"}`, alice)
	assert.Nil(t, name, "keep 0 takes none")
}

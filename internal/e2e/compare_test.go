package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// GET P/diff and POST P/promote, docs/api.md#21-compare-and-promote.

// diffJSON is the answer of GET P/diff.
type diffJSON struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Revision int64  `json:"revision"`
	Items    []struct {
		Cluster string          `json:"cluster"`
		Record  string          `json:"record"`
		Change  string          `json:"change"`
		From    json.RawMessage `json:"from"`
		To      json.RawMessage `json:"to"`
	} `json:"items"`
	Summary struct {
		Added     int `json:"added"`
		Removed   int `json:"removed"`
		Changed   int `json:"changed"`
		Unchanged int `json:"unchanged"`
	} `json:"summary"`
}

// lines renders the items as "cluster/record change from to".
func (d diffJSON) lines() []string {
	out := []string{}
	for _, it := range d.Items {
		out = append(out, it.Cluster+"/"+it.Record+" "+it.Change+" "+string(it.From)+" "+string(it.To))
	}
	return out
}

// diff reads GET P/diff with the query as token.
func (c *client) diff(t *testing.T, p, query, token string) diffJSON {
	t.Helper()
	env := c.mustDo("GET", pathP(p)+"/diff?"+query, "", token, http.StatusOK)
	var d diffJSON
	env.decode(t, &d)
	wantFields(t, "diff", env.Data, "from", "to", "revision", "items", "summary")
	return d
}

// promote sends POST P/promote and returns its summary.
func (c *client) promote(t *testing.T, p, body, token string) importSummary {
	t.Helper()
	env := c.mustDo("POST", pathP(p)+"/promote", body, token, http.StatusOK)
	var s importSummary
	env.decode(t, &s)
	return s
}

// stagingAndProd makes project web: collections staging and prod, each
// with cluster app, and the records of the comparisons.
func stagingAndProd(c *client, alice string) {
	c.tree(alice, "web", "staging", "app")
	c.mustDo("POST", pathC("web", "prod"), "", alice, http.StatusCreated)
	c.mustDo("POST", pathK("web", "prod", "app"), "", alice, http.StatusCreated)
	c.mustDo("POST", pathK("web", "staging", "jobs"), "", alice, http.StatusCreated)
	c.mustDo("POST", pathK("web", "prod", "legacy"), "", alice, http.StatusCreated)
	S, P := pathK("web", "staging", "app"), pathK("web", "prod", "app")
	c.addRecord(alice, S, "host", "STRING", `"staging.example"`)
	c.addRecord(alice, P, "host", "STRING", `"prod.example"`)
	c.addRecord(alice, S, "port", "INTEGER", `8080`)
	c.addRecord(alice, P, "port", "STRING", `"8080"`)
	c.addRecord(alice, S, "same", "INTEGER", `1`)
	c.addRecord(alice, P, "same", "INTEGER", `1`)
	c.addRecord(alice, S, "pw", "CREDENTIAL", `"new-secret"`)
	c.addRecord(alice, P, "pw", "CREDENTIAL", `"old-secret"`)
	c.addRecord(alice, S, "key", "CREDENTIAL", `"equal"`)
	c.addRecord(alice, P, "key", "CREDENTIAL", `"equal"`)
	c.addRecord(alice, S, "Zed", "NULL", `null`)
	c.addRecord(alice, P, "old", "BOOLEAN", `true`)
	c.addRecord(alice, pathK("web", "staging", "jobs"), "cron", "STRING", `"* * * * *"`)
	c.addRecord(alice, pathK("web", "prod", "legacy"), "flag", "BOOLEAN", `false`)
}

func TestDiff(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		stagingAndProd(c, alice)
		revision := c.exportRevision(t, "web", alice)

		d := c.diff(t, "web", "from=staging&to=prod", alice)
		assert.Equal(t, "staging", d.From, "from")
		assert.Equal(t, "prod", d.To, "to")
		assert.Equal(t, revision, d.Revision, "the project's newest revision")
		assert.Equal(t, []string{
			`app/Zed added {"type":"NULL","value":null,"version":1} null`,
			`app/host changed {"type":"STRING","value":"staging.example","version":1} {"type":"STRING","value":"prod.example","version":1}`,
			`app/old removed null {"type":"BOOLEAN","value":true,"version":1}`,
			`app/port changed {"type":"INTEGER","value":8080,"version":1} {"type":"STRING","value":"8080","version":1}`,
			`app/pw changed {"type":"CREDENTIAL","value":"********","version":1} {"type":"CREDENTIAL","value":"********","version":1}`,
			`jobs/cron added {"type":"STRING","value":"* * * * *","version":1} null`,
			`legacy/flag removed null {"type":"BOOLEAN","value":false,"version":1}`,
		}, d.lines(), "by cluster then record, byte-wise; a changed credential shows as changed, masked; unchanged ones not listed")
		assert.Equal(t, [4]int{2, 2, 3, 2}, [4]int{d.Summary.Added, d.Summary.Removed, d.Summary.Changed, d.Summary.Unchanged},
			"summary: added, removed, changed, unchanged (counted though not listed)")
		env := c.mustDo("GET", pathP("web")+"/diff?from=staging&to=prod", "", alice, http.StatusOK)
		var raw struct {
			Items []json.RawMessage `json:"items"`
		}
		env.decode(t, &raw)
		require.NotEmpty(t, raw.Items)
		wantFields(t, "an item", raw.Items[0], "cluster", "record", "change", "from", "to")

		d = c.diff(t, "web", "from=staging&to=prod&unchanged=true", alice)
		assert.Equal(t, 9, len(d.Items), "unchanged=true lists every record")
		assert.Contains(t, d.lines(), `app/key unchanged {"type":"CREDENTIAL","value":"********","version":1} {"type":"CREDENTIAL","value":"********","version":1}`,
			"equal credentials are unchanged")
		assert.Contains(t, d.lines(), `app/same unchanged {"type":"INTEGER","value":1,"version":1} {"type":"INTEGER","value":1,"version":1}`)

		// Two clusters: records paired by name; the other way round.
		d = c.diff(t, "web", "from="+url.QueryEscape("prod/app")+"&to=staging/app", alice)
		assert.Equal(t, "prod/app", d.From, "from names the cluster")
		assert.Equal(t, []string{
			`app/Zed removed null {"type":"NULL","value":null,"version":1}`,
			`app/host changed {"type":"STRING","value":"prod.example","version":1} {"type":"STRING","value":"staging.example","version":1}`,
			`app/old added {"type":"BOOLEAN","value":true,"version":1} null`,
			`app/port changed {"type":"STRING","value":"8080","version":1} {"type":"INTEGER","value":8080,"version":1}`,
			`app/pw changed {"type":"CREDENTIAL","value":"********","version":1} {"type":"CREDENTIAL","value":"********","version":1}`,
		}, d.lines(), "prod/app against staging/app")
		d = c.diff(t, "web", "from=staging/jobs&to=prod/legacy", alice)
		assert.Equal(t, []string{
			`jobs/cron added {"type":"STRING","value":"* * * * *","version":1} null`,
			`jobs/flag removed null {"type":"BOOLEAN","value":false,"version":1}`,
		}, d.lines(), "clusters of other names: the from cluster names every item")

		// reveal=true: plain values, one credential.reveal entry, and the
		// revision answered does not count it (v1.3: a reveal changes
		// nothing).
		before := c.auditLog("web", "?action=credential.reveal")
		unrevealed := c.diff(t, "web", "from=staging/app&to=prod/app", alice).Revision
		d = c.diff(t, "web", "from=staging/app&to=prod/app&reveal=true", alice)
		assert.Contains(t, d.lines(), `app/pw changed {"type":"CREDENTIAL","value":"new-secret","version":1} {"type":"CREDENTIAL","value":"old-secret","version":1}`,
			"revealed")
		after := c.auditLog("web", "?action=credential.reveal")
		require.Equal(t, before.Total+1, after.Total, "one reveal entry for the request")
		e := after.Items[0]
		assert.Equal(t, "<null>", str(e.Collection), "the entry names the project only")
		assert.Equal(t, e.Revision, c.exportRevision(t, "web", alice), "the reveal's entry is the project's newest")
		assert.Equal(t, unrevealed, d.Revision, "the revision answered does not count the reveal's entry")
		assert.Less(t, d.Revision, e.Revision, "the revision answered precedes the reveal's entry")
	})
}

// TestPromoteAfterReveal: a credential.reveal entry never makes an
// if_revision stale (API.md section 22, v1.3): alice reviews a
// comparison, bob reveals a credential, alice's promote of what she
// reviewed applies; a real change still makes it 412, naming the
// revision of that change, not of a reveal after it.
func TestPromoteAfterReveal(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice, bob := c.token("alice"), c.token("bob")
		stagingAndProd(c, alice)
		c.share(alice, "web", "bob", "reader")
		pw := pathR("web", "prod", "app", "pw")
		reveal := func() {
			t.Helper()
			before := c.auditLog("web", "?action=credential.reveal").Total
			c.mustDo("GET", pw+"?reveal=true", "", bob, http.StatusOK)
			require.Equal(t, before+1, c.auditLog("web", "?action=credential.reveal").Total, "bob's reveal is audited")
		}
		promote := func(body string, revision int64) (int, envelope) {
			t.Helper()
			status, _, env := c.do("POST", pathP("web")+"/promote", `{"from":"staging/app","to":"prod/app",`+body+`"if_revision":`+strconv.FormatInt(revision, 10)+`}`, alice)
			return status, env
		}

		reviewed := c.diff(t, "web", "from=staging/app&to=prod/app", alice).Revision
		reveal()
		assert.Greater(t, c.exportRevision(t, "web", alice), reviewed, "the reveal moved the project's revision")
		assert.Equal(t, reviewed, c.diff(t, "web", "from=staging/app&to=prod/app", alice).Revision, "but not the comparison's")
		status, env := promote(`"dry_run":true,`, reviewed)
		assert.Equal(t, http.StatusOK, status, "a dry run with the reviewed if_revision after a reveal: %s", env.details())
		status, env = promote(`"records":["host"],`, reviewed)
		require.Equal(t, http.StatusOK, status, "a promote with the reviewed if_revision after a reveal: %s", env.details())
		var s importSummary
		env.decode(t, &s)
		assert.Equal(t, []string{"update prod/app/host"}, s.changeList(), "it applied what was reviewed")

		// A real change makes it stale; the details name that change's
		// revision, though a reveal follows it.
		c.addRecord(alice, pathK("web", "prod", "app"), "added", "INTEGER", "1")
		changed := c.auditLog("web", "?limit=1").Items[0].Revision
		reveal()
		for _, body := range []string{`"dry_run":true,`, ``} {
			status, env = promote(body, s.Revision)
			wantError(t, "stale if_revision "+body, status, env, http.StatusPreconditionFailed, "PRECONDITION_FAILED", "Precondition failed")
			assert.Equal(t, "current revision is "+strconv.FormatInt(changed, 10), env.details(), "details name the newest change's revision")
		}
		assert.Equal(t, changed, c.diff(t, "web", "from=staging/app&to=prod/app", alice).Revision, "the comparison names it too")
		status, env = promote(``, changed)
		assert.Equal(t, http.StatusOK, status, "the revision the details name applies: %s", env.details())
	})
}

func TestDiffErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		c.addUser("carol", "carol-password")
		alice, bob := c.token("alice"), c.token("bob")
		stagingAndProd(c, alice)
		const required = "from and to are required: two collections (COLLECTION) or two clusters (COLLECTION/CLUSTER)"
		for _, tc := range []struct{ name, query, details string }{
			{"no from", "to=prod", required},
			{"no to", "from=staging", required},
			{"neither", "", required},
			{"empty from", "from=&to=prod", required},
			{"mixed", "from=staging&to=prod/app", "from and to must be two collections or two clusters, not one of each"},
			{"mixed the other way", "from=staging/app&to=prod", "from and to must be two collections or two clusters, not one of each"},
			{"equal collections", "from=prod&to=prod", "from and to must differ"},
			{"equal clusters", "from=prod/app&to=prod/app", "from and to must differ"},
			{"three levels", "from=a/b/c&to=prod/app", "from must be COLLECTION or COLLECTION/CLUSTER"},
			{"no collection", "from=/app&to=prod/app", "from must be COLLECTION or COLLECTION/CLUSTER"},
			{"no cluster", "from=staging/app&to=prod/", "to must be COLLECTION or COLLECTION/CLUSTER"},
			{"bad unchanged", "from=staging&to=prod&unchanged=yes", "unchanged must be true or false"},
			{"bad reveal", "from=staging&to=prod&reveal=1", "reveal must be true or false"},
			{"from twice", "from=staging&from=prod&to=prod", "the query parameter from is given more than once"},
		} {
			status, _, env := c.do("GET", pathP("web")+"/diff?"+tc.query, "", alice)
			wantError(t, tc.name, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			assert.Equal(t, tc.details, env.details(), "%s: details", tc.name)
		}
		for _, tc := range []struct{ name, query, details string }{
			{"missing from collection", "from=nope&to=prod", `collection "nope" not found`},
			{"missing to collection", "from=staging&to=gone", `collection "gone" not found`},
			{"missing from cluster", "from=staging/nope&to=prod/gone", `cluster "nope" not found`},
			{"missing to cluster", "from=staging/app&to=prod/gone", `cluster "gone" not found`},
		} {
			status, _, env := c.do("GET", pathP("web")+"/diff?"+tc.query, "", alice)
			wantError(t, tc.name, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
			assert.Equal(t, tc.details, env.details(), "%s: details", tc.name)
		}
		status, _, env := c.do("GET", pathP("nope")+"/diff?from=a&to=b", "", alice)
		wantError(t, "missing project", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `project "nope" not found`, env.details())
		forbiddenTo(t, c, "a stranger", "GET", pathP("web")+"/diff?from=staging&to=prod", "", bob)
		forbiddenTo(t, c, "a stranger, bad query", "GET", pathP("web")+"/diff?from=staging", "", bob)

		// Roles: a viewer compares, masked; reveal needs reader.
		c.share(alice, "web", "bob", "viewer")
		d := c.diff(t, "web", "from=staging&to=prod", bob)
		assert.Equal(t, 3, d.Summary.Changed, "a viewer compares")
		forbiddenTo(t, c, "a viewer reveals", "GET", pathP("web")+"/diff?from=staging&to=prod&reveal=true", "", bob)
		forbiddenTo(t, c, "a viewer reveals, bad query", "GET", pathP("web")+"/diff?from=staging&reveal=true", "", bob)
		c.share(alice, "web", "bob", "reader")
		d = c.diff(t, "web", "from=staging/app&to=prod/app&reveal=true", bob)
		assert.Contains(t, d.lines(), `app/pw changed {"type":"CREDENTIAL","value":"new-secret","version":1} {"type":"CREDENTIAL","value":"old-secret","version":1}`,
			"a reader reveals")

		// API tokens: an unscoped one compares, a scoped one may not.
		viewer := c.apiToken(alice, "web", `{"name":"ci","role":"viewer"}`).Token
		c.diff(t, "web", "from=staging&to=prod", viewer)
		scoped := c.apiToken(alice, "web", `{"name":"scoped","role":"reader","collection":"staging"}`).Token
		forbiddenTo(t, c, "a collection-scoped token", "GET", pathP("web")+"/diff?from=staging&to=prod", "", scoped)

		// Without a credential key, credentials cannot be compared.
		nokey := c.attach()
		status, _, env = nokey.do("GET", pathP("web")+"/diff?from=staging/app&to=prod/app", "", alice)
		wantError(t, "no credential key", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		wantDetails(t, "no credential key", env, "no credential key is configured")
	})
}

func TestPromote(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		base := c.serve()
		alice := c.token("alice")
		stagingAndProd(c, alice)
		revision := c.exportRevision(t, "web", alice)
		before := c.export(t, "web", "?reveal=true", alice)

		// A dry run says what would change and changes nothing.
		body := `{"from":"staging","to":"prod","dry_run":true}`
		env := c.mustDo("POST", pathP("web")+"/promote", body, alice, http.StatusOK)
		assert.Equal(t, "Dry run: nothing changed", env.Message, "message")
		var s importSummary
		env.decode(t, &s)
		wantFields(t, "promote", env.Data, "created", "updated", "deleted", "unchanged", "changes", "revision", "snapshot")
		want := []string{"create prod/app/Zed", "update prod/app/host", "update prod/app/port", "update prod/app/pw", "create prod/jobs/cron"}
		assert.Equal(t, want, s.changeList(), "the changes, by cluster and record")
		assert.Equal(t, [4]int{2, 3, 0, 2}, [4]int{s.Created, s.Updated, s.Deleted, s.Unchanged}, "created, updated, deleted, unchanged")
		assert.Equal(t, revision, s.Revision, "a dry run: the revision it was planned at (the reveal=true export's entry not counted)")
		assert.Equal(t, collectionsOf(t, before), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)), "a dry run changes nothing")
		s = c.promote(t, "web", `{"from":"staging","to":"prod","dry_run":true,"delete":true}`, alice)
		assert.Equal(t, 2, s.Deleted, "with delete, the removed records would go")

		// Applied, at the revision of a comparison (the reveal=true exports
		// above took revisions, which a comparison does not count): each
		// record its own audit entry and event.
		require.Equal(t, revision, c.diff(t, "web", "from=staging&to=prod", alice).Revision, "the comparison's revision")
		revision = c.exportRevision(t, "web", alice)
		events := stream(t, base, pathP("web")+"/events", alice)
		env = c.mustDo("POST", pathP("web")+"/promote", `{"from":"staging","to":"prod","if_revision":`+strconv.FormatInt(s.Revision, 10)+`}`, alice, http.StatusOK)
		assert.Equal(t, "Promote applied", env.Message, "message")
		env.decode(t, &s)
		assert.Equal(t, want, s.changeList(), "the promote did what the dry run said")
		after := c.exportRevision(t, "web", alice)
		assert.Equal(t, after, s.Revision, "the revision after the promote")
		assert.Equal(t, revision+7, after, "the automatic snapshot of prod (v1.3), five records and the cluster jobs created in prod")
		log := c.auditLog("web", "?after="+strconv.FormatInt(revision, 10))
		assert.Equal(t, []string{"snapshot.create <null>", "record.create Zed", "record.update host", "record.update port", "record.update pw",
			"cluster.create <null>", "record.create cron"}, actions(log), "the automatic snapshot first, then one entry per record changed")
		for _, e := range log.Items {
			assert.Equal(t, "prod", str(e.Collection), "entries name prod")
		}
		for _, want := range []string{"snapshot.create", "record.create", "record.update", "record.update", "record.update", "cluster.create", "record.create"} {
			assert.Equal(t, want, events.next(want).event, "the change feed")
		}

		var doc exportDoc
		require.NoError(t, json.Unmarshal(c.export(t, "web", "?reveal=true", alice), &doc))
		assert.JSONEq(t, `{"clusters":{
			"app":{"records":{"Zed":{"type":"NULL","value":null},"host":{"type":"STRING","value":"staging.example"},
				"port":{"type":"INTEGER","value":8080},"same":{"type":"INTEGER","value":1},"pw":{"type":"CREDENTIAL","value":"new-secret"},
				"key":{"type":"CREDENTIAL","value":"equal"},"old":{"type":"BOOLEAN","value":true}}},
			"jobs":{"records":{"cron":{"type":"STRING","value":"* * * * *"}}},
			"legacy":{"records":{"flag":{"type":"BOOLEAN","value":false}}}}}`,
			string(mustJSON(t, doc.Collections["prod"])), "prod holds what staging holds; credentials copied; removed records kept")
		var host recordJSON
		c.mustDo("GET", pathR("web", "prod", "app", "host"), "", alice, http.StatusOK).decode(t, &host)
		assert.Equal(t, int64(2), host.Version, "an update is a new version")

		d := c.diff(t, "web", "from=staging&to=prod", alice)
		assert.Equal(t, [4]int{0, 2, 0, 7}, [4]int{d.Summary.Added, d.Summary.Removed, d.Summary.Changed, d.Summary.Unchanged},
			"compared again: only the removed records differ")

		// delete removes them (never the cluster).
		s = c.promote(t, "web", `{"from":"staging","to":"prod","delete":true}`, alice)
		assert.Equal(t, []string{"delete prod/app/old", "delete prod/legacy/flag"}, s.changeList(), "the deletes")
		assert.Equal(t, 7, s.Unchanged, "the rest unchanged")
		c.mustDo("GET", pathK("web", "prod", "legacy"), "", alice, http.StatusOK)
		assert.Equal(t, []string{"record.delete old", "record.delete flag"}, actions(c.auditLog("web", "?action=record.delete&after="+strconv.FormatInt(after, 10))),
			"each delete audited")
	})
}

func TestPromoteClusters(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		stagingAndProd(c, alice)

		clusterTag := func() string {
			_, h, _ := c.do("GET", pathK("web", "prod", "app"), "", alice)
			return h.Get("ETag")
		}
		tag := clusterTag()
		require.NotEmpty(t, tag, "GET K has an ETag")
		// records narrows; names the comparison does not list are ignored.
		s := c.promote(t, "web", `{"from":"staging/app","to":"prod/app","records":["host","pw","same","old","nope"],"delete":true}`, alice)
		assert.Equal(t, []string{"update prod/app/host", "delete prod/app/old", "update prod/app/pw"}, s.changeList(), "only the records named")
		assert.Equal(t, 1, s.Unchanged, "same is unchanged")
		assert.NotEqual(t, tag, clusterTag(), "the promote changed the cluster's ETag")
		d := c.diff(t, "web", "from=staging/app&to=prod/app&reveal=true", alice)
		assert.Equal(t, []string{
			`app/Zed added {"type":"NULL","value":null,"version":1} null`,
			`app/port changed {"type":"INTEGER","value":8080,"version":1} {"type":"STRING","value":"8080","version":1}`,
		}, d.lines(), "what was not named is left as it was")

		// Into a cluster of another name; records [] changes nothing.
		s = c.promote(t, "web", `{"from":"staging/app","to":"prod/legacy","records":[]}`, alice)
		assert.Empty(t, s.changeList(), "records [] narrows to nothing")
		s = c.promote(t, "web", `{"from":"staging/jobs","to":"prod/legacy"}`, alice)
		assert.Equal(t, []string{"create prod/legacy/cron"}, s.changeList(), "changes name the to cluster")
		var cron recordJSON
		c.mustDo("GET", pathR("web", "prod", "legacy", "cron"), "", alice, http.StatusOK).decode(t, &cron)
		assert.Equal(t, "STRING", cron.Type)
	})
}

func TestPromoteErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey), hds.WithRequireIfMatch(true))
		alice, bob := c.token("alice"), c.token("bob")
		stagingAndProd(c, alice)
		revision := c.exportRevision(t, "web", alice)
		before := c.export(t, "web", "?reveal=true", alice) // a reveal: it does not count (v1.3)
		for _, tc := range []struct{ name, body, details string }{
			{"empty body", ``, `the body must be {"from", "to"} with two collections or two clusters`},
			{"no to", `{"from":"staging"}`, "from and to are required: two collections (COLLECTION) or two clusters (COLLECTION/CLUSTER)"},
			{"mixed", `{"from":"staging","to":"prod/app"}`, "from and to must be two collections or two clusters, not one of each"},
			{"equal", `{"from":"prod","to":"prod"}`, "from and to must differ"},
			{"records for collections", `{"from":"staging","to":"prod","records":["host"]}`, "records narrows a promote between two clusters only"},
			{"if_revision 0", `{"from":"staging","to":"prod","if_revision":0}`, "if_revision must be a positive integer"},
			{"unknown field", `{"from":"staging","to":"prod","force":true}`, `unknown field "force"`},
		} {
			status, _, env := c.do("POST", pathP("web")+"/promote", tc.body, alice)
			wantError(t, tc.name, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			assert.Equal(t, tc.details, env.details(), "%s: details", tc.name)
		}
		status, _, env := c.do("POST", pathP("web")+"/promote", `{"from":"staging","to":"prod","if_revision":"7"}`, alice)
		wantError(t, "if_revision a string", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		status, _, env = c.do("POST", pathP("web")+"/promote", `{"from":"staging","to":"gone"}`, alice)
		wantError(t, "missing to", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `collection "gone" not found`, env.details())
		status, _, env = c.do("POST", pathP("web")+"/promote", `{"from":"staging/app","to":"prod/gone"}`, alice)
		wantError(t, "missing to cluster", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `cluster "gone" not found`, env.details())

		// if_revision no longer current: 412, nothing changes.
		for _, body := range []string{`{"from":"staging","to":"prod","if_revision":1}`, `{"from":"staging","to":"prod","if_revision":1,"dry_run":true}`} {
			status, _, env = c.do("POST", pathP("web")+"/promote", body, alice)
			wantError(t, "stale if_revision", status, env, http.StatusPreconditionFailed, "PRECONDITION_FAILED", "Precondition failed")
			assert.Equal(t, "current revision is "+strconv.FormatInt(revision, 10), env.details(), "details name the current revision")
		}
		status, _, env = c.do("POST", pathP("web")+"/promote", `{"from":"staging","to":"prod","if_revision":`+strconv.FormatInt(revision+1, 10)+`}`, alice)
		wantError(t, "a future if_revision", status, env, http.StatusPreconditionFailed, "PRECONDITION_FAILED", "Precondition failed")
		assert.Equal(t, collectionsOf(t, before), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)), "nothing changed")

		// Roles: editor; a viewer or reader may not; API tokens as their role
		// and scope allow. require_if_match does not apply.
		forbiddenTo(t, c, "a stranger", "POST", pathP("web")+"/promote", `{"from":"staging","to":"prod"}`, bob)
		forbiddenTo(t, c, "a stranger, bad body", "POST", pathP("web")+"/promote", `{"from":"staging"}`, bob)
		c.share(alice, "web", "bob", "reader")
		forbiddenTo(t, c, "a reader", "POST", pathP("web")+"/promote", `{"from":"staging","to":"prod"}`, bob)
		reader := c.apiToken(alice, "web", `{"name":"r","role":"reader"}`).Token
		forbiddenTo(t, c, "a reader token", "POST", pathP("web")+"/promote", `{"from":"staging","to":"prod"}`, reader)
		scoped := c.apiToken(alice, "web", `{"name":"s","role":"editor","collection":"prod"}`).Token
		forbiddenTo(t, c, "a scoped editor token", "POST", pathP("web")+"/promote", `{"from":"staging","to":"prod"}`, scoped)
		editor := c.apiToken(alice, "web", `{"name":"e","role":"editor"}`).Token
		s := c.promote(t, "web", `{"from":"staging/jobs","to":"prod/legacy"}`, editor)
		assert.Equal(t, []string{"create prod/legacy/cron"}, s.changeList(), "an editor token promotes")
		c.share(alice, "web", "bob", "editor")
		s = c.promote(t, "web", `{"from":"staging/app","to":"prod/app","delete":true}`, bob)
		assert.Equal(t, 5, s.Created+s.Updated+s.Deleted, "an editor promotes, without If-Match")
		log := c.auditLog("web", "?limit=1")
		assert.Equal(t, c.ids["bob"], str(log.Items[0].Actor), "the entries name the editor")
	})
}

func TestPromoteQuota(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey), hds.WithQuotas(store.Quotas{MaxRecordsPerCluster: 8}))
		alice := c.token("alice")
		stagingAndProd(c, alice)
		c.addRecord(alice, pathK("web", "staging", "app"), "more", "INTEGER", "1")
		c.addRecord(alice, pathK("web", "staging", "app"), "most", "INTEGER", "1")
		before := c.export(t, "web", "?reveal=true", alice)
		status, _, env := c.do("POST", pathP("web")+"/promote", `{"from":"staging/app","to":"prod/app"}`, alice)
		wantError(t, "over the quota", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		assert.Equal(t, collectionsOf(t, before), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)), "all or nothing")
		s := c.promote(t, "web", `{"from":"staging/app","to":"prod/app","delete":true}`, alice)
		assert.Equal(t, 3, s.Created, "with the removed record deleted first it fits")
		assert.Equal(t, []string{"delete prod/app/old"}, func() []string {
			out := []string{}
			for _, ch := range s.changeList() {
				if ch[:6] == "delete" {
					out = append(out, ch)
				}
			}
			return out
		}(), "the delete")
	})
}

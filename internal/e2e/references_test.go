package e2e_test

// References between records (docs/api.md#references-between-records),
// black-box on every store kind: the three forms, $${, literal text,
// resolve=true on GET R, GET K, GET K/records and the env form, masking and
// reveal of values that pulled in a credential, the caller's reach, 422
// UNRESOLVED_REFERENCE with its exact details, depth and cycles, entity
// tags, and the routes that carry stored values.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// refsFixture builds project web: collection prod with clusters app and
// db, collection stage with cluster db, records that refer to each other.
func refsFixture(t *testing.T, kind storeKind) (*client, string) {
	t.Helper()
	c := newServer(t, kind, hds.WithCredentialKey(testKey))
	tok := c.token("alice")
	c.tree(tok, "web", "prod", "app")
	c.mustDo("POST", pathK("web", "prod", "db"), "", tok, http.StatusCreated)
	c.mustDo("POST", pathC("web", "stage"), "", tok, http.StatusCreated)
	c.mustDo("POST", pathK("web", "stage", "db"), "", tok, http.StatusCreated)
	db, app, stage := pathK("web", "prod", "db"), pathK("web", "prod", "app"), pathK("web", "stage", "db")
	c.addRecord(tok, db, "host", "STRING", `"db.internal"`)
	c.addRecord(tok, db, "port", "INTEGER", `5432`)
	c.addRecord(tok, db, "password", "CREDENTIAL", `"s3cr'et"`)
	c.addRecord(tok, db, "my host}", "STRING", `"odd"`)
	c.addRecord(tok, stage, "host", "STRING", `"stage.internal"`)
	c.addRecord(tok, app, "user", "STRING", `"admin"`)
	c.addRecord(tok, app, "url", "STRING", `"postgres://${user}:${db/password}@${db/host}:${db/port}/app"`)
	c.addRecord(tok, app, "host_only", "STRING", `"${prod/db/host} ${stage/db/host} ${db/my%20host%7D}"`)
	c.addRecord(tok, app, "literal", "STRING", `"$${db/host} ${ db} ${} ${a/b/c/d} ${db/host"`)
	c.addRecord(tok, app, "list", "[]STRING", `["${user}", "${db/password}", "plain"]`)
	c.addRecord(tok, app, "flt", "FLOAT", `1e21`)
	c.addRecord(tok, app, "nothing", "NULL", `null`)
	c.addRecord(tok, app, "ints", "[]INTEGER", `[1, 2]`)
	c.addRecord(tok, app, "flag", "BOOLEAN", `true`)
	c.addRecord(tok, app, "types", "STRING", `"${flt}|${nothing}|${ints}|${flag}|${list}"`)
	c.addRecord(tok, app, "escaped", "STRING", `"$${user}"`)
	c.addRecord(tok, app, "not_rescanned", "STRING", `"${escaped}"`)
	c.addRecord(tok, app, "secret_ref", "CREDENTIAL", `"${user}"`)
	c.addRecord(tok, app, "via_secret", "STRING", `"${secret_ref}"`)
	return c, app
}

// valueOf reads GET R with query q as token and returns the value.
func (c *client) valueOf(token, rpath, q string) string {
	c.t.Helper()
	env := c.mustDo("GET", rpath+q, "", token, http.StatusOK)
	var r recordJSON
	env.decode(c.t, &r)
	return string(r.Value)
}

func TestReferencesResolveRecord(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, app := refsFixture(t, kind)
		tok := c.token("alice")
		r := func(name string) string { return app + "/records/" + name }

		// Stored values are shown as stored.
		assert.Equal(t, `"postgres://${user}:${db/password}@${db/host}:${db/port}/app"`, c.valueOf(tok, r("url"), ""))
		assert.Equal(t, `"$${user}"`, c.valueOf(tok, r("escaped"), "?resolve=false"))

		// A value that pulled in a credential is masked, unless reveal.
		assert.Equal(t, `"********"`, c.valueOf(tok, r("url"), "?resolve=true"))
		assert.Equal(t, `"postgres://admin:s3cr'et@db.internal:5432/app"`, c.valueOf(tok, r("url"), "?resolve=true&reveal=true"))
		// The three forms, percent-decoded names.
		assert.Equal(t, `"db.internal stage.internal odd"`, c.valueOf(tok, r("host_only"), "?resolve=true"))
		// Text that is not a reference stays literal; $${ becomes ${.
		assert.Equal(t, `"${db/host} ${ db} ${} ${a/b/c/d} ${db/host"`, c.valueOf(tok, r("literal"), "?resolve=true"))
		// Canonical text: FLOAT, NULL empty, arrays compact JSON with
		// their STRING elements resolved (and masked).
		// types pulled in a credential through list: masked as a whole.
		assert.Equal(t, `"********"`, c.valueOf(tok, r("types"), "?resolve=true"))
		assert.Equal(t, `"1e+21||[1,2]|true|[\"admin\",\"s3cr'et\",\"plain\"]"`, c.valueOf(tok, r("types"), "?resolve=true&reveal=true"))
		// []STRING: each element that pulled in a credential is masked.
		assert.Equal(t, `["admin","********","plain"]`, c.valueOf(tok, r("list"), "?resolve=true"))
		assert.Equal(t, `["admin","s3cr'et","plain"]`, c.valueOf(tok, r("list"), "?resolve=true&reveal=true"))
		// The text a reference yields is not scanned again.
		assert.Equal(t, `"${user}"`, c.valueOf(tok, r("not_rescanned"), "?resolve=true"))
		// A credential's text is never scanned, and masks what pulls it in.
		assert.Equal(t, `"********"`, c.valueOf(tok, r("via_secret"), "?resolve=true"))
		assert.Equal(t, `"${user}"`, c.valueOf(tok, r("via_secret"), "?resolve=true&reveal=true"))
		assert.Equal(t, `"********"`, c.valueOf(tok, r("secret_ref"), "?resolve=true"))

		// The record keeps its own type, name and version.
		env := c.mustDo("GET", r("url")+"?resolve=true", "", tok, http.StatusOK)
		var got recordJSON
		env.decode(t, &got)
		assert.Equal(t, "STRING", got.Type)
		assert.Equal(t, "url", got.Name)
		assert.Equal(t, int64(1), got.Version)
	})
}

func TestReferencesResolveClusterAndLists(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, app := refsFixture(t, kind)
		tok := c.token("alice")

		env := c.mustDo("GET", app+"?resolve=true", "", tok, http.StatusOK)
		var k clusterJSON
		env.decode(t, &k)
		assert.Equal(t, `"********"`, string(k.Data["url"]))
		assert.Equal(t, `"db.internal stage.internal odd"`, string(k.Data["host_only"]))
		assert.Equal(t, `["admin","********","plain"]`, string(k.Data["list"]))
		assert.Equal(t, `1e+21`, string(k.Data["flt"]), "other types as they are")
		env = c.mustDo("GET", app+"?resolve=true&reveal=true", "", tok, http.StatusOK)
		env.decode(t, &k)
		assert.Equal(t, `"postgres://admin:s3cr'et@db.internal:5432/app"`, string(k.Data["url"]))

		// Without resolve: stored values.
		env = c.mustDo("GET", app, "", tok, http.StatusOK)
		env.decode(t, &k)
		assert.Equal(t, `"${prod/db/host} ${stage/db/host} ${db/my%20host%7D}"`, string(k.Data["host_only"]))

		// The list: filters and sorting use the stored values.
		env = c.mustDo("GET", app+"/records?resolve=true&valueContains=stage/db&reveal=true", "", tok, http.StatusOK)
		var page listJSON[recordJSON]
		env.decode(t, &page)
		require.Len(t, page.Items, 1)
		assert.Equal(t, "host_only", page.Items[0].Name)
		assert.Equal(t, `"db.internal stage.internal odd"`, string(page.Items[0].Value))
		env = c.mustDo("GET", app+"/records?resolve=true&sortBy=name&limit=100", "", tok, http.StatusOK)
		env.decode(t, &page)
		byName := map[string]string{}
		for _, it := range page.Items {
			byName[it.Name] = string(it.Value)
		}
		assert.Equal(t, `"********"`, byName["url"])
		assert.Equal(t, `"${user}"`, byName["not_rescanned"])

		// The env form.
		res := c.raw(request("GET", app+"?format=env&resolve=true&reveal=true", "", tok))
		require.Equal(t, http.StatusOK, res.StatusCode)
		body, _ := io.ReadAll(res.Body)
		assert.Contains(t, string(body), `url='postgres://admin:s3cr'\''et@db.internal:5432/app'`+"\n")
		assert.Contains(t, string(body), `list='["admin","s3cr'\''et","plain"]'`+"\n")
		res = c.raw(request("GET", app+"?format=env&resolve=true", "", tok))
		body, _ = io.ReadAll(res.Body)
		assert.Contains(t, string(body), "url='********'\n")
		assert.Contains(t, string(body), "host_only='db.internal stage.internal odd'\n")
		res = c.raw(request("GET", app+"?format=env", "", tok))
		body, _ = io.ReadAll(res.Body)
		assert.Contains(t, string(body), "url='postgres://${user}:${db/password}@${db/host}:${db/port}/app'\n")
	})
}

func TestReferencesBadRequests(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, app := refsFixture(t, kind)
		tok := c.token("alice")
		for _, target := range []string{app + "/records/url", app, app + "/records", app + "?format=env"} {
			sep := "?"
			if strings.Contains(target, "?") {
				sep = "&"
			}
			for _, v := range []string{"yes", "1", "TRUE", ""} {
				status, _, env := c.do("GET", target+sep+"resolve="+v, "", tok)
				wantError(t, target+" resolve="+v, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
				wantDetails(t, target, env, "resolve must be true or false")
			}
		}
		status, _, env := c.do("GET", app+"/records/url?resolve=true&version=1", "", tok)
		wantError(t, "resolve with version", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		wantDetails(t, "resolve with version", env, "version")
		// version alone, and resolve=false with version, still work.
		c.mustDo("GET", app+"/records/url?resolve=false&version=1", "", tok, http.StatusOK)
		// Routes that never resolve ignore it.
		c.mustDo("GET", app+"/records/url/versions?resolve=maybe", "", tok, http.StatusOK)
	})
}

// wantUnresolved checks a 422 UNRESOLVED_REFERENCE with exactly details.
func wantUnresolved(t *testing.T, c *client, what, target, token, details string) {
	t.Helper()
	status, _, env := c.do("GET", target, "", token)
	wantError(t, what, status, env, http.StatusUnprocessableEntity, "UNRESOLVED_REFERENCE", "Unresolved reference")
	assert.Equal(t, details, env.details(), what)
}

func TestReferencesUnresolved(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		tok := c.token("alice")
		c.tree(tok, "web", "prod", "app")
		app := pathK("web", "prod", "app")
		c.addRecord(tok, app, "api_url", "STRING", `"https://${prod/db/host}/x ${missing}"`)
		r := app + "/records/api_url"
		wantUnresolved(t, c, "missing cluster", r+"?resolve=true", tok, "record api_url: ${prod/db/host}: not found")
		c.mustDo("POST", pathK("web", "prod", "db"), "", tok, http.StatusCreated)
		wantUnresolved(t, c, "missing record", r+"?resolve=true", tok, "record api_url: ${prod/db/host}: not found")
		c.addRecord(tok, pathK("web", "prod", "db"), "host", "STRING", `"h"`)
		wantUnresolved(t, c, "second reference", r+"?resolve=true", tok, "record api_url: ${missing}: not found")
		// The whole request fails, on every route that resolves.
		wantUnresolved(t, c, "cluster data", app+"?resolve=true", tok, "record api_url: ${missing}: not found")
		wantUnresolved(t, c, "list", app+"/records?resolve=true", tok, "record api_url: ${missing}: not found")
		wantUnresolved(t, c, "env", app+"?format=env&resolve=true", tok, "record api_url: ${missing}: not found")
		c.addRecord(tok, app, "missing", "NULL", `null`)
		assert.Equal(t, `"https://h/x "`, c.valueOf(tok, r, "?resolve=true"))

		// A record the env form skips is not resolved.
		c.addRecord(tok, app, "not-env", "STRING", `"${nowhere}"`)
		res := c.raw(request("GET", app+"?format=env&resolve=true", "", tok))
		assert.Equal(t, http.StatusOK, res.StatusCode, "env form skips not-env")
		wantUnresolved(t, c, "cluster data with not-env", app+"?resolve=true", tok, "record not-env: ${nowhere}: not found")
		c.mustDo("DELETE", app+"/records/not-env", "", tok, http.StatusNoContent)

		// A cycle, through another cluster, and a record referring to itself.
		c.addRecord(tok, app, "a", "STRING", `"${db/b}"`)
		c.addRecord(tok, pathK("web", "prod", "db"), "b", "STRING", `"x${app/a}"`)
		wantUnresolved(t, c, "cycle", app+"/records/a?resolve=true", tok, "record a: ${db/b}: cycle")
		c.addRecord(tok, app, "self", "[]STRING", `["ok", "${self}"]`)
		wantUnresolved(t, c, "self", app+"/records/self?resolve=true", tok, "record self: ${self}: cycle")
	})
}

func TestReferencesDepth(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		tok := c.token("alice")
		c.tree(tok, "web", "prod", "app")
		app := pathK("web", "prod", "app")
		// r0 -> r1 -> ... -> r10: a chain of 10 references.
		c.addRecord(tok, app, "r10", "STRING", `"end"`)
		for i := 9; i >= 0; i-- {
			c.addRecord(tok, app, fmt.Sprintf("r%d", i), "STRING", fmt.Sprintf(`"${r%d}+"`, i+1))
		}
		assert.Equal(t, `"end++++++++++"`, c.valueOf(tok, app+"/records/r0", "?resolve=true"))
		// An 11th.
		c.mustDo("PUT", app+"/records/r10", `{"value":"${r11}"}`, tok, http.StatusOK)
		c.addRecord(tok, app, "r11", "STRING", `"end"`)
		wantUnresolved(t, c, "11 deep", app+"/records/r0?resolve=true", tok, "record r0: ${r1}: too deep")
		assert.Equal(t, `"end+++++++++"`, c.valueOf(tok, app+"/records/r1", "?resolve=true"), "10 from r1")
	})
}

func TestReferencesReach(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, app := refsFixture(t, kind)
		alice, bob := c.token("alice"), c.token("bob")

		// A token scoped to the cluster app cannot reach prod/db.
		scoped := c.apiToken(alice, "web", `{"name":"app","role":"reader","collection":"prod","cluster":"app"}`).Token
		assert.Equal(t, `"${user}"`, c.valueOf(scoped, app+"/records/not_rescanned", "?resolve=true"), "within its scope")
		wantUnresolved(t, c, "scoped token", app+"/records/host_only?resolve=true", scoped, "record host_only: ${prod/db/host}: not found")
		// A collection-scoped token reaches prod, not stage.
		coll := c.apiToken(alice, "web", `{"name":"prod","role":"viewer","collection":"prod"}`).Token
		wantUnresolved(t, c, "collection token", app+"/records/host_only?resolve=true", coll, "record host_only: ${stage/db/host}: not found")
		assert.Equal(t, `"********"`, c.valueOf(coll, app+"/records/url", "?resolve=true"))

		// A viewer: masked; reveal=true is 403 whatever the values hold.
		c.share(alice, "web", "bob", "viewer")
		assert.Equal(t, `"********"`, c.valueOf(bob, app+"/records/url", "?resolve=true"))
		status, _, env := c.do("GET", app+"/records/user?resolve=true&reveal=true", "", bob)
		wantError(t, "viewer reveal", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		// Someone else's project is 403 before anything resolves.
		status, _, env = c.do("GET", pathR("web", "prod", "app", "url")+"?resolve=true", "", c.login("bob", "bob-password"))
		assert.Equal(t, http.StatusOK, status, "bob is a viewer now: %s", env.raw)
	})
}

// TestReferencesRevealAudit: a reveal through references writes the
// request's one credential.reveal entry and (v1.3) one more per distinct
// credential record revealed that way, naming it at the version revealed;
// a masked answer, a 304 and a failed request write none.
func TestReferencesRevealAudit(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, app := refsFixture(t, kind)
		tok := c.token("alice")
		reveals := func() []auditJSON { return c.auditLog("web", "?action=credential.reveal").Items }
		var pw, secretRef, url recordJSON
		c.mustDo("GET", pathR("web", "prod", "db", "password"), "", tok, http.StatusOK).decode(t, &pw)
		c.mustDo("GET", app+"/records/url", "", tok, http.StatusOK).decode(t, &url)
		c.mustDo("GET", app+"/records/secret_ref", "", tok, http.StatusOK).decode(t, &secretRef)
		before := len(reveals())
		c.valueOf(tok, app+"/records/url", "?resolve=true&reveal=true")
		got := reveals()
		require.Len(t, got, before+2, "the request's entry and one for db/password")
		wantRevealEntry(t, got[1], "prod", "app", "url", url.ID, 1)
		wantRevealEntry(t, got[0], "prod", "db", "password", pw.ID, 1)
		assert.Equal(t, *got[1].RequestID, *got[0].RequestID, "one request")

		// The version revealed.
		c.mustDo("PUT", pathR("web", "prod", "db", "password"), `{"value":"n3w"}`, tok, http.StatusOK)
		c.valueOf(tok, app+"/records/list", "?resolve=true&reveal=true")
		got = reveals()
		require.Len(t, got, before+4)
		wantRevealEntry(t, got[0], "prod", "db", "password", pw.ID, 2)

		// Cluster data and lists: one entry per distinct credential record
		// (db/password reached by url, list and types; secret_ref by
		// via_secret), after the request's own.
		for _, target := range []string{app + "?resolve=true&reveal=true", app + "/records?resolve=true&reveal=true&limit=100"} {
			n := len(reveals())
			c.mustDo("GET", target, "", tok, http.StatusOK)
			got = reveals()
			require.Len(t, got, n+3, target)
			wantRevealEntry(t, got[2], "prod", "app", "", "", 0)
			wantRevealEntry(t, got[1], "prod", "db", "password", pw.ID, 2)
			wantRevealEntry(t, got[0], "prod", "app", "secret_ref", secretRef.ID, 1)
		}
		n := len(reveals())
		// Masked: no entry.
		c.valueOf(tok, app+"/records/url", "?resolve=true")
		// 304: nothing revealed, no entry.
		status, h, _ := c.do("GET", app+"/records/url?resolve=true&reveal=true", "", tok)
		require.Equal(t, http.StatusOK, status)
		n += 2
		conditional := request("GET", app+"/records/url?resolve=true&reveal=true", "", tok)
		conditional.Header.Set("If-None-Match", h.Get("ETag"))
		assert.Equal(t, http.StatusNotModified, c.raw(conditional).StatusCode)
		assert.Len(t, reveals(), n)
		// A failed request writes no audit entry.
		c.addRecord(tok, app, "broken", "STRING", `"${db/password} ${nope}"`)
		wantUnresolved(t, c, "failed reveal", app+"/records/broken?resolve=true&reveal=true", tok, "record broken: ${nope}: not found")
		wantUnresolved(t, c, "failed list reveal", app+"/records?resolve=true&reveal=true", tok, "record broken: ${nope}: not found")
		wantUnresolved(t, c, "failed cluster reveal", app+"?resolve=true&reveal=true", tok, "record broken: ${nope}: not found")
		assert.Len(t, reveals(), n, "no entry for failed requests")
	})
}

func TestReferencesETag(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, app := refsFixture(t, kind)
		tok := c.token("alice")
		url := app + "/records/host_only"

		status, h, _ := c.do("GET", url, "", tok)
		require.Equal(t, http.StatusOK, status)
		own := h.Get("ETag")
		status, h, _ = c.do("GET", url+"?resolve=true", "", tok)
		require.Equal(t, http.StatusOK, status)
		resolved := h.Get("ETag")
		assert.NotEqual(t, own, resolved, "the tag covers the referenced records")
		require.True(t, strings.HasPrefix(resolved, `"`) && strings.HasSuffix(resolved, `"`), "a strong tag: %s", resolved)
		// Stable, and honoured by If-None-Match.
		conditional := func(tag string) *http.Response {
			r := request("GET", url+"?resolve=true", "", tok)
			r.Header.Set("If-None-Match", tag)
			return c.raw(r)
		}
		res := conditional(resolved)
		assert.Equal(t, http.StatusNotModified, res.StatusCode)
		assert.Equal(t, resolved, res.Header.Get("ETag"))
		assert.Equal(t, http.StatusOK, conditional(own).StatusCode, "the record's own tag is not the answer's")

		// A change of a referenced record changes the tag.
		c.mustDo("PUT", pathR("web", "stage", "db", "host"), `{"value":"stage2"}`, tok, http.StatusOK)
		res = conditional(resolved)
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.NotEqual(t, resolved, res.Header.Get("ETag"))
		// A change of a record it does not refer to changes nothing.
		resolved = res.Header.Get("ETag")
		c.mustDo("PUT", app+"/records/flag", `{"value":false}`, tok, http.StatusOK)
		assert.Equal(t, http.StatusNotModified, conditional(resolved).StatusCode)

		// Without references: the record's own tag.
		status, h, _ = c.do("GET", app+"/records/user", "", tok)
		require.Equal(t, http.StatusOK, status)
		userTag := h.Get("ETag")
		status, h, _ = c.do("GET", app+"/records/user?resolve=true", "", tok)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, userTag, h.Get("ETag"))

		// If-Match on writes compares the record's own tag.
		status, _, _ = c.sendWith("PUT", url, `{"value":"x"}`, tok, "If-Match", resolved)
		assert.Equal(t, http.StatusPreconditionFailed, status)
		c.mustDo("GET", url, "", tok, http.StatusOK)
		status, _, env := c.sendWith("PUT", url, `{"value":"x"}`, tok, "If-Match", own)
		assert.Equal(t, http.StatusOK, status, "%s", env.raw)
	})
}

func TestReferencesStoredValuesElsewhere(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, app := refsFixture(t, kind)
		tok := c.token("alice")
		stored := `"postgres://${user}:${db/password}@${db/host}:${db/port}/app"`

		// History: stored values, even with resolve=true.
		env := c.mustDo("GET", app+"/records/url/versions?resolve=true", "", tok, http.StatusOK)
		var versions listJSON[json.RawMessage]
		env.decode(t, &versions)
		require.NotEmpty(t, versions.Items)
		var v struct {
			Value json.RawMessage `json:"value"`
		}
		require.NoError(t, json.Unmarshal(versions.Items[0], &v))
		assert.Equal(t, stored, string(v.Value))

		// Export: stored values, even with resolve=true.
		res := c.raw(request("GET", pathP("web")+"/export?resolve=true", "", tok))
		require.Equal(t, http.StatusOK, res.StatusCode)
		body, _ := io.ReadAll(res.Body)
		assert.Contains(t, compact(t, body), stored)
		assert.NotContains(t, string(body), "db.internal:5432")

		// A reference to a record that does not exist (yet) is accepted,
		// and stored exactly as written.
		c.addRecord(tok, app, "later", "STRING", `"${not/yet/there}"`)
		assert.Equal(t, `"${not/yet/there}"`, c.valueOf(tok, app+"/records/later", ""))
	})
}

package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/sealing"
)

// Record history, docs/api.md#concurrency-control-and-record-history.

// versionJSON is an item of GET R/versions.
type versionJSON struct {
	Version   int64           `json:"version"`
	Name      string          `json:"name"`
	Type      string          `json:"type"`
	Value     json.RawMessage `json:"value"`
	ChangedAt string          `json:"changed_at"`
	ChangedBy *string         `json:"changed_by"`
}

// versionsOf returns GET target/versions (with query) as a list.
func (c *client) versionsOf(t *testing.T, target, query, token string) listJSON[versionJSON] {
	t.Helper()
	var out listJSON[versionJSON]
	env := c.mustDo("GET", target+"/versions"+query, "", token, http.StatusOK)
	env.decode(t, &out)
	for i, raw := range rawItems(t, env) {
		wantFields(t, fmt.Sprintf("versions item %d", i), raw, "version", "name", "type", "value", "changed_at", "changed_by")
	}
	return out
}

func rawItems(t *testing.T, env envelope) []json.RawMessage {
	t.Helper()
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	env.decode(t, &page)
	return page.Items
}

func versionNumbers(items []versionJSON) []int64 {
	out := []int64{}
	for _, it := range items {
		out = append(out, it.Version)
	}
	return out
}

func TestHistoryVersions(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		R := pathR("web", "prod", "k", "port")
		var r1, r2, r3, r4 recordJSON
		c.mustDo("POST", R+"?type=INTEGER&value=1", "", alice, http.StatusCreated).decode(t, &r1)
		c.mustDo("PUT", R+"?value=2", "", alice, http.StatusOK).decode(t, &r2)
		c.mustDo("PUT", R, `{"type":"STRING","value":"two"}`, alice, http.StatusOK).decode(t, &r3)
		c.mustDo("PUT", R+"?rename=port2", "", alice, http.StatusOK).decode(t, &r4)
		R2 := pathR("web", "prod", "k", "port2")

		page := c.versionsOf(t, R2, "", alice)
		assert.Equal(t, 4, page.Total, "versions: total")
		assert.Equal(t, 100, page.Limit, "versions: limit")
		assert.Equal(t, 0, page.Offset, "versions: offset")
		want := []struct {
			version     int64
			name, typ   string
			value, when string
		}{
			{4, "port2", "STRING", `"two"`, r4.UpdatedAt},
			{3, "port", "STRING", `"two"`, r3.UpdatedAt},
			{2, "port", "INTEGER", "2", r2.UpdatedAt},
			{1, "port", "INTEGER", "1", r1.UpdatedAt},
		}
		require.Len(t, page.Items, len(want), "versions: items")
		for i, w := range want {
			it := page.Items[i]
			assert.Equal(t, w.version, it.Version, "item %d: version", i)
			assert.Equal(t, w.name, it.Name, "item %d: name", i)
			assert.Equal(t, w.typ, it.Type, "item %d: type", i)
			assert.Equal(t, w.value, string(it.Value), "item %d: value", i)
			assert.Equal(t, w.when, it.ChangedAt, "item %d: changed_at", i)
			if assert.NotNil(t, it.ChangedBy, "item %d: changed_by, want alice's id", i) {
				assert.Equal(t, c.ids["alice"], *it.ChangedBy, "item %d: changed_by, want alice's id", i)
			}
		}
		page = c.versionsOf(t, R2, "?limit=2&offset=1&sortBy=password&sortOrder=sideways&cursor=x&count=false", alice)
		assert.Equal(t, []int64{3, 2}, versionNumbers(page.Items), "limit=2&offset=1 (other list parameters ignored): versions")
		assert.Equal(t, 4, page.Total, "limit=2&offset=1 (other list parameters ignored): total")
		assert.Equal(t, 2, page.Limit, "limit=2&offset=1 (other list parameters ignored): limit")
		assert.Equal(t, 1, page.Offset, "limit=2&offset=1 (other list parameters ignored): offset")
		page = c.versionsOf(t, R2, "?offset=10", alice)
		assert.Empty(t, page.Items, "offset past the end: items")
		assert.Equal(t, 4, page.Total, "offset past the end: total")
		for _, q := range []string{"?limit=0", "?limit=1001", "?limit=abc", "?offset=-1", "?reveal=yes"} {
			status, _, env := c.do("GET", R2+"/versions"+q, "", alice)
			wantError(t, "versions"+q, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		}
		status, _, env := c.do("GET", pathR("web", "prod", "k", "missing")+"/versions", "", alice)
		wantError(t, "versions of a missing record", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		status, _, env = c.do("GET", R2+"/versions", "", c.token("bob"))
		wantError(t, "versions under someone else's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		// By id too.
		assert.Equal(t, 4, c.versionsOf(t, pathR("web", "prod", "k", r1.ID), "", alice).Total, "versions by id: total")

		// GET R?version=N.
		var old recordJSON
		status, h, env := c.do("GET", R2+"?version=2", "", alice)
		require.Equal(t, http.StatusOK, status, "GET ?version=2: %s", env.raw)
		env.decode(t, &old)
		assert.Equal(t, recordJSON{ID: r1.ID, Name: "port", Type: "INTEGER", Value: json.RawMessage("2"), Version: 2,
			CreatedAt: r1.CreatedAt, UpdatedAt: r2.UpdatedAt}, old, "GET ?version=2: version 2 as it was")
		assert.NotEmpty(t, h.Get("ETag"), "GET ?version=2: ETag")
		_, hv1, _ := c.do("GET", R2+"?version=1", "", alice)
		_, hcur, _ := c.do("GET", R2+"?version=4", "", alice)
		_, hnow, _ := c.do("GET", R2, "", alice)
		assert.Equal(t, hnow.Get("ETag"), hcur.Get("ETag"), "ETags: version 4 (the current one) and current")
		assert.NotEqual(t, hnow.Get("ETag"), hv1.Get("ETag"), "ETags: version 1 and current")
		inm := request("GET", R2+"?version=1", "", alice)
		inm.Header.Set("If-None-Match", hv1.Get("ETag"))
		assert.Equal(t, http.StatusNotModified, c.raw(inm).StatusCode, "GET ?version=1 with its own tag in If-None-Match")
		for _, v := range []string{"0", "-1", "abc", "1.0", "+1", "1e3", "", "99999999999999999999"} {
			status, _, env := c.do("GET", R2+"?version="+v, "", alice)
			wantError(t, "GET ?version="+v, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		}
		status, _, env = c.do("GET", R2+"?version=5", "", alice)
		wantError(t, "GET ?version=5 (never reached)", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		wantDetails(t, "GET ?version=5", env, `version "5" not found`)

		// Deleting drops the history.
		c.mustDo("DELETE", R2, "", alice, http.StatusNoContent)
		c.mustDo("POST", R2+"?type=INTEGER&value=1", "", alice, http.StatusCreated)
		assert.Equal(t, 1, c.versionsOf(t, R2, "", alice).Total, "a record created again under the name: versions")
		status, _, env = c.do("GET", R2+"?version=2", "", alice)
		wantError(t, "an old version of a deleted record", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
	})
}

func TestHistoryMaxVersions(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		for _, tt := range []struct {
			max  int
			want string
		}{{2, "[6 5 4]"}, {0, "[6]"}, {-1, "[6 5 4 3 2 1]"}} {
			var opts []hds.Option
			if tt.max >= 0 {
				opts = append(opts, hds.WithMaxVersions(tt.max))
			}
			c := newServer(t, kind, opts...)
			alice := c.token("alice")
			c.tree(alice, "web", "prod", "k")
			R := pathR("web", "prod", "k", "n")
			c.mustDo("POST", R+"?type=INTEGER&value=1", "", alice, http.StatusCreated)
			for i := 2; i <= 6; i++ {
				c.mustDo("PUT", fmt.Sprintf("%s?value=%d", R, i), "", alice, http.StatusOK)
			}
			assert.Equal(t, tt.want, fmt.Sprint(versionNumbers(c.versionsOf(t, R, "", alice).Items)), "max_versions %d (-1: default 10): versions", tt.max)
			if tt.max == 2 {
				status, _, env := c.do("GET", R+"?version=3", "", alice)
				wantError(t, "a pruned version", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
				status, _, env = c.do("POST", R+"/restore?version=3", "", alice)
				wantError(t, "restore of a pruned version", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
			}
		}
	})
	assert.Panics(t, func() { hds.New(hds.WithMaxVersions(-1)) }, "WithMaxVersions(-1): New panics")
}

func TestHistoryRestore(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		R := pathR("web", "prod", "k", "port")
		c.mustDo("POST", R+"?type=INTEGER&value=1", "", alice, http.StatusCreated)
		c.mustDo("PUT", R, `{"type":"STRING","value":"two","name":"port2"}`, alice, http.StatusOK)
		R = pathR("web", "prod", "k", "port2")

		var r recordJSON
		status, h, env := c.do("POST", R+"/restore?version=1", "", alice)
		require.Equal(t, http.StatusOK, status, "restore (query): %s", env.raw)
		require.Equal(t, "Record restored", env.Message, "restore (query): message")
		env.decode(t, &r)
		assert.EqualValues(t, 3, r.Version, "restore of version 1: version")
		assert.Equal(t, "port2", r.Name, "restore of version 1: name")
		assert.Equal(t, "INTEGER", r.Type, "restore of version 1: type")
		assert.Equal(t, "1", string(r.Value), "restore of version 1: value")
		tag := etagOf(t, "restore", h)
		_, hget, _ := c.do("GET", R, "", alice)
		assert.Equal(t, hget.Get("ETag"), tag, "the restore's ETag is the record's")
		status, h, env = c.do("POST", R+"/restore", `{"version": 2}`, alice)
		require.Equal(t, http.StatusOK, status, "restore (body): %s", env.raw)
		env.decode(t, &r)
		assert.EqualValues(t, 4, r.Version, "restore of version 2: version")
		assert.Equal(t, "STRING", r.Type, "restore of version 2: type")
		assert.Equal(t, `"two"`, string(r.Value), "restore of version 2: value")
		v4 := etagOf(t, "restore (body)", h)
		c.mustDo("POST", R+"/restore?version=4", "", alice, http.StatusOK).decode(t, &r)
		assert.EqualValues(t, 5, r.Version, "restore of the current version: a new version 5")
		assert.Equal(t, `"two"`, string(r.Value), "restore of the current version: the same value")
		assert.Equal(t, []int64{5, 4, 3, 2, 1}, versionNumbers(c.versionsOf(t, R, "", alice).Items), "after restores: versions")

		for _, tt := range []struct{ name, query, body string }{
			{"no version", "", ""},
			{"both forms", "?version=1", `{"version":1}`},
			{"empty body", "", `{}`},
			{"version 0", "?version=0", ""},
			{"version -1", "?version=-1", ""},
			{"version abc", "?version=abc", ""},
			{"version 1.0", "?version=1.0", ""},
			{"body 1.0", "", `{"version":1.0}`},
			{"body string", "", `{"version":"1"}`},
			{"body 0", "", `{"version":0}`},
			{"body null", "", `{"version":null}`},
			{"unknown field", "", `{"version":1,"name":"x"}`},
		} {
			status, _, env := c.do("POST", R+"/restore"+tt.query, tt.body, alice)
			wantError(t, "restore: "+tt.name, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		}
		status, _, env = c.do("POST", R+"/restore?version=6", "", alice)
		wantError(t, "restore of a version never reached", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		status, _, env = c.do("POST", pathR("web", "prod", "k", "missing")+"/restore?version=1", "", alice)
		wantError(t, "restore of a missing record", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		status, _, env = c.do("POST", R+"/restore?version=1", "", c.token("bob"))
		wantError(t, "restore under someone else's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		status, h, env = c.sendWith("POST", R+"/restore?version=1", "", alice, "If-Match", v4)
		wantError(t, "restore with a stale tag", status, env, http.StatusPreconditionFailed, "PRECONDITION_FAILED", "Precondition failed")
		assert.Equal(t, "current version is 5", env.details(), "restore 412: details")
		assert.NotEmpty(t, h.Get("ETag"), "restore 412: ETag")
		status, _, env = c.sendWith("POST", R+"/restore?version=1", "", alice, "If-Match", "bad")
		wantError(t, "restore with a malformed If-Match", status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
		c.mustDo("GET", R, "", alice, http.StatusOK).decode(t, &r)
		assert.EqualValues(t, 5, r.Version, "refused restores changed the record: version")
		status, _, _ = c.sendWith("POST", R+"/restore?version=1", "", alice, "If-Match", c.etag(t, R, alice))
		assert.Equal(t, http.StatusOK, status, "restore with the current tag")
	})
}

// etag returns the current ETag of the record at target.
func (c *client) etag(t *testing.T, target, token string) string {
	t.Helper()
	_, h, _ := c.do("GET", target, "", token)
	return etagOf(t, "GET "+target, h)
}

// TestHistoryCredentials: old credential values are masked in the history
// unless revealed, stay sealed in the store (its raw contents hold no
// plain text of any of them), and key rotation re-seals them without
// changing any version or ETag.
func TestHistoryCredentials(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		k1, k2 := credKey(t), credKey(t)
		cs := credNewServer(t, kind, hds.WithCredentialKey(k1))
		alice := cs.token("alice")
		cs.tree(alice, "web", "prod", "k")
		K, R := pathK("web", "prod", "k"), pathR("web", "prod", "k", "pw")
		s1, s2, s3, s4 := credSecret("v1"), credSecret("v2"), credSecret("v3"), credSecret("v4")
		cs.addRecord(alice, K, "pw", "CREDENTIAL", credJSON(s1))
		cs.mustDo("PUT", R, credJSON(map[string]any{"value": s2}), alice, http.StatusOK)
		cs.mustDo("PUT", R, credJSON(map[string]any{"type": "[]CREDENTIAL", "value": []string{s3, s4}}), alice, http.StatusOK)
		cs.mustDo("PUT", R, `{"type":"STRING","value":"now plain"}`, alice, http.StatusOK)
		secrets := []string{s1, s2, s3, s4}

		masked := cs.versionsOf(t, R, "", alice)
		wantMasked := []string{`"now plain"`, `["********","********"]`, `"********"`, `"********"`}
		for i, it := range masked.Items {
			assert.Equal(t, wantMasked[i], compact(t, it.Value), "masked history item %d", i)
		}
		status, _, env := cs.do("GET", R+"/versions", "", alice)
		assert.Equal(t, http.StatusOK, status, "the masked history: %s", env.raw)
		assert.NotContains(t, string(env.raw), "cred-", "the masked history shows a secret")
		revealed := cs.versionsOf(t, R, "?reveal=true", alice)
		wantPlain := []string{`"now plain"`, credJSON([]string{s3, s4}), credJSON(s2), credJSON(s1)}
		for i, it := range revealed.Items {
			assert.Equal(t, wantPlain[i], compact(t, it.Value), "revealed history item %d", i)
		}
		var old recordJSON
		cs.mustDo("GET", R+"?version=2&reveal=true", "", alice, http.StatusOK).decode(t, &old)
		assert.Equal(t, credJSON(s2), string(old.Value), "GET ?version=2&reveal=true: value")
		assert.Equal(t, "CREDENTIAL", old.Type, "GET ?version=2&reveal=true: type")
		cs.mustDo("GET", R+"?version=2", "", alice, http.StatusOK).decode(t, &old)
		assert.Equal(t, `"********"`, string(old.Value), "GET ?version=2: masked")

		dump := cs.rawDump(t, credAt("web", "prod", "k", ""))
		assert.Empty(t, credFindLeaks(dump, secrets), "the store's raw contents hold the plain text of old credential versions")
		assert.NotEmpty(t, credFindLeaks(dump, []string{"now plain"}), "the raw dump does not even show the plain STRING: the check is blind")
		oldKey := "hds1:" + sealing.KeyID(k1) + ":"
		require.Contains(t, strings.Join(dump, "\n"), oldKey, "no value sealed by the first key in the raw dump: the check is blind")

		// Rotation re-seals every version, and changes no version or tag.
		before := cs.versionsOf(t, R, "", alice)
		tag := cs.etag(t, R, alice)
		p, err := hds.RotateCredentials(t.Context(), cs.store, hds.Rotation{Primary: k2, Previous: [][]byte{k1}})
		require.NoError(t, err, "RotateCredentials")
		assert.Equal(t, 1, p.Seen, "RotateCredentials: 1 record seen (%+v)", p)
		assert.Equal(t, 1, p.Resealed, "RotateCredentials: 1 record re-sealed (%+v)", p)
		after := cs.versionsOf(t, R, "", alice)
		assert.Equal(t, credJSON(before), credJSON(after), "rotation changed the history")
		assert.Equal(t, tag, cs.etag(t, R, alice), "rotation changed the ETag")
		dump = cs.rawDump(t, credAt("web", "prod", "k", ""))
		assert.NotContains(t, strings.Join(dump, "\n"), oldKey, "a value sealed by the old key is left after rotation")
		assert.Empty(t, credFindLeaks(dump, secrets), "after rotation, the raw contents hold plain text")
		withNew := cs.attach(hds.WithCredentialKey(k2))
		revealed = withNew.versionsOf(t, R, "?reveal=true", alice)
		for i, it := range revealed.Items {
			assert.Equal(t, wantPlain[i], compact(t, it.Value), "after rotation, with the new key alone, item %d", i)
		}
		// Restoring an old credential version brings its secret back.
		var r recordJSON
		withNew.mustDo("POST", R+"/restore?version=2&reveal=true", "", alice, http.StatusOK).decode(t, &r)
		assert.Equal(t, "CREDENTIAL", r.Type, "restore of a credential version: type")
		assert.Equal(t, credJSON(s2), string(r.Value), "restore of a credential version: value")
	})
}

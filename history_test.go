package hds_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/sealing"
)

// Record history, API.md section 14.

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
		if page.Total != 4 || page.Limit != 100 || page.Offset != 0 {
			t.Errorf("versions: total %d limit %d offset %d, want 4 100 0", page.Total, page.Limit, page.Offset)
		}
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
		if len(page.Items) != len(want) {
			t.Fatalf("versions: %d items, want %d", len(page.Items), len(want))
		}
		for i, w := range want {
			it := page.Items[i]
			if it.Version != w.version || it.Name != w.name || it.Type != w.typ || string(it.Value) != w.value || it.ChangedAt != w.when {
				t.Errorf("item %d: %+v (value %s), want %+v", i, it, it.Value, w)
			}
			if it.ChangedBy == nil || *it.ChangedBy != c.ids["alice"] {
				t.Errorf("item %d: changed_by %v, want alice's id %s", i, it.ChangedBy, c.ids["alice"])
			}
		}
		page = c.versionsOf(t, R2, "?limit=2&offset=1&sortBy=password&sortOrder=sideways&cursor=x&count=false", alice)
		if got := versionNumbers(page.Items); fmt.Sprint(got) != "[3 2]" || page.Total != 4 || page.Limit != 2 || page.Offset != 1 {
			t.Errorf("limit=2&offset=1 (other list parameters ignored): versions %v total %d", got, page.Total)
		}
		page = c.versionsOf(t, R2, "?offset=10", alice)
		if len(page.Items) != 0 || page.Total != 4 {
			t.Errorf("offset past the end: %d items, total %d", len(page.Items), page.Total)
		}
		for _, q := range []string{"?limit=0", "?limit=1001", "?limit=abc", "?offset=-1", "?reveal=yes"} {
			status, _, env := c.do("GET", R2+"/versions"+q, "", alice)
			wantError(t, "versions"+q, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		}
		status, _, env := c.do("GET", pathR("web", "prod", "k", "missing")+"/versions", "", alice)
		wantError(t, "versions of a missing record", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		status, _, env = c.do("GET", R2+"/versions", "", c.token("bob"))
		wantError(t, "versions under someone else's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		// By id too.
		if byID := c.versionsOf(t, pathR("web", "prod", "k", r1.ID), "", alice); byID.Total != 4 {
			t.Errorf("versions by id: total %d", byID.Total)
		}

		// GET R?version=N.
		var old recordJSON
		status, h, env := c.do("GET", R2+"?version=2", "", alice)
		if status != http.StatusOK {
			t.Fatalf("GET ?version=2: %d %s", status, env.raw)
		}
		env.decode(t, &old)
		if fmt.Sprint(old) != fmt.Sprint(recordJSON{ID: r1.ID, Name: "port", Type: "INTEGER", Value: json.RawMessage("2"), Version: 2,
			CreatedAt: r1.CreatedAt, UpdatedAt: r2.UpdatedAt}) {
			t.Errorf("GET ?version=2: %+v (value %s), want version 2 as it was", old, old.Value)
		}
		if tag := h.Get("ETag"); tag == "" {
			t.Errorf("GET ?version=2: no ETag")
		}
		_, hv1, _ := c.do("GET", R2+"?version=1", "", alice)
		_, hcur, _ := c.do("GET", R2+"?version=4", "", alice)
		_, hnow, _ := c.do("GET", R2, "", alice)
		if hcur.Get("ETag") != hnow.Get("ETag") || hv1.Get("ETag") == hnow.Get("ETag") {
			t.Errorf("ETags: version 1 %s, version 4 %s, current %s", hv1.Get("ETag"), hcur.Get("ETag"), hnow.Get("ETag"))
		}
		inm := request("GET", R2+"?version=1", "", alice)
		inm.Header.Set("If-None-Match", hv1.Get("ETag"))
		if res := c.raw(inm); res.StatusCode != http.StatusNotModified {
			t.Errorf("GET ?version=1 with its own tag in If-None-Match: %d, want 304", res.StatusCode)
		}
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
		if page := c.versionsOf(t, R2, "", alice); page.Total != 1 {
			t.Errorf("a record created again under the name: %d versions, want 1", page.Total)
		}
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
			if got := fmt.Sprint(versionNumbers(c.versionsOf(t, R, "", alice).Items)); got != tt.want {
				t.Errorf("max_versions %d (-1: default 10): versions %s, want %s", tt.max, got, tt.want)
			}
			if tt.max == 2 {
				status, _, env := c.do("GET", R+"?version=3", "", alice)
				wantError(t, "a pruned version", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
				status, _, env = c.do("POST", R+"/restore?version=3", "", alice)
				wantError(t, "restore of a pruned version", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
			}
		}
	})
	defer func() {
		if recover() == nil {
			t.Errorf("WithMaxVersions(-1): New did not panic")
		}
	}()
	hds.New(hds.WithMaxVersions(-1))
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
		if status != http.StatusOK || env.Message != "Record restored" {
			t.Fatalf("restore (query): %d %q %s", status, env.Message, env.raw)
		}
		env.decode(t, &r)
		if r.Version != 3 || r.Name != "port2" || r.Type != "INTEGER" || string(r.Value) != "1" {
			t.Errorf("restore of version 1: %+v (value %s), want version 3, name port2, INTEGER 1", r, r.Value)
		}
		tag := etagOf(t, "restore", h)
		_, hget, _ := c.do("GET", R, "", alice)
		if hget.Get("ETag") != tag {
			t.Errorf("the restore's ETag %s is not the record's %s", tag, hget.Get("ETag"))
		}
		status, h, env = c.do("POST", R+"/restore", `{"version": 2}`, alice)
		if status != http.StatusOK {
			t.Fatalf("restore (body): %d %s", status, env.raw)
		}
		env.decode(t, &r)
		if r.Version != 4 || r.Type != "STRING" || string(r.Value) != `"two"` {
			t.Errorf("restore of version 2: %+v (value %s)", r, r.Value)
		}
		v4 := etagOf(t, "restore (body)", h)
		c.mustDo("POST", R+"/restore?version=4", "", alice, http.StatusOK).decode(t, &r)
		if r.Version != 5 || string(r.Value) != `"two"` {
			t.Errorf("restore of the current version: %+v, want a new version 5 with the same value", r)
		}
		if got := fmt.Sprint(versionNumbers(c.versionsOf(t, R, "", alice).Items)); got != "[5 4 3 2 1]" {
			t.Errorf("after restores: versions %s", got)
		}

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
		if env.details() != "current version is 5" || h.Get("ETag") == "" {
			t.Errorf("restore 412: details %q ETag %q", env.details(), h.Get("ETag"))
		}
		status, _, env = c.sendWith("POST", R+"/restore?version=1", "", alice, "If-Match", "bad")
		wantError(t, "restore with a malformed If-Match", status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
		c.mustDo("GET", R, "", alice, http.StatusOK).decode(t, &r)
		if r.Version != 5 {
			t.Errorf("refused restores changed the record: version %d", r.Version)
		}
		status, _, _ = c.sendWith("POST", R+"/restore?version=1", "", alice, "If-Match", c.etag(t, R, alice))
		if status != http.StatusOK {
			t.Errorf("restore with the current tag: %d", status)
		}
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
			if compact(t, it.Value) != wantMasked[i] {
				t.Errorf("masked history item %d: %s, want %s", i, it.Value, wantMasked[i])
			}
		}
		status, _, env := cs.do("GET", R+"/versions", "", alice)
		if status != http.StatusOK || strings.Contains(string(env.raw), "cred-") {
			t.Errorf("the masked history shows a secret: %s", env.raw)
		}
		revealed := cs.versionsOf(t, R, "?reveal=true", alice)
		wantPlain := []string{`"now plain"`, credJSON([]string{s3, s4}), credJSON(s2), credJSON(s1)}
		for i, it := range revealed.Items {
			if compact(t, it.Value) != wantPlain[i] {
				t.Errorf("revealed history item %d: %s, want %s", i, it.Value, wantPlain[i])
			}
		}
		var old recordJSON
		cs.mustDo("GET", R+"?version=2&reveal=true", "", alice, http.StatusOK).decode(t, &old)
		if string(old.Value) != credJSON(s2) || old.Type != "CREDENTIAL" {
			t.Errorf("GET ?version=2&reveal=true: %s %s", old.Type, old.Value)
		}
		cs.mustDo("GET", R+"?version=2", "", alice, http.StatusOK).decode(t, &old)
		if string(old.Value) != `"********"` {
			t.Errorf("GET ?version=2: %s, want masked", old.Value)
		}

		dump := cs.rawDump(t, credAt("web", "prod", "k", ""))
		if leaks := credFindLeaks(dump, secrets); len(leaks) > 0 {
			t.Errorf("the store's raw contents hold the plain text of old credential versions: %q", leaks)
		}
		if leaks := credFindLeaks(dump, []string{"now plain"}); len(leaks) == 0 {
			t.Errorf("the raw dump does not even show the plain STRING: the check is blind")
		}
		oldKey := "hds1:" + sealing.KeyID(k1) + ":"
		if !strings.Contains(strings.Join(dump, "\n"), oldKey) {
			t.Fatalf("no value sealed by the first key in the raw dump: the check is blind")
		}

		// Rotation re-seals every version, and changes no version or tag.
		before := cs.versionsOf(t, R, "", alice)
		tag := cs.etag(t, R, alice)
		p, err := hds.RotateCredentials(t.Context(), cs.store, hds.Rotation{Primary: k2, Previous: [][]byte{k1}})
		if err != nil {
			t.Fatalf("RotateCredentials: %v", err)
		}
		if p.Seen != 1 || p.Resealed != 1 {
			t.Errorf("RotateCredentials = %+v, want 1 record seen and re-sealed", p)
		}
		after := cs.versionsOf(t, R, "", alice)
		if b, a := credJSON(before), credJSON(after); b != a {
			t.Errorf("rotation changed the history:\n%v\n%v", before, after)
		}
		if got := cs.etag(t, R, alice); got != tag {
			t.Errorf("rotation changed the ETag: %s -> %s", tag, got)
		}
		dump = cs.rawDump(t, credAt("web", "prod", "k", ""))
		if strings.Contains(strings.Join(dump, "\n"), oldKey) {
			t.Errorf("a value sealed by the old key is left after rotation")
		}
		if leaks := credFindLeaks(dump, secrets); len(leaks) > 0 {
			t.Errorf("after rotation, the raw contents hold plain text: %q", leaks)
		}
		withNew := cs.attach(hds.WithCredentialKey(k2))
		revealed = withNew.versionsOf(t, R, "?reveal=true", alice)
		for i, it := range revealed.Items {
			if compact(t, it.Value) != wantPlain[i] {
				t.Errorf("after rotation, with the new key alone, item %d: %s, want %s", i, it.Value, wantPlain[i])
			}
		}
		// Restoring an old credential version brings its secret back.
		var r recordJSON
		withNew.mustDo("POST", R+"/restore?version=2&reveal=true", "", alice, http.StatusOK).decode(t, &r)
		if r.Type != "CREDENTIAL" || string(r.Value) != credJSON(s2) {
			t.Errorf("restore of a credential version: %s %s", r.Type, r.Value)
		}
	})
}

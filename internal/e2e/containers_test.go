package e2e_test

// Projects, collections and clusters (docs/api.md#data-model and
// docs/api.md#routes): CRUD, rename, cascading delete, not found and
// ownership.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProjects(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice, bob := c.token("alice"), c.token("bob")
		projectFields := []string{"id", "name", "owner_id", "created_at", "updated_at", "collection_count", "role"}

		creates := []struct{ form, target, body, name string }{
			{"path form", pathP("web"), "", "web"},
			{"body form", "/api/v1/projects", `{"name":"api"}`, "api"},
			{"path form with the same name in the body", pathP("docs"), `{"name":"docs"}`, "docs"},
		}
		ids := map[string]string{}
		for _, cr := range creates {
			env := c.mustDo("POST", cr.target, cr.body, alice, http.StatusCreated)
			what := "create project, " + cr.form
			assert.EqualValues(t, "Project created", env.Message, "%s: message %q, want \"Project created\"", what, env.Message)
			wantFields(t, what, env.Data, projectFields...)
			var p projectJSON
			env.decode(t, &p)
			wantID(t, what, p.ID)
			wantTimestamps(t, what, p.CreatedAt, p.UpdatedAt)
			assert.Equal(t, cr.name, p.Name, "%s: name", what)
			assert.Equal(t, c.ids["alice"], p.OwnerID, "%s: owner_id", what)
			assert.Zero(t, p.CollectionCount, "%s: collection_count", what)
			assert.Equal(t, p.CreatedAt, p.UpdatedAt, "%s: updated_at is created_at", what)
			ids[cr.name] = p.ID

			env = c.mustDo("GET", pathP(cr.name), "", alice, http.StatusOK)
			wantFields(t, "GET project", env.Data, projectFields...)
			var got projectJSON
			env.decode(t, &got)
			assert.EqualValues(t, p, got, "GET %s: %+v, want what create returned: %+v", cr.name, got, p)
		}
		assert.Less(t, ids["web"], ids["api"], "ids sort by creation time: %v", ids)
		assert.Less(t, ids["api"], ids["docs"], "ids sort by creation time: %v", ids)

		c.mustDo("POST", pathP("bobs"), "", bob, http.StatusCreated)
		lists := []struct {
			token string
			want  []string
		}{{alice, []string{"api", "docs", "web"}}, {bob, []string{"bobs"}}}
		for _, l := range lists {
			env := c.mustDo("GET", "/api/v1/projects", "", l.token, http.StatusOK)
			wantFields(t, "project list", env.Data, "items", "total", "limit", "offset", "next_cursor")
			var list listJSON[projectJSON]
			env.decode(t, &list)
			var names []string
			for _, p := range list.Items {
				names = append(names, p.Name)
			}
			assert.Equal(t, l.want, names, "GET /api/v1/projects: names (only the caller's)")
			assert.Equal(t, len(l.want), list.Total, "GET /api/v1/projects: total")
			assert.Equal(t, 100, list.Limit, "GET /api/v1/projects: limit")
			assert.Equal(t, 0, list.Offset, "GET /api/v1/projects: offset")
		}
	})
}

func TestProjectNamesUniqueAcrossUsers(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice, bob := c.token("alice"), c.token("bob")
		c.mustDo("POST", pathP("shared"), "", alice, http.StatusCreated)
		tests := []struct{ who, token, target, body string }{
			{"alice, path form", alice, pathP("shared"), ""},
			{"alice, body form", alice, "/api/v1/projects", `{"name":"shared"}`},
			{"bob, path form", bob, pathP("shared"), ""},
			{"bob, body form", bob, "/api/v1/projects", `{"name":"shared"}`},
		}
		for _, tt := range tests {
			status, _, env := c.do("POST", tt.target, tt.body, tt.token)
			wantError(t, "duplicate project name by "+tt.who, status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
		}
		env := c.mustDo("GET", pathP("shared"), "", alice, http.StatusOK)
		var p projectJSON
		env.decode(t, &p)
		assert.EqualValues(t, c.ids["alice"], p.OwnerID, "the project changed owner: %s", env.Data)
	})
}

func TestCollectionsAndClusters(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		collectionFields := []string{"id", "name", "project", "created_at", "updated_at", "cluster_count", "record_count"}
		clusterFields := []string{"id", "name", "project", "collection", "created_at", "updated_at", "record_count"}
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)

		for _, cr := range []struct{ form, target, body, name string }{
			{"path form", pathC("web", "prod"), "", "prod"},
			{"body form", pathP("web") + "/collections", `{"name":"dev"}`, "dev"},
		} {
			env := c.mustDo("POST", cr.target, cr.body, alice, http.StatusCreated)
			what := "create collection, " + cr.form
			wantFields(t, what, env.Data, collectionFields...)
			var col collectionJSON
			env.decode(t, &col)
			wantID(t, what, col.ID)
			wantTimestamps(t, what, col.CreatedAt, col.UpdatedAt)
			assert.Equal(t, cr.name, col.Name, "%s: name", what)
			assert.Equal(t, "web", col.Project, "%s: project", what)
			assert.Zero(t, col.ClusterCount, "%s: cluster_count", what)
			assert.Zero(t, col.RecordCount, "%s: record_count", what)
		}
		for _, cr := range []struct{ form, target, body, name string }{
			{"path form", pathK("web", "prod", "k1"), "", "k1"},
			{"body form", pathC("web", "prod") + "/clusters", `{"name":"k2"}`, "k2"},
			{"path form with the same name in the body", pathK("web", "prod", "k3"), `{"name":"k3"}`, "k3"},
		} {
			env := c.mustDo("POST", cr.target, cr.body, alice, http.StatusCreated)
			what := "create cluster, " + cr.form
			wantFields(t, what, env.Data, clusterFields...)
			var k clusterJSON
			env.decode(t, &k)
			wantID(t, what, k.ID)
			wantTimestamps(t, what, k.CreatedAt, k.UpdatedAt)
			assert.Equal(t, cr.name, k.Name, "%s: name", what)
			assert.Equal(t, "web", k.Project, "%s: project", what)
			assert.Equal(t, "prod", k.Collection, "%s: collection", what)
			assert.Zero(t, k.RecordCount, "%s: record_count", what)
		}
		k1, k2 := pathK("web", "prod", "k1"), pathK("web", "prod", "k2")
		c.addRecord(alice, k1, "a", "STRING", `"x"`)
		c.addRecord(alice, k1, "b", "INTEGER", `1`)
		for _, n := range []string{"a", "b", "c"} {
			c.addRecord(alice, k2, n, "NULL", `null`)
		}

		env := c.mustDo("GET", pathP("web"), "", alice, http.StatusOK)
		var p projectJSON
		env.decode(t, &p)
		assert.EqualValues(t, 2, p.CollectionCount, "project collection_count %d, want 2", p.CollectionCount)
		env = c.mustDo("GET", pathC("web", "prod"), "", alice, http.StatusOK)
		wantFields(t, "GET collection", env.Data, collectionFields...)
		var col collectionJSON
		env.decode(t, &col)
		assert.Equal(t, 3, col.ClusterCount, "collection prod: cluster_count")
		assert.Equal(t, 5, col.RecordCount, "collection prod: record_count (records of all clusters)")

		env = c.mustDo("GET", pathP("web")+"/collections", "", alice, http.StatusOK)
		var cols listJSON[collectionJSON]
		env.decode(t, &cols)
		want := map[string][2]int{"dev": {0, 0}, "prod": {3, 5}}
		assert.Equal(t, 2, cols.Total, "collection list: total")
		assert.Len(t, cols.Items, 2, "collection list: items")
		for _, it := range cols.Items {
			w := want[it.Name]
			assert.Equal(t, w[0], it.ClusterCount, "collection list item %s: cluster_count", it.Name)
			assert.Equal(t, w[1], it.RecordCount, "collection list item %s: record_count", it.Name)
			assert.Equal(t, "web", it.Project, "collection list item %s: project", it.Name)
		}

		env = c.mustDo("GET", pathC("web", "prod")+"/clusters", "", alice, http.StatusOK)
		var ks listJSON[clusterJSON]
		env.decode(t, &ks)
		counts := map[string]int{}
		for _, it := range ks.Items {
			counts[it.Name] = it.RecordCount
			assert.Nil(t, it.Data, "cluster list item %s carries data", it.Name)
		}
		assert.Equal(t, 3, ks.Total, "cluster list: total")
		assert.Equal(t, map[string]int{"k1": 2, "k2": 3, "k3": 0}, counts, "cluster list: record counts")

		// GET K is the cluster data: the cluster fields plus data.
		env = c.mustDo("GET", k1, "", alice, http.StatusOK)
		wantFields(t, "GET cluster", env.Data, append(clusterFields, "data")...)
		var k clusterJSON
		env.decode(t, &k)
		assert.Equal(t, 2, k.RecordCount, "cluster data of k1: record_count")
		assert.Len(t, k.Data, 2, "cluster data of k1: data")
		assert.Equal(t, `"x"`, string(k.Data["a"]), "cluster data of k1: a")
		assert.Equal(t, `1`, string(k.Data["b"]), "cluster data of k1: b")
		env = c.mustDo("GET", pathK("web", "prod", "k3"), "", alice, http.StatusOK)
		var raw struct {
			Data json.RawMessage `json:"data"`
		}
		env.decode(t, &raw)
		assert.EqualValues(t, "{}", string(raw.Data), "cluster data of an empty cluster: data %s, want {}", raw.Data)

		// Duplicates.
		for _, d := range []struct{ what, target, body string }{
			{"collection, path form", pathC("web", "prod"), ""},
			{"collection, body form", pathP("web") + "/collections", `{"name":"prod"}`},
			{"cluster, path form", k1, ""},
			{"cluster, body form", pathC("web", "prod") + "/clusters", `{"name":"k1"}`},
			{"record, path form", k1 + "/records/a?type=NULL", ""},
			{"record, body form", k1 + "/records", `{"name":"a","type":"NULL"}`},
		} {
			status, _, env := c.do("POST", d.target, d.body, alice)
			wantError(t, "duplicate "+d.what, status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
		}
		// The same name under another parent is fine.
		c.mustDo("POST", pathK("web", "dev", "k1"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathR("web", "prod", "k2", "b")+"?type=NULL", "", alice, http.StatusConflict)
		c.mustDo("POST", pathR("web", "prod", "k3", "b")+"?type=NULL", "", alice, http.StatusCreated)
	})
}

// common are the fields every resource has.
type common struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	Version   int64  `json:"version"`
}

func TestRename(t *testing.T) {
	levels := []struct {
		level   string
		orig    string
		path    func(name string) string
		sibling string
		child   func(name string) string
	}{
		{"project", "web", pathP, "other", func(n string) string { return pathC(n, "prod") }},
		{"collection", "prod", func(n string) string { return pathC("web", n) }, "prod2",
			func(n string) string { return pathK("web", n, "k") }},
		{"cluster", "k", func(n string) string { return pathK("web", "prod", n) }, "k2",
			func(n string) string { return pathR("web", "prod", n, "r") }},
	}
	forms := []struct {
		form   string
		rename func(path, name string) (target, body string)
	}{
		{"?rename=", func(path, name string) (string, string) { return path + "?rename=" + url.QueryEscape(name), "" }},
		{"body", func(path, name string) (string, string) { return path, fmt.Sprintf(`{"name":%q}`, name) }},
	}
	forEachKind(t, func(t *testing.T, kind storeKind) {
		for _, lv := range levels {
			for _, f := range forms {
				t.Run(lv.level+" "+f.form, func(t *testing.T) {
					c := newServer(t, kind)
					alice := c.token("alice")
					c.tree(alice, "web", "prod", "k")
					c.addRecord(alice, pathK("web", "prod", "k"), "r", "STRING", `"v"`)
					c.mustDo("POST", pathP("other"), "", alice, http.StatusCreated)
					c.mustDo("POST", pathC("web", "prod2"), "", alice, http.StatusCreated)
					c.mustDo("POST", pathK("web", "prod", "k2"), "", alice, http.StatusCreated)
					c.mustDo("POST", pathP("bobs"), "", c.token("bob"), http.StatusCreated)

					var before, after, child, childAfter common
					c.mustDo("GET", lv.path(lv.orig), "", alice, http.StatusOK).decode(t, &before)
					c.mustDo("GET", lv.child(lv.orig), "", alice, http.StatusOK).decode(t, &child)
					waitPast(t, before.UpdatedAt)

					target, body := f.rename(lv.path(lv.orig), "renamed")
					env := c.mustDo("PUT", target, body, alice, http.StatusOK)
					env.decode(t, &after)
					assert.Equal(t, before.ID, after.ID, "rename: id")
					assert.Equal(t, "renamed", after.Name, "rename: name")
					assert.Greater(t, after.UpdatedAt, before.UpdatedAt, "rename: updated_at moved")
					assert.Equal(t, before.CreatedAt, after.CreatedAt, "rename: created_at kept")
					var reread common
					c.mustDo("GET", lv.path("renamed"), "", alice, http.StatusOK).decode(t, &reread)
					assert.EqualValues(t, after, reread, "GET after rename: %+v, want %+v", reread, after)
					status, _, env := c.do("GET", lv.path(lv.orig), "", alice)
					wantError(t, "GET the old name", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
					c.mustDo("GET", lv.child("renamed"), "", alice, http.StatusOK).decode(t, &childAfter)
					assert.EqualValues(t, child.ID, childAfter.ID, "the child changed id across the rename: %s -> %s", child.ID, childAfter.ID)

					siblings := []string{lv.sibling}
					if lv.level == "project" {
						siblings = append(siblings, "bobs") // unique across users
					}
					for _, s := range siblings {
						target, body = f.rename(lv.path("renamed"), s)
						status, _, env = c.do("PUT", target, body, alice)
						wantError(t, "rename onto "+s, status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
					}
					c.mustDo("GET", lv.path("renamed"), "", alice, http.StatusOK)

					var same common
					target, body = f.rename(lv.path("renamed"), "renamed")
					c.mustDo("PUT", target, body, alice, http.StatusOK).decode(t, &same)
					assert.Equal(t, before.ID, same.ID, "rename to the current name: id")
					assert.Equal(t, "renamed", same.Name, "rename to the current name: name")
				})
			}
		}
	})
}

func TestDeleteCascades(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		k := pathK("web", "prod", "k")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, k, "r", "STRING", `"v"`)
		c.addRecord(alice, k, "s", "STRING", `"w"`)

		gone := func(what string, targets ...string) {
			t.Helper()
			for _, target := range targets {
				status, _, env := c.do("GET", target, "", alice)
				wantError(t, what+": GET "+target, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
			}
		}

		c.mustDo("DELETE", pathR("web", "prod", "k", "r"), "", alice, http.StatusNoContent)
		gone("deleted record", pathR("web", "prod", "k", "r"))
		var kk clusterJSON
		c.mustDo("GET", k, "", alice, http.StatusOK).decode(t, &kk)
		assert.Equal(t, 1, kk.RecordCount, "after deleting a record: record_count")
		assert.Len(t, kk.Data, 1, "after deleting a record: data")

		c.mustDo("DELETE", k, "", alice, http.StatusNoContent)
		gone("deleted cluster", k, k+"/records", pathR("web", "prod", "k", "s"))
		var col collectionJSON
		c.mustDo("GET", pathC("web", "prod"), "", alice, http.StatusOK).decode(t, &col)
		assert.Zero(t, col.ClusterCount, "after deleting the cluster: cluster_count")
		assert.Zero(t, col.RecordCount, "after deleting the cluster: record_count")

		c.mustDo("POST", k, "", alice, http.StatusCreated)
		c.addRecord(alice, k, "r", "STRING", `"v"`)
		c.mustDo("DELETE", pathC("web", "prod"), "", alice, http.StatusNoContent)
		gone("deleted collection", pathC("web", "prod"), pathC("web", "prod")+"/clusters", k, pathR("web", "prod", "k", "r"))

		c.mustDo("POST", pathC("web", "prod"), "", alice, http.StatusCreated)
		c.mustDo("POST", k, "", alice, http.StatusCreated)
		c.addRecord(alice, k, "r", "STRING", `"v"`)
		var oldP projectJSON
		c.mustDo("GET", pathP("web"), "", alice, http.StatusOK).decode(t, &oldP)
		c.mustDo("DELETE", pathP("web"), "", alice, http.StatusNoContent)
		gone("deleted project", pathP("web"), pathP("web")+"/collections", pathC("web", "prod"), k, pathR("web", "prod", "k", "r"))
		var list listJSON[projectJSON]
		c.mustDo("GET", "/api/v1/projects", "", alice, http.StatusOK).decode(t, &list)
		assert.EqualValues(t, 0, list.Total, "the deleted project is still listed: %+v", list)
		var newP projectJSON
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated).decode(t, &newP)
		assert.NotEqual(t, oldP.ID, newP.ID, "re-created project: a new id")
		assert.Zero(t, newP.CollectionCount, "re-created project: collection_count")
		gone("children of the deleted project", pathC("web", "prod"))

		for _, target := range []string{pathP("nope"), pathC("web", "nope"), pathK("web", "nope", "k"), pathR("web", "nope", "k", "r")} {
			status, _, env := c.do("DELETE", target, "", alice)
			wantError(t, "DELETE "+target, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		}
	})
}

func TestNotFoundNamesMissingLevel(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		tests := []struct{ method, target, body, details string }{
			{"GET", pathP("nope"), "", `project "nope" not found`},
			{"PUT", pathP("nope") + "?rename=x", "", `project "nope" not found`},
			{"GET", pathP("nope") + "/collections", "", `project "nope" not found`},
			{"POST", pathC("nope", "prod"), "", `project "nope" not found`},
			{"POST", pathP("nope") + "/collections", `{"name":"prod"}`, `project "nope" not found`},
			{"POST", pathR("nope", "prod", "k", "r") + "?type=NULL", "", `project "nope" not found`},
			{"GET", pathC("web", "prod2"), "", `collection "prod2" not found`},
			{"GET", pathC("web", "prod2") + "/clusters", "", `collection "prod2" not found`},
			{"POST", pathK("web", "prod2", "k"), "", `collection "prod2" not found`},
			{"POST", pathC("web", "prod2") + "/clusters", `{"name":"k"}`, `collection "prod2" not found`},
			{"POST", pathR("web", "prod2", "k", "r") + "?type=NULL", "", `collection "prod2" not found`},
			{"PUT", pathC("web", "prod2") + "?rename=x", "", `collection "prod2" not found`},
			{"GET", pathK("web", "prod", "k9"), "", `cluster "k9" not found`},
			{"GET", pathK("web", "prod", "k9") + "/records", "", `cluster "k9" not found`},
			{"POST", pathR("web", "prod", "k9", "r") + "?type=NULL", "", `cluster "k9" not found`},
			{"POST", pathK("web", "prod", "k9") + "/records", `{"name":"r","type":"NULL"}`, `cluster "k9" not found`},
			{"DELETE", pathK("web", "prod", "k9"), "", `cluster "k9" not found`},
			{"GET", pathR("web", "prod", "k", "r9"), "", `record "r9" not found`},
			{"PUT", pathR("web", "prod", "k", "r9") + "?value=x", "", `record "r9" not found`},
			{"DELETE", pathR("web", "prod", "k", "r9"), "", `record "r9" not found`},
		}
		for _, tt := range tests {
			status, _, env := c.do(tt.method, tt.target, tt.body, alice)
			what := tt.method + " " + tt.target
			wantError(t, what, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
			wantDetails(t, what, env, tt.details)
		}
	})
}

func TestOtherUsersProjectForbidden(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "web", "prod", "k")
		r := c.addRecord(alice, pathK("web", "prod", "k"), "r", "STRING", `"v"`)
		P, C, K, R := pathP("web"), pathC("web", "prod"), pathK("web", "prod", "k"), pathR("web", "prod", "k", "r")
		RID := pathR("web", "prod", "k", r.ID)
		tests := []struct{ method, target, body string }{
			{"GET", P, ""},
			{"PUT", P + "?rename=mine", ""},
			{"PUT", P, `{"name":"mine"}`},
			{"DELETE", P, ""},
			{"GET", P + "/collections", ""},
			{"POST", P + "/collections", `{"name":"new"}`},
			{"POST", pathC("web", "new"), ""},
			{"GET", C, ""},
			{"PUT", C + "?rename=x", ""},
			{"PUT", C, `{"name":"x"}`},
			{"DELETE", C, ""},
			{"GET", C + "/clusters", ""},
			{"POST", C + "/clusters", `{"name":"new"}`},
			{"POST", pathK("web", "prod", "new"), ""},
			{"GET", K, ""},
			{"GET", K + "?reveal=true", ""},
			{"PUT", K + "?rename=x", ""},
			{"PUT", K, `{"name":"x"}`},
			{"DELETE", K, ""},
			{"GET", K + "/records", ""},
			{"GET", K + "/records?type=STRING", ""},
			{"POST", K + "/records", `{"name":"n","type":"STRING","value":"x"}`},
			{"POST", pathR("web", "prod", "k", "n") + "?type=STRING&value=x", ""},
			{"GET", R, ""},
			{"GET", RID, ""},
			{"PUT", R + "?value=x", ""},
			{"PUT", RID, `{"value":"x"}`},
			{"PUT", R + "?rename=x", ""},
			{"DELETE", R, ""},
			{"DELETE", RID, ""},
			// Children that do not exist: still 403, never 404.
			{"GET", pathC("web", "missing"), ""},
			{"DELETE", pathC("web", "missing"), ""},
			{"GET", pathC("web", "missing") + "/clusters", ""},
			{"GET", pathK("web", "missing", "k"), ""},
			{"POST", pathK("web", "missing", "k"), ""},
			{"GET", pathR("web", "prod", "missing", "r"), ""},
			{"GET", pathR("web", "prod", "k", "missing"), ""},
			{"POST", pathR("web", "missing", "k", "r") + "?type=NULL", ""},
			{"PUT", pathR("web", "prod", "k", "missing") + "?value=x", ""},
		}
		for _, tt := range tests {
			status, _, env := c.do(tt.method, tt.target, tt.body, bob)
			wantError(t, "bob: "+tt.method+" "+tt.target, status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
		}

		var got recordJSON
		c.mustDo("GET", R, "", alice, http.StatusOK).decode(t, &got)
		assert.EqualValues(t, 1, got.Version, "alice's record changed: version")
		assert.Equal(t, `"v"`, string(got.Value), "alice's record changed: value")
		var col collectionJSON
		c.mustDo("GET", C, "", alice, http.StatusOK).decode(t, &col)
		assert.Equal(t, 1, col.ClusterCount, "alice's collection changed: cluster_count")
		assert.Equal(t, 1, col.RecordCount, "alice's collection changed: record_count")
		var list listJSON[projectJSON]
		c.mustDo("GET", "/api/v1/projects", "", bob, http.StatusOK).decode(t, &list)
		assert.Zero(t, list.Total, "bob's list shows alice's project: total")
		assert.Empty(t, list.Items, "bob's list shows alice's project")
	})
}

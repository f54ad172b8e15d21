package e2e_test

// Names (docs/api.md#data-model).

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNames(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K, R := pathK("web", "prod", "k"), pathR("web", "prod", "k", "r")
		c.addRecord(alice, K, "r", "NULL", "null")
		long := func(s string, n int) string { return strings.Repeat(s, n) }
		escaped := func(s string) string { return url.PathEscape(s) }
		invalid := []struct{ name, method, target, body string }{
			{"empty (body)", "POST", "/api/v1/projects", `{"name":""}`},
			{"129 code points (path)", "POST", "/api/v1/projects/" + escaped(long("é", 129)), ""},
			{"129 code points (body)", "POST", "/api/v1/projects", `{"name":"` + long("a", 129) + `"}`},
			{"U+0001 (path)", "POST", "/api/v1/projects/a%01b", ""},
			{"U+001F (body)", "POST", "/api/v1/projects", `{"name":"a\u001fb"}`},
			{"U+007F (path)", "POST", "/api/v1/projects/a%7F", ""},
			{"U+0080 (path)", "POST", "/api/v1/projects/a%C2%80", ""},
			{"U+0085 (body)", "POST", "/api/v1/projects", `{"name":"a\u0085b"}`},
			{"U+009F (path)", "POST", "/api/v1/projects/a%C2%9F", ""},
			{"tab (body)", "POST", "/api/v1/projects", `{"name":"a\tb"}`},
			{"U+0000 (path)", "POST", "/api/v1/projects/a%00b", ""},
			{"U+0000 (body)", "POST", "/api/v1/projects", `{"name":"a\u0000b"}`},
			{"slash (path, %2F)", "POST", "/api/v1/projects/a%2Fb", ""},
			{"slash (body)", "POST", "/api/v1/projects", `{"name":"a/b"}`},
			{"leading space (path)", "POST", "/api/v1/projects/%20a", ""},
			{"trailing space (path)", "POST", "/api/v1/projects/a%20", ""},
			{"leading space (body)", "POST", "/api/v1/projects", `{"name":" a"}`},
			{"trailing space (body)", "POST", "/api/v1/projects", `{"name":"a "}`},
			{"trailing no-break space (path)", "POST", "/api/v1/projects/a%C2%A0", ""},
			{"leading ideographic space (body)", "POST", "/api/v1/projects", `{"name":"\u3000a"}`},
			{"trailing em space (body)", "POST", "/api/v1/projects", `{"name":"a\u2003"}`},
			{"invalid UTF-8 (path)", "POST", "/api/v1/projects/%FF", ""},
			{"truncated UTF-8 (path)", "POST", "/api/v1/projects/a%C3", ""},
			{"dot (body)", "POST", "/api/v1/projects", `{"name":"."}`},
			{"dot-dot (body)", "POST", "/api/v1/projects", `{"name":".."}`},
			{"collection dot (body)", "POST", pathP("web") + "/collections", `{"name":"."}`},
			{"collection slash (path)", "POST", pathP("web") + "/collections/a%2Fb", ""},
			{"cluster dot-dot (body)", "POST", pathC("web", "prod") + "/clusters", `{"name":".."}`},
			{"cluster leading space (path)", "POST", pathC("web", "prod") + "/clusters/%20k", ""},
			{"record dot (body)", "POST", K + "/records", `{"name":".","type":"NULL"}`},
			{"record empty (body)", "POST", K + "/records", `{"name":"","type":"NULL"}`},
			{"record slash (path)", "POST", K + "/records/a%2Fb?type=NULL", ""},
			{"record control (path)", "POST", K + "/records/a%0Ab?type=NULL", ""},
			{"rename project to empty", "PUT", pathP("web") + "?rename=", ""},
			{"rename project with a slash", "PUT", pathP("web") + "?rename=a%2Fb", ""},
			{"rename project to ..", "PUT", pathP("web") + "?rename=..", ""},
			{"rename collection to .", "PUT", pathC("web", "prod"), `{"name":"."}`},
			{"rename cluster with a leading space", "PUT", K + "?rename=%20k", ""},
			{"rename record with a trailing space", "PUT", R + "?rename=r%20", ""},
			{"rename record to 129 code points", "PUT", R, `{"name":"` + long("x", 129) + `"}`},
		}
		for _, tt := range invalid {
			status, _, env := c.do(tt.method, tt.target, tt.body, alice)
			wantError(t, "name: "+tt.name, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			assert.NotEqualValues(t, "", env.details(), "name: %s: details do not say which rule failed", tt.name)
		}

		valid := []string{
			"my project", "日本語", "Ünïcödé ñ", "100%", "a.b", "...", ".hidden", "a+b", "a?b", "a#b", "a&b=c",
			"emoji 🎉", "zero\u200bwidth", long("x", 128), long("é", 128), "a b  c",
		}
		for _, name := range valid {
			var p projectJSON
			c.mustDo("POST", pathP(name), "", alice, http.StatusCreated).decode(t, &p)
			assert.EqualValues(t, name, p.Name, "project %q created as %q", name, p.Name)
			c.mustDo("GET", pathP(name), "", alice, http.StatusOK).decode(t, &p)
			assert.EqualValues(t, name, p.Name, "project %q read as %q", name, p.Name)
			c.mustDo("POST", pathC(name, name), "", alice, http.StatusCreated)
			c.mustDo("POST", pathK(name, name, name), "", alice, http.StatusCreated)
			var r recordJSON
			c.mustDo("POST", pathR(name, name, name, name)+"?type=NULL", "", alice, http.StatusCreated).decode(t, &r)
			assert.EqualValues(t, name, r.Name, "record %q created as %q", name, r.Name)
			c.mustDo("GET", pathR(name, name, name, name), "", alice, http.StatusOK)
		}
		body, _ := json.Marshal(map[string]string{"name": "body form ✓"})
		c.mustDo("POST", "/api/v1/projects", string(body), alice, http.StatusCreated)
		c.mustDo("GET", "/api/v1/projects/body%20form%20%E2%9C%93", "", alice, http.StatusOK)

		// Case-sensitive, byte for byte, no normalization.
		for _, name := range []string{"Web", "WEB", "\u00e9", "e\u0301"} {
			c.mustDo("POST", pathP(name), "", alice, http.StatusCreated)
		}
		status, _, env := c.do("GET", pathP("wEB"), "", alice)
		wantError(t, "GET wEB", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		var p projectJSON
		c.mustDo("GET", pathP("e\u0301"), "", alice, http.StatusOK).decode(t, &p)
		assert.EqualValues(t, "e\u0301", p.Name, "decomposed é read back as %q", p.Name)
	})
}

func TestUnstorableNamesInPaths(t *testing.T) {
	// Names no resource can have (invalid UTF-8, U+0000, control
	// characters) are not found or refused, never a server error, whatever
	// the store does with such bytes.
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, pathK("web", "prod", "k"), "r", "NULL", "null")
		for _, bad := range []string{"%FF", "a%00b", "%C3%28", "a%01", "%ED%A0%80"} {
			for _, req := range []struct{ method, target string }{
				{"GET", "/api/v1/projects/" + bad},
				{"DELETE", "/api/v1/projects/" + bad},
				{"PUT", "/api/v1/projects/" + bad + "?rename=x"},
				{"GET", "/api/v1/projects/" + bad + "/collections"},
				{"GET", "/api/v1/projects/web/collections/" + bad},
				{"GET", "/api/v1/projects/web/collections/" + bad + "/clusters"},
				{"DELETE", "/api/v1/projects/web/collections/" + bad},
				{"GET", "/api/v1/projects/web/collections/prod/clusters/" + bad},
				{"GET", "/api/v1/projects/web/collections/prod/clusters/" + bad + "/records"},
				{"GET", "/api/v1/projects/web/collections/prod/clusters/k/records/" + bad},
				{"PUT", "/api/v1/projects/web/collections/prod/clusters/k/records/" + bad + "?value="},
				{"DELETE", "/api/v1/projects/web/collections/prod/clusters/k/records/" + bad},
				{"PUT", "/api/v1/projects/web/collections/prod/clusters/k/records/r?rename=" + bad},
				{"PUT", "/api/v1/projects/web?rename=" + bad},
			} {
				status, _, env := c.do(req.method, req.target, "", alice)
				assert.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest}, status, "%s %s: want 404 or 400: %s", req.method, req.target, env.raw)
			}
		}
		// A username or password no account can have fails like any other.
		for _, body := range []string{
			`{"username":"ali\u0000ce","password":"alice-password"}`,
			`{"username":"alice","password":"alice-\u0000password"}`,
			`{"username":"\udc00","password":"x"}`,
			`{"username":"","password":""}`,
		} {
			status, _, env := c.do("POST", "/api/v1/auth/login", body, "")
			assert.Contains(t, []int{http.StatusUnauthorized, http.StatusBadRequest}, status, "login %s: want 401 or 400: %s", body, env.raw)
		}
	})
}

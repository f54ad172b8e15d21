package e2e_test

// Request forms and bodies (docs/api.md#routes) and the 413 and 415
// errors of docs/api.md#errors.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

func TestMixedFormsAndBadBodies(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, pathK("web", "prod", "k"), "r", "STRING", `"v"`)
		P, C, K, R := pathP("web"), pathC("web", "prod"), pathK("web", "prod", "k"), pathR("web", "prod", "k", "r")
		rec := `{"type":"STRING","value":"x"}`
		tests := []struct {
			name, method, target, body string
		}{
			// A body with the path form's query parameters.
			{"PUT P body + ?rename", "PUT", P + "?rename=a", `{"name":"b"}`},
			{"PUT P body + ?rename (same name)", "PUT", P + "?rename=a", `{"name":"a"}`},
			{"PUT C body + ?rename", "PUT", C + "?rename=a", `{"name":"b"}`},
			{"PUT K body + ?rename", "PUT", K + "?rename=a", `{"name":"b"}`},
			{"POST R body + ?type", "POST", pathR("web", "prod", "k", "n1") + "?type=STRING", rec},
			{"POST R body + ?value", "POST", pathR("web", "prod", "k", "n2") + "?value=x", rec},
			{"POST K/records body + ?type", "POST", K + "/records?type=STRING", `{"name":"n3","type":"STRING","value":"x"}`},
			{"POST K/records body + ?value", "POST", K + "/records?value=x", `{"name":"n4","type":"STRING","value":"x"}`},
			{"POST K/records body + ?rename", "POST", K + "/records?rename=x", `{"name":"n5","type":"STRING","value":"x"}`},
			{"PUT R body + ?rename", "PUT", R + "?rename=z", `{"value":"y"}`},
			{"PUT R body + ?type", "PUT", R + "?type=STRING", `{"value":"y"}`},
			{"PUT R body + ?value", "PUT", R + "?value=y", `{"type":"STRING"}`},
			// A body name that differs from the path.
			{"POST P body name differs", "POST", pathP("new1"), `{"name":"other"}`},
			{"POST C body name differs", "POST", pathC("web", "new1"), `{"name":"other"}`},
			{"POST K body name differs", "POST", pathK("web", "prod", "new1"), `{"name":"other"}`},
			{"POST R body name differs", "POST", pathR("web", "prod", "k", "n6"), `{"name":"other","type":"STRING","value":"x"}`},
			// Unknown fields, case included.
			{"unknown field, POST /projects", "POST", "/api/v1/projects", `{"name":"x1","extra":1}`},
			{"field in another case, POST /projects", "POST", "/api/v1/projects", `{"Name":"x2"}`},
			{"unknown field, PUT P", "PUT", P, `{"name":"x3","owner_id":"bob"}`},
			{"unknown field, POST P/collections", "POST", P + "/collections", `{"name":"x4","id":"1"}`},
			{"unknown field, POST K/records", "POST", K + "/records", `{"name":"x5","type":"STRING","value":"x","version":3}`},
			{"field in another case, POST K/records", "POST", K + "/records", `{"name":"x6","Type":"STRING","value":"x"}`},
			{"unknown field, PUT R", "PUT", R, `{"value":"y","version":7}`},
			{"field in another case, PUT R", "PUT", R, `{"Value":"y"}`},
			// Malformed JSON, not an object, trailing data, wrong field types.
			{"malformed, POST /projects", "POST", "/api/v1/projects", `{"name":`},
			{"malformed, PUT R", "PUT", R, `{"value":}`},
			{"array, POST /projects", "POST", "/api/v1/projects", `[]`},
			{"array of objects, POST /projects", "POST", "/api/v1/projects", `[{"name":"x7"}]`},
			{"string, POST /projects", "POST", "/api/v1/projects", `"x8"`},
			{"null, POST /projects", "POST", "/api/v1/projects", `null`},
			{"number, PUT R", "PUT", R, `5`},
			{"string, POST R", "POST", pathR("web", "prod", "k", "n7"), `"x"`},
			{"trailing object, POST /projects", "POST", "/api/v1/projects", `{"name":"x9"} {"name":"x10"}`},
			{"trailing garbage, POST K/records", "POST", K + "/records", `{"name":"x11","type":"NULL"}x`},
			{"name is a number", "POST", "/api/v1/projects", `{"name":5}`},
			{"type is a number", "POST", K + "/records", `{"name":"x12","type":5,"value":1}`},
			// Missing required fields.
			{"POST /projects {}", "POST", "/api/v1/projects", `{}`},
			{"POST /projects no body", "POST", "/api/v1/projects", ``},
			{"POST P/collections {}", "POST", P + "/collections", `{}`},
			{"POST C/clusters {}", "POST", C + "/clusters", `{}`},
			{"POST K/records without name", "POST", K + "/records", `{"type":"STRING","value":"x"}`},
			{"POST K/records without type", "POST", K + "/records", `{"name":"x13","value":"x"}`},
			{"POST K/records no body", "POST", K + "/records", ``},
			{"POST K/records with only query parameters", "POST", K + "/records?type=STRING&value=x&rename=x14", ``},
			{"POST R body without type", "POST", pathR("web", "prod", "k", "n8"), `{"value":"x"}`},
			{"POST R without type", "POST", pathR("web", "prod", "k", "n9") + "?value=x", ``},
			{"PUT P {}", "PUT", P, `{}`},
			{"PUT P nothing", "PUT", P, ``},
			{"PUT C nothing", "PUT", C, ``},
			{"PUT K nothing", "PUT", K, ``},
			{"PUT R {}", "PUT", R, `{}`},
			{"PUT R nothing", "PUT", R, ``},
		}
		for _, tt := range tests {
			status, _, env := c.do(tt.method, tt.target, tt.body, alice)
			wantError(t, tt.name, status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
		}
		// Nothing was created or changed by those.
		var list listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &list)
		if assert.Equal(t, 1, list.Total, "records after the bad requests: total (%+v)", list) && assert.Len(t, list.Items, 1, "records after the bad requests: items") {
			assert.EqualValues(t, 1, list.Items[0].Version, "records after the bad requests: version")
			assert.Equal(t, `"v"`, string(list.Items[0].Value), "records after the bad requests: value")
		}
		var projects listJSON[projectJSON]
		c.mustDo("GET", "/api/v1/projects", "", alice, http.StatusOK).decode(t, &projects)
		assert.EqualValues(t, 1, projects.Total, "projects after the bad requests: %+v", projects)

		// Other parameters, such as reveal, may accompany a body.
		c.mustDo("POST", pathR("web", "prod", "k", "ok1")+"?reveal=true", rec, alice, http.StatusCreated)
		c.mustDo("POST", K+"/records?reveal=false", `{"name":"ok2","type":"NULL"}`, alice, http.StatusCreated)
		c.mustDo("PUT", R+"?reveal=true", `{"value":"y"}`, alice, http.StatusOK)
		c.mustDo("POST", pathP("ok3")+"?unrelated=1", `{"name":"ok3"}`, alice, http.StatusCreated)
		c.mustDo("POST", pathR("web", "prod", "k", "ok4"), `{"name":"ok4","type":"NULL"}`, alice, http.StatusCreated)
		c.mustDo("POST", pathC("web", "ok5"), `{}`, alice, http.StatusCreated)
	})
}

func TestContentTypeAndBodySize(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		send := func(contentType, body string, sized bool) (int, envelope) {
			t.Helper()
			var r *http.Request
			if sized {
				r = httptest.NewRequest("POST", "/api/v1/projects", strings.NewReader(body))
			} else { // unknown length: the body is streamed
				r = httptest.NewRequest("POST", "/api/v1/projects", io.MultiReader(strings.NewReader(body)))
			}
			if contentType != "" {
				r.Header.Set("Content-Type", contentType)
			}
			r.Header.Set("Authorization", "Bearer "+alice)
			status, _, env := c.send(r)
			return status, env
		}
		tests := []struct {
			name, contentType, body string
			status                  int
			code                    string
		}{
			{"text/plain", "text/plain", `{"name":"ct1"}`, 415, "INVALID_REQUEST"},
			{"no Content-Type", "", `{"name":"ct2"}`, 415, "INVALID_REQUEST"},
			{"form", "application/x-www-form-urlencoded", `name=ct3`, 415, "INVALID_REQUEST"},
			{"application/jsonx", "application/jsonx", `{"name":"ct4"}`, 415, "INVALID_REQUEST"},
			{"application/json; charset=utf-8", "application/json; charset=utf-8", `{"name":"ct5"}`, 201, ""},
			{"application/json", "application/json", `{"name":"ct6"}`, 201, ""},
		}
		for _, tt := range tests {
			for _, sized := range []bool{true, false} {
				status, env := send(tt.contentType, tt.body, sized)
				if tt.status == 201 {
					assert.EqualValues(t, 201, status, "%s: status %d, want 201: %s", tt.name, status, env.raw)
					c.mustDo("DELETE", pathP(strings.TrimSuffix(strings.TrimPrefix(tt.body, `{"name":"`), `"}`)), "", alice, 204)
					continue
				}
				wantError(t, tt.name, status, env, tt.status, tt.code, "")
			}
		}
		// An empty body needs no Content-Type.
		r := request("POST", pathP("ct7"), "", alice)
		r.Header.Set("Content-Type", "text/plain")
		plainStatus, _, plainEnv := c.send(r)
		assert.Equal(t, http.StatusCreated, plainStatus, "POST P with an empty text/plain body: %s", plainEnv.raw)

		const mib = 1 << 20
		big := `{"name":"` + strings.Repeat("a", mib) + `"}`
		for _, sized := range []bool{true, false} {
			status, env := send("application/json", big, sized)
			wantError(t, fmt.Sprintf("body over 1 MiB (length known: %v)", sized), status, env, http.StatusRequestEntityTooLarge, "INVALID_REQUEST", "")
		}
		// A body of exactly 1 MiB is read (and refused for its content).
		head := `{"name":"exact","padding":"`
		exact := head + strings.Repeat("a", mib-len(head)-2) + `"}`
		status, env := send("application/json", exact, true)
		wantError(t, "body of exactly 1 MiB", status, env, http.StatusBadRequest, "INVALID_REQUEST", "")

		small := newServer(t, kind, hds.WithMaxBodyBytes(100))
		stok := small.token("alice")
		body200 := `{"name":"` + strings.Repeat("b", 189) + `"}`
		require.EqualValues(t, 200, len(body200), "body length %d", len(body200))
		status, _, env = small.do("POST", "/api/v1/projects", body200, stok)
		wantError(t, "200-byte body with WithMaxBodyBytes(100)", status, env, http.StatusRequestEntityTooLarge, "INVALID_REQUEST", "")
		r = httptest.NewRequest("POST", "/api/v1/projects", io.MultiReader(strings.NewReader(body200)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+stok)
		status, _, env = small.send(r)
		wantError(t, "streamed 200-byte body with WithMaxBodyBytes(100)", status, env, http.StatusRequestEntityTooLarge, "INVALID_REQUEST", "")
		small.mustDo("POST", "/api/v1/projects", `{"name":"fits"}`, stok, http.StatusCreated)
	})
}

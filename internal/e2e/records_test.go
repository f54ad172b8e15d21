package e2e_test

// Records (docs/api.md#routes): updates, addressing by id, versions under
// concurrency (docs/api.md#concurrency-control-and-record-history).

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds"
)

func TestRecordUpdate(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		path := func(name string) string { return pathR("web", "prod", "k", name) }

		// expect reads a record back and compares it.
		expect := func(what, name, typ, value string, version int64) recordJSON {
			t.Helper()
			var r recordJSON
			status, _, env := c.do("GET", path(name)+"?reveal=true", "", alice)
			if !assert.Equal(t, http.StatusOK, status, "%s: GET %s: %s", what, name, env.raw) {
				return r
			}
			env.decode(t, &r)
			assert.Equal(t, typ, r.Type, "%s: record %s: type", what, name)
			assert.Equal(t, value, compact(t, r.Value), "%s: record %s: value", what, name)
			assert.Equal(t, version, r.Version, "%s: record %s: version", what, name)
			return r
		}
		steps := []struct {
			what, target, body string
			status             int
			code               string
			// the record afterwards
			name, typ, value string
			version          int64
		}{
			{"create", path("n") + "?type=INTEGER&value=1", "", 201, "", "n", "INTEGER", `1`, 1},
			{"value alone (query)", path("n") + "?value=2", "", 200, "", "n", "INTEGER", `2`, 2},
			{"value not fitting the current type (query)", path("n") + "?value=abc", "", 400, "VALIDATION_ERROR", "n", "INTEGER", `2`, 2},
			{"value alone (body)", path("n"), `{"value":3}`, 200, "", "n", "INTEGER", `3`, 3},
			{"value not fitting the current type (body)", path("n"), `{"value":"3"}`, 400, "VALIDATION_ERROR", "n", "INTEGER", `3`, 3},
			{"type alone, the value fits", path("n") + "?type=FLOAT", "", 200, "", "n", "FLOAT", `3`, 4},
			{"type and value (query, short form)", path("n") + "?type=int&value=7", "", 200, "", "n", "INTEGER", `7`, 5},
			{"type and value (body)", path("n"), `{"type":"BOOLEAN","value":true}`, 200, "", "n", "BOOLEAN", `true`, 6},
			{"type and a value not fitting it", path("n"), `{"type":"DATE","value":"2026-02-30"}`, 400, "VALIDATION_ERROR", "n", "BOOLEAN", `true`, 6},
			{"unknown type", path("n") + "?type=FOO&value=1", "", 400, "VALIDATION_ERROR", "n", "BOOLEAN", `true`, 6},
			{"type null with no value", path("n") + "?type=NULL&value=", "", 200, "", "n", "NULL", `null`, 7},

			{"create s", path("s") + "?type=STRING&value=abc", "", 201, "", "s", "STRING", `"abc"`, 1},
			{"type alone, the value does not fit (query)", path("s") + "?type=INTEGER", "", 400, "VALIDATION_ERROR", "s", "STRING", `"abc"`, 1},
			{"type alone, the value does not fit (body)", path("s"), `{"type":"INTEGER"}`, 400, "VALIDATION_ERROR", "s", "STRING", `"abc"`, 1},
			{"type alone to UUID, the value does not fit", path("s") + "?type=UUID", "", 400, "VALIDATION_ERROR", "s", "STRING", `"abc"`, 1},
			{"type and value", path("s") + "?type=INTEGER&value=5", "", 200, "", "s", "INTEGER", `5`, 2},
			{"name and value in one step", path("s"), `{"name":"s2","value":6}`, 200, "", "s2", "INTEGER", `6`, 3},
			{"rename to the current name", path("s2") + "?rename=s2", "", 200, "", "s2", "INTEGER", `6`, 3},
			{"rename to the current name (body)", path("s2"), `{"name":"s2"}`, 200, "", "s2", "INTEGER", `6`, 3},
			{"rename onto a sibling", path("s2") + "?rename=n", "", 409, "RESOURCE_EXISTS", "s2", "INTEGER", `6`, 3},
			{"rename onto a sibling with a value", path("s2"), `{"name":"n","value":9}`, 409, "RESOURCE_EXISTS", "s2", "INTEGER", `6`, 3},
			{"rename (query)", path("s2") + "?rename=s3", "", 200, "", "s3", "INTEGER", `6`, 4},
			{"rename (body)", path("s3"), `{"name":"s4"}`, 200, "", "s4", "INTEGER", `6`, 5},
			{"value with a bad rename", path("s4") + "?value=8&rename=%20bad", "", 400, "VALIDATION_ERROR", "s4", "INTEGER", `6`, 5},
			{"value and rename in one step (query)", path("s4") + "?value=8&rename=s5", "", 200, "", "s5", "INTEGER", `8`, 6},
			{"type, value and rename in one step (query)", path("s5") + "?type=STRING&value=eight&rename=s6", "", 200, "", "s6", "STRING", `"eight"`, 7},

			{"create an int array", path("a") + "?type=[]INTEGER&value=[1,2]", "", 201, "", "a", "[]INTEGER", `[1,2]`, 1},
			{"array type alone, the value fits", path("a") + "?type=[]FLT", "", 200, "", "a", "[]FLOAT", `[1,2]`, 2},
			{"array type alone, the value does not fit", path("a") + "?type=[]BOOLEAN", "", 400, "VALIDATION_ERROR", "a", "[]FLOAT", `[1,2]`, 2},

			{"create a credential", path("c") + "?type=CREDENTIAL&value=s3cret", "", 201, "", "c", "CREDENTIAL", `"s3cret"`, 1},
			{"credential to STRING without a value (query)", path("c") + "?type=STRING", "", 400, "VALIDATION_ERROR", "c", "CREDENTIAL", `"s3cret"`, 1},
			{"credential to STRING without a value (body)", path("c"), `{"type":"STRING"}`, 400, "VALIDATION_ERROR", "c", "CREDENTIAL", `"s3cret"`, 1},
			{"credential to []CREDENTIAL without a value", path("c") + "?type=[]CREDENTIAL", "", 400, "VALIDATION_ERROR", "c", "CREDENTIAL", `"s3cret"`, 1},
			{"credential value alone", path("c") + "?value=n3w", "", 200, "", "c", "CREDENTIAL", `"n3w"`, 2},
			{"credential to STRING with a value", path("c") + "?type=STRING&value=plain", "", 200, "", "c", "STRING", `"plain"`, 3},
			{"create a credential array", path("ca"), `{"type":"[]CREDENTIAL","value":["x","y"]}`, 201, "", "ca", "[]CREDENTIAL", `["x","y"]`, 1},
			{"credential array to []STRING without a value", path("ca") + "?type=[]STRING", "", 400, "VALIDATION_ERROR", "ca", "[]CREDENTIAL", `["x","y"]`, 1},
			{"credential array to []STRING with a value", path("ca"), `{"type":"[]STRING","value":["z"]}`, 200, "", "ca", "[]STRING", `["z"]`, 2},
		}
		for _, s := range steps {
			method := "PUT"
			if s.status == 201 {
				method = "POST"
			}
			status, _, env := c.do(method, s.target, s.body, alice)
			if s.code != "" {
				wantError(t, s.what, status, env, s.status, s.code, "")
			} else {
				assert.Equal(t, s.status, status, "%s: %s", s.what, env.raw)
			}
			before := recordJSON{}
			if status/100 == 2 {
				env.decode(t, &before)
				assert.Equal(t, s.name, before.Name, "%s: response name", s.what)
				assert.Equal(t, s.version, before.Version, "%s: response version", s.what)
			}
			expect(s.what, s.name, s.typ, s.value, s.version)
		}

		// Nothing to update is a bad request.
		status, _, env := c.do("PUT", path("n"), "", alice)
		wantError(t, "PUT with nothing", status, env, http.StatusBadRequest, "INVALID_REQUEST", "")

		// An update moves updated_at and keeps created_at.
		var before, after recordJSON
		c.mustDo("GET", path("n"), "", alice, http.StatusOK).decode(t, &before)
		waitPast(t, before.UpdatedAt)
		c.mustDo("PUT", path("n")+"?type=STRING&value=x", "", alice, http.StatusOK).decode(t, &after)
		assert.Equal(t, before.CreatedAt, after.CreatedAt, "update: created_at kept")
		assert.Greater(t, after.UpdatedAt, before.UpdatedAt, "update: updated_at moved")
		assert.Equal(t, before.ID, after.ID, "update: id kept")

		var list listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &list)
		var names []string
		for _, r := range list.Items {
			names = append(names, r.Name)
		}
		assert.Equal(t, []string{"a", "c", "ca", "n", "s6"}, names, "records after the updates")
	})
}

func TestRecordByID(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.mustDo("POST", pathK("web", "prod", "k2"), "", alice, http.StatusCreated)
		K := pathK("web", "prod", "k")
		byID := func(id string) string { return K + "/records/" + id }
		r1 := c.addRecord(alice, K, "r1", "STRING", `"one"`)
		r2 := c.addRecord(alice, K, "r2", "STRING", `"two"`)

		var got recordJSON
		c.mustDo("GET", byID(r1.ID), "", alice, http.StatusOK).decode(t, &got)
		assert.Equal(t, "r1", got.Name, "GET by id: name")
		assert.Equal(t, r1.ID, got.ID, "GET by id: id")
		c.mustDo("PUT", byID(r1.ID)+"?value=uno", "", alice, http.StatusOK).decode(t, &got)
		assert.Equal(t, "r1", got.Name, "PUT by id: name")
		assert.Equal(t, `"uno"`, string(got.Value), "PUT by id: value")
		assert.EqualValues(t, 2, got.Version, "PUT by id: version")
		c.mustDo("PUT", byID(r1.ID), `{"name":"first"}`, alice, http.StatusOK).decode(t, &got)
		assert.Equal(t, "first", got.Name, "rename by id: name")
		assert.Equal(t, r1.ID, got.ID, "rename by id: id")
		assert.EqualValues(t, 3, got.Version, "rename by id: version")
		c.mustDo("GET", byID(r1.ID), "", alice, http.StatusOK)
		c.mustDo("GET", pathR("web", "prod", "k", "first"), "", alice, http.StatusOK)

		// An id of a record in another cluster is not found here.
		r3 := c.addRecord(alice, pathK("web", "prod", "k2"), "r3", "NULL", "null")
		status, _, env := c.do("GET", byID(r3.ID), "", alice)
		wantError(t, "GET a record of another cluster by id", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")

		// A name that looks like a UUID but is no record's id is a name.
		const uuidName = "0190a5b4-c0de-7abc-8def-0123456789ab"
		c.mustDo("POST", byID(uuidName)+"?type=STRING&value=named", "", alice, http.StatusCreated)
		c.mustDo("GET", byID(uuidName), "", alice, http.StatusOK).decode(t, &got)
		assert.Equal(t, uuidName, got.Name, "record named like a UUID: name")
		assert.Equal(t, `"named"`, string(got.Value), "record named like a UUID: value")
		// POST R where R is a record's id (in any case) names that
		// record, which exists: 409, in both forms, and nothing is created.
		for _, seg := range []string{r2.ID, strings.ToUpper(r2.ID)} {
			status, _, env = c.do("POST", byID(seg)+"?type=STRING&value=impostor", "", alice)
			wantError(t, "POST R with an existing record's id", status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
			status, _, env = c.do("POST", byID(seg), `{"type":"STRING","value":"impostor"}`, alice)
			wantError(t, "POST R (body) with an existing record's id", status, env, http.StatusConflict, "RESOURCE_EXISTS", "")
		}
		c.mustDo("GET", byID(strings.ToUpper(r2.ID)), "", alice, http.StatusOK).decode(t, &got)
		assert.Equal(t, r2.ID, got.ID, "GET by the upper-case id: r2's id")
		assert.Equal(t, "r2", got.Name, "GET by the upper-case id: r2 unchanged (name)")
		assert.Equal(t, `"two"`, string(got.Value), "GET by the upper-case id: r2 unchanged (value)")
		// Renaming onto a record's id is taken as well.
		status, _, env = c.do("PUT", pathR("web", "prod", "k", uuidName)+"?rename="+r2.ID, "", alice)
		wantError(t, "rename onto another record's id", status, env, http.StatusConflict, "RESOURCE_EXISTS", "")

		c.mustDo("DELETE", byID(r1.ID), "", alice, http.StatusNoContent)
		for _, target := range []string{byID(r1.ID), pathR("web", "prod", "k", "first")} {
			status, _, env := c.do("GET", target, "", alice)
			wantError(t, "GET after DELETE by id", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "")
		}
	})
}
func TestConcurrentRequests(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		counter := pathR("web", "prod", "k", "counter")
		c.addRecord(alice, K, "counter", "INTEGER", "0")
		const n = 20
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				status, _, env := c.do("PUT", fmt.Sprintf("%s?value=%d", counter, i), "", alice)
				assert.Equal(t, http.StatusOK, status, "concurrent update %d: %s", i, env.raw)
			})
			wg.Go(func() {
				status, _, env := c.do("POST", fmt.Sprintf("%s?type=INTEGER&value=%d", pathR("web", "prod", "k", fmt.Sprint("r", i)), i), "", alice)
				assert.Equal(t, http.StatusCreated, status, "concurrent create %d: %s", i, env.raw)
			})
			wg.Go(func() {
				status, _, env := c.do("POST", K+"/records", `{"name":"same","type":"NULL"}`, alice)
				assert.Contains(t, []int{http.StatusCreated, http.StatusConflict}, status, "concurrent create of one name: %s", env.raw)
			})
		}
		wg.Wait()
		var r recordJSON
		c.mustDo("GET", counter, "", alice, http.StatusOK).decode(t, &r)
		assert.EqualValues(t, n+1, r.Version, "after %d concurrent updates: version %d, want %d", n, r.Version, n+1)
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &l)
		assert.EqualValues(t, n+2, l.Total, "after %d concurrent creates: %d records, want %d", n, l.Total, n+2)
	})
}

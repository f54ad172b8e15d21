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
)

// POST P/batch, docs/api.md#batch-export-and-import.

// batchResult is one result of a batch.
type batchResult struct {
	Index  int         `json:"index"`
	Status int         `json:"status"`
	Record *recordJSON `json:"record"`
}

// batchBody builds a batch body of the given operations (JSON objects).
func batchBody(ops ...string) string {
	return `{"operations":[` + strings.Join(ops, ",") + `]}`
}

// clusterData returns the data of cluster K, for "nothing changed" checks.
func (c *client) clusterData(t *testing.T, k, token string) string {
	t.Helper()
	var out clusterJSON
	c.mustDo("GET", k, "", token, http.StatusOK).decode(t, &out)
	b, _ := json.Marshal(out.Data)
	return string(b)
}

func TestBatchApplies(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		port := c.addRecord(alice, K, "port", "INTEGER", "1")
		c.addRecord(alice, K, "old", "STRING", `"x"`)
		var tag string
		{
			_, h, _ := c.do("GET", pathR("web", "prod", "k", "port"), "", alice)
			tag = h.Get("ETag")
		}
		env := c.mustDo("POST", pathP("web")+"/batch", batchBody(
			`{"op":"create","collection":"prod","cluster":"k","record":"host","type":"STRING","value":"db"}`,
			`{"op":"update","collection":"prod","cluster":"k","record":"host","value":"db2","name":"hostname"}`,
			fmt.Sprintf(`{"op":"update","collection":"prod","cluster":"k","record":"port","value":2,"if_match":%q}`, tag),
			`{"op":"upsert","collection":"prod","cluster":"k","record":"pw","type":"CREDENTIAL","value":"s3cret"}`,
			`{"op":"upsert","collection":"prod","cluster":"k","record":"port","type":"int","value":3}`,
			`{"op":"delete","collection":"prod","cluster":"k","record":"old"}`,
		), alice, http.StatusOK)
		assert.Equal(t, "Batch applied", env.Message, "message")
		var out struct {
			Results []batchResult `json:"results"`
		}
		env.decode(t, &out)
		require.Len(t, out.Results, 6, "one result per operation")
		statuses := []int{}
		for i, r := range out.Results {
			assert.Equal(t, i, r.Index, "index")
			statuses = append(statuses, r.Status)
		}
		assert.Equal(t, []int{201, 200, 200, 201, 200, 204}, statuses, "the status each op would get alone")
		assert.Equal(t, "hostname", out.Results[1].Record.Name, "the update sees the create and renames it")
		assert.Equal(t, `"db2"`, string(out.Results[1].Record.Value), "new value")
		assert.Equal(t, int64(2), out.Results[1].Record.Version, "version 2")
		assert.Equal(t, `"********"`, string(out.Results[3].Record.Value), "credentials masked")
		assert.Equal(t, port.ID, out.Results[4].Record.ID, "the upsert updated port")
		assert.Equal(t, int64(3), out.Results[4].Record.Version, "twice updated")
		assert.Nil(t, out.Results[5].Record, "a delete has a null record")
		assert.Equal(t, `{"hostname":"db2","port":3,"pw":"********"}`, c.clusterData(t, K, alice), "the cluster after the batch")
		vs := c.versionsOf(t, pathR("web", "prod", "k", "port"), "", alice)
		assert.Equal(t, []int64{3, 2, 1}, versionNumbers(vs.Items), "updates keep history")
		var pw recordJSON
		c.mustDo("GET", pathR("web", "prod", "k", "pw")+"?reveal=true", "", alice, http.StatusOK).decode(t, &pw)
		assert.Equal(t, `"s3cret"`, string(pw.Value), "the credential is stored sealed and opens")

		env = c.mustDo("POST", pathP("web")+"/batch", `{"create_parents":true,"operations":[`+
			`{"op":"create","collection":"staging","cluster":"api","record":"a","type":"BOOL","value":true},`+
			`{"op":"upsert","collection":"staging","cluster":"db","record":"b","type":"NULL"}]}`, alice, http.StatusOK)
		env.decode(t, &out)
		assert.Equal(t, []int{201, 201}, []int{out.Results[0].Status, out.Results[1].Status}, "created with their parents")
		assert.Equal(t, `{"a":true}`, c.clusterData(t, pathK("web", "staging", "api"), alice), "staging/api")
		assert.Equal(t, `{"b":null}`, c.clusterData(t, pathK("web", "staging", "db"), alice), "staging/db")
	})
}

func TestBatchErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		c.addRecord(alice, K, "port", "INTEGER", "1")
		before := c.clusterData(t, K, alice)
		ok := `{"op":"create","collection":"prod","cluster":"k","record":"fresh","type":"STRING","value":"v"}`
		many := make([]string, 1001)
		for i := range many {
			many[i] = fmt.Sprintf(`{"op":"create","collection":"prod","cluster":"k","record":"r%d","type":"NULL"}`, i)
		}
		const notABatch = `the body must be {"operations": [...]} with 1 to 1000 operations`
		cases := []struct {
			name, body            string
			status                int
			code, message, detail string
			prefix                bool // detail is a prefix of the details
		}{
			{"empty body", "", 400, "INVALID_REQUEST", "Invalid request", notABatch, false},
			{"no operations", `{}`, 400, "INVALID_REQUEST", "Invalid request", notABatch, false},
			{"null operations", `{"operations":null}`, 400, "INVALID_REQUEST", "Invalid request", notABatch, false},
			{"zero operations", `{"operations":[]}`, 400, "INVALID_REQUEST", "Invalid request", "a batch holds 1 to 1000 operations, this one 0", false},
			{"1001 operations", batchBody(many...), 400, "INVALID_REQUEST", "Invalid request", "a batch holds 1 to 1000 operations, this one 1001", false},
			{"unknown top field", `{"operations":[` + ok + `],"atomic":true}`, 400, "INVALID_REQUEST", "Invalid request", `unknown field "atomic"`, false},
			{"not an object", batchBody(ok, `"create"`), 400, "INVALID_REQUEST", "Invalid request", "operation 1: the operation must be a JSON object", false},
			{"unknown op", batchBody(`{"op":"patch","collection":"prod","cluster":"k","record":"port"}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 0: unknown op "patch": use create, update, upsert or delete`, false},
			{"unknown field in an op", batchBody(ok, `{"op":"delete","collection":"prod","cluster":"k","record":"port","colour":1}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 1: unknown field "colour"`, false},
			{"missing op", batchBody(`{"collection":"prod","cluster":"k","record":"port"}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 0: the field "op" is required: create, update, upsert or delete`, false},
			{"missing cluster", batchBody(`{"op":"delete","collection":"prod","record":"port"}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 0: the field "cluster" is required`, false},
			{"name on create", batchBody(`{"op":"create","collection":"prod","cluster":"k","record":"x","type":"NULL","name":"y"}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 0: "name" renames a record: only an update takes it`, false},
			{"value on delete", batchBody(`{"op":"delete","collection":"prod","cluster":"k","record":"port","value":1}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 0: a delete takes no "type" or "value"`, false},
			{"if_match on create", batchBody(`{"op":"create","collection":"prod","cluster":"k","record":"x","type":"NULL","if_match":"*"}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 0: "if_match" applies to update, upsert and delete, not to create`, false},
			{"malformed if_match", batchBody(`{"op":"delete","collection":"prod","cluster":"k","record":"port","if_match":"abc"}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 0: "if_match" must be "*" or a comma-separated list of quoted entity tags, as the ETag header gives them`, false},
			{"create without type", batchBody(`{"op":"create","collection":"prod","cluster":"k","record":"x","value":1}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 0: the record type is required: "type"`, false},
			{"update of nothing", batchBody(`{"op":"update","collection":"prod","cluster":"k","record":"port"}`), 400, "INVALID_REQUEST", "Invalid request",
				`operation 0: nothing to update: give a value, a type or a new name`, false},
			{"value not fitting", batchBody(ok, `{"op":"update","collection":"prod","cluster":"k","record":"port","value":"abc"}`), 400, "VALIDATION_ERROR", "Validation failed",
				`operation 1: INTEGER`, true},
			{"unknown type", batchBody(`{"op":"create","collection":"prod","cluster":"k","record":"x","type":"DECIMAL"}`), 400, "VALIDATION_ERROR", "Validation failed",
				`operation 0: unknown type`, true},
			{"bad name", batchBody(`{"op":"create","collection":"prod","cluster":"k","record":"a/b","type":"NULL"}`), 400, "VALIDATION_ERROR", "Validation failed",
				`operation 0: `, true},
			{"missing record", batchBody(ok, `{"op":"update","collection":"prod","cluster":"k","record":"nope","value":1}`), 404, "RESOURCE_NOT_FOUND", "Resource not found",
				`operation 1: record "nope" not found`, false},
			{"missing collection", batchBody(`{"op":"create","collection":"nope","cluster":"k","record":"x","type":"NULL"}`), 404, "RESOURCE_NOT_FOUND", "Resource not found",
				`operation 0: collection "nope" not found`, false},
			{"taken name", batchBody(ok, `{"op":"create","collection":"prod","cluster":"k","record":"port","type":"NULL"}`), 409, "RESOURCE_EXISTS", "Resource already exists",
				`operation 1: record "port" already exists`, false},
			{"the same record twice", batchBody(ok, ok), 409, "RESOURCE_EXISTS", "Resource already exists",
				`operation 1: record "fresh" already exists`, false},
			{"stale if_match", batchBody(ok, `{"op":"update","collection":"prod","cluster":"k","record":"port","value":5,"if_match":"\"x\""}`), 412, "PRECONDITION_FAILED", "Precondition failed",
				`operation 1: current version is 1`, false},
			{"conditional upsert of nothing", batchBody(`{"op":"upsert","collection":"prod","cluster":"k","record":"x","type":"NULL","if_match":"\"x\""}`), 412, "PRECONDITION_FAILED", "Precondition failed",
				`operation 0: the record does not exist`, false},
			{"earlier store error wins over a later bad op", batchBody(`{"op":"delete","collection":"prod","cluster":"k","record":"nope"}`,
				`{"op":"create","collection":"prod","cluster":"k","record":"x","type":"DECIMAL"}`), 404, "RESOURCE_NOT_FOUND", "Resource not found",
				`operation 0: record "nope" not found`, false},
		}
		for _, tc := range cases {
			status, _, env := c.do("POST", pathP("web")+"/batch", tc.body, alice)
			wantError(t, tc.name, status, env, tc.status, tc.code, tc.message)
			if tc.prefix {
				assert.True(t, strings.HasPrefix(env.details(), tc.detail), "%s: details %q start %q", tc.name, env.details(), tc.detail)
			} else {
				assert.Equal(t, tc.detail, env.details(), "%s: details", tc.name)
			}
			assert.Equal(t, before, c.clusterData(t, K, alice), "%s: nothing changed", tc.name)
		}

		status, _, env := c.do("POST", pathP("nope")+"/batch", batchBody(ok), alice)
		wantError(t, "missing project", status, env, 404, "RESOURCE_NOT_FOUND", "Resource not found")
		assert.Equal(t, `project "nope" not found`, env.details(), "missing project: no operation prefix")
		status, _, env = c.do("POST", pathP("web")+"/batch", batchBody(ok), c.token("bob"))
		wantError(t, "someone else's project", status, env, 403, "AUTHORIZATION_FAILED", "Insufficient permissions")
		status, _, env = c.do("POST", pathP("web")+"/batch", batchBody(`{"op":"nope"}`), c.token("bob"))
		wantError(t, "someone else's project, bad op", status, env, 403, "AUTHORIZATION_FAILED", "Insufficient permissions")
		r := request("POST", pathP("web")+"/batch", batchBody(ok), alice)
		r.Header.Set("Content-Type", "text/plain")
		status, _, env = c.send(r)
		wantError(t, "text/plain body", status, env, 415, "INVALID_REQUEST", "Unsupported media type")
		assert.Equal(t, before, c.clusterData(t, K, alice), "nothing changed")

		strict := c.attach(hds.WithRequireIfMatch(true))
		status, _, env = strict.do("POST", pathP("web")+"/batch", batchBody(ok,
			`{"op":"delete","collection":"prod","cluster":"k","record":"port"}`), alice)
		wantError(t, "delete without a required if_match", status, env, 428, "PRECONDITION_REQUIRED", "Precondition required")
		assert.Equal(t, "operation 1: ", env.details(), "428 names the operation")
		status, _, env = strict.do("POST", pathP("web")+"/batch", batchBody(
			`{"op":"delete","collection":"prod","cluster":"k","record":"nope"}`), alice)
		wantError(t, "404 comes before 428", status, env, 404, "RESOURCE_NOT_FOUND", "Resource not found")
		strict.mustDo("POST", pathP("web")+"/batch", batchBody(ok,
			`{"op":"upsert","collection":"prod","cluster":"k","record":"other","type":"NULL"}`), alice, http.StatusOK)
		c.mustDo("POST", pathP("web")+"/batch", batchBody(
			`{"op":"delete","collection":"prod","cluster":"k","record":"fresh"}`,
			`{"op":"delete","collection":"prod","cluster":"k","record":"other"}`), alice, http.StatusOK)
		assert.Equal(t, before, c.clusterData(t, K, alice), "back as before")
	})
}

func TestBatchBodyLimit(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithMaxBodyBytes(300), hds.WithMaxImportBytes(2000))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		long := strings.Repeat("x", 500)
		body := batchBody(fmt.Sprintf(`{"op":"create","collection":"prod","cluster":"k","record":"a","type":"STRING","value":%q}`, long))
		c.mustDo("POST", pathP("web")+"/batch", body, alice, http.StatusOK)
		status, _, env := c.do("PUT", pathR("web", "prod", "k", "a"), fmt.Sprintf(`{"value":%q}`, long), alice)
		wantError(t, "a 500-byte body on PUT R", status, env, 413, "INVALID_REQUEST", "")
		huge := batchBody(fmt.Sprintf(`{"op":"create","collection":"prod","cluster":"k","record":"b","type":"STRING","value":%q}`, strings.Repeat("x", 2000)))
		status, _, env = c.do("POST", pathP("web")+"/batch", huge, alice)
		wantError(t, "a batch over max_import_bytes", status, env, 413, "INVALID_REQUEST", "")
	})
}

package e2e_test

// Record types and values (docs/api.md#record-types-and-values).

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds"
)

// typeCase is one accepted value: sent as JSON in a body and as text in a
// query string.
type typeCase struct {
	typ       string // as sent, any case, short forms
	json      string // the body's value; "" leaves the field out
	text      string // the query's value
	noText    bool   // send no ?value= at all
	wantType  string
	wantValue string // canonical JSON
}

var typeCases = []typeCase{
	{typ: "STRING", json: `"hello"`, text: "hello", wantType: "STRING", wantValue: `"hello"`},
	{typ: "STRING", json: `""`, text: "", wantType: "STRING", wantValue: `""`},
	{typ: "str", json: `"a b/c?d"`, text: "a b/c?d", wantType: "STRING", wantValue: `"a b/c?d"`},
	{typ: "String", json: `"日本 \"q\""`, text: `日本 "q"`, wantType: "STRING", wantValue: `"日本 \"q\""`},
	{typ: "INTEGER", json: `42`, text: "42", wantType: "INTEGER", wantValue: `42`},
	{typ: "INT", json: `-3`, text: "-3", wantType: "INTEGER", wantValue: `-3`},
	{typ: "integer", json: `0`, text: "0", wantType: "INTEGER", wantValue: `0`},
	{typ: "int", json: `9223372036854775807`, text: "9223372036854775807", wantType: "INTEGER", wantValue: `9223372036854775807`},
	{typ: "INTEGER", json: `-9223372036854775808`, text: "-9223372036854775808", wantType: "INTEGER", wantValue: `-9223372036854775808`},
	{typ: "FLOAT", json: `3.14`, text: "3.14", wantType: "FLOAT", wantValue: `3.14`},
	{typ: "FLT", json: `1e21`, text: "1e21", wantType: "FLOAT", wantValue: `1e+21`},
	{typ: "float", json: `5`, text: "5", wantType: "FLOAT", wantValue: `5`},
	{typ: "Float", json: `2.50`, text: "2.50", wantType: "FLOAT", wantValue: `2.5`},
	{typ: "FLOAT", json: `-1.5E-7`, text: "-1.5E-7", wantType: "FLOAT", wantValue: `-1.5e-07`},
	{typ: "BOOLEAN", json: `true`, text: "true", wantType: "BOOLEAN", wantValue: `true`},
	{typ: "BOOL", json: `false`, text: "false", wantType: "BOOLEAN", wantValue: `false`},
	{typ: "boolean", json: `true`, text: "true", wantType: "BOOLEAN", wantValue: `true`},
	{typ: "DATE", json: `"2024-02-29"`, text: "2024-02-29", wantType: "DATE", wantValue: `"2024-02-29"`},
	{typ: "date", json: `"2026-12-31"`, text: "2026-12-31", wantType: "DATE", wantValue: `"2026-12-31"`},
	{typ: "TIME", json: `"08:18:19"`, text: "08:18:19", wantType: "TIME", wantValue: `"08:18:19"`},
	{typ: "time", json: `"23:59:59.123456789"`, text: "23:59:59.123456789", wantType: "TIME", wantValue: `"23:59:59.123456789"`},
	{typ: "TIME", json: `"00:00:00.5"`, text: "00:00:00.5", wantType: "TIME", wantValue: `"00:00:00.5"`},
	{typ: "DATETIME", json: `"2026-11-22T08:18:19Z"`, text: "2026-11-22T08:18:19Z", wantType: "DATETIME", wantValue: `"2026-11-22T08:18:19Z"`},
	{typ: "datetime", json: `"2026-11-22T09:18:19.500+01:00"`, text: "2026-11-22T09:18:19.500+01:00", wantType: "DATETIME", wantValue: `"2026-11-22T09:18:19.500+01:00"`},
	{typ: "DateTime", json: `"2026-11-22T08:18:19.120Z"`, text: "2026-11-22T08:18:19.120Z", wantType: "DATETIME", wantValue: `"2026-11-22T08:18:19.120Z"`},
	{typ: "UUID", json: `"0190A5B4-C0DE-7ABC-8DEF-0123456789AB"`, text: "0190A5B4-C0DE-7ABC-8DEF-0123456789AB", wantType: "UUID", wantValue: `"0190a5b4-c0de-7abc-8def-0123456789ab"`},
	{typ: "uuid", json: `"0190a5b4-c0de-7abc-8def-0123456789ab"`, text: "0190a5b4-c0de-7abc-8def-0123456789ab", wantType: "UUID", wantValue: `"0190a5b4-c0de-7abc-8def-0123456789ab"`},
	{typ: "NULL", json: `null`, text: "", wantType: "NULL", wantValue: `null`},
	{typ: "null", json: "", noText: true, wantType: "NULL", wantValue: `null`},
	{typ: "[]STRING", json: `["a","b"]`, text: `["a","b"]`, wantType: "[]STRING", wantValue: `["a","b"]`},
	{typ: "[]str", json: `[ "a" , "" ]`, text: `[ "a" , "" ]`, wantType: "[]STRING", wantValue: `["a",""]`},
	{typ: "[]STRING", json: `[]`, text: `[]`, wantType: "[]STRING", wantValue: `[]`},
	{typ: "[]INTEGER", json: `[1,-2]`, text: `[1, -2]`, wantType: "[]INTEGER", wantValue: `[1,-2]`},
	{typ: "[]int", json: `[]`, text: `[]`, wantType: "[]INTEGER", wantValue: `[]`},
	{typ: "[]FLOAT", json: `[1.50,1e21]`, text: `[1.50,1e21]`, wantType: "[]FLOAT", wantValue: `[1.5,1e+21]`},
	{typ: "[]FLT", json: `[2]`, text: `[2]`, wantType: "[]FLOAT", wantValue: `[2]`},
	{typ: "[]BOOLEAN", json: `[true,false]`, text: `[true,false]`, wantType: "[]BOOLEAN", wantValue: `[true,false]`},
	{typ: "[]bool", json: `[false]`, text: `[false]`, wantType: "[]BOOLEAN", wantValue: `[false]`},
	{typ: "[]DATE", json: `["2026-01-31"]`, text: `["2026-01-31"]`, wantType: "[]DATE", wantValue: `["2026-01-31"]`},
	{typ: "[]TIME", json: `["12:00:00","12:00:00.25"]`, text: `["12:00:00","12:00:00.25"]`, wantType: "[]TIME", wantValue: `["12:00:00","12:00:00.25"]`},
	{typ: "[]DATETIME", json: `["2026-11-22T09:18:19.500+01:00"]`, text: `["2026-11-22T09:18:19.500+01:00"]`, wantType: "[]DATETIME", wantValue: `["2026-11-22T09:18:19.500+01:00"]`},
	{typ: "[]UUID", json: `["0190A5B4-C0DE-7ABC-8DEF-0123456789AB"]`, text: `["0190A5B4-C0DE-7ABC-8DEF-0123456789AB"]`, wantType: "[]UUID", wantValue: `["0190a5b4-c0de-7abc-8def-0123456789ab"]`},
	{typ: "[]NULL", json: `[null,null]`, text: `[null,null]`, wantType: "[]NULL", wantValue: `[null,null]`},
	{typ: "[]null", json: `[]`, text: `[]`, wantType: "[]NULL", wantValue: `[]`},
}

func TestRecordTypes(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		recordFields := []string{"id", "name", "type", "value", "version", "created_at", "updated_at"}

		check := func(what, name string, env envelope, tc typeCase) {
			t.Helper()
			wantFields(t, what, env.Data, recordFields...)
			var r recordJSON
			env.decode(t, &r)
			wantID(t, what, r.ID)
			wantTimestamps(t, what, r.CreatedAt, r.UpdatedAt)
			assert.Equal(t, name, r.Name, "%s: name", what)
			assert.Equal(t, tc.wantType, r.Type, "%s: type", what)
			assert.Equal(t, tc.wantValue, compact(t, r.Value), "%s: value", what)
			assert.EqualValues(t, 1, r.Version, "%s: version", what)
			var got recordJSON
			c.mustDo("GET", pathR("web", "prod", "k", name), "", alice, http.StatusOK).decode(t, &got)
			assert.Equal(t, tc.wantType, got.Type, "%s: GET: type", what)
			assert.Equal(t, tc.wantValue, compact(t, got.Value), "%s: GET: value", what)
			assert.Equal(t, r.ID, got.ID, "%s: GET: id", what)
		}
		for i, tc := range typeCases {
			// The body form, POST K/records.
			name := fmt.Sprintf("b%02d", i)
			body := fmt.Sprintf(`{"name":%q,"type":%q,"value":%s}`, name, tc.typ, tc.json)
			if tc.json == "" {
				body = fmt.Sprintf(`{"name":%q,"type":%q}`, name, tc.typ)
			}
			status, _, env := c.do("POST", K+"/records", body, alice)
			if assert.Equal(t, http.StatusCreated, status, "body form %s %s: %s", tc.typ, tc.json, env.raw) {
				check("body form "+tc.typ+" "+tc.json, name, env, tc)
			}

			// The body form on POST R (the name in the path).
			name = fmt.Sprintf("r%02d", i)
			body = fmt.Sprintf(`{"type":%q,"value":%s}`, tc.typ, tc.json)
			if tc.json == "" {
				body = fmt.Sprintf(`{"type":%q}`, tc.typ)
			}
			status, _, env = c.do("POST", pathR("web", "prod", "k", name), body, alice)
			if assert.Equal(t, http.StatusCreated, status, "POST R body %s %s: %s", tc.typ, tc.json, env.raw) {
				check("POST R body "+tc.typ+" "+tc.json, name, env, tc)
			}

			// The path form, POST R?type=T&value=V.
			name = fmt.Sprintf("q%02d", i)
			q := url.Values{"type": {tc.typ}}
			if !tc.noText {
				q.Set("value", tc.text)
			}
			status, _, env = c.do("POST", pathR("web", "prod", "k", name)+"?"+q.Encode(), "", alice)
			if assert.Equal(t, http.StatusCreated, status, "path form ?%s: %s", q.Encode(), env.raw) {
				check("path form ?"+q.Encode(), name, env, tc)
			}
		}

		// [] written as is in the query string.
		for i, raw := range []string{`type=[]STRING&value=["a","b"]`, `type=[]str&value=[%22a%22,%22b%22]`, `type=%5B%5DSTRING&value=%5B%22a%22%2C%22b%22%5D`} {
			name := fmt.Sprintf("raw%d", i)
			var r recordJSON
			c.mustDo("POST", pathR("web", "prod", "k", name)+"?"+raw, "", alice, http.StatusCreated).decode(t, &r)
			assert.Equal(t, "[]STRING", r.Type, "?%s: type", raw)
			assert.Equal(t, `["a","b"]`, compact(t, r.Value), "?%s: value", raw)
		}
	})
}

func TestRecordTypeRejections(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		const skip = "\x01skip"
		tests := []struct {
			typ, json, text string
			mention         string // details must contain it
			index           int    // the bad element's index, or -1
		}{
			{"INTEGER", `5.0`, "5.0", "INTEGER", -1},
			{"INTEGER", `1e3`, "1e3", "INTEGER", -1},
			{"INTEGER", `9223372036854775808`, "9223372036854775808", "INTEGER", -1},
			{"INTEGER", `-9223372036854775809`, "-9223372036854775809", "INTEGER", -1},
			{"INTEGER", `"5"`, "abc", "INTEGER", -1},
			{"int", `true`, "", "INTEGER", -1},
			{"FLOAT", `"3.14"`, "abc", "FLOAT", -1},
			{"FLOAT", `1e400`, "1e400", "FLOAT", -1},
			{"FLOAT", skip, "NaN", "FLOAT", -1},
			{"FLOAT", skip, "Inf", "FLOAT", -1},
			{"BOOLEAN", `"true"`, "yes", "BOOLEAN", -1},
			{"BOOLEAN", `1`, "1", "BOOLEAN", -1},
			{"DATE", `"2026-02-30"`, "2026-02-30", "DATE", -1},
			{"DATE", `"2026-2-3"`, "2026-2-3", "DATE", -1},
			{"DATE", `20260101`, "2026/01/01", "DATE", -1},
			{"TIME", `"24:00:00"`, "24:00:00", "TIME", -1},
			{"TIME", `"12:60:00"`, "12:60:00", "TIME", -1},
			{"TIME", `"12:00"`, "12:00", "TIME", -1},
			{"TIME", `"12:00:00.1234567890"`, "12:00:00.", "TIME", -1},
			{"DATETIME", `"2026-11-22T08:18:19"`, "2026-11-22T08:18:19", "DATETIME", -1},
			{"DATETIME", `"2026-11-22 08:18:19Z"`, "2026-02-30T00:00:00Z", "DATETIME", -1},
			{"UUID", `"not-a-uuid"`, "0190a5b4c0de7abc8def0123456789ab", "UUID", -1},
			{"NULL", `5`, "x", "NULL", -1},
			{"STRING", `5`, skip, "STRING", -1},
			{"STRING", "", skip, "STRING", -1}, // value left out is null
			{"STRING", `"a\u0000b"`, "a\x00b", "U+0000", -1},
			{"DATE", `"2026-01-01\u0000"`, "2026-01-01\x00", "", -1},
			{"CREDENTIAL", `""`, "", "CREDENTIAL", -1},
			{"CREDENTIAL", `5`, skip, "CREDENTIAL", -1},
			{"CREDENTIAL", `"se\u0000cret"`, "se\x00cret", "", -1},
			{"[]STRING", `["a",5]`, `["a",5]`, "[]STRING", 1},
			{"[]INTEGER", `[1,2,3.5]`, `[1,2,3.5]`, "[]INTEGER", 2},
			{"[]DATE", `["2026-01-01","2026-02-30"]`, `["2026-01-01","2026-02-30"]`, "[]DATE", 1},
			{"[]UUID", `["x"]`, `["x"]`, "[]UUID", 0},
			{"[]STRING", `["ok","a\u0000"]`, `["ok","a\u0000"]`, "", 1},
			{"[]STRING", `"a"`, `a`, "[]STRING", -1},
			{"[]INTEGER", `{"a":1}`, `{"a":1}`, "[]INTEGER", -1},
			{"[]NULL", `[null,0]`, `[null,0]`, "[]NULL", 1},
			{"[]CREDENTIAL", `["ok",""]`, `["ok",""]`, "[]CREDENTIAL", 1},
		}
		n := 0
		for _, tt := range tests {
			if tt.json != skip {
				n++
				body := fmt.Sprintf(`{"name":"x%d","type":%q,"value":%s}`, n, tt.typ, tt.json)
				if tt.json == "" {
					body = fmt.Sprintf(`{"name":"x%d","type":%q}`, n, tt.typ)
				}
				status, _, env := c.do("POST", K+"/records", body, alice)
				what := "body " + tt.typ + " " + tt.json
				wantError(t, what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
				checkRejection(t, what, env, tt.mention, tt.index)
			}
			if tt.text != skip {
				n++
				q := url.Values{"type": {tt.typ}, "value": {tt.text}}
				status, _, env := c.do("POST", pathR("web", "prod", "k", fmt.Sprintf("x%d", n))+"?"+q.Encode(), "", alice)
				what := "query ?" + q.Encode()
				wantError(t, what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
				checkRejection(t, what, env, tt.mention, tt.index)
			}
		}

		// An unknown type lists every supported type.
		for _, req := range []struct{ what, target, body string }{
			{"body", K + "/records", `{"name":"u1","type":"FOO","value":1}`},
			{"query", pathR("web", "prod", "k", "u2") + "?type=FOO&value=1", ""},
			{"query, empty type", pathR("web", "prod", "k", "u3") + "?type=&value=1", ""},
			{"body, array of unknown", K + "/records", `{"name":"u4","type":"[]FOO","value":[]}`},
			{"body, nested array", K + "/records", `{"name":"u5","type":"[][]STRING","value":[]}`},
		} {
			status, _, env := c.do("POST", req.target, req.body, alice)
			wantError(t, "unknown type, "+req.what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			wantDetails(t, "unknown type, "+req.what, env, allTypes...)
		}

		var list listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &list)
		assert.EqualValues(t, 0, list.Total, "rejected values were stored: %+v", list.Items)
	})
}

// checkRejection checks the details of a VALIDATION_ERROR for a value.
func checkRejection(t *testing.T, what string, env envelope, mention string, index int) {
	t.Helper()
	if mention != "" {
		wantDetails(t, what, env, mention)
	}
	if index >= 0 {
		assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`\b%d\b`, index)), env.details(), "%s: details name the element index %d", what, index)
	}
	assert.NotEqualValues(t, "", env.details(), "%s: empty details", what)
}

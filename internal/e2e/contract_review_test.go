package e2e_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// Discrepancies with API.md found by reading it line by line against the
// running server (review of the external contract).

// exportRevision returns the revision of project p's export document.
func (c *client) exportRevision(t *testing.T, p, token string) int64 {
	t.Helper()
	var doc exportDoc
	require.NoError(t, json.Unmarshal(c.export(t, p, "", token), &doc), "decode export")
	return doc.Revision
}

// TestImportRevision: the answer of POST P/import names the project's
// audit revision after the import (the one a later export and the newest
// audit entry carry); a dry run, or an import that changes nothing, the
// revision the project is at. It was always 0.
func TestImportRevision(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		c.addRecord(alice, pathK("web", "prod", "k"), "old", "INTEGER", "1")
		before := c.exportRevision(t, "web", alice)
		require.Positive(t, before, "the project has audit entries")
		doc := `{"format":"hds/1","collections":{"prod":{"clusters":{"k":{"records":{
			"old":{"type":"INTEGER","value":2},"new":{"type":"STRING","value":"x"}}}}},
			"more":{"clusters":{"k2":{"records":{"r":{"type":"NULL","value":null}}}}}}}`

		s := c.importDoc(t, "web", "?dry_run=true", doc, alice)
		assert.Equal(t, before, s.Revision, "a dry run: the revision the plan was made at")

		s = c.importDoc(t, "web", "", doc, alice)
		after := c.exportRevision(t, "web", alice)
		// one entry per record changed, plus the created collection and cluster
		assert.Equal(t, before+5, after, "the import's audit entries")
		assert.Equal(t, after, s.Revision, "the revision after the import")
		var newest struct {
			Items []struct {
				Revision int64 `json:"revision"`
			} `json:"items"`
		}
		c.mustDo("GET", pathP("web")+"/audit?limit=1", "", alice, http.StatusOK).decode(t, &newest)
		require.Len(t, newest.Items, 1, "the newest audit entry")
		assert.Equal(t, newest.Items[0].Revision, s.Revision, "the newest audit entry is the import's")

		s = c.importDoc(t, "web", "", doc, alice)
		assert.Equal(t, 3, s.Unchanged, "imported again: nothing changes")
		assert.Equal(t, after, s.Revision, "nothing written: the revision the project is at")
	})
}

// TestMissingRole: a body without "role" (or with "role": null) misses a
// required field, 400 INVALID_REQUEST as API.md section 4 says of every
// body and as every other route answers a missing field; a role that is
// given but not one of the roles stays 400 VALIDATION_ERROR (section 17).
func TestMissingRole(t *testing.T) {
	c := newServer(t, memoryKind)
	alice := c.token("alice")

	c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	for _, body := range []string{`{}`, `{"role":null}`, ``} {
		status, _, env := c.do("PUT", pathP("web")+"/members/bob", body, alice)
		wantError(t, "member body "+body, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		wantDetails(t, "member body "+body, env, `the field "role" is required`)
	}
	for _, body := range []string{`{"name":"ci"}`, `{"name":"ci","role":null}`} {
		status, _, env := c.do("POST", pathP("web")+"/tokens", body, alice)
		wantError(t, "token body "+body, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		wantDetails(t, "token body "+body, env, `the field "role" is required`)
	}
	status, _, env := c.do("PUT", pathP("web")+"/members/bob", `{"role":""}`, alice)
	wantError(t, "an empty role", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
	status, _, env = c.do("POST", pathP("web")+"/tokens", `{"name":"ci","role":"admin"}`, alice)
	wantError(t, "a token role other than viewer, reader, editor", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
	var members struct {
		Total int `json:"total"`
	}
	c.mustDo("GET", pathP("web")+"/members", "", alice, http.StatusOK).decode(t, &members)
	assert.Equal(t, 1, members.Total, "nothing changed: the owner alone")
}

// TestAnonymousOwnerName: with require_auth false, a project created
// without a token belongs to the built-in user anonymous (API.md section
// 6), and its owner's entry in GET P/members names it; the username was
// empty, the user not being in the directory.
func TestAnonymousOwnerName(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithSecurity(hds.Security{JWTSecret: testSecret, RequireAuth: false}))
		c.mustDo("POST", pathP("open"), "", "", http.StatusCreated)
		var members struct {
			Items []struct {
				UserID   string `json:"user_id"`
				Username string `json:"username"`
				Role     string `json:"role"`
			} `json:"items"`
		}
		c.mustDo("GET", pathP("open")+"/members", "", "", http.StatusOK).decode(t, &members)
		require.Len(t, members.Items, 1, "the owner alone")
		assert.Equal(t, "anonymous", members.Items[0].UserID, "user_id")
		assert.Equal(t, "anonymous", members.Items[0].Username, "username")
		assert.Equal(t, "owner", members.Items[0].Role, "role")
	})
}

// TestLimitMessage: a limit that is not a decimal integer is refused with
// details that give its range, 1 to 1000 (API.md section 5), not "0 or
// more", which holds for offset only.
func TestLimitMessage(t *testing.T) {
	c := newServer(t, memoryKind)
	alice := c.token("alice")
	for _, v := range []string{"abc", "1e3", "1.5", "+5", "-1", ""} {
		status, _, env := c.do("GET", "/api/v1/projects?limit="+v, "", alice)
		wantError(t, "limit="+v, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		assert.Equal(t, "limit must be a decimal integer from 1 to 1000", env.details(), "limit=%s: details", v)
	}
	for _, v := range []string{"0", "1001", "99999999999999999999"} {
		status, _, env := c.do("GET", "/api/v1/projects?limit="+v, "", alice)
		wantError(t, "limit="+v, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		assert.Equal(t, "limit must be between 1 and 1000", env.details(), "limit=%s: details", v)
	}
}

// TestParseDurationDays: durations take Go's forms plus days (API.md
// section 12), so a day is a unit among the others: "1d12h" and "1.5d"
// as well as "7d". Only whole days alone were read.
func TestParseDurationDays(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "0d": 0, "1d12h": 36 * time.Hour, "1.5d": 36 * time.Hour,
		"2d30m": 48*time.Hour + 30*time.Minute, "0.1d": 144 * time.Minute, "90m": 90 * time.Minute,
		"1h30m": 90 * time.Minute, "12h1d": 36 * time.Hour,
	} {
		got, err := hds.ParseDuration(in)
		if assert.NoError(t, err, "ParseDuration(%q)", in) {
			assert.Equal(t, want, got, "ParseDuration(%q)", in)
		}
	}
	for _, in := range []string{"", "d", "1dd", "-1d", "1.d5", ".d", "1e3d", "1d-1h", "7 d", "7D", "106752d"} {
		_, err := hds.ParseDuration(in)
		assert.Error(t, err, "ParseDuration(%q)", in)
	}
}

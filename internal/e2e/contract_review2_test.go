package e2e_test

// Black-box checks of API.md sections 13 to 16 (concurrency control,
// record history, audit log, change feed) found missing by a review
// against the contract.

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// TestReview2EventsAPITokenEnds checks that a change feed opened with an
// API token ends within a second of the token's revocation and of its
// expiry (API.md section 16: "when the token expires (or is revoked)").
func TestReview2EventsAPITokenEnds(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")

		revoked := c.apiToken(alice, "p", `{"name":"feed","role":"viewer"}`)
		s := stream(t, base, pathP("p")+"/events", revoked.Token)
		c.mustDo("DELETE", pathP("p")+"/tokens/"+revoked.ID, "", alice, http.StatusNoContent)
		start := time.Now()
		s.ends("the API token is revoked")
		assert.Less(t, time.Since(start), 1500*time.Millisecond, "within a second of the revocation")

		scoped := c.apiToken(alice, "p", `{"name":"scoped","role":"viewer","collection":"c","cluster":"k"}`)
		s = stream(t, base, pathP("p")+"/events", scoped.Token)
		c.mustDo("DELETE", pathP("p")+"/tokens/"+scoped.ID, "", alice, http.StatusNoContent)
		s.ends("the scoped API token is revoked")

		expiring := c.apiToken(alice, "p", `{"name":"short","role":"viewer","expires_in":2}`)
		require.NotNil(t, expiring.ExpiresAt)
		exp, err := time.Parse(time.RFC3339Nano, *expiring.ExpiresAt)
		require.NoError(t, err)
		s = stream(t, base, pathP("p")+"/events", expiring.Token)
		s.ends("the API token expires")
		assert.WithinDuration(t, exp, time.Now(), 1500*time.Millisecond, "within a second of the expiry")
	})
}

// TestReview2EventsStreamLimitRetryAfter checks that the 429 of one stream
// too many carries Retry-After, as every 429 does (API.md sections 8 and
// 16).
func TestReview2EventsStreamLimitRetryAfter(t *testing.T) {
	c := newServer(t, memoryKind, hds.WithEvents(time.Hour, 1))
	base := c.serve()
	alice := c.token("alice")
	c.tree(alice, "p", "c", "k")
	stream(t, base, pathP("p")+"/events", alice)
	over := getStream(t, base, pathP("p")+"/events", alice)
	body, _ := io.ReadAll(over.Body)
	over.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, over.StatusCode, "%s", body)
	after, err := strconv.Atoi(over.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After in seconds, got %q", over.Header.Get("Retry-After"))
	assert.Positive(t, after)
}

// TestReview2AuditLogSameFields checks that the server log's audit line
// of each entry has the same fields as the entry of GET P/audit (API.md
// section 15: "message audit, the same fields"): every field, null ones
// included, with the same values, the time written as section 1 says
// (six fraction digits, however many of them are zeros).
func TestReview2AuditLogSameFields(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var buf syncBuffer
		c := newServer(t, kind, hds.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		c.addRecord(alice, pathK("p", "c", "k"), "n", "INTEGER", "0")
		// Enough entries that some time has trailing zero digits.
		for i := 1; i <= 80; i++ {
			c.mustDo("PUT", pathR("p", "c", "k", "n")+"?value="+strconv.Itoa(i), "", alice, http.StatusOK)
		}
		logged := map[float64]map[string]any{}
		for line := range strings.SplitSeq(buf.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "audit" {
				rev, _ := m["revision"].(float64)
				logged[rev] = m
			}
		}
		env := c.mustDo("GET", pathP("p")+"/audit?limit=1000", "", alice, http.StatusOK)
		var page struct {
			Items []map[string]any `json:"items"`
		}
		env.decode(t, &page)
		require.Equal(t, 84, len(page.Items), "3 containers, a create and 80 updates")
		for _, e := range page.Items {
			l, ok := logged[e["revision"].(float64)]
			require.True(t, ok, "a log line for revision %v", e["revision"])
			for k, v := range e {
				got, present := l[k]
				if assert.True(t, present, "revision %v: field %s in the log line %v", e["revision"], k, l) {
					assert.Equal(t, v, got, "revision %v: field %s", e["revision"], k)
				}
			}
		}
	})
}

// TestReview2AuditActorToken checks the actor filter's token form: API
// token ids are UUIDs (API.md section 17), so token:<id> with anything
// else is an invalid value (section 15: 400 INVALID_REQUEST), and a UUID
// in any case names the same token, as ids in paths do.
func TestReview2AuditActorToken(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		tok := c.apiToken(alice, "p", `{"name":"w","role":"editor"}`)
		c.addRecord(tok.Token, pathK("p", "c", "k"), "n", "INTEGER", "1")
		page := c.auditLog("p", "?actor=token:"+tok.ID)
		require.Len(t, page.Items, 1, "the token's entry")
		assert.Equal(t, "token:"+tok.ID, str(page.Items[0].Actor))
		assert.Len(t, c.auditLog("p", "?actor=token:"+strings.ToUpper(tok.ID)).Items, 1, "a token id in upper case")
		for _, bad := range []string{"token:", "token:abc", "token:" + tok.ID + "x"} {
			status, _, env := c.do("GET", pathP("p")+"/audit?actor="+bad, "", alice)
			wantError(t, bad, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			assert.Equal(t, "actor must be a user id or token:<id>", env.details(), bad)
		}
	})
}

// TestReview2EventsLostAccess checks that a stream ends within a second
// when its caller loses access to the project (API.md section 16): a
// member removed, on the instance that removed it.
func TestReview2EventsLostAccess(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		base := c.serve()
		alice := c.token("alice")
		bob := c.token("bob")
		c.tree(alice, "p", "c", "k")
		c.share(alice, "p", "bob", "viewer")
		s := stream(t, base, pathP("p")+"/events", bob)
		c.addRecord(alice, pathK("p", "c", "k"), "n", "INTEGER", "1")
		assert.Equal(t, "record.create", s.next("an event while a member").event)
		c.mustDo("DELETE", pathP("p")+"/members/bob", "", alice, http.StatusNoContent)
		start := time.Now()
		s.ends("the member is removed")
		assert.Less(t, time.Since(start), 1500*time.Millisecond, "within a second")
	})
}

// TestReview2AuditCount checks that the audit log, a list of section 5
// (API.md section 15), honours count=false as every list does: total is
// null; a bad count is 400.
func TestReview2AuditCount(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		for _, q := range []string{"?count=false&limit=2", "?count=false&action=record.create"} {
			env := c.mustDo("GET", pathP("p")+"/audit"+q, "", alice, http.StatusOK)
			var page struct {
				Items []json.RawMessage `json:"items"`
				Total *int              `json:"total"`
			}
			env.decode(t, &page)
			assert.Nil(t, page.Total, "%s: total is null", q)
			wantFields(t, q, env.Data, "items", "total", "limit", "offset", "next_cursor")
		}
		page := c.auditLog("p", "?count=true")
		assert.Equal(t, 3, page.Total, "count=true counts")
		status, _, env := c.do("GET", pathP("p")+"/audit?count=maybe", "", alice)
		wantError(t, "count=maybe", status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		assert.Equal(t, "count must be true or false", env.details())
	})
}

// TestReview2RevealRightsFirst checks that a viewer's reveal=true is 403
// even when another input of the request is bad: rights come before the
// request's own input (API.md sections 13 and 17), on the routes that
// take reveal.
func TestReview2RevealRightsFirst(t *testing.T) {
	c := newServer(t, memoryKind)
	alice := c.token("alice")
	bob := c.token("bob")
	c.tree(alice, "p", "c", "k")
	c.addRecord(alice, pathK("p", "c", "k"), "n", "INTEGER", "1")
	c.share(alice, "p", "bob", "viewer")
	r := pathR("p", "c", "k", "n")
	for _, tc := range []struct {
		target  string // without reveal; it has a query string
		headers []string
	}{
		{r + "?version=0", nil},
		{r + "?version=1", []string{"If-None-Match", "bad"}},
		{r + "/versions?limit=0", nil},
		{pathK("p", "c", "k") + "/records?limit=0", nil},
		{pathK("p", "c", "k") + "?format=xml", nil},
	} {
		status, _, env := c.sendWith("GET", tc.target+"&reveal=true", "", bob, tc.headers...)
		wantError(t, tc.target, status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", forbidden)
		// Without reveal, the bad input is what the viewer hears about.
		status, _, _ = c.sendWith("GET", tc.target, "", bob, tc.headers...)
		assert.Equal(t, http.StatusBadRequest, status, "%s without reveal", tc.target)
	}
}

// TestReview2PreconditionsLast checks that 412 and 428 come after every
// other answer (API.md section 13): the request's own input (400),
// existence (404, a version not kept included) and, as docs/api.md says,
// a taken name (409), on both stores.
func TestReview2PreconditionsLast(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		for _, required := range []bool{false, true} {
			c := newServer(t, kind, hds.WithMaxVersions(1), hds.WithRequireIfMatch(required))
			alice := c.token("alice")
			c.tree(alice, "p", "c", "k")
			k := pathK("p", "c", "k")
			c.addRecord(alice, k, "n", "INTEGER", "1")
			c.addRecord(alice, k, "taken", "INTEGER", "1")
			for i := 2; i <= 4; i++ {
				status, _, _ := c.sendWith("PUT", pathR("p", "c", "k", "n")+"?value="+strconv.Itoa(i), "", alice, "If-Match", "*")
				require.Equal(t, http.StatusOK, status)
			}
			stale := []string{"If-Match", `"stale"`}
			if required {
				stale = nil // no If-Match at all: 428 would come last too
			}
			for _, tc := range []struct {
				method, target string
				status         int
				code           string
			}{
				{"PUT", pathR("p", "c", "k", "n") + "?value=x", http.StatusBadRequest, "VALIDATION_ERROR"},
				{"PUT", pathR("p", "c", "k", "gone") + "?value=1", http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"DELETE", pathR("p", "c", "k", "gone"), http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"PUT", pathR("p", "c", "k", "n") + "?rename=taken", http.StatusConflict, "RESOURCE_EXISTS"},
				{"POST", pathR("p", "c", "k", "n") + "/restore?version=1", http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"POST", pathR("p", "c", "k", "n") + "/restore?version=99", http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"POST", pathR("p", "c", "k", "gone") + "/restore?version=1", http.StatusNotFound, "RESOURCE_NOT_FOUND"},
				{"POST", pathR("p", "c", "k", "n") + "/restore?version=0", http.StatusBadRequest, "INVALID_REQUEST"},
			} {
				status, _, env := c.sendWith(tc.method, tc.target, "", alice, stale...)
				assert.Equal(t, tc.status, status, "require_if_match %v: %s %s: %s", required, tc.method, tc.target, env.raw)
				assert.Equal(t, tc.code, env.code(), "require_if_match %v: %s %s", required, tc.method, tc.target)
			}
		}
	})
}

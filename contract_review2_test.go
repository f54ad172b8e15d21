package hds_test

// Black-box checks of API.md sections 13 to 16 (concurrency control,
// record history, audit log, change feed) found missing by a review
// against the contract.

import (
	"io"
	"net/http"
	"strconv"
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

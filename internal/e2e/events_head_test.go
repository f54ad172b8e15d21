package e2e_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// headOverTCP sends HEAD path with token on a new connection to base and
// reads until the server closes it. It returns the response head and
// whether the server closed the connection within eventWait.
func headOverTCP(t *testing.T, base, path, token string) (*http.Response, bool) {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	req := "HEAD " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nConnection: close\r\n"
	if token != "" {
		req += "Authorization: Bearer " + token + "\r\n"
	}
	_, err = io.WriteString(conn, req+"\r\n")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(eventWait)))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodHead})
	require.NoError(t, err, "HEAD %s: a response head", path)
	rest, err := io.ReadAll(br) // EOF once the server closes; a timeout while it holds on
	var ne net.Error
	held := err != nil && assert.ErrorAs(t, err, &ne) && ne.Timeout()
	assert.Empty(t, rest, "HEAD %s: no body", path)
	return res, !held
}

// TestEventsHead: HEAD P/events answers the headers GET would start the
// stream with, after the same checks, and ends at once: it neither holds
// the connection nor one of the caller's streams.
func TestEventsHead(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithEvents(time.Hour, 1))
		base := c.serve()
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		events := pathP("p") + "/events"

		for range 2 { // more than events.max_streams_per_user: none is held
			res, closed := headOverTCP(t, base, events, alice)
			assert.Equal(t, http.StatusOK, res.StatusCode, "HEAD")
			assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"), "HEAD: Content-Type")
			assert.Equal(t, "no-store", res.Header.Get("Cache-Control"), "HEAD: Cache-Control")
			assert.Equal(t, "no", res.Header.Get("X-Accel-Buffering"), "HEAD: X-Accel-Buffering")
			assert.True(t, closed, "HEAD ends at once instead of streaming")
		}
		// The checks come first, as for GET: same statuses, no body.
		refused := func(what, path, token string, status int) {
			t.Helper()
			res, closed := headOverTCP(t, base, path, token)
			assert.Equal(t, status, res.StatusCode, "HEAD: %s", what)
			assert.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"),
				"HEAD: %s: the envelope's Content-Type, got %q", what, res.Header.Get("Content-Type"))
			assert.True(t, closed, "HEAD: %s: ends at once", what)
		}
		refused("no token", events, "", http.StatusUnauthorized)
		refused("someone else's project", events, c.token("bob"), http.StatusForbidden)
		refused("a missing project", pathP("nope")+"/events", alice, http.StatusNotFound)
		refused("bad input", events+"?since=x", alice, http.StatusBadRequest)

		s := stream(t, base, events, alice)
		assert.Equal(t, "text/event-stream", s.res.Header.Get("Content-Type"), "GET after the HEADs: the stream opens")
		refused("past the open streams", events, alice, http.StatusTooManyRequests)
	})
}

package main

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// getHealth sends GET /health on c, keeping the connection open, and
// returns the response's status, or the error when none came.
func getHealth(c net.Conn, extraHeader string) (int, error) {
	if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: hds\r\n"+extraHeader+"\r\n"); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// TestServeConnectionCap: with server.max_connections N, N idle
// keep-alive connections (each after a served GET /health, the repro of
// issue 10) hold every slot: connection N+1 is closed without an answer;
// once one of them is closed, a new connection is served.
// server.max_header_bytes is applied too.
func TestServeConnectionCap(t *testing.T) {
	t.Parallel()
	const max = 3
	path := writeConfig(t, `{"server": {"max_connections": 3, "max_header_bytes": 4096},
  "security": {"jwt_secret": "`+testJWTSecret+`"}, "users": [{"username": "alice", "password": "pw"}]}`)
	s := start(t, []string{"-config", path}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	addr := strings.TrimPrefix(s.url, "http://")

	idle := make([]net.Conn, max)
	for i := range idle {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err, "dial connection %d", i+1)
		t.Cleanup(func() { _ = c.Close() })
		status, err := getHealth(c, "")
		require.NoError(t, err, "GET /health on connection %d", i+1)
		require.Equal(t, http.StatusOK, status, "GET /health on connection %d", i+1)
		idle[i] = c
	}

	over, err := net.Dial("tcp", addr) // the kernel completes the handshake
	require.NoError(t, err, "dial connection %d", max+1)
	defer over.Close()
	status, err := getHealth(over, "")
	assert.Error(t, err, "connection %d beyond server.max_connections got an answer (status %d)", max+1, status)
	waitFor(t, s.stderr, "connections refused")

	// The idle ones are still served.
	status, err = getHealth(idle[0], "")
	require.NoError(t, err, "GET /health again on an idle connection")
	assert.Equal(t, http.StatusOK, status, "GET /health again on an idle connection")

	// Closing one frees its slot: the server sees the close when it reads
	// the connection, so a new one is served soon after, not at once.
	require.NoError(t, idle[1].Close())
	var fresh net.Conn
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		if status, err := getHealth(c, ""); err != nil || status != http.StatusOK {
			_ = c.Close()
			return false
		}
		fresh = c
		return true
	}, 15*time.Second, 10*time.Millisecond, "no connection served after one of the idle ones was closed")
	defer fresh.Close()

	// server.max_header_bytes: net/http allows 4096 bytes beyond it.
	status, err = getHealth(fresh, "X-Big: "+strings.Repeat("x", 16<<10)+"\r\n")
	require.NoError(t, err, "GET /health with a 16 KiB header")
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, status, "GET /health with a 16 KiB header over server.max_header_bytes")

	require.NoError(t, s.stop(t), "run after cancellation")
}

// TestLimitListener: a connection beyond the cap is closed at once, and a
// connection closed twice gives back one slot.
func TestLimitListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := newLimitListener(ln, 1, slog.New(slog.DiscardHandler))
	defer l.Close()
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()

	first, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer first.Close()
	server1 := <-accepted
	second, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer second.Close()
	n, err := second.Read(make([]byte, 1))
	assert.Equal(t, 0, n, "bytes read on the connection beyond the cap")
	assert.Error(t, err, "reading the connection beyond the cap")

	require.NoError(t, server1.Close(), "close the accepted connection")
	_ = server1.Close() // a second Close gives nothing back
	third, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer third.Close()
	server3 := <-accepted
	assert.Equal(t, int64(1), l.open.Load(), "open connections after closing one twice and accepting another")
	require.NoError(t, server3.Close())
	assert.Equal(t, int64(0), l.open.Load(), "open connections after closing every one")
}

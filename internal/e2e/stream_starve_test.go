package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// smallBuffers is a listener whose connections send through a small
// kernel buffer, so that a client that stops reading holds the server's
// writer after a few KB instead of the megabytes loopback would buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// slowReader sends a GET with token over a connection of its own whose
// receive buffer is small, reads the status line and stops reading: a
// client that reads a few bytes and stalls. It returns the status and
// the connection, left open.
func slowReader(t *testing.T, addr, target, token string) (int, net.Conn) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Errorf("dial %s: %v", addr, err)
		return 0, nil
	}
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: hds\r\nAuthorization: Bearer %s\r\n\r\n", target, token)
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) // generous: a queued one answers after database.timeout
	line, err := bufio.NewReaderSize(conn, 16).ReadString('\n')
	_ = conn.SetReadDeadline(time.Time{})
	if err != nil {
		t.Errorf("GET %s: no status line: %v", target, err)
		return 0, conn
	}
	var status int
	_, _ = fmt.Sscanf(strings.TrimPrefix(line, "HTTP/1.1 "), "%d", &status)
	return status, conn
}

// TestSlowReadersDoNotStarve: on PostgreSQL and SQLite, whose pools hold
// four connections, ten clients that open an export (or a comparison) of
// a project of a few MB and stall after its first bytes hold at most the
// share of the pool that long reads may take; /health, a login, a read
// and a write are answered meanwhile, and once the slow readers go away
// an export is read whole. A slow reader beyond the share waits for a
// place and, getting none within database.timeout, is answered 503
// SERVICE_UNAVAILABLE (docs/api.md#limits-rate-limits-and-quotas).
func TestSlowReadersDoNotStarve(t *testing.T) {
	for _, name := range []string{"postgres", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			c := newServer(t, kindNamed(t, name))
			srv := httptest.NewUnstartedServer(c.h)
			srv.Listener = smallBuffers{srv.Listener}
			srv.Start()
			t.Cleanup(srv.Close)
			tok := c.token("alice")
			c.tree(tok, "p", "c", "k")
			c.mustDo(http.MethodPost, pathK("p", "c", "empty"), "", tok, http.StatusCreated)
			// 6 MB: more than the read-ahead buffer and every socket
			// buffer between the store and a stalled client.
			k := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: c.ids["alice"]}, Project: "p", Collection: "c", Cluster: "k"}
			for i := range 60 {
				k.Record = fmt.Sprintf("rec-%04d", i)
				value := json.RawMessage(fmt.Sprintf(`"%04d%s"`, i, strings.Repeat("v", 100_000)))
				_, err := c.store.CreateRecord(t.Context(), k, &store.Record{Type: store.String, Value: value}, store.Write{})
				require.NoError(t, err)
			}

			addr := srv.Listener.Addr().String()
			targets := []string{pathP("p") + "/export", pathP("p") + "/diff?from=c/k&to=c/empty"}
			var mu sync.Mutex
			var conns []net.Conn
			statuses := map[int]int{}
			var wg sync.WaitGroup
			for i := range 10 {
				wg.Go(func() {
					status, conn := slowReader(t, addr, targets[i%4/3], tok) // 3 exports to 1 comparison
					mu.Lock()
					defer mu.Unlock()
					statuses[status]++
					if conn != nil {
						conns = append(conns, conn)
					}
				})
			}
			wg.Wait()
			t.Cleanup(func() {
				for _, conn := range conns {
					conn.Close()
				}
			})
			t.Logf("slow readers answered: %v", statuses)
			assert.Positive(t, statuses[http.StatusOK], "some slow readers are being served")
			assert.Equal(t, 10, statuses[http.StatusOK]+statuses[http.StatusServiceUnavailable], "every slow reader got 200 or 503: %v", statuses)

			// Everything else is answered while they stall.
			code, hb := c.health()
			assert.Equal(t, http.StatusOK, code, "GET /health while slow readers stall")
			assert.Equal(t, "ok", hb.Status, "GET /health while slow readers stall")
			res := c.loginFrom("", "bob", "bob-password")
			assert.Equal(t, http.StatusOK, res.status, "a login while slow readers stall: %s", res.env.raw)
			c.mustDo(http.MethodGet, pathR("p", "c", "k", "rec-0001"), "", tok, http.StatusOK)
			c.mustDo(http.MethodPut, pathR("p", "c", "k", "rec-0001"), `{"value":"changed"}`, tok, http.StatusOK)
			c.mustDo(http.MethodGet, pathK("p", "c", "k")+"/records?limit=5", "", tok, http.StatusOK)

			// Gone, they leave their places: an export is read whole.
			mu.Lock()
			for _, conn := range conns {
				conn.Close()
			}
			mu.Unlock()
			req, err := http.NewRequest(http.MethodGet, srv.URL+pathP("p")+"/export", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode, "an export once the slow readers are gone: %.200s", body)
			assert.True(t, json.Valid(body), "the whole export (%d bytes)", len(body))
		})
	}
}

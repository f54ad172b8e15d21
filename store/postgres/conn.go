package postgres

import (
	"context"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Connections that give up on a silent database. Open gives every
// connection the Store makes, for its pool and for its listener
// (store.EventSource), two deadlines:
//
//   - connecting (TCP and the startup handshake) ends after the store's
//     timeout (DefaultTimeout when the Store has none), unless the URL
//     sets connect_timeout: a database that accepts TCP but never
//     answers cannot hold a connection attempt, nor the pool's slot,
//     forever;
//   - a read that waits for the server longer than the store's timeout
//     plus answerGrace fails, and the connection with it (lib/pq then
//     drops it). When a call's deadline passes, lib/pq asks the server to
//     cancel the statement; a server that answers does so at once, and
//     the grace leaves it the time to. A server that stalls is cut at
//     the end of the grace, so that the call ends then with
//     store.ErrUnavailable instead of waiting for the server.
//
// The listener's connection waits for notifications between them, so
// the Store pings it every pollInterval and its reads may wait longer
// (listenIdle): a listener whose database went silent is cut and
// reconnects, and the feed catches up after the reconnect.

// answerGrace is how long past a call's deadline a read waits for the
// server's answer to the cancel request before the connection is cut.
const answerGrace = 500 * time.Millisecond

// connectTimeout is the deadline of connecting for a store with timeout.
func connectTimeout(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return DefaultTimeout
	}
	return timeout
}

// poolIdle is how long a read of a pool connection may wait for the
// server (0: forever, for a store without a timeout).
func poolIdle(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return 0
	}
	return timeout + answerGrace
}

// listenIdle is how long a read of the listener's connection may wait:
// longer than two pings apart.
func listenIdle(timeout time.Duration) time.Duration {
	return max(connectTimeout(timeout), 2*pollInterval) + answerGrace
}

// idleDialer dials connections whose reads wait at most idle for the
// server (0: forever). It is a pq.Dialer and pq.DialerContext.
type idleDialer struct {
	net.Dialer
	idle time.Duration
}

func (d *idleDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

func (d *idleDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

func (d *idleDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, address)
	if err != nil || d.idle <= 0 {
		return c, err
	}
	return &idleConn{Conn: c, idle: d.idle}, nil
}

// idleConn is a connection whose every read has a deadline idle ahead.
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(b []byte) (int, error) {
	if err := c.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

// withConnectTimeout returns the connection string dsn (a URL or
// key=value pairs) with connect_timeout set to d, in whole seconds
// rounded up, unless it sets one already.
func withConnectTimeout(dsn string, d time.Duration) string {
	secs := strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return dsn // lib/pq reports it
		}
		q := u.Query()
		if q.Get("connect_timeout") == "" {
			q.Set("connect_timeout", secs)
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	if strings.Contains(dsn, "connect_timeout=") {
		return dsn
	}
	return strings.TrimSpace(dsn + " connect_timeout=" + secs)
}

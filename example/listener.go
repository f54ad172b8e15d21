package main

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// limitListener caps the connections open at once (server.max_connections,
// docs/api.md#limits-rate-limits-and-quotas): a connection beyond the cap
// is accepted and closed at once, so that its client learns at once instead
// of waiting in the kernel's accept queue.
// golang.org/x/net/netutil.LimitListener does the latter (Accept blocks
// until a slot frees), which is what let idle connections make new clients
// time out; hence this small wrapper.
type limitListener struct {
	net.Listener
	max    int64
	open   atomic.Int64
	logger *slog.Logger

	// refused counts the connections closed since the last log line, which
	// is written at most every refusedLogEvery.
	refused atomic.Int64
	lastLog atomic.Int64 // Unix nanoseconds
}

// refusedLogEvery is how often refused connections are logged at most.
const refusedLogEvery = 30 * time.Second

// newLimitListener wraps ln so that at most max connections are open at
// once.
func newLimitListener(ln net.Listener, max int, logger *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, max: int64(max), logger: logger}
}

// Accept returns the next connection within the cap, closing those beyond
// it.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &limitConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		_ = c.Close()
		l.noteRefused()
	}
}

// noteRefused counts a refused connection and logs the count at most once
// every refusedLogEvery.
func (l *limitListener) noteRefused() {
	l.refused.Add(1)
	now := time.Now().UnixNano()
	last := l.lastLog.Load()
	if now-last < int64(refusedLogEvery) || !l.lastLog.CompareAndSwap(last, now) {
		return
	}
	l.logger.Warn("connections refused: server.max_connections are open",
		"max_connections", l.max, "refused", l.refused.Swap(0))
}

// limitConn gives its slot back when it is closed (once, however often
// Close is called).
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

// Close closes the connection and frees its slot.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

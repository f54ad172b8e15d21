package e2e_test

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// BenchmarkEventsStreams opens 1,000 change feed streams on one instance
// (memory store), then makes one change per iteration and waits until
// every stream has it. It reports the memory the open streams cost
// (heap and stacks, the clients' raw connections included, so an upper
// bound) and how long the last stream waited for the change:
//
//	go test -run XXX -bench EventsStreams -benchtime 5x .
func BenchmarkEventsStreams(b *testing.B) {
	const streams = 1000
	c := newServer(b, memoryKind, hds.WithEvents(time.Hour, streams))
	srv := httptest.NewServer(c.h)
	b.Cleanup(srv.Close)
	alice := c.token("alice")
	c.tree(alice, "p", "c", "k")
	addr := strings.TrimPrefix(srv.URL, "http://")

	before := inUse()
	conns := make([]*bufio.Reader, streams)
	for i := range conns {
		conn, err := net.Dial("tcp", addr)
		require.NoError(b, err)
		b.Cleanup(func() { conn.Close() })
		_, err = conn.Write([]byte("GET " + pathP("p") + "/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + alice + "\r\n\r\n"))
		require.NoError(b, err)
		r := bufio.NewReaderSize(conn, 512)
		readUntil(b, r, ": stream open") // the stream is open on the server
		conns[i] = r
	}
	after := inUse()
	b.ReportMetric(float64(after-before)/(1<<20), "MiB/1000streams")
	b.Logf("%d open streams cost %.1f MiB (heap and stacks, clients included)", streams, float64(after-before)/(1<<20))

	var worst time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		c.mustDo("POST", pathK("p", "c", "k")+"/records/r"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+"?type=INTEGER&value=1", "", alice, http.StatusCreated)
		for _, r := range conns {
			readUntil(b, r, "event: record.create")
		}
		worst = max(worst, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(worst.Milliseconds()), "ms-to-all")
	b.Logf("a change reached all %d streams within %s (the slowest of %d changes)", streams, worst, b.N)
}

// inUse is the memory in use: heap and goroutine stacks, after a GC.
func inUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// readUntil reads lines from r until one starts with prefix.
func readUntil(b *testing.B, r *bufio.Reader, prefix string) {
	b.Helper()
	for {
		line, err := r.ReadString('\n')
		require.NoError(b, err, "waiting for %q", prefix)
		if strings.HasPrefix(line, prefix) {
			return
		}
	}
}

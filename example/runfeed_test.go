package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blackhole is a TCP proxy in front of a server that can drop the
// connections it carries without a word: after hole, what either side
// sends is read and thrown away, and neither side is told (no reset, no
// close), as when a NAT entry is dropped. New connections pass.
type blackhole struct {
	url   string
	mu    sync.Mutex
	conns []*holeConn
}

type holeConn struct{ holed bool }

// newBlackhole starts a proxy of the server at base (http://HOST:PORT).
func newBlackhole(t *testing.T, base string) *blackhole {
	t.Helper()
	backend := strings.TrimPrefix(base, "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &blackhole{url: "http://" + ln.Addr().String()}
	var open sync.WaitGroup
	var all []net.Conn
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		for _, c := range all {
			c.Close()
		}
		b.mu.Unlock()
		open.Wait()
	})
	open.Add(1)
	go func() {
		defer open.Done()
		for {
			front, err := ln.Accept()
			if err != nil {
				return
			}
			back, err := net.Dial("tcp", backend)
			if err != nil {
				front.Close()
				continue
			}
			hc := &holeConn{}
			b.mu.Lock()
			b.conns = append(b.conns, hc)
			all = append(all, front, back)
			b.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				defer open.Done()
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					b.mu.Lock()
					holed := hc.holed
					b.mu.Unlock()
					if n > 0 && !holed {
						if _, err := dst.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						if !holed {
							_ = dst.Close()
						}
						return
					}
				}
			}
			open.Add(2)
			go pipe(back, front)
			go pipe(front, back)
		}
	}()
	return b
}

// hole drops every connection open now.
func (b *blackhole) hole() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.holed = true
	}
}

// TestFeedSilentReconnects: a stream of the change feed that goes silent
// without a reset (no keep-alive for the feed's idle limit; 45 s in run,
// shortened here) is given up, said so on stderr, and reconnected from
// the last event, so that the next change arrives; a stream whose
// keep-alives come is never given up.
func TestFeedSilentReconnects(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `{
  "security": {"jwt_secret": "`+testJWTSecret+`", "credential_key": "`+testKey+`"},
  "rate_limit": {"per_minute": 1000000, "per_hour": 1000000},
  "events": {"keepalive": "100ms"},
  "users": [{"username": "alice", "password": "`+testPassword+`"}]
}`)
	s := start(t, []string{"-config", path}, map[string]string{"HDS_ADDR": "127.0.0.1:0"})
	base := s.url
	token := login(t, base, "alice", testPassword)
	watchFixture(t, base, token)
	proxy := newBlackhole(t, base)

	const idle = 2 * time.Second
	events := make(chan feedEvent, 64)
	first, lost := make(chan error, 1), make(chan error, 1)
	var stderr syncBuffer
	f := &feed{c: &apiClient{base: proxy.url, token: token, http: &http.Client{}}, path: "/api/v1/projects/p/events",
		timeout: 30 * time.Second, events: events, first: first, lost: lost, idle: idle, stderr: &stderr}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.follow(ctx)
	require.NoError(t, <-first)
	waitEvent := func(rev int64) {
		t.Helper()
		deadline := time.After(time.Minute)
		for {
			select {
			case ev := <-events:
				if ev.revision == rev {
					return
				}
			case <-deadline:
				t.Fatalf("no event of revision %d within a minute; stderr:\n%s", rev, stderr.String())
			}
		}
	}

	waitEvent(setRecord(t, base, token, "k", "APP_A", "2", http.StatusOK))
	// Keep-alives every 100 ms keep the stream: twice the idle limit
	// passes without a word on stderr.
	time.Sleep(2 * idle)
	assert.Empty(t, stderr.String(), "a stream with its keep-alives was given up")

	proxy.hole()
	waitEvent(setRecord(t, base, token, "k", "APP_A", "3", http.StatusOK))
	assert.Equal(t, "hds: not a byte from the change feed for 2s (the server sends a keep-alive every 15 s): reconnecting\n",
		stderr.String())
	select {
	case err := <-lost:
		t.Fatalf("the feed was lost: %v", err)
	default:
	}
}

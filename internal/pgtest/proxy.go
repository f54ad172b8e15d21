package pgtest

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards TCP connections to a PostgreSQL server and can cut them
// all (Cut), hold every byte for a while (Stall) or swallow them
// (BlackHole), to test how a store behaves when the database goes away,
// hangs or answers late and then comes back, without touching the server
// other tests use. It also counts the round trips clients make
// (RoundTrips).
type Proxy struct {
	target string
	addr   string
	trips  atomic.Int64

	mu      sync.Mutex
	changed *sync.Cond // signalled when stalled or holed change
	ln      net.Listener
	conns   map[net.Conn]*link
	stalled bool // no byte moves; Resume lets them go on
	holed   bool // new connections are black-holed
}

// link is one forwarded connection; holed, it swallows every byte for
// good.
type link struct{ holed bool }

// NewProxy starts a proxy to the server of dbURL and returns it with the
// URL that goes through it. It is closed when t ends.
func NewProxy(t testing.TB, dbURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{target: u.Host, conns: make(map[net.Conn]*link)}
	p.changed = sync.NewCond(&p.mu)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() { p.Resume(); p.Cut() })
	u.Host = p.addr
	return p, u.String()
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *Proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	l := &link{holed: p.holed}
	p.conns[c], p.conns[up] = l, l
	p.mu.Unlock()
	go func() { _ = p.relay(gate{p, l, up}, c); up.Close() }()
	_, _ = io.Copy(gate{p, l, c}, up)
	c.Close()
}

// gate is the side of a link that bytes are written to: it holds them
// while the proxy is stalled and swallows them once the link is holed.
type gate struct {
	p *Proxy
	l *link
	w io.Writer
}

func (g gate) Write(b []byte) (int, error) {
	g.p.mu.Lock()
	for g.p.stalled && !g.l.holed {
		g.p.changed.Wait()
	}
	holed := g.l.holed
	g.p.mu.Unlock()
	if holed {
		return len(b), nil
	}
	return g.w.Write(b)
}

// Stall holds every byte, of the open connections and of those accepted
// meanwhile, until Resume: the database hangs, then answers late.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
}

// Resume ends a Stall: the bytes held go on.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = false
	p.changed.Broadcast()
}

// BlackHole makes every open connection, and every connection accepted
// until Heal, swallow what either side sends, for good, without closing
// it: the database accepts TCP and never answers.
func (p *Proxy) BlackHole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holed = true
	for _, l := range p.conns {
		l.holed = true
	}
	p.changed.Broadcast()
}

// Heal ends a BlackHole for the connections accepted from now on; those
// it swallowed stay dead.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holed = false
}

// Cut closes the listener and every open connection: the database is
// gone, as far as the client can tell.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.changed.Broadcast()
	clear(p.conns)
}

// Restore listens again on the same address.
func (p *Proxy) Restore(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("pgtest: restore proxy: %v", err)
	}
	p.serve(ln)
}

// RoundTrips is how many round trips clients have made through the proxy
// so far: the messages of the PostgreSQL protocol after which a client
// waits for the server's ReadyForQuery, Sync (the end of an extended
// query: a prepared statement's Bind/Execute, or a Parse/Describe that
// prepares one) and Query (a simple query, such as BEGIN or COMMIT). A
// message is counted before it is passed on, so a client that has its
// answer has been counted.
func (p *Proxy) RoundTrips() int64 { return p.trips.Load() }

// relay copies the client's messages from c to up, counting round trips.
// The first messages have no type byte: the startup message, and before
// it any SSL or GSSAPI encryption request.
func (p *Proxy) relay(up io.Writer, c net.Conn) error {
	var head [5]byte
	for startup := true; startup; {
		if _, err := io.ReadFull(c, head[:4]); err != nil {
			return err
		}
		n := int64(binary.BigEndian.Uint32(head[:4])) - 4
		var code [4]byte
		if _, err := io.ReadFull(c, code[:]); err != nil {
			return err
		}
		if _, err := up.Write(append(head[:4:4], code[:]...)); err != nil {
			return err
		}
		// 80877103 and 80877104 ask for encryption; the startup follows.
		startup = binary.BigEndian.Uint32(code[:]) == 80877103 || binary.BigEndian.Uint32(code[:]) == 80877104
		if _, err := io.CopyN(up, c, n-4); err != nil {
			return err
		}
	}
	for {
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return err
		}
		n := int64(binary.BigEndian.Uint32(head[1:])) - 4
		if n < 0 {
			return fmt.Errorf("pgtest: bad message length %d", n+4)
		}
		if head[0] == 'S' || head[0] == 'Q' {
			p.trips.Add(1)
		}
		if _, err := up.Write(head[:]); err != nil {
			return err
		}
		if _, err := io.CopyN(up, c, n); err != nil {
			return err
		}
	}
}

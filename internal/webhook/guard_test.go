package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

func TestForbidden(t *testing.T) {
	for _, c := range []struct{ ip, want string }{
		{"127.0.0.1", "loopback"}, {"127.9.9.9", "loopback"}, {"::1", "loopback"}, {"::ffff:127.0.0.1", "loopback"},
		{"10.0.0.1", "private"}, {"172.16.5.4", "private"}, {"192.168.1.1", "private"}, {"fd12::1", "private"},
		{"169.254.169.254", "link-local"}, {"fe80::1", "link-local"},
		{"224.0.0.1", "multicast"}, {"239.1.2.3", "multicast"}, {"ff02::1", "multicast"}, {"ff01::1", "multicast"},
		{"0.0.0.0", "unspecified"}, {"::", "unspecified"},
		{"93.184.216.34", ""}, {"2606:2800:220:1::1", ""}, {"8.8.8.8", ""},
	} {
		got := Forbidden(netip.MustParseAddr(c.ip))
		if c.want == "" {
			assert.Empty(t, got, c.ip)
		} else {
			assert.Contains(t, got, c.want, c.ip)
		}
	}
}

// TestForbiddenRanges has a row per range of docs/api.md#webhooks
// (v1.3): an address inside, refused by default, and whether
// webhooks.allow_private_addresses lifts it; and addresses just outside,
// which are globally routable and allowed.
func TestForbiddenRanges(t *testing.T) {
	for _, c := range []struct {
		ip, why string
		always  bool // refused even with AllowPrivate
	}{
		{"0.1.2.3", "0.0.0.0/8", true},
		{"0.255.255.255", "0.0.0.0/8", true},
		{"255.255.255.255", "broadcast", true},
		{"100.64.0.1", "shared address space", false},
		{"100.127.255.254", "shared address space", false},
		{"192.0.0.8", "192.0.0.0/24", false},
		{"192.0.2.10", "documentation", false},
		{"198.51.100.7", "documentation", false},
		{"203.0.113.99", "documentation", false},
		{"198.18.0.1", "benchmarking", false},
		{"198.19.255.255", "benchmarking", false},
		{"240.0.0.1", "240.0.0.0/4", false},
		{"254.1.2.3", "240.0.0.0/4", false},
		{"100::1", "100::/64", false},
		{"2001:db8::1", "documentation", false},
		{"3fff::1", "documentation", false},
		{"3fff:fff::1", "documentation", false},
		{"2001:2::1", "benchmarking", false},
		{"fec0::1", "site-local", false},
		{"feff::1", "site-local", false},
		{"5f00::1", "5f00::/16", false},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo", false}, // a public client: all of Teredo is refused
		{"64:ff9b:1::8.8.8.8", "64:ff9b:1::/48", false},           // all of it, even holding a public address
		// IPv6 forms that embed a refused IPv4 address.
		{"::ffff:127.0.0.1", "loopback", false},
		{"::ffff:100.64.0.1", "shared address space", false},
		{"::127.0.0.1", "IPv4-compatible address holding 127.0.0.1", false},
		{"::10.0.0.1", "IPv4-compatible address holding 10.0.0.1", false},
		{"::8.8.8.8", "", false}, // compatible with a public address: not refused by the embedding rule
		{"64:ff9b::7f00:1", "NAT64 address holding 127.0.0.1", false},
		{"64:ff9b::a9fe:a9fe", "NAT64 address holding 169.254.169.254", false},
		{"64:ff9b::c0a8:101", "NAT64 address holding 192.168.1.1", false},
		{"2002:7f00:1::", "6to4 address holding 127.0.0.1", false},
		{"2002:a00:1::1", "6to4 address holding 10.0.0.1", false},
		{"2002:6440:1::", "6to4 address holding 100.64.0.1", false},
		{"2001::7f00:1", "Teredo", false},
		// Embedded addresses that stay refused with AllowPrivate.
		{"::ffff:0.0.0.1", "0.0.0.0/8", true},
		{"::ffff:255.255.255.255", "broadcast", true},
		{"::ffff:224.0.0.1", "multicast", true},
		{"64:ff9b::ffff:ffff", "NAT64 address holding 255.255.255.255", true},
		{"2002:e000:1::", "6to4 address holding 224.0.0.1", true},
		{"::0.0.0.5", "IPv4-compatible address holding 0.0.0.5", true},
		// The kinds netip names.
		{"127.0.0.1", "loopback", false},
		{"::1", "loopback", false},
		{"10.1.2.3", "private", false},
		{"fd00::1", "private", false},
		{"169.254.169.254", "link-local", false},
		{"fe80::1", "link-local", false},
		{"224.0.0.1", "multicast", true},
		{"ff05::2", "multicast", true},
		{"0.0.0.0", "unspecified", true},
		{"::", "unspecified", true},
	} {
		ip := netip.MustParseAddr(c.ip)
		if c.why == "" {
			assert.Empty(t, Forbidden(ip), c.ip)
			continue
		}
		assert.Contains(t, Forbidden(ip), c.why, "%s: refused by default", c.ip)
		if c.always {
			assert.Contains(t, forbidden(ip, true), c.why, "%s: refused even with allow_private_addresses", c.ip)
		} else {
			assert.Empty(t, forbidden(ip, true), "%s: allowed with allow_private_addresses", c.ip)
		}
		err := Guard{}.Control("tcp", netip.AddrPortFrom(ip, 443).String(), nil)
		assert.ErrorIs(t, err, ErrForbidden, "%s: refused at connection", c.ip)
		err = Guard{}.CheckURL(context.Background(), "https://"+netip.AddrPortFrom(ip, 443).String()+"/hook")
		if assert.Error(t, err, "%s: refused at create", c.ip) {
			assert.Contains(t, err.Error(), c.why, c.ip)
		}
	}
	// Just outside each IPv4 range, and ordinary public addresses: allowed.
	for _, ip := range []string{"1.0.0.1", "100.63.255.255", "100.128.0.0", "192.0.1.255", "192.0.3.0", "198.17.255.255",
		"198.20.0.0", "198.51.99.255", "203.0.112.255", "8.8.8.8",
		"2606:4700::1111", "2001:4860:4860::8888", "3fff:1000::1", "2001:3::1", "2003::1", "64:ff9b::808:808", "2002:808:808::",
		"5f01::1", "::ffff:8.8.8.8"} {
		a := netip.MustParseAddr(ip)
		assert.Empty(t, Forbidden(a), "%s: globally routable", ip)
		assert.NoError(t, Guard{}.Control("tcp", netip.AddrPortFrom(a, 443).String(), nil), ip)
	}
}

func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	refuse, allow := Guard{}, Guard{AllowPrivate: true}
	for _, c := range []struct{ url, why string }{
		{"http://127.0.0.1/x", "loopback"},
		{"http://localhost:8080/x", "resolves to"},
		{"http://10.0.0.1/", "private"},
		{"http://[fe80::1%25eth0]/", "link-local"},
		{"http://no-such-host.invalid/", "does not resolve"},
	} {
		err := refuse.CheckURL(ctx, c.url)
		if assert.Error(t, err, c.url) {
			assert.Contains(t, err.Error(), c.why, c.url)
		}
	}
	for _, u := range []string{"http://127.0.0.1/x", "http://localhost:8080/x", "http://10.0.0.1/"} {
		assert.NoError(t, allow.CheckURL(ctx, u), "allowed: %s", u)
	}
	assert.NoError(t, refuse.CheckURL(ctx, "https://93.184.216.34/hook"), "a public address")
	for _, c := range []struct{ url, why string }{
		{"/relative", "absolute"}, {"ftp://example.com/", "http or https"}, {"http:///x", "host"},
		{"mailto:a@example.com", "absolute"}, {"http://u:p@example.com/", "user name"}, {"http://example.com/#f", "fragment"},
	} {
		for _, g := range []Guard{refuse, allow} {
			err := g.CheckURL(ctx, c.url)
			if assert.Error(t, err, c.url) {
				assert.Contains(t, err.Error(), c.why, c.url)
			}
		}
	}
}

// TestClientGuard: the client's dialer checks every connection, so a
// loopback server is refused unless private addresses are allowed.
func TestClientGuard(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, err := NewClient(Guard{}, time.Second, 1).Get(srv.URL)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrForbidden), "refused by the guard: %v", err)
	assert.Zero(t, hits.Load(), "nothing reached the server")

	resp, err := NewClient(Guard{AllowPrivate: true}, time.Second, 1).Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, int32(1), hits.Load())
}

// TestDeliveryRefusedAtConnection: a webhook whose host resolves to a
// forbidden address only later than its creation (here: stored without
// the create check) fails each attempt, last_error saying why.
func TestDeliveryRefusedAtConnection(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	s := memory.New()
	ctx := context.Background()
	p := store.Path{Project: "web", Need: store.RightAdmin}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	h, err := s.CreateWebhook(ctx, p, &store.Webhook{URL: srv.URL, Secret: []byte("0123456789abcdef")})
	require.NoError(t, err)
	_, err = s.PingWebhook(ctx, p, h.ID)
	require.NoError(t, err)

	stop := make(chan struct{})
	d := New(Config{Store: s, MaxAttempts: 1, Poll: 10 * time.Millisecond, Body: func(*store.AuditEntry) []byte { return nil }})
	done := make(chan struct{})
	go func() { d.Run(stop); close(done) }()
	defer func() { close(stop); <-done }()
	var got *store.Delivery
	require.Eventually(t, func() bool {
		ds, _, err := s.FindDeliveries(ctx, p, h.ID, store.NewListQuery())
		if err != nil || len(ds) != 1 || ds[0].Status != store.DeliveryFailed {
			return false
		}
		got = ds[0]
		return true
	}, 10*time.Second, 10*time.Millisecond)
	assert.True(t, strings.HasPrefix(got.LastError, "refused by the request forgery guard"), got.LastError)
	assert.Contains(t, got.LastError, "loopback")
	assert.Zero(t, hits.Load(), "nothing reached the server")
}

// TestDispatcherPrunes: finished deliveries older than KeepDeliveries
// are deleted by the running dispatcher (the store's PruneDeliveries,
// whose conformance test checks that pending ones stay).
func TestDispatcherPrunes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	s := memory.New()
	ctx := context.Background()
	p := store.Path{Project: "web", Need: store.RightAdmin}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	h, err := s.CreateWebhook(ctx, p, &store.Webhook{URL: srv.URL, Secret: []byte("0123456789abcdef")})
	require.NoError(t, err)
	_, err = s.PingWebhook(ctx, p, h.ID)
	require.NoError(t, err)
	list := func() []*store.Delivery {
		ds, _, err := s.FindDeliveries(ctx, p, h.ID, store.NewListQuery())
		require.NoError(t, err)
		return ds
	}

	stop := make(chan struct{})
	d := New(Config{Store: s, Guard: Guard{AllowPrivate: true}, Poll: 10 * time.Millisecond, KeepDeliveries: 50 * time.Millisecond,
		PruneEvery: 10 * time.Millisecond, Body: func(*store.AuditEntry) []byte { return nil }})
	done := make(chan struct{})
	go func() { d.Run(stop); close(done) }()
	defer func() { close(stop); <-done }()
	require.Eventually(t, func() bool { return len(list()) == 0 }, 10*time.Second, 10*time.Millisecond,
		"the ping, once succeeded, is deleted after KeepDeliveries")

}

func TestSign(t *testing.T) {
	// HMAC-SHA256("secret", "1700000000.{}"), computed independently
	// (printf .. | openssl dgst -sha256 -hmac secret).
	assert.Equal(t, "t=1700000000,v1=b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163", Sign([]byte("secret"), 1700000000, []byte("{}")))
}

func TestBackoff(t *testing.T) {
	d := New(Config{MaxBackoff: 10 * time.Second})
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, d.backoff(n))
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}, got)
	assert.Equal(t, time.Hour, New(Config{}).backoff(100), "the default max_backoff")
}

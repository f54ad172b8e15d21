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

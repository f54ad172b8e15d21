package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/middleware"
)

func TestClientIP(t *testing.T) {
	const proxy = "192.0.2.1:1234" // inside the trusted 192.0.2.0/24
	tests := []struct {
		name    string
		trusted []string
		remote  string
		xff     []string // X-Forwarded-For header lines
		realIP  string
		want    string
	}{
		// Without trusted proxies the headers are never believed.
		{name: "no headers", remote: "203.0.113.9:5555", want: "203.0.113.9"},
		{name: "XFF ignored without trusted proxies", remote: "203.0.113.9:5555", xff: []string{"1.1.1.1"}, want: "203.0.113.9"},
		{name: "XFF chain ignored without trusted proxies", remote: "203.0.113.9:5555", xff: []string{"1.1.1.1, 2.2.2.2"}, want: "203.0.113.9"},
		{name: "X-Real-IP ignored without trusted proxies", remote: "203.0.113.9:5555", realIP: "1.1.1.1", want: "203.0.113.9"},
		{name: "IPv6 peer", remote: "[2001:db8::1]:443", xff: []string{"1.1.1.1"}, want: "2001:db8::1"},
		{name: "IPv4-mapped IPv6 peer", remote: "[::ffff:203.0.113.9]:443", want: "203.0.113.9"},
		{name: "peer without a port", remote: "203.0.113.9", want: "203.0.113.9"},
		{name: "peer that is no IP (a unix socket)", remote: "@", xff: []string{"1.1.1.1"}, want: "@"},

		// From a peer that is not a trusted proxy, the headers are ignored
		// even when proxies are configured.
		{name: "untrusted peer with trusted proxies configured", trusted: []string{"192.0.2.0/24"},
			remote: "203.0.113.9:5555", xff: []string{"1.1.1.1"}, realIP: "1.1.1.1", want: "203.0.113.9"},

		// From a trusted proxy: the right-most untrusted hop.
		{name: "trusted: right-most hop", trusted: []string{"192.0.2.0/24"},
			remote: proxy, xff: []string{"1.1.1.1, 2.2.2.2"}, want: "2.2.2.2"},
		{name: "trusted: spoofed left-most hop and an inner proxy", trusted: []string{"192.0.2.0/24"},
			remote: proxy, xff: []string{"spoofed, 2.2.2.2, 192.0.2.7"}, want: "2.2.2.2"},
		{name: "trusted: single hop", trusted: []string{"192.0.2.0/24"},
			remote: proxy, xff: []string{"2.2.2.2"}, want: "2.2.2.2"},
		{name: "trusted: several header lines form one list", trusted: []string{"192.0.2.0/24"},
			remote: proxy, xff: []string{"1.1.1.1", "2.2.2.2, 192.0.2.9"}, want: "2.2.2.2"},
		{name: "trusted: spaces", trusted: []string{"192.0.2.0/24"},
			remote: proxy, xff: []string{" 1.1.1.1 ,2.2.2.2 "}, want: "2.2.2.2"},
		{name: "trusted: IPv6 hop", trusted: []string{"192.0.2.0/24"},
			remote: proxy, xff: []string{"2001:db8::7"}, want: "2001:db8::7"},
		{name: "trusted: garbled right-most hop believes nothing", trusted: []string{"192.0.2.0/24"},
			remote: proxy, xff: []string{"1.1.1.1, garbage"}, want: "192.0.2.1"},
		{name: "trusted: X-Real-IP without XFF", trusted: []string{"192.0.2.0/24"},
			remote: proxy, realIP: "2.2.2.2", want: "2.2.2.2"},
		{name: "trusted: XFF wins over X-Real-IP", trusted: []string{"192.0.2.0/24"},
			remote: proxy, xff: []string{"2.2.2.2"}, realIP: "3.3.3.3", want: "2.2.2.2"},
		{name: "trusted: no header is the proxy itself", trusted: []string{"192.0.2.0/24"},
			remote: proxy, want: "192.0.2.1"},
		{name: "trusted: garbled X-Real-IP", trusted: []string{"192.0.2.0/24"},
			remote: proxy, realIP: "not an address", want: "192.0.2.1"},
		{name: "trusted proxy given as one address", trusted: []string{"192.0.2.1"},
			remote: proxy, xff: []string{"1.1.1.1, 2.2.2.2"}, want: "2.2.2.2"},
		{name: "one address trusts only itself", trusted: []string{"192.0.2.1"},
			remote: "192.0.2.2:1234", xff: []string{"2.2.2.2"}, want: "192.0.2.2"},
		{name: "several CIDRs", trusted: []string{"10.0.0.0/8", "192.0.2.0/24"},
			remote: "10.1.2.3:80", xff: []string{"2.2.2.2, 192.0.2.5"}, want: "2.2.2.2"},
		{name: "IPv6 proxy CIDR", trusted: []string{"2001:db8::/32"},
			remote: "[2001:db8::5]:443", xff: []string{"1.1.1.1, 2.2.2.2"}, want: "2.2.2.2"},
		{name: "IPv4-mapped proxy is trusted", trusted: []string{"192.0.2.0/24"},
			remote: "[::ffff:192.0.2.1]:443", xff: []string{"2.2.2.2"}, want: "2.2.2.2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := middleware.NewClientIP(tc.trusted...)
			require.NoError(t, err)
			r := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if tc.realIP != "" {
				r.Header.Set("X-Real-IP", tc.realIP)
			}
			assert.Equal(t, tc.want, c.Of(r))
		})
	}
}

func TestClientIPAllHopsTrusted(t *testing.T) {
	// When every hop is a trusted proxy, the client is the left-most one:
	// never an address outside the chain.
	c, err := middleware.NewClientIP("192.0.2.0/24")
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "192.0.2.1:1234"
	r.Header.Set("X-Forwarded-For", "192.0.2.8, 192.0.2.7")
	assert.Equal(t, "192.0.2.8", c.Of(r))
}

func TestNewClientIPRefusesGarbage(t *testing.T) {
	for _, bad := range []string{"", "not-a-cidr", "192.0.2.0/33", "10.0.0.0/8/8", "192.0.2.1:80"} {
		_, err := middleware.NewClientIP("10.0.0.0/8", bad)
		assert.Error(t, err, "%q", bad)
	}
}

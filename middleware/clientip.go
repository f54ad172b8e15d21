package middleware

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP finds the address of the client behind a request. It believes
// X-Forwarded-For and X-Real-IP only when the connection comes from a
// trusted proxy, and then takes the right-most address that is not itself
// a trusted proxy, so that a client cannot choose its own address by
// prepending to the header.
type ClientIP struct {
	trusted []netip.Prefix
}

// NewClientIP parses the trusted proxies, given as CIDRs ("10.0.0.0/8")
// or single addresses.
func NewClientIP(trustedProxies ...string) (ClientIP, error) {
	var c ClientIP
	for _, s := range trustedProxies {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return ClientIP{}, fmt.Errorf("trusted proxy %q is neither a CIDR nor an address", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		c.trusted = append(c.trusted, p.Masked())
	}
	return c, nil
}

func (c ClientIP) isTrusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Of returns the client address of r.
func (c ClientIP) Of(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if !c.isTrusted(peer) {
		return peer.String()
	}
	client := peer
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		hops := strings.Split(strings.Join(xff, ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // a garbled hop: believe nothing to its left
			}
			client = hop.Unmap()
			if !c.isTrusted(client) {
				break
			}
		}
		return client.String()
	}
	if real, err := netip.ParseAddr(strings.TrimSpace(r.Header.Get("X-Real-IP"))); err == nil {
		return real.Unmap().String()
	}
	return client.String()
}

// Package webhook sends the deliveries of webhooks
// (docs/api.md#webhooks): a Dispatcher claims them from the store's
// outbox, POSTs each, signed, through one HTTP client whose dialer
// refuses forbidden addresses (Guard), and records the outcome, with
// retries after doubling waits.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
)

// Guard is the request forgery guard (docs/api.md#webhooks): unless
// AllowPrivate, no webhook may name, or connect to, an address that is
// not globally routable unicast (Forbidden says which); with
// AllowPrivate, still none that is multicast, 255.255.255.255, in
// 0.0.0.0/8 or ::.
type Guard struct {
	// AllowPrivate lets webhooks reach loopback, private, link-local and
	// the other special-use addresses (webhooks.allow_private_addresses).
	// The zero value refuses them.
	AllowPrivate bool
	// Resolver looks host names up for CheckURL; nil is
	// net.DefaultResolver.
	Resolver *net.Resolver
}

// special is a special-use range that Forbidden refuses, with why.
// always marks the ranges that AllowPrivate does not lift.
type special struct {
	prefix netip.Prefix
	why    string
	always bool
}

// specialRanges are the ranges refused besides those netip's predicates
// name (loopback, private, link-local, multicast, unspecified), from
// the IANA special-purpose address registries, as docs/api.md#webhooks
// lists them. The IPv6 ranges that embed an IPv4 address are in
// embedding; Teredo and 64:ff9b:1::/48 are refused whole as well.
var specialRanges = []special{
	{netip.MustParsePrefix("0.0.0.0/8"), `in "this network" 0.0.0.0/8`, true},
	{netip.MustParsePrefix("255.255.255.255/32"), "the broadcast address", true},
	{netip.MustParsePrefix("100.64.0.0/10"), "in the shared address space 100.64.0.0/10", false},
	{netip.MustParsePrefix("192.0.0.0/24"), "in the IETF protocol assignments 192.0.0.0/24", false},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address", false},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address", false},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address", false},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address", false},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address (240.0.0.0/4)", false},
	{netip.MustParsePrefix("100::/64"), "a discard-only address (100::/64)", false},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address", false},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address", false},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address (2001::/32)", false},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address (64:ff9b:1::/48)", false},
	{netip.MustParsePrefix("2001:2::/48"), "a benchmarking address", false},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (fec0::/10)", false},
	{netip.MustParsePrefix("5f00::/16"), "a segment routing SID (5f00::/16)", false},
}

// embedding are the IPv6 ranges whose addresses hold an IPv4 address,
// and where: at byte 12 (the last 32 bits), or for 6to4 at byte 2 (bits
// 16 to 47). IPv4-mapped addresses are unmapped before anything else.
var embedding = []struct {
	prefix netip.Prefix
	name   string
	at     int
}{
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible", 12},
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64", 12},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a NAT64", 12},
	{netip.MustParsePrefix("2002::/16"), "a 6to4", 2},
	{netip.MustParsePrefix("2001::/32"), "a Teredo", 12},
}

// Forbidden says why the default guard refuses ip ("a loopback
// address", ...), or returns "" when it may be reached: every address
// that is not globally routable unicast.
func Forbidden(ip netip.Addr) string { return forbidden(ip, false) }

// forbidden is Forbidden, or with allowPrivate the guard of
// webhooks.allow_private_addresses, which refuses only multicast,
// 255.255.255.255, 0.0.0.0/8 and ::.
func forbidden(ip netip.Addr, allowPrivate bool) string {
	ip = ip.WithZone("").Unmap()
	switch {
	case !ip.IsValid():
		return "not an IP address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, r := range specialRanges {
		if r.always && r.prefix.Contains(ip) {
			return r.why
		}
	}
	if ip.Is6() && !ip.IsLoopback() {
		for _, e := range embedding {
			if !e.prefix.Contains(ip) {
				continue
			}
			b := ip.As16()
			v4 := netip.AddrFrom4([4]byte(b[e.at : e.at+4]))
			if why := forbidden(v4, allowPrivate); why != "" {
				return e.name + " address holding " + v4.String() + ", " + why
			}
		}
	}
	if allowPrivate {
		return ""
	}
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) {
			return r.why
		}
	}
	return ""
}

// ErrForbidden is the error of a connection the guard refused; the
// error itself is a *ForbiddenError.
var ErrForbidden = errors.New("forbidden address")

// ForbiddenError is a connection the guard refused: Address, and Why.
type ForbiddenError struct {
	Address string
	Why     string
}

// Error says which address was refused and why.
func (e *ForbiddenError) Error() string { return e.Address + " is " + e.Why }

// Is reports whether target is ErrForbidden.
func (e *ForbiddenError) Is(target error) bool { return target == ErrForbidden }

// Control is a net.Dialer Control hook: it refuses a connection to a
// forbidden address, whatever name it was dialled by, so that a name
// that resolves to such an address later than CheckURL looked also
// fails. It runs on every connection the client makes.
func (g Guard) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &ForbiddenError{Address: address, Why: "not an IP address"}
	}
	if why := forbidden(ap.Addr(), g.AllowPrivate); why != "" {
		return &ForbiddenError{Address: ap.Addr().Unmap().String(), Why: why}
	}
	return nil
}

// CheckURL checks a webhook's url as POST P/webhooks takes it: an
// absolute http or https URL with a host; unless AllowPrivate, its host
// must resolve, and to no forbidden address. The error says why, for
// the answer's details.
func (g Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil, !u.IsAbs(), u.Opaque != "":
		return errors.New("url must be an absolute http or https URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("url must be an http or https URL")
	case u.Hostname() == "":
		return errors.New("url must name a host")
	case u.User != nil:
		return errors.New("url must not hold a user name or password")
	case u.Fragment != "":
		return errors.New("url must not have a fragment")
	}
	note := " (webhooks.allow_private_addresses is off)"
	if g.AllowPrivate {
		note = " (refused even with webhooks.allow_private_addresses)"
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := forbidden(ip, g.AllowPrivate); why != "" {
			return fmt.Errorf("url: the host %s is %s%s", host, why, note)
		}
		return nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		if g.AllowPrivate {
			return nil // a private name may resolve only where it is sent from; each connection is checked
		}
		return fmt.Errorf("url: the host %s does not resolve", host)
	}
	for _, ip := range ips {
		if why := forbidden(ip, g.AllowPrivate); why != "" {
			return fmt.Errorf("url: the host %s resolves to %s, %s%s", host, ip.Unmap(), why, note)
		}
	}
	return nil
}

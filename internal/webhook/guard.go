// Package webhook sends the deliveries of webhooks
// (docs/api.md#22-webhooks): a Dispatcher claims them from the store's
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

// Guard is the request forgery guard: unless AllowPrivate, no webhook may
// name, or connect to, a loopback, private, link-local, multicast or
// unspecified address.
type Guard struct {
	// AllowPrivate lets webhooks reach every address
	// (webhooks.allow_private_addresses). The zero value refuses them.
	AllowPrivate bool
	// Resolver looks host names up for CheckURL; nil is
	// net.DefaultResolver.
	Resolver *net.Resolver
}

// Forbidden says why the guard refuses ip ("a loopback address", ...),
// or returns "" when it may be reached.
func Forbidden(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "not an IP address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
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
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &ForbiddenError{Address: address, Why: "not an IP address"}
	}
	if why := Forbidden(ap.Addr()); why != "" {
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
	if g.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := Forbidden(ip); why != "" {
			return fmt.Errorf("url: the host %s is %s (webhooks.allow_private_addresses is off)", host, why)
		}
		return nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return fmt.Errorf("url: the host %s does not resolve", host)
	}
	for _, ip := range ips {
		if why := Forbidden(ip); why != "" {
			return fmt.Errorf("url: the host %s resolves to %s, %s (webhooks.allow_private_addresses is off)", host, ip.Unmap(), why)
		}
	}
	return nil
}

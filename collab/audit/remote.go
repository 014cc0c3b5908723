package audit

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
)

// maxForwardedHops bounds how many X-Forwarded-For entries are read.
const maxForwardedHops = 32

// RemoteAddr is the address of the client of r, as the audit log records it. It is the
// peer's address, unless the peer is a trusted proxy: then X-Forwarded-For is read from
// the right, skipping trusted proxies, and the first address that is not one is the
// client (an address a client wrote further left is never believed). When every hop is
// trusted the leftmost address is the client; a malformed hop stops the walk at the
// last address believed.
func RemoteAddr(r *http.Request, trusted []netip.Prefix) string {
	peer, ok := peerAddr(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	hops := forwardedFor(r.Header.Values("X-Forwarded-For"))
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			break
		}
		client = a.Unmap()
		if !isTrusted(client, trusted) {
			break
		}
	}
	return client.String()
}

// forwardedFor splits X-Forwarded-For values into hops, keeping the last
// maxForwardedHops.
func forwardedFor(values []string) []string {
	var hops []string
	for _, v := range values {
		for _, h := range strings.Split(v, ",") {
			hops = append(hops, stripPort(strings.TrimSpace(h)))
		}
	}
	if len(hops) > maxForwardedHops {
		hops = hops[len(hops)-maxForwardedHops:]
	}
	return hops
}

// stripPort removes a port and IPv6 brackets: "[::1]:80" → "::1", "1.2.3.4:80" →
// "1.2.3.4".
func stripPort(h string) string {
	if ap, err := netip.ParseAddrPort(h); err == nil {
		return ap.Addr().String()
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

func peerAddr(remote string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap(), true
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Request is what an edge knows about the request a tool call came in: the client's
// address and the request id.
type Request struct {
	RemoteAddr string
	RequestID  string
}

type requestKey struct{}

// WithRequest returns ctx carrying the request's metadata for the entries recorded
// while it is served.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the request metadata in ctx, if any.
func RequestFrom(ctx context.Context) (Request, bool) {
	r, ok := ctx.Value(requestKey{}).(Request)
	return r, ok
}

package rpc

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies parses a comma-separated list of addresses and CIDR prefixes
// (10.0.0.0/8, 127.0.0.1, ::1) of the reverse proxies whose X-Forwarded-Host and
// X-Forwarded-Proto headers are believed. An empty list trusts no proxy.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("invalid trusted proxy %q: use an address or a CIDR prefix such as 10.0.0.0/8", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// fromTrustedProxy reports whether the peer of r is one of the configured trusted
// proxies.
func (h *HTTP) fromTrustedProxy(r *http.Request) bool {
	return FromTrustedProxy(r, h.cfg.TrustedProxies)
}

// FromTrustedProxy reports whether the peer of r is one of the trusted proxies.
func FromTrustedProxy(r *http.Request, trusted []netip.Prefix) bool {
	if len(trusted) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	peer := ap.Addr().Unmap()
	for _, p := range trusted {
		if p.Contains(peer) {
			return true
		}
	}
	return false
}

// baseURL is scheme://host of the request as the client sees it. X-Forwarded-Proto and
// X-Forwarded-Host count only when a trusted proxy sent them: anyone else could point
// the WWW-Authenticate challenge, or the Origin check, at a host of their choosing.
func (h *HTTP) baseURL(r *http.Request) string { return BaseURL(r, h.cfg.TrustedProxies) }

// BaseURL is scheme://host of the request as the client sees it, believing
// X-Forwarded-Proto and X-Forwarded-Host only from a trusted proxy.
func BaseURL(r *http.Request, trusted []netip.Prefix) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if FromTrustedProxy(r, trusted) {
		if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
	}
	return scheme + "://" + requestHost(r, trusted)
}

// requestHost is the host the client asked for: X-Forwarded-Host from a trusted proxy,
// else the Host header.
func (h *HTTP) requestHost(r *http.Request) string { return requestHost(r, h.cfg.TrustedProxies) }

func requestHost(r *http.Request, trusted []netip.Prefix) string {
	if FromTrustedProxy(r, trusted) {
		if fh := firstValue(r.Header.Get("X-Forwarded-Host")); fh != "" && validHost(fh) {
			return fh
		}
	}
	if r.Host != "" && validHost(r.Host) {
		return r.Host
	}
	return "localhost"
}

func firstValue(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.ToLower(strings.TrimSpace(first))
}

// validHost accepts host or host:port without characters that could break the
// WWW-Authenticate header.
func validHost(h string) bool {
	if strings.ContainsAny(h, "\"\\/ @") {
		return false
	}
	host := h
	if hh, _, err := net.SplitHostPort(h); err == nil {
		host = hh
	}
	return host != ""
}

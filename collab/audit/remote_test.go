package audit

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian/collab/collabtest"
)

func TestRemoteAddrBelievesOnlyTrustedProxies(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	cases := []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"direct client", "203.0.113.9:5000", nil, "203.0.113.9"},
		{"untrusted peer's header is ignored", "203.0.113.9:5000", []string{"1.2.3.4"}, "203.0.113.9"},
		{"trusted proxy names the client", "10.1.2.3:443", []string{"198.51.100.7"}, "198.51.100.7"},
		{"a spoofed left entry is not believed", "10.1.2.3:443", []string{"1.1.1.1, 198.51.100.7"}, "198.51.100.7"},
		{"trusted hops are skipped", "10.1.2.3:443", []string{"198.51.100.7, 10.9.9.9"}, "198.51.100.7"},
		{"several header lines", "10.1.2.3:443", []string{"198.51.100.7", "10.9.9.9"}, "198.51.100.7"},
		{"a port and brackets are dropped", "[::1]:80", []string{"[2001:db8::5]:1234"}, "2001:db8::5"},
		{"garbage stops at the proxy", "10.1.2.3:443", []string{"not-an-ip"}, "10.1.2.3"},
		{"no header from a proxy", "10.1.2.3:443", nil, "10.1.2.3"},
		{"IPv4-mapped peer", "[::ffff:203.0.113.9]:1", nil, "203.0.113.9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = c.peer
			for _, v := range c.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := RemoteAddr(r, trusted); got != c.want {
				t.Fatalf("RemoteAddr = %q, want %q", got, c.want)
			}
		})
	}
}

func TestCutKeepsValidUTF8WithinTheBound(t *testing.T) {
	s := strings.Repeat("é", 10) // 20 bytes
	if got := cut(s, 5); got != "éé" {
		t.Fatalf("cut = %q", got)
	}
	if got := cut("a\xffb", 10); got != "ab" {
		t.Fatalf("invalid bytes kept: %q", got)
	}
}

func FuzzRemoteAddr(f *testing.F) {
	f.Add("10.0.0.1:80", "1.2.3.4, 10.0.0.2")
	f.Add("[::1]:1", "[2001:db8::1]:5, garbage,,")
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	f.Fuzz(func(t *testing.T, peer, xff string) {
		r := &http.Request{RemoteAddr: peer, Header: http.Header{"X-Forwarded-For": {xff}}}
		got := RemoteAddr(r, trusted)
		if _, err := netip.ParseAddr(got); err != nil && got != peer {
			t.Fatalf("RemoteAddr(%q, %q) = %q: neither an address nor the peer", peer, xff, got)
		}
	})
}

func FuzzParseCursor(f *testing.F) {
	collabtest.FuzzCursorRoundTrip(f, parseCursor, "!!")
}

package events

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
)

// SignatureHeader carries a webhook body's HMAC-SHA256 signature, keyed with the
// destination's secretKey, as "sha256=<lower-case hex>". It is sent only when the
// destination has a secretKey.
const SignatureHeader = "X-OM-Signature"

// Other headers of a webhook request.
const (
	EventIDHeader   = "X-Meridian-Event-Id"   // the change event's id, for receivers that deduplicate
	EventTypeHeader = "X-Meridian-Event-Type" // the change event's type
	userAgent       = "Meridian-Webhook/1"
)

// Bounds of one delivery attempt.
const (
	DefaultTimeout    = 10 * time.Second // a destination's timeout when it sets none
	MaxTimeout        = 60 * time.Second
	maxResponseBytes  = 64 << 10 // read of a receiver's answer, for the error message
	maxErrorBodyBytes = 256
)

// ErrPermanent marks a delivery failure that retrying cannot fix (a refused address, a
// missing e-mail configuration): delivery gives the event up at once.
var ErrPermanent = errors.New("permanent delivery failure")

// Sign returns the signature header value of body under key: "sha256=<hex>".
func Sign(key string, body []byte) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Notifier sends messages to webhook and e-mail destinations, once, within the
// destination's timeout. It implements collab.Notifier.
type Notifier struct {
	// SMTP is the mail server of e-mail destinations; without a host they fail.
	SMTP SMTPConfig
	// AllowedNetworks are the networks a webhook may reach besides public addresses:
	// loopback, private, link-local, shared and other special-purpose addresses are
	// refused unless listed here (the guard against server-side request forgery).
	AllowedNetworks []netip.Prefix

	client *http.Client
}

var _ collab.Notifier = (*Notifier)(nil)

// NewNotifier returns a notifier whose webhook client connects only to allowed
// addresses (checked on the connected IP, so a name that resolves to an internal
// address is refused too), uses no proxy and follows no redirect.
func NewNotifier(smtp SMTPConfig, allowed []netip.Prefix) *Notifier {
	n := &Notifier{SMTP: smtp, AllowedNetworks: allowed}
	dialer := &net.Dialer{Timeout: MaxTimeout, Control: n.control}
	n.client = &http.Client{
		Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
			MaxIdleConns: 32, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second,
			ResponseHeaderTimeout: MaxTimeout},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return n
}

// control refuses a connection to an address that is neither public nor allowed.
func (n *Notifier) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unexpected address %q", ErrPermanent, address)
	}
	if !n.Allowed(ap.Addr()) {
		return fmt.Errorf("%w: the address %s is not allowed for webhooks (internal network); an operator can allow it with --webhook-allowed-networks", ErrPermanent, ap.Addr())
	}
	return nil
}

// Allowed reports whether a webhook may connect to addr.
func (n *Notifier) Allowed(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range n.AllowedNetworks {
		if p.Contains(addr) {
			return true
		}
	}
	return publicAddr(addr)
}

// special are the special-purpose ranges (RFC 6890 and successors) a webhook may not
// reach unless allowed.
var special = mustPrefixes("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
	"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
	"::/128", "::1/128", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "2002::/16",
	"fc00::/7", "fe80::/10", "ff00::/8")

func publicAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range special {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// ParseNetworks parses a comma-separated list of CIDR prefixes or single addresses
// ("127.0.0.1/32,10.0.0.0/8,::1").
func ParseNetworks(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			a, aerr := netip.ParseAddr(part)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("invalid network %q: use CIDR notation such as 10.0.0.0/8 or an address", part)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 { // connections are checked unmapped
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Notify sends m to d once. A disabled destination is skipped (a zero Delivery, no
// error). Errors: the delivery's failure, also described in Delivery.Error; it wraps
// ErrPermanent when retrying cannot help.
func (n *Notifier) Notify(ctx context.Context, d collab.Destination, m collab.Message) (collab.Delivery, error) {
	if d.Enabled != nil && !*d.Enabled {
		return collab.Delivery{}, nil
	}
	timeout := DefaultTimeout
	if d.Timeout > 0 {
		timeout = min(time.Duration(d.Timeout)*time.Second, MaxTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var (
		status int
		err    error
	)
	switch d.Type {
	case collab.DestinationWebhook:
		status, err = n.webhook(ctx, d, m)
	case collab.DestinationEmail:
		err = n.email(ctx, d, m)
	default:
		err = fmt.Errorf("%w: unknown destination type %q", ErrPermanent, d.Type)
	}
	out := collab.Delivery{StatusCode: status, LatencyMs: time.Since(start).Milliseconds()}
	if err != nil {
		out.Error = err.Error()
	}
	return out, err
}

// body is a message's JSON body.
func body(m collab.Message) ([]byte, error) {
	if raw, ok := m.Body.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(m.Body)
}

func (n *Notifier) webhook(ctx context.Context, d collab.Destination, m collab.Message) (int, error) {
	if err := meridian.ValidateWebhookEndpoint(d.Config.Endpoint); err != nil {
		return 0, fmt.Errorf("%w: %s", ErrPermanent, meridian.ErrorMessage(err))
	}
	b, err := body(m)
	if err != nil {
		return 0, fmt.Errorf("%w: encode the body: %v", ErrPermanent, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Config.Endpoint, bytes.NewReader(b))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrPermanent, err)
	}
	for k, v := range d.Config.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if ev, ok := m.Body.(meridian.ChangeEvent); ok {
		req.Header.Set(EventIDHeader, ev.ID)
		req.Header.Set(EventTypeHeader, ev.EventType)
	}
	if d.Config.SecretKey != "" {
		req.Header.Set(SignatureHeader, Sign(d.Config.SecretKey, b))
	}
	resp, err := n.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrPermanent) {
			return 0, fmt.Errorf("%w: %s", ErrPermanent, describeNetErr(err))
		}
		return 0, errors.New(describeNetErr(err))
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		text := strings.TrimSpace(string(answer))
		if len(text) > maxErrorBodyBytes {
			text = text[:maxErrorBodyBytes] + "…"
		}
		msg := fmt.Sprintf("the receiver answered HTTP %d", resp.StatusCode)
		if text != "" {
			msg += ": " + strings.ToValidUTF8(text, "?")
		}
		return resp.StatusCode, errors.New(msg)
	}
	return resp.StatusCode, nil
}

// describeNetErr is a connection error without the request's URL, whose query could
// carry a token.
func describeNetErr(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the receiver did not answer within the destination's timeout"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

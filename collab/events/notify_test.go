package events_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/collab/events"
	"github.com/meridian-catalog/meridian/collab/events/eventstest"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func webhook(endpoint, secret string) collab.Destination {
	return collab.Destination{Type: collab.DestinationWebhook, Config: collab.DestinationConfig{Endpoint: endpoint, SecretKey: secret}}
}

func TestWebhookIsSignedWithTheSecret(t *testing.T) {
	r := eventstest.NewReceiver(t, "s3cret")
	n := events.NewNotifier(events.SMTPConfig{}, loopback)
	ev := meridian.ChangeEvent{ID: "e1", EventType: meridian.EventEntityCreated, EntityType: "table", EntityFQN: "a.b"}
	d, err := n.Notify(context.Background(), webhook(r.URL, "s3cret"), collab.Message{Body: ev})
	if err != nil || d.StatusCode != 200 {
		t.Fatalf("Notify = %+v, %v", d, err)
	}
	if got := r.Events(); len(got) != 1 || got[0]["id"] != "e1" {
		t.Fatalf("receiver got %v", got)
	}
	// A wrong secret is refused by the receiver: the signature covers the body.
	d, err = n.Notify(context.Background(), webhook(r.URL, "other"), collab.Message{Body: ev})
	if err == nil || d.StatusCode != 401 || !strings.Contains(d.Error, "401") {
		t.Fatalf("wrong secret: %+v, %v", d, err)
	}
	if r.BadSignatures() != 1 {
		t.Fatalf("bad signatures = %d", r.BadSignatures())
	}
}

func TestSignIsHMACSHA256Hex(t *testing.T) {
	// RFC 4231 test case 2.
	got := events.Sign("Jefe", []byte("what do ya want for nothing?"))
	want := "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	if got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestWebhookGuardsInternalAddresses(t *testing.T) {
	r := eventstest.NewReceiver(t, "")
	strict := events.NewNotifier(events.SMTPConfig{}, nil)
	d, err := strict.Notify(context.Background(), webhook(r.URL, ""), collab.Message{Body: map[string]any{}})
	if !errors.Is(err, events.ErrPermanent) || !strings.Contains(d.Error, "not allowed") {
		t.Fatalf("loopback without allowance: %+v, %v", d, err)
	}
	if r.Attempts() != 0 {
		t.Fatal("the receiver was reached")
	}
	for _, a := range []string{"127.0.0.1", "10.1.2.3", "169.254.169.254", "192.168.1.1", "::1", "fe80::1", "100.64.0.1", "0.0.0.0", "::ffff:127.0.0.1"} {
		if strict.Allowed(netip.MustParseAddr(a)) {
			t.Errorf("%s is allowed", a)
		}
	}
	for _, a := range []string{"8.8.8.8", "2606:4700::1111"} {
		if !strict.Allowed(netip.MustParseAddr(a)) {
			t.Errorf("%s is refused", a)
		}
	}
	allowed := events.NewNotifier(events.SMTPConfig{}, loopback)
	if _, err := allowed.Notify(context.Background(), webhook(r.URL, ""), collab.Message{Body: map[string]any{}}); err != nil {
		t.Fatalf("allowed loopback: %v", err)
	}
}

func TestWebhookFollowsNoRedirect(t *testing.T) {
	target := eventstest.NewReceiver(t, "")
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	n := events.NewNotifier(events.SMTPConfig{}, loopback)
	d, err := n.Notify(context.Background(), webhook(redirect.URL, ""), collab.Message{Body: map[string]any{}})
	if err == nil || d.StatusCode != http.StatusTemporaryRedirect || target.Attempts() != 0 {
		t.Fatalf("redirect: %+v, %v, target attempts %d", d, err, target.Attempts())
	}
}

func TestWebhookTimeoutIsReported(t *testing.T) {
	r := eventstest.NewReceiver(t, "")
	r.SetDelay(1500 * time.Millisecond)
	n := events.NewNotifier(events.SMTPConfig{}, loopback)
	dest := webhook(r.URL, "")
	dest.Timeout = 1
	d, err := n.Notify(context.Background(), dest, collab.Message{Body: map[string]any{}})
	if err == nil || errors.Is(err, events.ErrPermanent) || !strings.Contains(d.Error, "timeout") {
		t.Fatalf("slow receiver: %+v, %v", d, err)
	}
	if d.LatencyMs < 900 || d.LatencyMs > 5000 {
		t.Fatalf("latency %d ms", d.LatencyMs)
	}
}

func TestEmailGoesThroughSMTP(t *testing.T) {
	sink := eventstest.NewSMTPSink(t)
	n := events.NewNotifier(events.SMTPConfig{Host: sink.Host, Port: sink.Port, From: "catalog@example.com"}, nil)
	dest := collab.Destination{Type: collab.DestinationEmail, Config: collab.DestinationConfig{Receivers: []string{"a@example.com", "b@example.com"}}}
	_, err := n.Notify(context.Background(), dest, collab.Message{Subject: "hello\r\nBcc: evil@example.com", Body: map[string]any{"eventType": "entityCreated"}})
	if err != nil {
		t.Fatal(err)
	}
	mail := sink.Wait(1, 5*time.Second)
	if len(mail) != 1 {
		t.Fatalf("mail = %v", mail)
	}
	m := mail[0]
	if m.From != "catalog@example.com" || strings.Join(m.To, ",") != "a@example.com,b@example.com" {
		t.Fatalf("envelope %q -> %v", m.From, m.To)
	}
	if !strings.Contains(m.Data, "Subject: hello  Bcc: evil@example.com\r\n") || strings.Contains(m.Data, "\r\nBcc:") {
		t.Fatalf("subject header was not kept on one line:\n%s", m.Data)
	}
	if !strings.Contains(m.Data, `"eventType": "entityCreated"`) {
		t.Fatalf("body:\n%s", m.Data)
	}
}

func TestEmailWithoutServerFailsForGood(t *testing.T) {
	n := events.NewNotifier(events.SMTPConfig{}, nil)
	dest := collab.Destination{Type: collab.DestinationEmail, Config: collab.DestinationConfig{Receivers: []string{"a@example.com"}}}
	_, err := n.Notify(context.Background(), dest, collab.Message{Body: map[string]any{}})
	if !errors.Is(err, events.ErrPermanent) || !strings.Contains(err.Error(), "MERIDIAN_SMTP_HOST") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseNetworks(t *testing.T) {
	got, err := events.ParseNetworks(" 127.0.0.1/8, ::1 ,10.0.0.0/8")
	if err != nil || len(got) != 3 || got[0].String() != "127.0.0.0/8" || got[1].String() != "::1/128" {
		t.Fatalf("ParseNetworks = %v, %v", got, err)
	}
	if _, err := events.ParseNetworks("localhost"); err == nil {
		t.Fatal("a host name was accepted")
	}
}

func FuzzParseNetworks(f *testing.F) {
	for _, s := range []string{"127.0.0.1/8,::1", "10.0.0.0/8", "", " , ", "fe80::1%eth0", "1.2.3.4/33", "::ffff:127.0.0.1", "::ffff:10.0.0.0/104"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		nets, err := events.ParseNetworks(s)
		if err != nil {
			return
		}
		n := events.NewNotifier(events.SMTPConfig{}, nets)
		for _, p := range nets {
			if !p.IsValid() || !n.Allowed(p.Addr()) {
				t.Fatalf("%q: parsed network %v is not allowed", s, p)
			}
		}
	})
}

package billing_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/smtp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// clock is a fake clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// start is the fixtures' "now": Wednesday 18 November 2026, 10:30 UTC.
var start = time.Date(2026, 11, 18, 10, 30, 0, 0, time.UTC)

// plan is the fixtures' plan: 100 credits a calendar month.
var plan = billing.Plan{Name: "team", CreditsPerCycle: 100, CycleStart: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), CycleMonths: 1}

var (
	admin = &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}
	alice = &meridian.Principal{Name: "alice", Roles: []string{meridian.RoleDataConsumer}}
	bob   = &meridian.Principal{Name: "bob", Roles: []string{meridian.RoleDataConsumer}}
)

type fixture struct {
	t        *testing.T
	ctx      context.Context
	db       store.Driver
	ents     *store.Entities
	clock    *clock
	dir      string
	notifier *recorder
	svc      *billing.Service
}

func newFixture(t *testing.T, open drivertest.Open) *fixture {
	t.Helper()
	db := open(t, billing.Module())
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: context.Background(), db: db, clock: &clock{now: start}, dir: t.TempDir(), notifier: &recorder{},
		ents: store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry(), Validator: v})}
	f.svc = f.open(nil)
	return f
}

// open builds a service over the fixture's store, journal and clock.
func (f *fixture) open(prices *billing.PriceTable) *billing.Service {
	f.t.Helper()
	s, err := billing.New(f.ctx, billing.Config{Driver: f.db, JournalDir: f.dir, Plan: plan, Prices: prices, Notifier: f.notifier,
		Now: f.clock.Now, FlushInterval: time.Hour})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// otherServer opens a second service on the fixture's database, with its own journal
// directory, as another server sharing it would.
func (f *fixture) otherServer() *billing.Service {
	f.t.Helper()
	other, err := billing.New(f.ctx, billing.Config{Driver: f.db, JournalDir: f.t.TempDir(), Plan: plan, Now: f.clock.Now, FlushInterval: time.Hour})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = other.Close(context.Background()) })
	return other
}

// as is a context attributing spend to p through app (an MCP client for MCP).
func as(p *meridian.Principal, app, client, conversation string) context.Context {
	a := billing.Attribution{Principal: p, App: app, Conversation: conversation}
	if app == billing.AppMCP {
		a.ClientName, a.ClientVersion, _ = strings.Cut(client, " ")
	}
	return billing.WithAttribution(context.Background(), a)
}

// call meters one admitted action and finishes it.
func (f *fixture) call(ctx context.Context, feature, action string, failed bool, entities ...billing.EntityRef) error {
	f.t.Helper()
	r, err := f.svc.Reserve(ctx, feature, action, 1, entities)
	if err != nil {
		return err
	}
	r.Done(failed)
	return nil
}

func (f *fixture) mustCall(ctx context.Context, feature, action string, entities ...billing.EntityRef) {
	f.t.Helper()
	if err := f.call(ctx, feature, action, false, entities...); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) user(name, email string, isAdmin, isBot bool) meridian.Entity {
	f.t.Helper()
	doc := meridian.Entity{"name": name, "email": email, "isAdmin": isAdmin, "isBot": isBot}
	res, err := f.ents.Create(f.ctx, meridian.System, meridian.KindUser, doc)
	if err != nil {
		f.t.Fatalf("create user %s: %v", name, err)
	}
	return res.Entity
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := meridian.ErrorCode(err); got != code {
		t.Fatalf("error %v, want code %q", err, code)
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

// recorder is a minimal collab.Notifier for the tests: a webhook destination gets
// the message's Body as a JSON POST, an e-mail destination a message through SMTP to
// the sink's address (Config.Endpoint of the recorder).
type recorder struct {
	smtpAddr string
	mu       sync.Mutex
	sent     []collab.Message
}

// count is how many messages were sent.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sent)
}

func (r *recorder) Notify(ctx context.Context, d collab.Destination, m collab.Message) (collab.Delivery, error) {
	r.mu.Lock()
	r.sent = append(r.sent, m)
	r.mu.Unlock()
	switch d.Type {
	case collab.DestinationWebhook:
		b, _ := json.Marshal(m.Body)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, d.Config.Endpoint, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return collab.Delivery{Error: err.Error()}, err
		}
		res.Body.Close()
		return collab.Delivery{StatusCode: res.StatusCode}, nil
	case collab.DestinationEmail:
		if r.smtpAddr == "" {
			return collab.Delivery{}, fmt.Errorf("no SMTP sink")
		}
		msg := "Subject: " + m.Subject + "\r\n\r\n" + m.Text + "\r\n"
		err := smtp.SendMail(r.smtpAddr, nil, "meridian@localhost", d.Config.Receivers, []byte(msg))
		return collab.Delivery{}, err
	}
	return collab.Delivery{}, fmt.Errorf("unknown destination %s", d.Type)
}

// webhook is an httptest receiver that keeps the JSON bodies it got.
type webhook struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newWebhook(t *testing.T) *webhook {
	w := &webhook{}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		w.mu.Lock()
		w.bodies = append(w.bodies, b)
		w.mu.Unlock()
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhook) got() []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]map[string]any(nil), w.bodies...)
}

// smtpSink is a Go SMTP server that keeps each message's recipients and data.
type smtpSink struct {
	ln   net.Listener
	mu   sync.Mutex
	mail []mail
}

type mail struct {
	to   []string
	data string
}

func newSMTPSink(t *testing.T) *smtpSink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpSink{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *smtpSink) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(l string) { fmt.Fprint(c, l+"\r\n") }
	say("220 sink")
	var m mail
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250 sink")
		case strings.HasPrefix(cmd, "MAIL FROM"):
			m = mail{}
			say("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO"):
			m.to = append(m.to, strings.Trim(strings.TrimSpace(line[len("RCPT TO:"):]), "<>"))
			say("250 ok")
		case cmd == "DATA":
			say("354 go")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if strings.TrimRight(l, "\r\n") == "." {
					break
				}
				b.WriteString(l)
			}
			m.data = b.String()
			s.mu.Lock()
			s.mail = append(s.mail, m)
			s.mu.Unlock()
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

func (s *smtpSink) got() []mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mail(nil), s.mail...)
}

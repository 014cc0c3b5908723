package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/collab/events"
	"github.com/meridian-catalog/meridian/collab/events/eventstest"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// TestDelivery is the conformance suite of the module's tables and delivery, on every
// driver.
func TestDelivery(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"MatchingEventsArriveSignedAndInOrder", testMatchingEventsInOrder},
		{"AReceiverDownForAWhileGetsEveryEventOnceInOrder", testReceiverDown},
		{"DeliveryResumesAfterARestart", testResume},
		{"AnEventIsGivenUpAfterTheRetryHorizon", testRetryHorizon},
		{"TheQueueIsBounded", testQueueBounded},
		{"ASubscriptionGetsOnlyTheEventsAfterItsCreation", testOnlyLaterEvents},
		{"ADisabledSubscriptionGetsNothing", testDisabled},
		{"EmailDestinationsGoThroughSMTP", testEmailDestination},
		{"TheSecretIsEncryptedAtRestAndMasked", testSecret},
		{"OnlyAdminsManageSubscriptions", testOnlyAdmins},
		{"AHardDeleteTakesTheDeliveryRows", testHardDelete},
		{"ASlowReceiverBlocksNoOtherSubscription", testSlowReceiver},
		{"TestDestinationReportsWhatHappened", testTestDestination},
		{"AnUnreadableQueuedEventIsGivenUp", testUnreadable},
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, newFixture(t, open, events.Config{})) })
		}
	})
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	t     testing.TB
	ctx   context.Context
	db    store.Driver
	ents  *store.Entities
	clock *clock
	cfg   events.Config
	svc   *events.Service
	disp  *store.Dispatcher
	admin *meridian.Principal
}

func newFixture(t testing.TB, open drivertest.Open, cfg events.Config) *fixture {
	db := open(t, events.Module())
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := auth.NewSealer([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: context.Background(), db: db, clock: &clock{now: time.UnixMilli(1_767_225_600_000)},
		admin: &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}}
	f.ents = store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry(), Validator: v, Policy: auth.Policy{}, Sealer: sealer})
	if cfg.AllowedNetworks == nil {
		cfg.AllowedNetworks = loopback
	}
	if cfg.Now == nil {
		cfg.Now = f.clock.Now
	}
	f.cfg = cfg
	f.start()
	f.create("databaseService", `{"name":"svc","serviceType":"Mysql"}`)
	f.create("database", `{"name":"db","service":"svc"}`)
	f.create("database", `{"name":"dbx","service":"svc"}`)
	f.create("databaseSchema", `{"name":"sch","database":"svc.db"}`)
	f.create("databaseSchema", `{"name":"sch","database":"svc.dbx"}`)
	return f
}

// start builds the service and the dispatcher anew, as a restarted process does.
func (f *fixture) start() {
	f.svc = events.New(f.ents, f.cfg)
	f.disp = store.NewDispatcher(f.db, nil, f.svc)
}

func (f *fixture) create(kind, body string) meridian.Entity {
	f.t.Helper()
	var e meridian.Entity
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		f.t.Fatal(err)
	}
	res, err := f.ents.Create(f.ctx, f.admin, kind, e)
	if err != nil {
		f.t.Fatalf("create %s %s: %v", kind, body, err)
	}
	return res.Entity
}

func (f *fixture) table(schemaFQN, name string) meridian.Entity {
	return f.create("table", fmt.Sprintf(`{"name":%q,"databaseSchema":%q,"columns":[{"name":"id","dataType":"INT"}]}`, name, schemaFQN))
}

// subscribe creates a webhook subscription to r with an FQN filter (none when fqn is "").
func (f *fixture) subscribe(name string, r *eventstest.Receiver, fqn string, extra string) meridian.Entity {
	filters := ""
	if fqn != "" {
		filters = fmt.Sprintf(`,"input":{"filters":[{"name":"filterByFqn","effect":"include","arguments":[{"name":"fqnList","input":[%q]}]}]}`, fqn)
	}
	return f.create(meridian.KindEventSubscription, fmt.Sprintf(`{"name":%q,"resources":["table"]%s%s,
		"destinations":[{"type":"Webhook","config":{"endpoint":%q,"secretKey":%q}}]}`, name, filters, extra, r.URL, r.Secret))
}

// pump hands the outbox to the consumer and delivers what is due.
func (f *fixture) pump() {
	f.t.Helper()
	if err := f.disp.Drain(f.ctx); err != nil {
		f.t.Fatalf("drain: %v", err)
	}
	if err := f.svc.Deliver(f.ctx); err != nil {
		f.t.Fatalf("deliver: %v", err)
	}
}

func (f *fixture) status(sub meridian.Entity) map[string]any {
	f.t.Helper()
	e, err := f.ents.Get(f.ctx, f.admin, meridian.KindEventSubscription, store.ByID(sub.ID()), store.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	d, _ := e[events.StatusField].(map[string]any)
	if d == nil {
		f.t.Fatalf("no %s in %v", events.StatusField, e)
	}
	return d
}

func num(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return -1
}

func fqns(evs []map[string]any) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = fmt.Sprint(e["eventType"], " ", e["entityFullyQualifiedName"])
	}
	return out
}

func testMatchingEventsInOrder(t *testing.T, f *fixture) {
	r := eventstest.NewReceiver(t, "k1")
	f.subscribe("orders", r, "svc.db", "")
	f.table("svc.db.sch", "a")
	f.table("svc.dbx.sch", "b") // a sibling whose name starts alike: not sent
	f.table("svc.db.sch", "c")
	f.pump()
	got := fqns(r.Events())
	want := []string{"entityCreated svc.db.sch.a", "entityCreated svc.db.sch.c"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("received %v, want %v", got, want)
	}
	if r.BadSignatures() != 0 {
		t.Fatal("a signature did not verify")
	}
}

func testReceiverDown(t *testing.T, f *fixture) {
	r := eventstest.NewReceiver(t, "k2")
	sub := f.subscribe("down", r, "", "")
	r.SetDown(true)
	for i := range 5 {
		f.table("svc.db.sch", fmt.Sprintf("t%d", i))
	}
	f.pump()
	st := f.status(sub)
	if st["status"] != events.StatusAwaitingRetry || num(st["pendingEvents"]) != 5 || !strings.Contains(fmt.Sprint(st["lastError"]), "503") ||
		num(st["lastFailedStatusCode"]) != 503 || num(st["lastFailedAt"]) <= 0 {
		t.Fatalf("status while down: %v", st)
	}
	for range 4 { // still down: retried with backoff, nothing skipped
		f.clock.Add(10 * time.Minute)
		f.pump()
	}
	if len(r.Events()) != 0 {
		t.Fatal("events accepted while down")
	}
	r.SetDown(false)
	f.pump() // the retry is not due yet
	f.clock.Add(10 * time.Minute)
	f.pump()
	got := fqns(r.Events())
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("entityCreated svc.db.sch.t%d", i))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("after the receiver came back: %v, want %v", got, want)
	}
	st = f.status(sub)
	if st["status"] != events.StatusActive || num(st["pendingEvents"]) != 0 || num(st["deliveredEvents"]) != 5 || num(st["lastSuccessfulAt"]) <= 0 {
		t.Fatalf("status after: %v", st)
	}
}

func testResume(t *testing.T, f *fixture) {
	r := eventstest.NewReceiver(t, "k3")
	f.subscribe("resume", r, "", "")
	r.SetDown(true)
	f.table("svc.db.sch", "a")
	f.table("svc.db.sch", "b")
	f.pump()
	f.start() // a new process: nothing but the tables remembers
	f.table("svc.db.sch", "c")
	r.SetDown(false)
	f.clock.Add(time.Hour)
	f.pump()
	got := fqns(r.Events())
	want := "entityCreated svc.db.sch.a|entityCreated svc.db.sch.b|entityCreated svc.db.sch.c"
	if strings.Join(got, "|") != want {
		t.Fatalf("after restart: %v", got)
	}
}

func testRetryHorizon(t *testing.T, f *fixture) {
	f.cfg.RetryHorizon = 30 * time.Minute
	f.start()
	r := eventstest.NewReceiver(t, "k4")
	sub := f.subscribe("horizon", r, "", "")
	r.SetDown(true)
	f.table("svc.db.sch", "lost")
	f.pump()
	f.clock.Add(20 * time.Minute)
	f.pump()
	f.clock.Add(20 * time.Minute)
	f.pump()
	st := f.status(sub)
	if st["status"] != events.StatusFailed || num(st["failedEvents"]) != 1 || num(st["pendingEvents"]) != 0 {
		t.Fatalf("status after the horizon: %v", st)
	}
	failed, err := f.svc.FailedEvents(f.ctx, f.admin, sub.ID(), 0)
	if err != nil || len(failed) != 1 || !strings.Contains(failed[0].Reason, "503") || !strings.Contains(string(failed[0].ChangeEvent), "svc.db.sch.lost") {
		t.Fatalf("failed events %+v, %v", failed, err)
	}
	steward := &meridian.Principal{Name: "stew", Roles: []string{meridian.RoleDataSteward}}
	if _, err := f.svc.FailedEvents(f.ctx, steward, sub.ID(), 0); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("a steward's failed events: %v", err)
	}
	r.SetDown(false)
	f.table("svc.db.sch", "next")
	f.pump()
	if got := fqns(r.Events()); len(got) != 1 || got[0] != "entityCreated svc.db.sch.next" {
		t.Fatalf("after giving up: %v", got)
	}
	if st := f.status(sub); st["status"] != events.StatusActive || st["lastError"] == nil {
		t.Fatalf("status after the next success: %v (the last error stays visible)", st)
	}
}

func testQueueBounded(t *testing.T, f *fixture) {
	f.cfg.MaxQueue = 3
	f.start()
	r := eventstest.NewReceiver(t, "k5")
	sub := f.subscribe("bounded", r, "", "")
	r.SetDown(true)
	for i := range 5 {
		f.table("svc.db.sch", fmt.Sprintf("t%d", i))
	}
	f.pump()
	st := f.status(sub)
	if num(st["pendingEvents"]) != 3 || num(st["droppedEvents"]) != 2 {
		t.Fatalf("status: %v", st)
	}
}

func testOnlyLaterEvents(t *testing.T, f *fixture) {
	f.pump() // the consumer has seen no subscription: it reads the next events without their entities
	f.table("svc.db.sch", "before")
	r := eventstest.NewReceiver(t, "k6")
	f.subscribe("later", r, "", "")
	f.table("svc.db.sch", "after")
	f.pump()
	if got := fqns(r.Events()); len(got) != 1 || got[0] != "entityCreated svc.db.sch.after" {
		t.Fatalf("received %v", got)
	}
	// The consumer read the events without their entities until the subscription's;
	// the one after it arrives with its entity all the same.
	if ent, _ := r.Events()[0]["entity"].(map[string]any); ent["name"] != "after" {
		t.Fatalf("the event arrived with entity %v", r.Events()[0]["entity"])
	}
	// A replay of the whole outbox (a consumer that lost its position) queues nothing twice.
	if err := f.svc.Handle(f.ctx, meridian.ChangeEvent{ID: "x", Seq: 1, EventType: "entityCreated", EntityType: "table", EntityFQN: "svc.db.sch.after"}); err != nil {
		t.Fatal(err)
	}
	f.pump()
	if n := len(r.Events()); n != 1 {
		t.Fatalf("a replayed event was delivered again: %d events", n)
	}
}

func testDisabled(t *testing.T, f *fixture) {
	r := eventstest.NewReceiver(t, "k7")
	sub := f.subscribe("off", r, "", `,"enabled":false`)
	f.table("svc.db.sch", "a")
	f.pump()
	if len(r.Events()) != 0 {
		t.Fatal("a disabled subscription received an event")
	}
	if st := f.status(sub); st["status"] != events.StatusDisabled {
		t.Fatalf("status %v", st)
	}
}

func testEmailDestination(t *testing.T, f *fixture) {
	sink := eventstest.NewSMTPSink(t)
	f.cfg.SMTP = events.SMTPConfig{Host: sink.Host, Port: sink.Port}
	f.start()
	f.create(meridian.KindEventSubscription, `{"name":"mail","resources":["table"],
		"destinations":[{"type":"Email","config":{"receivers":["steward@example.com"]}}]}`)
	f.table("svc.db.sch", "mailed")
	f.pump()
	mail := sink.Wait(1, 5*time.Second)
	if len(mail) != 1 || mail[0].To[0] != "steward@example.com" || !strings.Contains(mail[0].Data, "Subject: [Meridian] entityCreated table svc.db.sch.mailed") {
		t.Fatalf("mail: %+v", mail)
	}
}

func testSecret(t *testing.T, f *fixture) {
	r := eventstest.NewReceiver(t, "very-secret-key")
	sub := f.subscribe("secret", r, "", "")
	got, err := f.ents.Get(f.ctx, f.admin, meridian.KindEventSubscription, store.ByID(sub.ID()), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), "very-secret-key") || !strings.Contains(string(b), `"secretKey":"*********"`) {
		t.Fatalf("answer: %s", b)
	}
	var doc string
	err = f.ents.InTx(f.ctx, false, func(tx store.Tx) error {
		return tx.SQL().QueryRow(f.ctx, `SELECT CAST(doc AS TEXT) FROM entities WHERE id = $1`, sub.ID()).Scan(&doc)
	})
	if err != nil || strings.Contains(doc, "very-secret-key") {
		t.Fatalf("stored doc holds the plaintext (%v): %s", err, doc)
	}
	var evs []meridian.ChangeEvent
	_ = f.ents.InTx(f.ctx, false, func(tx store.Tx) error {
		evs, err = tx.Events(f.ctx, store.EventQuery{Limit: 1000})
		return err
	})
	eb, _ := json.Marshal(evs)
	if strings.Contains(string(eb), "very-secret-key") {
		t.Fatal("an event carries the secret")
	}
	// A masked value sent back keeps the secret: delivery still signs with it.
	if _, err := f.ents.CreateOrUpdate(f.ctx, f.admin, meridian.KindEventSubscription, got); err != nil {
		t.Fatal(err)
	}
	f.table("svc.db.sch", "signed")
	f.pump()
	if len(r.Events()) != 1 || r.BadSignatures() != 0 {
		t.Fatalf("events %d, bad signatures %d", len(r.Events()), r.BadSignatures())
	}
}

func testOnlyAdmins(t *testing.T, f *fixture) {
	steward := &meridian.Principal{Name: "stew", Roles: []string{meridian.RoleDataSteward}}
	body := meridian.Entity{"name": "nope", "destinations": []any{map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": "https://example.com/h"}}}}
	if _, err := f.ents.Create(f.ctx, steward, meridian.KindEventSubscription, body); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("a steward's create: %v", err)
	}
	r := eventstest.NewReceiver(t, "")
	sub := f.subscribe("mine", r, "", "")
	if _, err := f.ents.Delete(f.ctx, steward, meridian.KindEventSubscription, store.ByID(sub.ID()), store.DeleteOptions{}); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("a steward's delete: %v", err)
	}
	if _, err := f.ents.Delete(f.ctx, f.admin, meridian.KindEventSubscription, store.ByID(sub.ID()), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ents.Restore(f.ctx, steward, meridian.KindEventSubscription, sub.ID()); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("a steward's restore: %v", err)
	}
	if _, err := f.svc.TestDestination(f.ctx, steward, events.TestRequest{Destinations: []collabDestination{webhook(r.URL, "")}}); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("a steward's testDestination: %v", err)
	}
}

func testHardDelete(t *testing.T, f *fixture) {
	r := eventstest.NewReceiver(t, "")
	sub := f.subscribe("gone", r, "", "")
	r.SetDown(true)
	f.table("svc.db.sch", "a")
	f.pump()
	if _, err := f.ents.Delete(f.ctx, f.admin, meridian.KindEventSubscription, store.ByID(sub.ID()), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	var n int64
	err := f.ents.InTx(f.ctx, false, func(tx store.Tx) error {
		return tx.SQL().QueryRow(f.ctx, `SELECT (SELECT COUNT(*) FROM event_subscription_queue WHERE subscription_id = $1) +
(SELECT COUNT(*) FROM event_subscription_state WHERE subscription_id = $1)`, sub.ID()).Scan(&n)
	})
	if err != nil || n != 0 {
		t.Fatalf("rows left: %d (%v)", n, err)
	}
	r.SetDown(false)
	f.clock.Add(time.Hour)
	f.pump()
	if len(r.Events()) != 0 {
		t.Fatal("a deleted subscription delivered")
	}
}

func testSlowReceiver(t *testing.T, f *fixture) {
	f.cfg.Now = nil // real time: Run's workers
	f.cfg.Poll = 50 * time.Millisecond
	f.start()
	slow := eventstest.NewReceiver(t, "")
	slow.SetDelay(3 * time.Second)
	fast := eventstest.NewReceiver(t, "")
	f.subscribe("slow", slow, "", "")
	f.subscribe("fast", fast, "", "")
	ctx, cancel := context.WithCancel(f.ctx)
	var wg sync.WaitGroup
	wg.Go(func() { f.svc.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	start := time.Now()
	f.table("svc.db.sch", "a")
	if err := f.disp.Drain(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.table("svc.db.sch", "b") // written while the slow receiver holds its worker
	if err := f.disp.Drain(f.ctx); err != nil {
		t.Fatal(err)
	}
	if got := fast.Wait(2, 2500*time.Millisecond); len(got) != 2 {
		t.Fatalf("the fast receiver got %d events within %s", len(got), time.Since(start))
	}
	if len(slow.Events()) != 0 {
		t.Fatal("the slow receiver answered early")
	}
	if got := slow.Wait(2, 10*time.Second); len(got) != 2 {
		t.Fatalf("the slow receiver got %d events", len(got))
	}
}

func testTestDestination(t *testing.T, f *fixture) {
	up := eventstest.NewReceiver(t, "t1")
	down := eventstest.NewReceiver(t, "")
	down.SetDown(true)
	res, err := f.svc.TestDestination(f.ctx, f.admin, events.TestRequest{AlertName: "orders",
		Destinations: []collabDestination{webhook(up.URL, "t1"), webhook(down.URL, "")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Status != "Success" || res[0].StatusCode != 200 || res[0].Error != "" ||
		res[1].Status != "Failed" || res[1].StatusCode != 503 || res[1].Error == "" {
		t.Fatalf("results: %+v", res)
	}
	if got := up.Events(); len(got) != 1 || got[0]["eventType"] != "testMessage" {
		t.Fatalf("test message: %v", got)
	}
	bad := []events.TestRequest{{}, {Destinations: []collabDestination{{Type: "Slack"}}},
		{Destinations: []collabDestination{webhook("ftp://x", "")}},
		{Destinations: []collabDestination{webhook("http://user:pw@example.com/", "")}},
		{Destinations: make([]collabDestination, 11)}}
	for _, req := range bad {
		if _, err := f.svc.TestDestination(f.ctx, f.admin, req); meridian.ErrorCode(err) != meridian.EInvalid {
			t.Errorf("%+v: %v", req, err)
		}
	}
}

type collabDestination = collab.Destination

func testUnreadable(t *testing.T, f *fixture) {
	r := eventstest.NewReceiver(t, "u")
	sub := f.subscribe("unreadable", r, "", "")
	f.pump()
	err := f.ents.InTx(f.ctx, true, func(tx store.Tx) error {
		if _, err := tx.SQL().Exec(f.ctx, `INSERT INTO event_subscription_queue (subscription_id, seq, event) VALUES ($1, $2, $3)`,
			sub.ID(), 1_000_000, "{not json"); err != nil {
			return err
		}
		_, err := tx.SQL().Exec(f.ctx, `UPDATE event_subscription_state SET queued = queued + 1 WHERE subscription_id = $1`, sub.ID())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.pump()
	st := f.status(sub)
	if num(st["failedEvents"]) != 1 || num(st["pendingEvents"]) != 0 || !strings.Contains(fmt.Sprint(st["lastError"]), "cannot be read") {
		t.Fatalf("status: %v", st)
	}
}

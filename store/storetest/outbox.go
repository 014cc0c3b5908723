package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// recorder is a consumer whose effect lives in the store: it appends each event's
// sequence number to a setting, in a transaction of its own.
type recorder struct {
	name string
	db   store.Driver
	fail func(meridian.ChangeEvent) bool
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Handle(ctx context.Context, e meridian.ChangeEvent) error {
	if r.fail != nil && r.fail(e) {
		return errors.New("consumer refuses " + e.EntityFQN)
	}
	tx, err := r.db.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	seen, err := tx.Setting(ctx, "test.seen."+r.name)
	if err != nil && meridian.ErrorCode(err) != meridian.ENotFound {
		return err
	}
	if err := tx.PutSetting(ctx, "test.seen."+r.name, seen+strconv.FormatInt(e.Seq, 10)+","); err != nil {
		return err
	}
	return tx.Commit()
}

// seen lists the sequence numbers a recorder has handled, in order.
func (f *Fixture) seen(name string) []string {
	f.T.Helper()
	tx, err := f.Driver.Begin(f.Ctx, false)
	if err != nil {
		f.T.Fatal(err)
	}
	defer tx.Rollback()
	v, err := tx.Setting(f.Ctx, "test.seen."+name)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return nil
	}
	if err != nil {
		f.T.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(v, ","), ",")
}

// createGlossaries creates glossaries g<from> to g<to-1>, one change event each.
func (f *Fixture) createGlossaries(from, to int) {
	f.T.Helper()
	for i := from; i < to; i++ {
		f.Create("glossary", `{"name":"g`+strconv.Itoa(i)+`","description":"d"}`)
	}
}

// eventFQNs lists the FQNs of the events the events API returns.
func (f *Fixture) eventFQNs() []string {
	f.T.Helper()
	page, err := f.E.Events(f.Ctx, f.Admin, store.EventsOptions{Limit: 1000})
	if err != nil {
		f.T.Fatal(err)
	}
	out := []string{}
	for _, e := range page.Data {
		out = append(out, e.EntityFQN)
	}
	return out
}

func testDispatcher(t *testing.T, f *Fixture) {
	f.createGlossaries(0, 3)
	blocked := true
	good := &recorder{name: "good", db: f.Driver}
	picky := &recorder{name: "picky", db: f.Driver, fail: func(e meridian.ChangeEvent) bool { return blocked && e.EntityFQN == "g1" }}
	d := store.NewDispatcher(f.Driver, nil, good, picky)
	if err := d.Drain(f.Ctx); err == nil {
		t.Fatal("a failing consumer must report its error")
	}
	if got := f.seen("good"); len(got) != 3 {
		t.Fatalf("good consumer saw %v, want 3 events", got)
	}
	if got := f.seen("picky"); len(got) != 1 {
		t.Fatalf("a failing consumer must stop at the failing event: saw %v", got)
	}
	status, err := d.Status(f.Ctx)
	if err != nil || len(status) != 2 || status[0].Pending != 0 || status[1].Pending != 2 {
		t.Fatalf("status = %+v, %v; want good 0 and picky 2 pending", status, err)
	}
	// A restart: a new dispatcher resumes from the stored positions.
	blocked = false
	f.createGlossaries(3, 4)
	d = store.NewDispatcher(f.Driver, nil, good, picky)
	if err := d.Drain(f.Ctx); err != nil {
		t.Fatal(err)
	}
	g, p := f.seen("good"), f.seen("picky")
	if strings.Join(g, ",") != strings.Join(p, ",") || len(g) != 4 {
		t.Fatalf("after resume: good %v, picky %v", g, p)
	}
	for i := 1; i < len(g); i++ {
		a, _ := strconv.Atoi(g[i-1])
		b, _ := strconv.Atoi(g[i])
		if b <= a {
			t.Fatalf("events out of order or repeated: %v", g)
		}
	}
	status, err = d.Status(f.Ctx)
	if err != nil || len(status) != 2 || status[0].Pending != 0 || status[1].Pending != 0 {
		t.Fatalf("status = %+v, %v", status, err)
	}
	page, err := f.E.Events(f.Ctx, f.Admin, store.EventsOptions{EntityTypes: []string{"glossary"}, Limit: 3})
	if err != nil || len(page.Data) != 3 || page.After == "" {
		t.Fatalf("events page = %+v, %v", page, err)
	}
	rest, err := f.E.Events(f.Ctx, f.Admin, store.EventsOptions{After: page.After, Limit: 3})
	if err != nil || len(rest.Data) != 1 || rest.After != "" {
		t.Fatalf("second events page = %+v, %v", rest, err)
	}
	_, err = f.E.Events(f.Ctx, &meridian.Principal{Name: "bob", Roles: []string{meridian.RoleDataSteward}}, store.EventsOptions{})
	WantCode(t, err, meridian.EForbidden)
}

// blocking is a consumer that blocks in Handle until released, at most 5 s.
type blocking struct {
	entered  chan struct{}
	release  chan struct{}
	returned atomic.Bool
}

func (b *blocking) Name() string { return "slow" }

func (b *blocking) Handle(ctx context.Context, _ meridian.ChangeEvent) error {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	select {
	case <-b.release:
	case <-time.After(5 * time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	b.returned.Store(true)
	return nil
}

// runDispatcher runs d in the background until the function it returns is called;
// that call returns once Run has.
func runDispatcher(f *Fixture, d *store.Dispatcher) (stop func()) {
	ctx, cancel := context.WithCancel(f.Ctx)
	done := make(chan struct{})
	go func() {
		d.Run(ctx)
		close(done)
	}()
	return func() {
		cancel()
		<-done
	}
}

// testSlowConsumer holds one consumer inside Handle and checks that, meanwhile,
// writers commit and the other consumer receives their events.
func testSlowConsumer(t *testing.T, f *Fixture) {
	slow := &blocking{entered: make(chan struct{}, 1), release: make(chan struct{})}
	fast := &recorder{name: "fast", db: f.Driver}
	d := store.NewDispatcher(f.Driver, nil, slow, fast)
	defer runDispatcher(f, d)()

	f.createGlossaries(0, 1)
	d.Notify()
	<-slow.entered
	f.createGlossaries(1, 4) // writes commit while a consumer is busy
	d.Notify()
	if slow.returned.Load() {
		t.Fatal("the writes waited for the blocked consumer")
	}
	// The other consumer handles every event and commits its position meanwhile.
	deadline := time.Now().Add(4 * time.Second)
	for {
		status, err := d.Status(f.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		if status[1].Pending == 0 {
			if status[0].Name != "slow" || status[0].Pending != 4 || len(f.seen("fast")) != 4 {
				t.Fatalf("status while blocked = %+v, fast saw %v", status, f.seen("fast"))
			}
			break
		}
		if slow.returned.Load() || time.Now().After(deadline) {
			t.Fatalf("status while the slow consumer was blocked = %+v: the other consumer waited", status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if slow.returned.Load() {
		t.Fatal("the slow consumer returned before the checks")
	}
	close(slow.release)
	for {
		status, err := d.Status(f.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		if status[0].Pending == 0 {
			break
		}
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("the slow consumer did not catch up once released: %+v", status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testRetention prunes old events only up to the slowest consumer's position; the
// events API keeps serving what is retained.
func testRetention(t *testing.T, f *Fixture) {
	f.createGlossaries(0, 5) // the fixture's clock is in 2023: every event is old
	page, err := f.E.Events(f.Ctx, f.Admin, store.EventsOptions{Limit: 1000})
	if err != nil || len(page.Data) != 5 {
		t.Fatalf("events = %v, %v", page.Data, err)
	}
	seqs := make([]int64, len(page.Data))
	for i, e := range page.Data {
		seqs[i] = e.Seq
	}
	wantMark := func(want store.OutboxMark) {
		t.Helper()
		var got store.OutboxMark
		err := f.E.InTx(f.Ctx, false, func(tx store.Tx) error {
			var err error
			got, err = store.ReadOutboxMark(f.Ctx, tx)
			return err
		})
		if err != nil || got != want {
			t.Fatalf("outbox mark = %+v, %v; want %+v", got, err, want)
		}
	}
	wantMark(store.OutboxMark{Head: seqs[4], HeadID: page.Data[4].ID})
	blocked := true
	good := &recorder{name: "good", db: f.Driver}
	picky := &recorder{name: "picky", db: f.Driver, fail: func(e meridian.ChangeEvent) bool { return blocked && e.EntityFQN == "g2" }}
	d := store.NewDispatcher(f.Driver, nil, good, picky)
	if err := d.Drain(f.Ctx); err == nil {
		t.Fatal("a failing consumer must report its error")
	}
	n, err := d.Prune(f.Ctx, time.Now())
	if err != nil || n != 2 {
		t.Fatalf("prune = %d, %v; want the 2 events every consumer has handled", n, err)
	}
	if got := strings.Join(f.eventFQNs(), ","); got != "g2,g3,g4" {
		t.Fatalf("events after pruning = %s, want g2,g3,g4", got)
	}
	wantMark(store.OutboxMark{Head: seqs[4], HeadID: page.Data[4].ID, Pruned: seqs[1]})
	blocked = false
	if err := d.Drain(f.Ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.seen("picky"); len(got) != 5 {
		t.Fatalf("the late consumer saw %v: an undelivered event was pruned", got)
	}
	if n, err := d.Prune(f.Ctx, time.UnixMilli(0)); err != nil || n != 0 {
		t.Fatalf("prune before every event = %d, %v; recent events must stay", n, err)
	}
	if n, err := d.Prune(f.Ctx, time.Now()); err != nil || n != 3 {
		t.Fatalf("prune = %d, %v; want the 3 delivered events", n, err)
	}
	if got := f.eventFQNs(); len(got) != 0 {
		t.Fatalf("events after pruning everything delivered = %v", got)
	}
	// With every event gone, the head is the last one pruned, whose id is unknown.
	wantMark(store.OutboxMark{Head: seqs[4], Pruned: seqs[4]})
	// A consumer that has handled nothing holds every event back.
	f.createGlossaries(5, 6)
	late := store.NewDispatcher(f.Driver, nil, good, &recorder{name: "new", db: f.Driver})
	if n, err := late.Prune(f.Ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("prune with a new consumer = %d, %v", n, err)
	}
}

// entityWatcher records, for each event it handles, whether the event carried its
// entity document.
type entityWatcher struct {
	name string
	mu   sync.Mutex
	got  []bool // Entity != nil, in order
}

func (w *entityWatcher) Name() string { return w.name }

func (w *entityWatcher) Handle(_ context.Context, e meridian.ChangeEvent) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, e.Entity != nil)
	return nil
}

// blindWatcher is an entityWatcher that declares it never reads event entities.
type blindWatcher struct{ entityWatcher }

func (*blindWatcher) IgnoresEventEntities() {}

// testEventsWithoutEntity reads the same events with and without their entity
// document, in each form of the query, and checks that a store.EntityBlind consumer is
// handed them without it while the others get it.
func testEventsWithoutEntity(t *testing.T, f *Fixture) {
	f.createGlossaries(0, 3)
	for _, q := range []store.EventQuery{{}, {Limit: 2}, {EntityTypes: []string{"glossary"}}, {EntityTypes: []string{"glossary"}, Limit: 2}} {
		var full, bare []meridian.ChangeEvent
		err := f.E.InTx(f.Ctx, false, func(tx store.Tx) error {
			var err error
			if full, err = tx.Events(f.Ctx, q); err != nil {
				return err
			}
			blind := q
			blind.WithoutEntity = true
			bare, err = tx.Events(f.Ctx, blind)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(full) == 0 || len(full) != len(bare) {
			t.Fatalf("%+v: %d events with their entity, %d without", q, len(full), len(bare))
		}
		for i := range full {
			if full[i].Entity == nil || bare[i].Entity != nil {
				t.Fatalf("%+v: event %d has entity %v with and %v without", q, i, full[i].Entity != nil, bare[i].Entity != nil)
			}
			bare[i].Entity = full[i].Entity
			if !reflect.DeepEqual(full[i], bare[i]) {
				t.Fatalf("%+v: event %d differs beyond its entity:\n%+v\n%+v", q, i, full[i], bare[i])
			}
		}
	}
	seeing := &entityWatcher{name: "seeing"}
	blind := &blindWatcher{entityWatcher{name: "blind"}}
	if err := store.NewDispatcher(f.Driver, nil, seeing, blind).Drain(f.Ctx); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seeing.got) != "[true true true]" || fmt.Sprint(blind.got) != "[false false false]" {
		t.Fatalf("entities handed: %v to the consumer that reads them, %v to the blind one", seeing.got, blind.got)
	}
}

// chooserWatcher is an entityWatcher that wants event entities once it has handled
// the event of the entity named from (from the start when from is "").
type chooserWatcher struct {
	entityWatcher
	from  string
	wants bool
}

func (w *chooserWatcher) Handle(ctx context.Context, e meridian.ChangeEvent) error {
	if err := w.entityWatcher.Handle(ctx, e); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wants = w.wants || e.EntityFQN == w.from
	return nil
}

func (w *chooserWatcher) WantsEventEntities(context.Context) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wants || w.from == "", nil
}

// testAChooserGetsEntitiesOnceItWantsThem: a store.EntityChooser is handed events
// without their entity while it wants none, and with it from the event after the one
// that makes it want them, within the same batch, each event once.
func testAChooserGetsEntitiesOnceItWantsThem(t *testing.T, f *Fixture) {
	f.createGlossaries(0, 6)
	always := &chooserWatcher{entityWatcher: entityWatcher{name: "always"}}
	later := &chooserWatcher{entityWatcher: entityWatcher{name: "later"}, from: "g2"}
	never := &chooserWatcher{entityWatcher: entityWatcher{name: "never"}, from: "none"}
	if err := store.NewDispatcher(f.Driver, nil, always, later, never).Drain(f.Ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		w    *chooserWatcher
		want string
	}{
		{always, "[true true true true true true]"},
		{later, "[false false false true true true]"},
		{never, "[false false false false false false]"},
	} {
		if got := fmt.Sprint(c.w.got); got != c.want {
			t.Errorf("%s was handed entities %s, want %s", c.w.name, got, c.want)
		}
	}
}

// testAnEventKeepsItsEntityAsWritten: each event of an entity's writes holds the entity
// as that write left it, not as it is now, and keeps it after the entity is hard
// deleted; a kind with secrets holds them masked. A driver may keep a reference to the
// version snapshot the write stored rather than a copy (store.EncodedEventAppender).
func testAnEventKeepsItsEntityAsWritten(t *testing.T, f *Fixture) {
	f.Hierarchy()
	tbl := f.Table("ledger", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Patch("table", tbl.ID(), `[{"op":"add","path":"/description","value":"second"}]`)
	f.Patch("table", tbl.ID(), `[{"op":"replace","path":"/description","value":"third"}]`)
	if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := f.Create("databaseService", `{"name":"vault","serviceType":"Mysql",
		"connection":{"config":{"type":"Mysql","username":"u","authType":{"password":"hunter2"}}}}`)
	want := []string{"<nil> 0.1 false", "second 0.2 false", "third 0.3 false", "third 0.4 true"}
	check := func(when string) {
		t.Helper()
		var got []string
		for _, ev := range f.events(meridian.EventEntityCreated, meridian.EventEntityUpdated, meridian.EventEntitySoftDeleted) {
			switch ev.EntityID {
			case tbl.ID():
				got = append(got, fmt.Sprint(ev.Entity["description"], " ", ev.Entity["version"], " ", ev.Entity["deleted"]))
				if ev.Entity.Version().Float() != ev.CurrentVersion {
					t.Errorf("%s: the %s event of version %v holds version %v", when, ev.EventType, ev.CurrentVersion, ev.Entity["version"])
				}
			case svc.ID():
				b, _ := json.Marshal(ev.Entity)
				if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), `"username":"u"`) {
					t.Errorf("%s: the service's event holds %s", when, b)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the table's events hold %q, want %q", when, got, want)
		}
	}
	check("after the writes")
	if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.E.Delete(f.Ctx, f.Admin, "databaseService", store.ByID(svc.ID()), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	check("after a hard delete")
}

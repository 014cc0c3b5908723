package activity_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/activity"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// TestModule is the activity module's conformance suite, on every driver.
func TestModule(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"WritesReachTheStreamFromTheOutbox", testFromOutbox},
		{"ListsPerEntityPerUserAndGlobalPage", testLists},
		{"RetentionDeletesOldEventsWithAFakeClock", testRetention},
		{"ADomainKeepsItsOwnRetention", testDomainRetention},
		{"TheRetentionJobIsDurable", testRetentionJob},
		{"OnlyAdminsChangeTheSettings", testSettings},
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, newFixture(t, open)) })
		}
	})
}

// clock is a fake clock shared by the engine (event timestamps) and the service
// (retention cutoffs).
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type fixture struct {
	t     *testing.T
	ctx   context.Context
	db    store.Driver
	ents  *store.Entities
	out   *store.Dispatcher
	svc   *activity.Service
	jobs  *jobs.Service
	clock *clock
	admin *meridian.Principal
	alice *meridian.Principal
}

func newFixture(t *testing.T, open drivertest.Open) *fixture {
	db := open(t, activity.Module(), jobs.Module())
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	js := jobs.New(db, jobs.Config{Now: c.Now})
	ents := store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry(), Validator: v, Now: c.Now, Jobs: js})
	f := &fixture{t: t, ctx: context.Background(), db: db, ents: ents, jobs: js, clock: c,
		out:   store.NewDispatcher(db, nil, activity.NewConsumer(db)),
		svc:   activity.New(ents, db, activity.Config{Jobs: js, Now: c.Now}),
		admin: &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}},
		alice: &meridian.Principal{Name: "alice", Roles: []string{meridian.RoleAdmin}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { js.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

func (f *fixture) create(p *meridian.Principal, kind, body string) meridian.Entity {
	f.t.Helper()
	var e meridian.Entity
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		f.t.Fatal(err)
	}
	res, err := f.ents.Create(f.ctx, p, kind, e)
	if err != nil {
		f.t.Fatalf("create %s: %v", kind, err)
	}
	return res.Entity
}

func (f *fixture) patch(p *meridian.Principal, kind, id, patch string) {
	f.t.Helper()
	if _, err := f.ents.Patch(f.ctx, p, kind, store.ByID(id), []byte(patch), ""); err != nil {
		f.t.Fatalf("patch: %v", err)
	}
}

func (f *fixture) drain() {
	f.t.Helper()
	if err := f.out.Drain(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) list(q activity.Query) activity.Page {
	f.t.Helper()
	p, err := f.svc.List(f.ctx, f.admin, q)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func testFromOutbox(t *testing.T, f *fixture) {
	g := f.create(f.alice, "glossary", `{"name":"Terms","description":"first"}`)
	f.clock.Advance(time.Second)
	f.patch(f.admin, "glossary", g.ID(), `[{"op":"replace","path":"/description","value":"second"}]`)
	f.drain()
	f.drain() // a second pass changes nothing
	page := f.list(activity.Query{})
	if page.Total != 2 || len(page.Data) != 2 {
		t.Fatalf("events = %+v", page)
	}
	upd, cre := page.Data[0], page.Data[1]
	if cre.EventType != meridian.EventEntityCreated || cre.Actor.Name != "alice" || cre.Entity.FullyQualifiedName != "Terms" || cre.Entity.Type != "glossary" {
		t.Fatalf("created event: %+v", cre)
	}
	if upd.EventType != meridian.EventEntityUpdated || len(upd.FieldsUpdated) != 1 || upd.FieldsUpdated[0] != "description" {
		t.Fatalf("updated event: %+v", upd)
	}
	// A write that changes nothing is not activity.
	f.patch(f.admin, "glossary", g.ID(), `[{"op":"replace","path":"/description","value":"second"}]`)
	f.drain()
	if n, _ := f.svc.Count(f.ctx, f.admin, activity.Query{}); n != 2 {
		t.Fatalf("count after a no-op write = %d", n)
	}
}

func testLists(t *testing.T, f *fixture) {
	a := f.create(f.alice, "glossary", `{"name":"A","description":"d"}`)
	f.create(f.admin, "glossary", `{"name":"B","description":"d"}`)
	for i := range 5 {
		f.clock.Advance(time.Second)
		f.patch(f.alice, "glossary", a.ID(), `[{"op":"replace","path":"/description","value":"v`+string(rune('0'+i))+`"}]`)
	}
	f.drain()
	ent, err := f.svc.EntityActivity(f.ctx, f.admin, "glossary", store.ByFQN("A"), activity.Query{})
	if err != nil || ent.Total != 6 {
		t.Fatalf("entity activity: %d, %v", ent.Total, err)
	}
	byID, err := f.svc.EntityActivity(f.ctx, f.admin, "glossary", store.ByID(a.ID()), activity.Query{Limit: 2})
	if err != nil || len(byID.Data) != 2 || byID.After == "" {
		t.Fatalf("entity activity by id: %+v, %v", byID, err)
	}
	if _, err := f.svc.EntityActivity(f.ctx, f.admin, "glossary", store.ByFQN("Nope"), activity.Query{}); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("unknown entity: %v", err)
	}
	user, err := f.svc.UserActivity(f.ctx, f.admin, "alice", activity.Query{})
	if err != nil || user.Total != 6 {
		t.Fatalf("user activity: %d, %v", user.Total, err)
	}
	// Paging the global stream: newest first, every event once.
	seen := map[string]bool{}
	q := activity.Query{Limit: 3}
	last := int64(1 << 62)
	for {
		p := f.list(q)
		if p.Total != 7 {
			t.Fatalf("total = %d", p.Total)
		}
		for _, e := range p.Data {
			if seen[e.ID] || e.Timestamp > last {
				t.Fatalf("repeated or out of order: %+v", e)
			}
			seen[e.ID], last = true, e.Timestamp
		}
		if p.After == "" {
			break
		}
		q.After = p.After
	}
	if len(seen) != 7 {
		t.Fatalf("paged %d events", len(seen))
	}
	for _, bad := range []activity.Query{{Limit: activity.MaxLimit + 1}, {After: "zz"}, {Start: 10, End: 5}} {
		if _, err := f.svc.List(f.ctx, f.admin, bad); meridian.ErrorCode(err) != meridian.EInvalid {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := f.svc.List(f.ctx, nil, activity.Query{}); meridian.ErrorCode(err) != meridian.EUnauthorized {
		t.Errorf("anonymous list: %v", err)
	}
}

func testRetention(t *testing.T, f *fixture) {
	f.create(f.admin, "glossary", `{"name":"Old","description":"d"}`)
	f.clock.Advance(20 * 24 * time.Hour)
	f.create(f.admin, "glossary", `{"name":"Recent","description":"d"}`)
	f.drain()
	f.clock.Advance(11 * 24 * time.Hour) // Old is 31 days old, Recent 11
	res, err := f.svc.Prune(f.ctx)
	if err != nil || res.Deleted != 1 {
		t.Fatalf("prune: %+v, %v", res, err)
	}
	page := f.list(activity.Query{})
	if page.Total != 1 || page.Data[0].Entity.FullyQualifiedName != "Recent" {
		t.Fatalf("left after the default 30 days: %+v", page.Data)
	}
	// A shorter global retention.
	if _, err := f.svc.PutSettings(f.ctx, f.admin, activity.Settings{RetentionDays: 10}); err != nil {
		t.Fatal(err)
	}
	if res, _ := f.svc.Prune(f.ctx); res.Deleted != 1 {
		t.Fatalf("10-day retention deleted %d", res.Deleted)
	}
}

func testDomainRetention(t *testing.T, f *fixture) {
	f.create(f.admin, "domain", `{"name":"Finance","description":"d","domainType":"Aggregate"}`)
	f.create(f.admin, "domain", `{"name":"Sales","description":"d","domainType":"Aggregate"}`)
	f.create(f.admin, "glossary", `{"name":"Fin","description":"d","domains":["Finance"]}`)
	f.create(f.admin, "glossary", `{"name":"Sal","description":"d","domains":["Sales"]}`)
	f.create(f.admin, "glossary", `{"name":"None","description":"d"}`)
	f.drain()
	if p := f.list(activity.Query{Domain: "Finance"}); p.Total != 1 || p.Data[0].Domains[0] != "Finance" {
		t.Fatalf("domain filter: %+v", p)
	}
	set, err := f.svc.PutSettings(f.ctx, f.admin, activity.Settings{RetentionDays: 30,
		Domains: []activity.DomainRetention{{Domain: "Finance", RetentionDays: 90}, {Domain: "Sales", RetentionDays: 7}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.svc.Settings(f.ctx); len(got.Domains) != 2 || got.RetentionDays != 30 || got.Domains[0] != set.Domains[0] {
		t.Fatalf("settings read back: %+v", got)
	}
	f.clock.Advance(8 * 24 * time.Hour)
	f.svc.Prune(f.ctx)
	if p := f.list(activity.Query{}); p.Total != 4 { // of the five creates (two domains, three glossaries) only Sal's goes
		t.Fatalf("after 8 days: %d events", p.Total)
	}
	f.clock.Advance(30 * 24 * time.Hour)
	f.svc.Prune(f.ctx)
	p := f.list(activity.Query{})
	if p.Total != 1 || p.Data[0].Entity.FullyQualifiedName != "Fin" {
		t.Fatalf("after 38 days: %+v", p.Data)
	}
}

func testRetentionJob(t *testing.T, f *fixture) {
	f.create(f.admin, "glossary", `{"name":"Old","description":"d"}`)
	f.drain()
	f.clock.Advance(31 * 24 * time.Hour)
	id, err := f.svc.StartRetention(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := f.jobs.Get(f.ctx, meridian.System, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == jobs.StatusCompleted {
			var res activity.PruneResult
			if err := json.Unmarshal(j.Result, &res); err != nil || res.Deleted != 1 || j.Type != activity.JobTypeRetention {
				t.Fatalf("job result %s, %v", j.Result, err)
			}
			break
		}
		if j.Status == jobs.StatusFailed || time.Now().After(deadline) {
			t.Fatalf("job %+v", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n, _ := f.svc.Count(f.ctx, f.admin, activity.Query{}); n != 0 {
		t.Fatalf("events left: %d", n)
	}
}

func testSettings(t *testing.T, f *fixture) {
	steward := &meridian.Principal{Name: "sam", Roles: []string{meridian.RoleDataSteward}}
	if _, err := f.svc.PutSettings(f.ctx, steward, activity.Settings{RetentionDays: 5}); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("steward: %v", err)
	}
	cases := []struct {
		s    activity.Settings
		code string
	}{
		{activity.Settings{RetentionDays: 0}, meridian.EInvalid},
		{activity.Settings{RetentionDays: activity.MaxRetentionDays + 1}, meridian.EInvalid},
		{activity.Settings{RetentionDays: 5, Domains: []activity.DomainRetention{{Domain: "", RetentionDays: 5}}}, meridian.EInvalid},
		{activity.Settings{RetentionDays: 5, Domains: []activity.DomainRetention{{Domain: "Nope", RetentionDays: 5}}}, meridian.ENotFound},
		{activity.Settings{RetentionDays: 5, Domains: []activity.DomainRetention{{Domain: "a\x00", RetentionDays: 5}}}, meridian.EInvalid},
	}
	for _, c := range cases {
		if _, err := f.svc.PutSettings(f.ctx, f.admin, c.s); meridian.ErrorCode(err) != c.code {
			t.Errorf("%+v: %v, want %s", c.s, err, c.code)
		}
	}
	if s, _ := f.svc.Settings(f.ctx); s.RetentionDays != activity.DefaultRetentionDays {
		t.Fatalf("refused settings were kept: %+v", s)
	}
}

package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// tableEvents counts the outbox events of each table FQN.
func (f *Fixture) tableEvents() map[string]int {
	f.T.Helper()
	tx, err := f.Driver.Begin(f.Ctx, false)
	if err != nil {
		f.T.Fatal(err)
	}
	defer tx.Rollback()
	evs, err := tx.Events(f.Ctx, store.EventQuery{EntityTypes: []string{"table"}})
	if err != nil {
		f.T.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range evs {
		out[e.EntityFQN]++
	}
	return out
}

func tableBody(name, dataType string) meridian.Entity {
	return meridian.Entity{"name": name, "databaseSchema": "svc.db.sch",
		"columns": []any{map[string]any{"name": "id", "dataType": dataType}}}
}

func testBulkWritesEachEntityAsIfSentAlone(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Table("existing", `[{"name":"id","dataType":"INT"}]`)
	// 250 bodies cross chunk boundaries; a few of them fail, each in its own way.
	var bodies []meridian.Entity
	for i := 0; i < 250; i++ {
		bodies = append(bodies, tableBody(fmt.Sprintf("t%03d", i), "BIGINT"))
	}
	bodies[7] = tableBody("bad_type", "NOT_A_TYPE")
	bodies[120] = meridian.Entity{"name": "orphan", "databaseSchema": "svc.db.missing",
		"columns": []any{map[string]any{"name": "id", "dataType": "INT"}}}
	bodies[130] = tableBody("existing", "INT") // an update
	bodies[130]["description"] = "now described"
	bodies[249] = tableBody("t000", "BIGINT") // the same FQN again

	items, err := f.E.BulkCreateOrUpdate(f.Ctx, f.Admin, "table", bodies)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(bodies) {
		t.Fatalf("%d items for %d bodies", len(items), len(bodies))
	}
	WantCode(t, items[7].Err, meridian.EInvalid)
	WantCode(t, items[120].Err, meridian.ENotFound)
	for i, it := range items {
		if i == 7 || i == 120 {
			continue
		}
		if it.Err != nil {
			t.Fatalf("item %d: %v", i, it.Err)
		}
	}
	if items[130].Result.Created || num(items[130].Result.Entity["version"]) != 0.2 {
		t.Fatalf("the existing table was not updated to 0.2: %+v", items[130].Result)
	}
	// The repeated t000 sees the first one, written earlier in the same request.
	if items[249].Result.Created || items[249].Result.Change != meridian.EventEntityNoChange {
		t.Fatalf("the repeated t000 = %+v, want no change", items[249].Result)
	}
	if !items[0].Result.Created || num(items[0].Result.Entity["version"]) != 0.1 {
		t.Fatalf("t000 = %+v, want created at 0.1", items[0].Result)
	}

	events := f.tableEvents()
	for i, b := range bodies {
		fqn := "svc.db.sch." + b.Name()
		want := 1
		switch i {
		case 7, 120:
			want = 0
			if _, err := f.E.Get(f.Ctx, f.Admin, "table", store.ByFQN(fqn), store.GetOptions{}); meridian.ErrorCode(err) != meridian.ENotFound {
				t.Fatalf("the failed %s was written: %v", b.Name(), err)
			}
		case 130:
			want = 2 // created, then updated
		}
		if events[fqn] != want && i != 249 {
			t.Fatalf("%s: %d events, want %d", fqn, events[fqn], want)
		}
	}
	if events["svc.db.sch.t000"] != 1 {
		t.Fatalf("t000: %d events, want 1", events["svc.db.sch.t000"])
	}
}

func testBulkIsBounded(t *testing.T, f *Fixture) {
	f.Hierarchy()
	bodies := make([]meridian.Entity, store.MaxBulk+1)
	for i := range bodies {
		bodies[i] = tableBody(fmt.Sprintf("t%04d", i), "INT")
	}
	_, err := f.E.BulkCreateOrUpdate(f.Ctx, f.Admin, "table", bodies)
	WantCode(t, err, meridian.EInvalid)
	if n := len(f.tableEvents()); n != 0 {
		t.Fatalf("%d tables written by a refused bulk write", n)
	}
	_, err = f.E.BulkCreateOrUpdate(f.Ctx, f.Admin, "noSuchKind", bodies[:1])
	if meridian.ErrorCode(err) == "" {
		t.Fatal("an unknown kind must be refused")
	}
}

// concurrencyValidator validates with next, and records the most calls it ran at once.
type concurrencyValidator struct {
	next      store.Validator
	mu        sync.Mutex
	now, most int
}

func (v *concurrencyValidator) Validate(kind string, e meridian.Entity) error {
	v.mu.Lock()
	v.now++
	v.most = max(v.most, v.now)
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		v.now--
		v.mu.Unlock()
	}()
	time.Sleep(time.Millisecond) // long enough for the other requests' preparations to overlap
	return v.next.Validate(kind, e)
}

// testBulkPreparationsLeaveTheWriterACPU: on a driver with a single writer in the
// process (a GroupCommitter), concurrent bulk requests prepare their creates outside
// the writer one chunk at a time, on one goroutine fewer than the CPUs (at least one),
// so the writer that commits what they prepare keeps a CPU. On every driver all of them
// are written.
func testBulkPreparationsLeaveTheWriterACPU(t *testing.T, f *Fixture) {
	f.Hierarchy()
	v := &concurrencyValidator{next: f.valid}
	e := store.New(store.Config{Driver: f.Driver, Registry: meridian.DefaultRegistry(), Validator: v})
	const requests, each = 6, 20
	var wg sync.WaitGroup
	errs := make([]error, requests)
	for r := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bodies := make([]meridian.Entity, each)
			for i := range bodies {
				bodies[i] = tableBody(fmt.Sprintf("r%d_%02d", r, i), "INT")
			}
			items, err := e.BulkCreateOrUpdate(f.Ctx, f.Admin, "table", bodies)
			for _, it := range items {
				err = cmp.Or(err, it.Err)
			}
			errs[r] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := len(f.tableEvents()); n != requests*each {
		t.Fatalf("%d tables written, want %d", n, requests*each)
	}
	if _, single := f.Driver.(store.GroupCommitter); !single {
		return
	}
	if want := max(1, runtime.GOMAXPROCS(0)-1); v.most > want {
		t.Fatalf("%d creates prepared at once, want at most %d (one CPU left to the writer)", v.most, want)
	}
}

// testBulkWithAnEndedContextWritesNothing: a bulk request whose caller has gone writes
// nothing and answers every entity with the context's error.
func testBulkWithAnEndedContextWritesNothing(t *testing.T, f *Fixture) {
	f.Hierarchy()
	ctx, cancel := context.WithCancel(f.Ctx)
	cancel()
	bodies := []meridian.Entity{tableBody("gone_1", "INT"), tableBody("gone_2", "INT")}
	items, err := f.E.BulkCreateOrUpdate(ctx, f.Admin, "table", bodies)
	if !errors.Is(err, context.Canceled) || len(items) != len(bodies) {
		t.Fatalf("BulkCreateOrUpdate = %d items, %v; want %d items and context.Canceled", len(items), err, len(bodies))
	}
	for i, it := range items {
		if !errors.Is(it.Err, context.Canceled) {
			t.Fatalf("item %d: %v, want context.Canceled", i, it.Err)
		}
	}
	if n := len(f.tableEvents()); n != 0 {
		t.Fatalf("%d tables written for a caller that had gone", n)
	}
}

// testConcurrentWritesCommitAlone checks the write path under concurrency (group commit
// on the drivers that have it): 8 writers create tables, every third one invalid, and
// each pair of writers races for the same names. Each valid name is created exactly
// once, with one event; an invalid one is never written; every error is the writer's
// own.
func testConcurrentWritesCommitAlone(t *testing.T, f *Fixture) {
	f.Hierarchy()
	const writers, each = 8, 30
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created = map[string]int{}
	)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				name := fmt.Sprintf("p%d_t%02d", w/2, i) // writers 2k and 2k+1 race for each name
				dataType := "INT"
				if i%3 == 2 {
					dataType = "NOT_A_TYPE"
				}
				_, err := f.E.Create(f.Ctx, f.Admin, "table", tableBody(name, dataType))
				switch code := meridian.ErrorCode(err); {
				case err == nil:
					mu.Lock()
					created[name]++
					mu.Unlock()
				case i%3 == 2 && code == meridian.EInvalid, i%3 != 2 && code == meridian.EConflict:
				default:
					t.Errorf("%s: %v", name, err)
				}
			}
		}(w)
	}
	wg.Wait()
	events := f.tableEvents()
	for p := 0; p < writers/2; p++ {
		for i := 0; i < each; i++ {
			name := fmt.Sprintf("p%d_t%02d", p, i)
			want := 1
			if i%3 == 2 {
				want = 0
			}
			if created[name] != want || events["svc.db.sch."+name] != want {
				t.Fatalf("%s: created %d times with %d events, want %d", name, created[name], events["svc.db.sch."+name], want)
			}
		}
	}
}

// testBulkSeesItsOwnEarlierWrites checks that a body sees what the bodies before it
// in the same chunk wrote, although the creates of a chunk are prepared (on SQLite)
// before any of them is written: the second body of one name updates the first.
func testBulkSeesItsOwnEarlierWrites(t *testing.T, f *Fixture) {
	f.Hierarchy()
	first, second := tableBody("twice", "INT"), tableBody("twice", "INT")
	second["description"] = "second"
	items, err := f.E.BulkCreateOrUpdate(f.Ctx, f.Admin, "table", []meridian.Entity{first, second})
	if err != nil {
		t.Fatal(err)
	}
	if items[0].Err != nil || !items[0].Result.Created {
		t.Fatalf("first = %+v, want created", items[0])
	}
	if items[1].Err != nil || items[1].Result.Created || num(items[1].Result.Entity["version"]) != 0.2 ||
		items[1].Result.Entity["description"] != "second" {
		t.Fatalf("second = %+v, want an update to 0.2", items[1])
	}
	if n := f.tableEvents()["svc.db.sch.twice"]; n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
}

// testCreatesRacingTheirParentsDeletionLeaveNoOrphan creates tables in bulk and one at
// a time while their schema is hard-deleted: a create prepared before the deletion must
// not commit after it. Every table left must have its schema.
func testCreatesRacingTheirParentsDeletionLeaveNoOrphan(t *testing.T, f *Fixture) {
	f.Hierarchy()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				body := tableBody(fmt.Sprintf("w%d_%02d", w, i), "INT")
				if w%2 == 0 {
					_, _ = f.E.Create(f.Ctx, f.Admin, "table", body)
				} else {
					_, _ = f.E.BulkCreateOrUpdate(f.Ctx, f.Admin, "table", []meridian.Entity{body})
				}
			}
		}(w)
	}
	if _, err := f.E.Delete(f.Ctx, f.Admin, "databaseSchema", store.ByFQN("svc.db.sch"), store.DeleteOptions{Hard: true, Recursive: true}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	tx, err := f.Driver.Begin(f.Ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rows, _, err := tx.List(f.Ctx, store.ListQuery{Kind: "table", Include: store.IncludeAll, Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := tx.GetByFQN(f.Ctx, "databaseSchema", "svc.db.sch"); err != nil {
			t.Fatalf("table %s outlived its schema: %v", r.FQN, err)
		}
	}
}

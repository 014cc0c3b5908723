package billing_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// TestModule is the billing module's conformance suite, on every driver: the ledger
// and its journal, prices, budgets and their enforcement, credit alerts and the
// reports.
func TestModule(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"EntriesArePricedAndAttributed", testEntriesPriced},
		{"OldEntriesKeepTheirPrice", testPriceVersions},
		{"AJournalLeftByACrashIsReplayedOnce", testJournalReplay},
		{"BudgetsAreReplacedWholeAndValidated", testBudgetsCRUD},
		{"HourlyCeilingRefusesThenResetsOnTheHour", testHourlyCeiling},
		{"WeeklyCeilingResetsOnMonday", testWeeklyCeiling},
		{"UserCeilingCapsEachUser", testUserCeiling},
		{"BackgroundSpendCountsAgainstNoCeiling", testBackgroundSpend},
		{"SixteenConcurrentCallsNeverOverspend", testConcurrentEdge},
		{"AFailedCallCostsNothing", testFailedCall},
		{"AnotherServerSeesTheBudgetsAndTheSpend", testTwoServers},
		{"CreditAlertIsValidatedAndMasked", testAlertCRUD},
		{"AlertsFireOncePerThresholdPerWindow", testAlertsOnce},
		{"SpendDrainedSoonAfterAnEvaluationIsEvaluatedASecondLater", testAlertsAfterQuickDrains},
		{"SpikeRunAndRunwayRules", testAlertRules},
		{"ReportsMatchHandComputedFigures", testReports},
		{"MCPUsage", testMCPUsage},
		{"AdoptionAndDirectory", testAdoption},
		{"DigestGoesToActiveHumanAdmins", testDigest},
		{"AdminOnlyExceptMe", testAuthorization},
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, newFixture(t, open)) })
		}
	})
}

// ledger reads every ledger row as entries, oldest first.
func (f *fixture) ledger() []billing.Entry {
	f.t.Helper()
	if err := f.svc.Drain(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	var out []billing.Entry
	tx, err := f.db.Begin(f.ctx, false)
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Rollback()
	rows, err := tx.SQL().Query(f.ctx, `SELECT id, ts, feature, action, app, source, client, user_name, agent, conversation, units,
		credits, price_version, failed, entities FROM billing_ledger ORDER BY ts, id`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var e billing.Entry
		var failed int64
		var ents string
		if err := rows.Scan(&e.ID, &e.Ts, &e.Feature, &e.Action, &e.App, &e.Source, &e.Client, &e.User, &e.Agent, &e.Conversation,
			&e.Units, &e.Credits, &e.PriceVersion, &failed, &ents); err != nil {
			f.t.Fatal(err)
		}
		e.Failed = failed != 0
		if ents != "[]" {
			e.Entities = []billing.EntityRef{{FQN: ents}}
		}
		out = append(out, e)
	}
	return out
}

func testEntriesPriced(t *testing.T, f *fixture) {
	f.mustCall(as(alice, billing.AppMCP, "claude-code 1.2.0", "conv-1"), billing.FeatureSemanticSearch, "semantic_search",
		billing.EntityRef{Type: "table", FQN: "svc.db.sch.orders"})
	f.clock.Add(time.Second)
	f.svc.Record(as(alice, billing.AppMCP, "claude-code 1.2.0", "conv-1"), billing.FeatureEmbeddings, "embed:hash", 3, nil)
	f.clock.Add(time.Second)
	f.mustCall(as(bob, billing.AppREST, "", ""), billing.FeatureHybridSearch, "searchHybrid")
	got := f.ledger()
	if len(got) != 3 {
		t.Fatalf("ledger has %d entries, want 3: %+v", len(got), got)
	}
	e := got[0]
	if e.Feature != billing.FeatureSemanticSearch || e.Action != "semantic_search" || e.Units != 1 || e.Credits != 2_000_000 ||
		e.User != "alice" || e.App != billing.AppMCP || e.Source != "claude-code" || e.Client != "claude-code 1.2.0" ||
		e.Conversation != "conv-1" || e.Agent != billing.Unattributed || e.PriceVersion != 1 || e.Entities == nil {
		t.Errorf("tool call entry = %+v", e)
	}
	if emb := got[1]; emb.Units != 3 || emb.Credits != 30_000 || emb.Feature != billing.FeatureEmbeddings {
		t.Errorf("embedding entry = %+v, want 3 texts at 0.01", emb)
	}
	if r := got[2]; r.Source != billing.AppREST || r.Conversation != billing.Unattributed || r.Credits != 2_000_000 {
		t.Errorf("REST entry = %+v", r)
	}
}

func testPriceVersions(t *testing.T, f *fixture) {
	f.mustCall(as(alice, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "get_entity_details")
	if err := f.svc.Close(f.ctx); err != nil {
		t.Fatal(err)
	}
	// The same table again is no new version.
	if again := f.open(nil); again.Prices().Version != 1 {
		t.Fatalf("unchanged table got version %d", again.Prices().Version)
	}
	dearer := billing.DefaultPrices()
	dearer.Features[billing.FeatureMCPToolCalls] = billing.Price{Unit: "call", Credits: 4}
	f.svc = f.open(dearer)
	if v := f.svc.Prices().Version; v != 2 {
		t.Fatalf("changed table got version %d, want 2", v)
	}
	f.clock.Add(time.Second)
	f.mustCall(as(alice, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "get_entity_details")
	got := f.ledger()
	if len(got) != 2 || got[0].Credits != 1_000_000 || got[0].PriceVersion != 1 || got[1].Credits != 4_000_000 || got[1].PriceVersion != 2 {
		t.Errorf("entries = %+v, want the old one at 1 credit (v1) and the new at 4 (v2)", got)
	}
}

func testJournalReplay(t *testing.T, f *fixture) {
	for i := 0; i < 5; i++ {
		f.mustCall(as(alice, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "get_entity_details")
	}
	f.svc.Crash() // acknowledged, journaled, never drained
	f.svc = f.open(nil)
	if n := len(f.ledger()); n != 5 {
		t.Fatalf("after the crash the ledger has %d entries, want 5", n)
	}
	// A second start finds nothing more to replay.
	f.svc.Crash()
	f.svc = f.open(nil)
	if n := len(f.ledger()); n != 5 {
		t.Fatalf("after a second start the ledger has %d entries, want 5", n)
	}
	// The daily rollup the cycle reports read counts each entry once.
	users, err := f.svc.BreakdownUsers(f.ctx, admin, "")
	if err != nil || len(users.Users) != 1 || users.Users[0].Credits != 5 || users.Users[0].Actions != 5 {
		t.Fatalf("by user after the replay = %+v, %v", users, err)
	}
}

func testBudgetsCRUD(t *testing.T, f *fixture) {
	_, err := f.svc.PutBudgets(f.ctx, admin, nil)
	wantCode(t, err, meridian.EInvalid)
	if !strings.Contains(meridian.ErrorMessage(err), "must not be empty") {
		t.Errorf("empty list message %q", meridian.ErrorMessage(err))
	}
	for _, bad := range [][]billing.RateLimit{
		{{Window: "MINUTELY", Credits: 1}},
		{{Window: billing.WindowDaily, Credits: 0}},
		{{Window: billing.WindowDaily, Credits: 1, Scope: "team"}},
		{{Window: billing.WindowDaily, Credits: 1}, {Window: billing.WindowDaily, Credits: 2}},
	} {
		_, err := f.svc.PutBudgets(f.ctx, admin, bad)
		wantCode(t, err, meridian.EInvalid)
	}
	f.mustCall(as(alice, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "x")
	f.mustCall(as(alice, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "x")
	f.mustCall(as(bob, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "x")
	got, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowDaily, Credits: 50},
		{Window: billing.WindowHourly, Credits: 10, Scope: billing.ScopeUser}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Budgets) != 2 || got.Budgets[0].Scope != billing.ScopeTotal || got.Budgets[0].Consumed != 3 || got.Budgets[0].Remaining != 47 ||
		got.Budgets[0].ResetsAt == nil || *got.Budgets[0].ResetsAt != time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC).UnixMilli() {
		t.Errorf("daily = %+v", got.Budgets[0])
	}
	if u := got.Budgets[1]; u.Consumed != 2 || len(u.Users) != 2 || u.Users[0].User != "alice" || u.Users[0].Credits != 2 {
		t.Errorf("hourly per user = %+v", u)
	}
	me, err := f.svc.MyBudgets(f.ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if me.Budgets[0].Consumed != 3 || me.Budgets[1].Consumed != 1 || me.Budgets[1].Users != nil {
		t.Errorf("bob's budgets = %+v", me.Budgets)
	}
	// A PUT replaces the whole set.
	got, err = f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowGlobal, Credits: 1000}})
	if err != nil || len(got.Budgets) != 1 || got.Budgets[0].ResetsAt != nil || got.Budgets[0].Consumed != 3 {
		t.Fatalf("replaced = %+v, %v", got, err)
	}
	if err := f.svc.DeleteBudgets(f.ctx, admin); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.svc.GetBudgets(f.ctx, admin); len(got.Budgets) != 0 {
		t.Errorf("after delete: %+v", got)
	}
	if pool, _ := f.svc.Remaining(f.ctx, admin); pool.CreditsPerCycle != 100 || pool.Remaining != 97 {
		t.Errorf("the pool after delete = %+v", pool)
	}
	// Budgets survive a restart.
	if _, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowDaily, Credits: 3}}); err != nil {
		t.Fatal(err)
	}
	f.svc = f.open(nil)
	wantCode(t, f.call(as(alice, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "x", false), meridian.ETooManyRequests)
}

func testHourlyCeiling(t *testing.T, f *fixture) {
	if _, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowHourly, Credits: 5}}); err != nil {
		t.Fatal(err)
	}
	ctx := as(alice, billing.AppMCP, "c 1", "")
	for i := 0; i < 5; i++ {
		f.mustCall(ctx, billing.FeatureMCPToolCalls, "get_entity_details")
	}
	err := f.call(ctx, billing.FeatureMCPToolCalls, "get_entity_details", false)
	wantCode(t, err, meridian.ETooManyRequests)
	msg := meridian.ErrorMessage(err)
	for _, want := range []string{"HOURLY", "5 credits", "resets at 2026-11-18T11:00:00Z"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	// A semantic search (2 credits) is refused too; 59:59 later still the same hour.
	f.clock.Set(time.Date(2026, 11, 18, 10, 59, 59, 0, time.UTC))
	wantCode(t, f.call(ctx, billing.FeatureSemanticSearch, "semantic_search", false), meridian.ETooManyRequests)
	f.clock.Set(time.Date(2026, 11, 18, 11, 0, 0, 0, time.UTC))
	f.mustCall(ctx, billing.FeatureMCPToolCalls, "get_entity_details")
	// The refusals are on the ledger as failures that cost nothing.
	var refused, credits int64
	for _, e := range f.ledger() {
		credits += e.Credits
		if e.Failed {
			refused++
		}
	}
	if refused != 2 || credits != 6_000_000 {
		t.Errorf("refused %d, credits %d; want 2 and 6 credits", refused, credits)
	}
}

func testWeeklyCeiling(t *testing.T, f *fixture) {
	if _, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowWeekly, Credits: 2}}); err != nil {
		t.Fatal(err)
	}
	ctx := as(alice, billing.AppREST, "", "")
	f.clock.Set(time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)) // Sunday
	f.mustCall(ctx, billing.FeatureMCPToolCalls, "x")
	f.mustCall(ctx, billing.FeatureMCPToolCalls, "x")
	err := f.call(ctx, billing.FeatureMCPToolCalls, "x", false)
	wantCode(t, err, meridian.ETooManyRequests)
	if !strings.Contains(meridian.ErrorMessage(err), "WEEKLY") || !strings.Contains(meridian.ErrorMessage(err), "2026-11-23T00:00:00Z") {
		t.Errorf("refusal %q", meridian.ErrorMessage(err))
	}
	f.clock.Set(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)) // Monday
	f.mustCall(ctx, billing.FeatureMCPToolCalls, "x")
}

func testUserCeiling(t *testing.T, f *fixture) {
	if _, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowDaily, Credits: 2, Scope: billing.ScopeUser}}); err != nil {
		t.Fatal(err)
	}
	a := as(alice, billing.AppMCP, "c 1", "")
	f.mustCall(a, billing.FeatureMCPToolCalls, "x")
	f.mustCall(a, billing.FeatureMCPToolCalls, "x")
	err := f.call(a, billing.FeatureMCPToolCalls, "x", false)
	wantCode(t, err, meridian.ETooManyRequests)
	if !strings.Contains(meridian.ErrorMessage(err), "each user") {
		t.Errorf("refusal %q", meridian.ErrorMessage(err))
	}
	f.mustCall(as(bob, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "x")
}

func testConcurrentEdge(t *testing.T, f *fixture) {
	// Three credits already spent, and drained: the counter starts from the table.
	for i := 0; i < 3; i++ {
		f.mustCall(as(bob, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "x")
	}
	f.ledger()
	if _, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowDaily, Credits: 10}}); err != nil {
		t.Fatal(err)
	}
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			r, err := f.svc.Reserve(as(alice, billing.AppMCP, "c 1", ""), billing.FeatureMCPToolCalls, "x", 1, nil)
			if err != nil {
				refused.Add(1)
				return
			}
			admitted.Add(1)
			time.Sleep(time.Millisecond)
			r.Done(false)
		}()
	}
	close(gate)
	wg.Wait()
	if admitted.Load() != 7 || refused.Load() != 9 {
		t.Fatalf("admitted %d, refused %d; want 7 and 9", admitted.Load(), refused.Load())
	}
	var credits int64
	for _, e := range f.ledger() {
		credits += e.Credits
	}
	if credits != 10_000_000 {
		t.Errorf("spent %d micro-credits, want exactly the 10-credit ceiling", credits)
	}
}

func testFailedCall(t *testing.T, f *fixture) {
	if _, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowDaily, Credits: 1}}); err != nil {
		t.Fatal(err)
	}
	ctx := as(alice, billing.AppMCP, "c 1", "")
	if err := f.call(ctx, billing.FeatureMCPToolCalls, "x", true); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Second)
	f.mustCall(ctx, billing.FeatureMCPToolCalls, "x") // the failure released its credit
	got := f.ledger()
	if len(got) != 2 || !got[0].Failed || got[0].Credits != 0 || got[1].Credits != 1_000_000 {
		t.Errorf("ledger = %+v", got)
	}
}

func testTwoServers(t *testing.T, f *fixture) {
	other := f.otherServer()
	ctx := as(alice, billing.AppMCP, "c 1", "")
	for i := 0; i < 3; i++ {
		f.mustCall(ctx, billing.FeatureMCPToolCalls, "x")
	}
	f.ledger() // drained: the other server reads it from the table
	if _, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowDaily, Credits: 4}}); err != nil {
		t.Fatal(err)
	}
	if err := other.ReloadBudgets(f.ctx); err != nil {
		t.Fatal(err)
	}
	r, err := other.Reserve(ctx, billing.FeatureMCPToolCalls, "x", 1, nil)
	if err != nil {
		t.Fatalf("the 4th credit: %v", err)
	}
	r.Done(false)
	_, err = other.Reserve(ctx, billing.FeatureMCPToolCalls, "x", 1, nil)
	wantCode(t, err, meridian.ETooManyRequests)
}

// testBackgroundSpend: the system's own work (the indexer's embeddings, metered without
// an edge's attribution) is in the ledger, but a total ceiling counts only callers'
// spend, in the live counters and in what another server reads from the table.
func testBackgroundSpend(t *testing.T, f *fixture) {
	if _, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowDaily, Credits: 2}}); err != nil {
		t.Fatal(err)
	}
	background := context.Background()
	f.svc.Record(background, billing.FeatureEmbeddings, "embed:hashing-v1", 500, nil) // 5 credits
	ctx := as(alice, billing.AppMCP, "c 1", "")
	f.mustCall(ctx, billing.FeatureMCPToolCalls, "x")
	f.svc.Record(background, billing.FeatureEmbeddings, "embed:hashing-v1", 500, nil)
	f.mustCall(ctx, billing.FeatureMCPToolCalls, "x")
	wantCode(t, f.call(ctx, billing.FeatureMCPToolCalls, "x", false), meridian.ETooManyRequests)
	var system int64
	for _, e := range f.ledger() {
		if e.App == billing.AppSystem {
			system += e.Credits
		}
	}
	if system != 10_000_000 {
		t.Errorf("the ledger holds %d micro-credits of system spend, want 10 credits", system)
	}
	// A server that reads the day's spend from the table counts the same.
	other := f.otherServer()
	if _, err := other.Reserve(ctx, billing.FeatureMCPToolCalls, "x", 1, nil); meridian.ErrorCode(err) != meridian.ETooManyRequests {
		t.Fatalf("another server: %v, want the ceiling reached by 2 credits of calls", err)
	}
	if _, err := f.svc.PutBudgets(f.ctx, admin, []billing.RateLimit{{Window: billing.WindowDaily, Credits: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := other.ReloadBudgets(f.ctx); err != nil {
		t.Fatal(err)
	}
	r, err := other.Reserve(ctx, billing.FeatureMCPToolCalls, "x", 1, nil)
	if err != nil {
		t.Fatalf("the 3rd credit of calls, with 10 of system spend in the table: %v", err)
	}
	r.Done(false)
}

package billing_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/store"
)

func at(month time.Month, day, hour, min int) time.Time {
	return time.Date(2026, month, day, hour, min, 0, 0, time.UTC)
}

var (
	tableOrders = billing.EntityRef{Type: "table", FQN: "svc.db.sch.orders"}
	caseRows    = billing.EntityRef{Type: "testCase", FQN: "svc.db.sch.orders.rows"}
	frank       = &meridian.Principal{Name: "frank"}
	erin        = &meridian.Principal{Name: "erin"}
)

// seed writes the ledger every report test reads, with the clock at each entry's time,
// and leaves the clock at start (Wednesday 18 November 2026, 10:30). Hand-computed
// figures for the November cycle: alice 6.05 credits (claude-code 3 in c1, cursor 3.05
// in c2), bob 4 (REST 2, UI 2); total 10.05.
func (f *fixture) seed() {
	f.t.Helper()
	type row struct {
		at                time.Time
		p                 *meridian.Principal
		app, client, conv string
		feature, action   string
		units             int64
		failed            bool
		ents              []billing.EntityRef
	}
	rows := []row{
		{at(9, 1, 9, 0), frank, billing.AppREST, "", "", billing.FeatureHybridSearch, "searchHybrid", 1, false, nil},
		{at(9, 1, 9, 0), erin, billing.AppREST, "", "", billing.FeatureHybridSearch, "searchHybrid", 1, false, nil},
		{at(10, 31, 12, 0), bob, billing.AppREST, "", "", billing.FeatureSPARQL, "sparqlQuery", 1, false, nil},
		{at(11, 16, 9, 0), alice, billing.AppMCP, "claude-code 1.2.0", "c1", billing.FeatureSemanticSearch, "semantic_search", 1, false, []billing.EntityRef{tableOrders}},
		{at(11, 16, 9, 5), alice, billing.AppMCP, "claude-code 1.2.0", "c1", billing.FeatureMCPToolCalls, "get_entity_details", 1, false, []billing.EntityRef{tableOrders}},
		{at(11, 17, 10, 0), bob, billing.AppREST, "", "", billing.FeatureHybridSearch, "searchHybrid", 1, false, nil},
		{at(11, 17, 11, 0), bob, billing.AppUI, "", "", billing.FeatureSemanticSearch, "searchSemantic", 1, false, nil},
		{at(11, 18, 8, 0), alice, billing.AppMCP, "cursor 0.9", "c2", billing.FeatureNLQSearch, "nlq_search", 1, false, nil},
		{at(11, 18, 8, 10), alice, billing.AppMCP, "cursor 0.9", "c2", billing.FeatureMCPToolCalls, "get_entity_details", 1, true, nil},
		{at(11, 18, 8, 20), alice, billing.AppMCP, "cursor 0.9", "c2", billing.FeatureMCPToolCalls, "get_entity_details", 1, false, []billing.EntityRef{caseRows}},
		{at(11, 18, 8, 30), alice, billing.AppMCP, "cursor 0.9", "c2", billing.FeatureEmbeddings, "embed:hash", 5, false, nil},
	}
	for _, r := range rows {
		f.clock.Set(r.at)
		ctx := as(r.p, r.app, r.client, r.conv)
		if r.feature == billing.FeatureEmbeddings {
			f.svc.Record(ctx, r.feature, r.action, r.units, r.ents)
			continue
		}
		if err := f.call(ctx, r.feature, r.action, r.failed, r.ents...); err != nil {
			f.t.Fatal(err)
		}
	}
	f.clock.Set(start)
}

// same compares a report with the expected value through their JSON.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(w, &wv)
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// must returns v, and fails the test (by a panic, which the test runner reports with
// the failing line) when err is set.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func u(units int64, credits float64, actions int64) billing.Usage {
	return billing.Usage{Units: units, Credits: credits, Actions: actions}
}

func testReports(t *testing.T, f *fixture) {
	f.seed()
	ctx := f.ctx
	nov := at(11, 1, 0, 0).UnixMilli()
	dec := at(12, 1, 0, 0).UnixMilli()
	now := start.UnixMilli() + 1

	pool := must(f.svc.Remaining(ctx, admin))
	same(t, "remaining", pool, billing.Pool{Plan: "team", CycleStart: nov, CycleEnd: dec, CreditsPerCycle: 100, Used: 10.05, Remaining: 89.95, PercentUsed: 10.05})

	conv := must(f.svc.CreditsByConversation(ctx, admin, 0, 0))
	same(t, "conversations", conv.Conversations, map[string]float64{"c1": 3, "c2": 3.05, billing.Unattributed: 4})
	if conv.StartTs != nov || conv.EndTs != now || !near(conv.Total, 10.05) {
		t.Errorf("conversations range/total = %+v", conv)
	}
	// A range: only 17 November.
	conv = must(f.svc.CreditsByConversation(ctx, admin, at(11, 17, 0, 0).UnixMilli(), at(11, 18, 0, 0).UnixMilli()))
	same(t, "conversations on the 17th", conv.Conversations, map[string]float64{billing.Unattributed: 4})
	_, err := f.svc.CreditsByConversation(ctx, admin, 10, 5)
	wantCode(t, err, meridian.EInvalid)

	apps := must(f.svc.CreditsByApp(ctx, admin, 0, 0))
	same(t, "apps", apps.Apps, []billing.AppUsage{
		{App: "MCP", Usage: u(10, 6.05, 6), Actions: []billing.ActionUsage{
			{Action: "get_entity_details", Feature: "mcpToolCalls", Unit: "call", Usage: u(3, 2, 3)},
			{Action: "nlq_search", Feature: "nlqSearch", Unit: "query", Usage: u(1, 2, 1)},
			{Action: "semantic_search", Feature: "semanticSearch", Unit: "query", Usage: u(1, 2, 1)},
			{Action: "embed:hash", Feature: "embeddings", Unit: "text", Usage: u(5, 0.05, 1)}}},
		{App: "REST", Usage: u(1, 2, 1), Actions: []billing.ActionUsage{{Action: "searchHybrid", Feature: "hybridSearch", Unit: "query", Usage: u(1, 2, 1)}}},
		{App: "UI", Usage: u(1, 2, 1), Actions: []billing.ActionUsage{{Action: "searchSemantic", Feature: "semanticSearch", Unit: "query", Usage: u(1, 2, 1)}}},
	})

	hist := must(f.svc.CreditsAppsHistory(ctx, admin, at(11, 16, 12, 0).UnixMilli()))
	same(t, "apps history", hist.History, []billing.AppDay{
		{Date: "2026-11-16", Apps: map[string]billing.Usage{"MCP": u(2, 3, 2)}},
		{Date: "2026-11-17", Apps: map[string]billing.Usage{"REST": u(1, 2, 1), "UI": u(1, 2, 1)}},
		{Date: "2026-11-18", Apps: map[string]billing.Usage{"MCP": u(8, 3.05, 4)}},
	})
	_, err = f.svc.CreditsAppsHistory(ctx, admin, 0)
	wantCode(t, err, meridian.EInvalid)

	ents := must(f.svc.CreditsByEntity(ctx, admin, 0, 0))
	same(t, "entities", []any{ents.Assets, ents.TestCases, ents.Users}, []any{
		[]billing.EntityUsage{{Type: "table", FQN: "svc.db.sch.orders", Usage: u(2, 3, 2)}},
		[]billing.EntityUsage{{Type: "testCase", FQN: "svc.db.sch.orders.rows", Usage: u(1, 1, 1)}},
		[]billing.UserUsage{{User: "alice", Usage: u(10, 6.05, 6)}, {User: "bob", Usage: u(2, 4, 2)}},
	})

	sum := must(f.svc.CreditsSummary(ctx, admin))
	if !near(sum.Pool.Used, 10.05) || len(sum.Apps) != 3 || len(sum.Entities.Assets) != 1 || len(sum.Features) != 7 {
		t.Errorf("summary = %+v", sum)
	}
	for _, fu := range sum.Features {
		if fu.Feature == billing.FeatureSemanticSearch && (fu.Credits != 4 || fu.Units != 2 || fu.CreditsPerUnit != 2) {
			t.Errorf("semanticSearch meter = %+v", fu)
		}
	}

	users := must(f.svc.BreakdownUsers(ctx, admin, ""))
	same(t, "by user", users.Users, []billing.UserUsage{{User: "alice", Usage: u(10, 6.05, 6)}, {User: "bob", Usage: u(2, 4, 2)}})
	users = must(f.svc.BreakdownUsers(ctx, admin, "REST"))
	same(t, "by user, REST", users.Users, []billing.UserUsage{{User: "bob", Usage: u(1, 2, 1)}})

	agents := must(f.svc.BreakdownUserAgents(ctx, admin, "alice", ""))
	same(t, "alice's agents", agents.Agents, []billing.AgentUsage{
		{Agent: billing.Unattributed, Source: "cursor", Usage: u(8, 3.05, 4)},
		{Agent: billing.Unattributed, Source: "claude-code", Usage: u(2, 3, 2)}})

	sources := must(f.svc.BreakdownSources(ctx, admin, ""))
	same(t, "by source", sources.Sources, []billing.SourceUsage{
		{Source: "cursor", App: "MCP", Usage: u(8, 3.05, 4)}, {Source: "claude-code", App: "MCP", Usage: u(2, 3, 2)},
		{Source: "REST", App: "REST", Usage: u(1, 2, 1)}, {Source: "UI", App: "UI", Usage: u(1, 2, 1)}})

	cross := must(f.svc.BreakdownCross(ctx, admin, ""))
	same(t, "cross", cross.Users, []billing.CrossUser{
		{User: "alice", Credits: 6.05, Sources: []billing.CrossSource{{Source: "cursor", Credits: 3.05}, {Source: "claude-code", Credits: 3}}},
		{User: "bob", Credits: 4, Sources: []billing.CrossSource{{Source: "REST", Credits: 2}, {Source: "UI", Credits: 2}}}})

	mine := must(f.svc.MySources(ctx, bob))
	same(t, "bob's sources", mine.Sources, []billing.SourceUsage{{Source: "REST", App: "REST", Usage: u(1, 2, 1)}, {Source: "UI", App: "UI", Usage: u(1, 2, 1)}})
	acts := must(f.svc.MyActions(ctx, alice))
	same(t, "alice's actions", acts.Actions, []billing.ActionUsage{
		{Action: "get_entity_details", Feature: "mcpToolCalls", Unit: "call", Usage: u(3, 2, 3)},
		{Action: "nlq_search", Feature: "nlqSearch", Unit: "query", Usage: u(1, 2, 1)},
		{Action: "semantic_search", Feature: "semanticSearch", Unit: "query", Usage: u(1, 2, 1)},
		{Action: "embed:hash", Feature: "embeddings", Unit: "text", Usage: u(5, 0.05, 1)}})
	mx := must(f.svc.MyCross(ctx, bob))
	same(t, "bob's cross", mx.Sources, []billing.CrossSource{
		{Source: "REST", Credits: 2, Actions: []billing.ActionUsage{{Action: "searchHybrid", Feature: "hybridSearch", Unit: "query", Usage: u(1, 2, 1)}}},
		{Source: "UI", Credits: 2, Actions: []billing.ActionUsage{{Action: "searchSemantic", Feature: "semanticSearch", Unit: "query", Usage: u(1, 2, 1)}}}})

	ov := must(f.svc.Overview(ctx, admin))
	same(t, "overview series", ov.Last7Days, []billing.DayUsage{
		{Date: "2026-11-12"}, {Date: "2026-11-13"}, {Date: "2026-11-14"}, {Date: "2026-11-15"},
		{Date: "2026-11-16", Usage: u(2, 3, 2)}, {Date: "2026-11-17", Usage: u(2, 4, 2)}, {Date: "2026-11-18", Usage: u(8, 3.05, 4)}})
	if ov.Plan.CreditsPerCycle != 100 || !near(ov.Pool.Remaining, 89.95) || len(ov.Meters) != 7 {
		t.Errorf("overview = %+v", ov)
	}

	wi := must(f.svc.WeeklyImpact(ctx, admin))
	if wi.Current.StartTs != at(11, 11, 0, 0).UnixMilli() || wi.Current.EndTs != at(11, 18, 0, 0).UnixMilli() ||
		wi.Current.Credits != 7 || wi.Current.Actions != 4 || wi.Current.ActiveUsers != 2 || wi.Current.Conversations != 1 ||
		wi.Previous.StartTs != at(11, 4, 0, 0).UnixMilli() || wi.Previous.Credits != 0 || wi.Change["credits"] != 7 {
		t.Errorf("weekly impact = %+v", wi)
	}
	if _, ok := wi.Change["creditsPercent"]; ok {
		t.Errorf("a percent change against 0: %v", wi.Change)
	}

	cd := must(f.svc.ConversationsDaily(ctx, admin, 3))
	same(t, "conversations daily", cd.Days, []billing.DailyConversations{
		{Date: "2026-11-16", Conversations: 1, Senders: 1}, {Date: "2026-11-17"}, {Date: "2026-11-18", Conversations: 1, Senders: 1}})
	_, err = f.svc.ConversationsDaily(ctx, admin, 5000)
	wantCode(t, err, meridian.EInvalid)

	lim := must(f.svc.FeatureUsageLimits(ctx, admin, "semanticSearch"))
	if len(lim.Features) != 1 || lim.Features[0].CreditsPerUnit != 2 || lim.PriceVersion != 1 {
		t.Errorf("usage/semanticSearch = %+v", lim)
	}
	if all := must(f.svc.FeatureUsageLimits(ctx, admin, "all")); len(all.Features) != 7 {
		t.Errorf("usage/all = %+v", all)
	}
	_, err = f.svc.FeatureUsageLimits(ctx, admin, "teleport")
	wantCode(t, err, meridian.ENotFound)
}

func testMCPUsage(t *testing.T, f *fixture) {
	f.seed()
	sum := must(f.svc.MCPUsageSummary(f.ctx, admin, 0, 0))
	if sum.Calls != 5 || sum.Failures != 1 || sum.Successes != 4 || sum.ErrorRate != 0.2 || sum.Credits != 6 || sum.Users != 1 ||
		sum.Clients != 2 || sum.Tools != 3 || sum.P95Ms < sum.P50Ms || sum.StartTs != at(10, 20, 0, 0).UnixMilli() {
		t.Errorf("summary = %+v", sum)
	}
	hist := must(f.svc.MCPUsageHistory(f.ctx, admin, at(11, 15, 0, 0).UnixMilli(), 0))
	same(t, "history", hist.History, map[string]billing.MCPDay{"2026-11-15": {}, "2026-11-16": {Success: 2},
		"2026-11-17": {}, "2026-11-18": {Success: 2, Failure: 1}})
	tools := must(f.svc.MCPUsageTools(f.ctx, admin, 0, 0))
	if len(tools.Tools) != 3 || tools.Tools[0].Tool != "get_entity_details" || tools.Tools[0].Calls != 3 || tools.Tools[0].Errors != 1 ||
		tools.Tools[0].Credits != 2 || tools.Tools[0].P95Ms < tools.Tools[0].P50Ms {
		t.Errorf("tools = %+v", tools.Tools)
	}
	users := must(f.svc.MCPUsageUsers(f.ctx, admin, 0, 0))
	same(t, "users", users.Users, []billing.MCPUser{{User: "alice", Calls: 5, Errors: 1, Credits: 6, Client: "cursor 0.9",
		Clients: []string{"claude-code 1.2.0", "cursor 0.9"}}})
	_, err := f.svc.MCPUsageSummary(f.ctx, admin, at(1, 1, 0, 0).AddDate(-2, 0, 0).UnixMilli(), 0)
	wantCode(t, err, meridian.EInvalid)
}

func testAdoption(t *testing.T, f *fixture) {
	f.user("admin", "admin@example.com", true, false)
	f.user("alice", "alice@example.com", false, false)
	f.user("bob", "bob@example.com", false, false)
	f.user("carol", "carol@example.com", false, false)
	f.user("dave", "dave@example.com", false, true)
	f.user("erin", "erin@example.com", false, false)
	f.user("frank", "frank@example.com", false, false)
	if _, err := f.ents.Delete(f.ctx, meridian.System, meridian.KindUser, store.Key{FQN: "erin"}, store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.seed()
	ad := must(f.svc.Adoption(f.ctx, admin, 2, 3))
	same(t, "funnel", ad.Funnel, billing.Funnel{BillableUsers: 5, Activated: 3, Active: 2, Engaged: 0})
	same(t, "daily", ad.DailyActiveUsers, []billing.SeriesPoint{{Date: "2026-11-16", Users: 1}, {Date: "2026-11-17", Users: 1}, {Date: "2026-11-18", Users: 1}})
	same(t, "weekly", ad.WeeklyActiveUsers, []billing.SeriesPoint{{Date: "2026-11-09", Users: 0}, {Date: "2026-11-16", Users: 2}})
	for _, fa := range ad.Features {
		if fa.Feature == billing.FeatureSemanticSearch && (fa.Users != 2 || fa.PercentBillable != 40) {
			t.Errorf("semanticSearch adoption = %+v", fa)
		}
	}
	if len(ad.Users) != 2 || ad.Users[0].User != "alice" || ad.Users[0].Credits != 6.05 || ad.Users[0].ActiveDays != 2 || ad.Users[1].Credits != 4 {
		t.Errorf("per-user aggregates over 3 days = %+v", ad.Users)
	}
	sum := must(f.svc.AdoptionSummary(f.ctx, admin, 1))
	if sum.Active7Days != 2 || sum.Funnel.Activated != 3 || len(sum.WeeklyActiveUsers) != 1 {
		t.Errorf("summary = %+v", sum)
	}
	names := func(d billing.Directory) []string {
		var out []string
		for _, x := range d.Data {
			out = append(out, x.Name+":"+x.Status)
		}
		return out
	}
	dir := must(f.svc.AdoptionUsers(f.ctx, admin, billing.DirectoryQuery{}))
	same(t, "directory", names(dir), []string{"admin:neverActivated", "alice:active", "bob:active", "carol:neverActivated", "erin:deleted", "frank:dormant"})
	dir = must(f.svc.AdoptionUsers(f.ctx, admin, billing.DirectoryQuery{Sort: "credits"}))
	same(t, "by credits", names(dir)[:2], []string{"bob:active", "alice:active"})
	if dir.Data[0].Last30Days.Credits != 7 || dir.Data[0].Last30Days.ActiveDays != 2 {
		t.Errorf("bob's 30 days = %+v", dir.Data[0])
	}
	dir = must(f.svc.AdoptionUsers(f.ctx, admin, billing.DirectoryQuery{Status: billing.StatusNeverActivated, Direction: "desc"}))
	same(t, "never activated, desc", names(dir), []string{"carol:neverActivated", "admin:neverActivated"})
	dir = must(f.svc.AdoptionUsers(f.ctx, admin, billing.DirectoryQuery{Search: "ALI"}))
	same(t, "search", names(dir), []string{"alice:active"})
	dir = must(f.svc.AdoptionUsers(f.ctx, admin, billing.DirectoryQuery{Page: 1, PageSize: 4}))
	if dir.Total != 6 || len(dir.Data) != 2 || dir.Data[0].Name != "erin" {
		t.Errorf("page 1 = %+v", dir)
	}
	for _, bad := range []billing.DirectoryQuery{{Page: -1}, {PageSize: 1000}, {Status: "asleep"}, {Sort: "height"}, {Direction: "up"}} {
		_, err := f.svc.AdoptionUsers(f.ctx, admin, bad)
		wantCode(t, err, meridian.EInvalid)
	}
}

func testDigest(t *testing.T, f *fixture) {
	sink := newSMTPSink(t)
	f.notifier.smtpAddr = sink.ln.Addr().String()
	f.user("admin", "admin@example.com", true, false)
	f.user("ops", "ops@example.com", true, false)
	f.user("robot", "robot@example.com", true, true)
	f.user("gone", "gone@example.com", true, false)
	f.user("alice", "alice@example.com", false, false)
	if _, err := f.ents.Delete(f.ctx, meridian.System, meridian.KindUser, store.Key{FQN: "gone"}, store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.seed()
	d := must(f.svc.SendDigest(f.ctx, admin))
	same(t, "recipients", d.Recipients, []string{"admin@example.com", "ops@example.com"})
	if d.Sent != 2 || d.Snapshot.Current.Credits != 7 {
		t.Errorf("digest = %+v", d)
	}
	mails := sink.got()
	if len(mails) != 2 || mails[0].to[0] != "admin@example.com" || !contains(mails[0].data, "7 credits") {
		t.Errorf("mails = %+v", mails)
	}
}

func contains(s, sub string) bool {
	return len(s) >= len(sub) && (s == sub || len(sub) == 0 || indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func testAuthorization(t *testing.T, f *fixture) {
	ctx := f.ctx
	adminOnly := map[string]func(p *meridian.Principal) error{
		"usage":         func(p *meridian.Principal) error { _, err := f.svc.FeatureUsageLimits(ctx, p, "all"); return err },
		"budgets":       func(p *meridian.Principal) error { _, err := f.svc.GetBudgets(ctx, p); return err },
		"putBudgets":    func(p *meridian.Principal) error { _, err := f.svc.PutBudgets(ctx, p, nil); return err },
		"deleteBudgets": func(p *meridian.Principal) error { return f.svc.DeleteBudgets(ctx, p) },
		"summary":       func(p *meridian.Principal) error { _, err := f.svc.CreditsSummary(ctx, p); return err },
		"remaining":     func(p *meridian.Principal) error { _, err := f.svc.Remaining(ctx, p); return err },
		"conversations": func(p *meridian.Principal) error { _, err := f.svc.CreditsByConversation(ctx, p, 0, 0); return err },
		"apps":          func(p *meridian.Principal) error { _, err := f.svc.CreditsByApp(ctx, p, 0, 0); return err },
		"history":       func(p *meridian.Principal) error { _, err := f.svc.CreditsAppsHistory(ctx, p, 1); return err },
		"entities":      func(p *meridian.Principal) error { _, err := f.svc.CreditsByEntity(ctx, p, 0, 0); return err },
		"users":         func(p *meridian.Principal) error { _, err := f.svc.BreakdownUsers(ctx, p, ""); return err },
		"agents": func(p *meridian.Principal) error {
			_, err := f.svc.BreakdownUserAgents(ctx, p, "alice", "")
			return err
		},
		"sources":     func(p *meridian.Principal) error { _, err := f.svc.BreakdownSources(ctx, p, ""); return err },
		"cross":       func(p *meridian.Principal) error { _, err := f.svc.BreakdownCross(ctx, p, ""); return err },
		"overview":    func(p *meridian.Principal) error { _, err := f.svc.Overview(ctx, p); return err },
		"weekly":      func(p *meridian.Principal) error { _, err := f.svc.WeeklyImpact(ctx, p); return err },
		"digest":      func(p *meridian.Principal) error { _, err := f.svc.SendDigest(ctx, p); return err },
		"adoption":    func(p *meridian.Principal) error { _, err := f.svc.Adoption(ctx, p, 0, 0); return err },
		"adoptionSum": func(p *meridian.Principal) error { _, err := f.svc.AdoptionSummary(ctx, p, 0); return err },
		"directory": func(p *meridian.Principal) error {
			_, err := f.svc.AdoptionUsers(ctx, p, billing.DirectoryQuery{})
			return err
		},
		"daily":      func(p *meridian.Principal) error { _, err := f.svc.ConversationsDaily(ctx, p, 0); return err },
		"mcpSummary": func(p *meridian.Principal) error { _, err := f.svc.MCPUsageSummary(ctx, p, 0, 0); return err },
		"mcpHistory": func(p *meridian.Principal) error { _, err := f.svc.MCPUsageHistory(ctx, p, 0, 0); return err },
		"mcpTools":   func(p *meridian.Principal) error { _, err := f.svc.MCPUsageTools(ctx, p, 0, 0); return err },
		"mcpUsers":   func(p *meridian.Principal) error { _, err := f.svc.MCPUsageUsers(ctx, p, 0, 0); return err },
		"alert":      func(p *meridian.Principal) error { _, err := f.svc.GetCreditAlert(ctx, p); return err },
		"putAlert": func(p *meridian.Principal) error {
			_, err := f.svc.PutCreditAlert(ctx, p, billing.CreditAlert{})
			return err
		},
	}
	for name, fn := range adminOnly {
		if code := meridian.ErrorCode(fn(alice)); code != meridian.EForbidden {
			t.Errorf("%s as a non-admin: %q, want forbidden", name, code)
		}
		if code := meridian.ErrorCode(fn(nil)); code != meridian.EUnauthorized {
			t.Errorf("%s unauthenticated: %q, want unauthorized", name, code)
		}
	}
	me := map[string]func(p *meridian.Principal) error{
		"budgets/me": func(p *meridian.Principal) error { _, err := f.svc.MyBudgets(ctx, p); return err },
		"sources":    func(p *meridian.Principal) error { _, err := f.svc.MySources(ctx, p); return err },
		"actions":    func(p *meridian.Principal) error { _, err := f.svc.MyActions(ctx, p); return err },
		"cross":      func(p *meridian.Principal) error { _, err := f.svc.MyCross(ctx, p); return err },
	}
	for name, fn := range me {
		if err := fn(alice); err != nil {
			t.Errorf("me %s as a user: %v", name, err)
		}
		if code := meridian.ErrorCode(fn(nil)); code != meridian.EUnauthorized {
			t.Errorf("me %s unauthenticated: %q", name, code)
		}
	}
}

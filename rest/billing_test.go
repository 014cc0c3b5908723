package rest

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
)

// newBillingFixture is the REST server with the billing service, as `meridian serve`
// wires it.
func newBillingFixture(t testing.TB) *fixture {
	t.Helper()
	cat, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { cat.Run(ctx); close(stopped) }()
	t.Cleanup(func() { stop(); <-stopped; cat.Close() })
	f := &fixture{t: t, ents: cat.Entities, auth: cat.Auth, jobs: cat.Jobs}
	f.srv = httptest.NewServer(New(Config{Entities: cat.Entities, Search: cat.Search, Auth: cat.Auth, Version: "test",
		Dispatcher: cat.Dispatcher, Jobs: cat.Jobs, Billing: cat.Billing}))
	t.Cleanup(f.srv.Close)
	f.admin = f.userToken("admin", []string{meridian.RoleAdmin}, false)
	return f
}

func TestBillingAdminMeAnd403(t *testing.T) {
	f := newBillingFixture(t)
	user := f.userToken("alice", []string{meridian.RoleDataConsumer}, false)
	admin := []string{"/usage/all", "/budgets", "/credits/summary", "/credits/remaining", "/credits/conversations",
		"/credits/apps", "/credits/apps/history?startTs=" + strconv.FormatInt(time.Now().Add(-48*time.Hour).UnixMilli(), 10), "/credits/entities", "/credits/breakdown/users",
		"/credits/breakdown/users/alice/agents", "/credits/breakdown/sources", "/credits/breakdown/cross", "/overview",
		"/weekly-impact", "/adoption", "/adoption/summary", "/adoption/users", "/conversations/daily", "/mcp/usage/summary",
		"/mcp/usage/history", "/mcp/usage/breakdown/tools", "/mcp/usage/breakdown/users"}
	for _, p := range admin {
		if r := f.call("GET", "/api/v1/billing"+p, ""); r.status != 200 {
			t.Errorf("admin GET %s = %d %s", p, r.status, r.body)
		}
		wantError(t, f.do("GET", "/api/v1/billing"+p, user, nil), 403, "")
		if r := f.do("GET", "/api/v1/billing"+p, "", nil); r.status != 401 {
			t.Errorf("anonymous GET %s = %d", p, r.status)
		}
	}
	for _, p := range []string{"/budgets/me", "/credits/me/breakdown/sources", "/credits/me/breakdown/actions", "/credits/me/breakdown/cross"} {
		if r := f.do("GET", "/api/v1/billing"+p, user, nil); r.status != 200 {
			t.Errorf("user GET %s = %d %s", p, r.status, r.body)
		}
	}
	wantError(t, f.do("PUT", "/api/v1/billing/budgets", user, strings.NewReader(`{"budgets":[]}`)), 403, "")
	wantError(t, f.do("DELETE", "/api/v1/billing/budgets", user, nil), 403, "")
	wantError(t, f.do("POST", "/api/v1/billing/weekly-impact/send-digest", user, nil), 403, "")
	wantError(t, f.do("PUT", "/api/v1/billing/creditAlert", user, strings.NewReader(`{}`)), 403, "")
	wantError(t, f.call("GET", "/api/v1/billing/creditAlert", ""), 404, "No credit alert is configured")
	wantError(t, f.call("GET", "/api/v1/billing/usage/teleport", ""), 404, "")
}

func TestBillingBudgetsOverREST(t *testing.T) {
	f := newBillingFixture(t)
	wantError(t, f.call("PUT", "/api/v1/billing/budgets", `{}`), 400, "budgets is required: an array of ceilings {window, credits, scope}")
	wantError(t, f.call("PUT", "/api/v1/billing/budgets", `{"budgets":[]}`), 400,
		"budgets must not be empty: send at least one ceiling, or DELETE /api/v1/billing/budgets to remove them all")
	wantError(t, f.call("PUT", "/api/v1/billing/budgets", `{"budgets":[{"window":"DAILY","credits":1,"extra":1}]}`), 400, "")
	wantError(t, f.call("PUT", "/api/v1/billing/budgets", `{"budgets":[{"window":"SOMETIMES","credits":1}]}`), 400, "")
	r := f.call("PUT", "/api/v1/billing/budgets", `{"budgets":[{"window":"HOURLY","credits":3}]}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"scope":"total"`) {
		t.Fatalf("PUT = %d %s", r.status, r.body)
	}
	// A hybrid search costs 2 credits: one passes, the next is refused before it runs.
	if r := f.call("GET", "/api/v1/search/hybrid?q=orders", ""); r.status != 200 {
		t.Fatalf("first search = %d %s", r.status, r.body)
	}
	r = f.call("GET", "/api/v1/search/hybrid?q=orders", "")
	wantError(t, r, 429, "")
	if msg := string(r.body); !strings.Contains(msg, "HOURLY") || !strings.Contains(msg, "resets at") {
		t.Errorf("refusal = %s", msg)
	}
	got := f.call("GET", "/api/v1/billing/budgets", "").json(t)
	b := got["budgets"].([]any)[0].(map[string]any)
	// The search's 2 credits, and the embeddings the indexer computed (0.01 a text).
	if c, _ := b["consumed"].(float64); c < 2 || c >= 3 || b["remaining"].(float64)+c != 3 {
		t.Errorf("budgets = %v", got)
	}
	if r := f.call("DELETE", "/api/v1/billing/budgets", ""); r.status != 204 {
		t.Fatalf("DELETE = %d", r.status)
	}
	if r := f.call("GET", "/api/v1/search/hybrid?q=orders", "X-Meridian-Client: ui"); r.status != 200 {
		t.Fatalf("search after DELETE = %d", r.status)
	}
	src := f.call("GET", "/api/v1/billing/credits/breakdown/sources", "").json(t)
	if s := src["sources"].([]any); len(s) != 2 {
		t.Errorf("sources = %v, want REST and UI", src)
	}
}

func TestBillingCreditAlertAndBadInputOverREST(t *testing.T) {
	f := newBillingFixture(t)
	wantError(t, f.call("PUT", "/api/v1/billing/creditAlert", `{"rules":[{"type":"nope","thresholds":[1]}]}`), 400, "")
	r := f.call("PUT", "/api/v1/billing/creditAlert", `{"rules":[{"type":"dailyCredits","thresholds":[10]}],
		"destinations":[{"type":"Webhook","config":{"endpoint":"https://example.com/h","secretKey":"k"}}]}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"secretKey":"*********"`) || strings.Contains(string(r.body), `"k"`) {
		t.Fatalf("PUT alert = %d %s", r.status, r.body)
	}
	if r := f.call("GET", "/api/v1/billing/creditAlert", ""); r.status != 200 || !strings.Contains(string(r.body), `"enabled":true`) {
		t.Fatalf("GET alert = %d %s", r.status, r.body)
	}
	for _, p := range []string{"/credits/apps/history", "/credits/apps?startTs=x", "/adoption?weeks=1000", "/adoption/users?pageSize=0",
		"/adoption/users?sort=shoe", "/conversations/daily?days=0", "/credits/conversations?startTs=5&endTs=1", "/mcp/usage/summary?startTs=-1"} {
		wantError(t, f.call("GET", "/api/v1/billing"+p, ""), 400, "")
	}
}

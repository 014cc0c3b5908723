package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/collab/events/eventstest"
)

// mcpToolCall sends one tools/call over stateless HTTP without failing the test on a
// transport error; it returns the HTTP status (0 on a transport error) and the
// tools/call result.
func mcpToolCall(hc *http.Client, base, token, userAgent, tool string, args map[string]any) (int, map[string]any) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	req, err := http.NewRequest("POST", base+"/mcp", bytes.NewReader(body))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				b = []byte(data)
			}
		}
	}
	var m struct {
		Result map[string]any `json:"result"`
	}
	if json.Unmarshal(b, &m) != nil || m.Result == nil {
		return 0, nil
	}
	return resp.StatusCode, m.Result
}

// TestBillingCrashLosesNoAcknowledgedToolCall: tool calls answered before a kill -9
// are all in the ledger after the restart (the journal is replayed).
func TestBillingCrashLosesNoAcknowledgedToolCall(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	var acked atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	hc := &http.Client{Timeout: 10 * time.Second}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				status, res := mcpToolCall(hc, s.base, s.adminToken, "e2e-crash/1.0", "search_metadata", map[string]any{"query": "orders"})
				if status == 0 {
					return
				}
				if status != 200 || res["isError"] == true {
					t.Errorf("tool call: %d %v", status, res)
					return
				}
				acked.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for acked.Load() < 300 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s.crash()
	stop.Store(true)
	wg.Wait()
	n := acked.Load()
	if n < 50 {
		t.Fatalf("only %d tool calls were acknowledged before the crash", n)
	}
	r := s.restart(t)
	sum := r.admin.must(200, "GET", "/api/v1/billing/mcp/usage/summary", nil)
	calls := int64(num(sum["calls"]))
	if calls < n {
		t.Fatalf("the ledger holds %d tool calls after the crash, but %d were acknowledged", calls, n)
	}
	t.Logf("%d tool calls acknowledged before the crash, %d in the ledger after it", n, calls)
	users := r.admin.must(200, "GET", "/api/v1/billing/mcp/usage/breakdown/users", nil)
	u := object(list(users["users"])[0])
	if str(u["client"]) != "e2e-crash 1.0" || int64(num(u["calls"])) != calls {
		t.Errorf("MCP users after the crash = %v", users)
	}
}

// TestBillingBudgetsAreEnforcedOverRESTAndMCP: a user ceiling refuses the call that
// would pass it, 429 over REST and isError statusCode 429 over MCP; admins see every
// report, a user only the me endpoints.
func TestBillingBudgetsAreEnforcedOverRESTAndMCP(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	alice := s.user(t, "alice", "DataConsumer")
	// Every billing path answers: 404 before this release no more.
	expectError(t, s.admin.do("PUT", "/api/v1/billing/budgets", map[string]any{"budgets": []any{}}, nil), http.StatusBadRequest,
		"budgets must not be empty: send at least one ceiling, or DELETE /api/v1/billing/budgets to remove them all")
	expectError(t, alice.c.do("PUT", "/api/v1/billing/budgets", map[string]any{"budgets": []any{map[string]any{"window": "DAILY", "credits": 5}}}, nil),
		http.StatusForbidden, "")
	got := s.admin.must(200, "PUT", "/api/v1/billing/budgets", map[string]any{"budgets": []any{
		map[string]any{"window": "HOURLY", "credits": 2, "scope": "user"}}})
	if b := object(list(got["budgets"])[0]); str(b["scope"]) != "user" || num(b["credits"]) != 2 {
		t.Fatalf("PUT budgets = %v", got)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	for i := 0; i < 2; i++ {
		if status, res := mcpToolCall(hc, s.base, alice.token, "e2e/1", "search_metadata", map[string]any{"query": "x"}); status != 200 || res["isError"] == true {
			t.Fatalf("call %d within the ceiling: %d %v", i, status, res)
		}
	}
	_, res := mcpToolCall(hc, s.base, alice.token, "e2e/1", "search_metadata", map[string]any{"query": "x"})
	text := str(object(list(res["content"])[0])["text"])
	if res["isError"] != true || !strings.Contains(text, `"statusCode":429`) || !strings.Contains(text, "HOURLY") || !strings.Contains(text, "resets at") {
		t.Fatalf("call past the ceiling: %v", res)
	}
	r := alice.c.do("GET", "/api/v1/search/hybrid?q=orders", nil, nil)
	expectError(t, r, http.StatusTooManyRequests, "")
	if !strings.Contains(string(r.raw), "HOURLY") {
		t.Errorf("REST refusal = %s", r.raw)
	}
	// The admin is another user: the ceiling is per user.
	if status, res := mcpToolCall(hc, s.base, s.adminToken, "e2e/1", "search_metadata", map[string]any{"query": "x"}); status != 200 || res["isError"] == true {
		t.Fatalf("admin call: %d %v", status, res)
	}
	me := alice.c.must(200, "GET", "/api/v1/billing/budgets/me", nil)
	if b := object(list(me["budgets"])[0]); num(b["consumed"]) != 2 || num(b["remaining"]) != 0 {
		t.Errorf("alice's budgets = %v", me)
	}
	alice.c.must(200, "GET", "/api/v1/billing/credits/me/breakdown/actions", nil)
	expectError(t, alice.c.do("GET", "/api/v1/billing/overview", nil, nil), http.StatusForbidden, "")
	ov := s.admin.must(200, "GET", "/api/v1/billing/overview", nil)
	if len(list(ov["last7Days"])) != 7 || len(list(ov["meters"])) != 7 {
		t.Errorf("overview = %v", ov)
	}
	tools := s.admin.must(200, "GET", "/api/v1/billing/mcp/usage/breakdown/tools", nil)
	tool := object(list(tools["tools"])[0])
	if str(tool["tool"]) != "search_metadata" || num(tool["calls"]) != 4 || num(tool["errors"]) != 1 {
		t.Errorf("tools = %v", tools)
	}
	expectError(t, s.admin.do("GET", "/api/v1/billing/creditAlert", nil, nil), http.StatusNotFound, "No credit alert is configured")
	r = s.admin.do("DELETE", "/api/v1/billing/budgets", nil, nil)
	if r.status != http.StatusNoContent {
		t.Fatalf("DELETE budgets: %s", r)
	}
	if status, res := mcpToolCall(hc, s.base, alice.token, "e2e/1", "search_metadata", map[string]any{"query": "x"}); status != 200 || res["isError"] == true {
		t.Fatalf("call after DELETE: %d %v", status, res)
	}
}

// TestBillingMetersTheTypeScriptSDK: the official TypeScript SDK's clientInfo names
// the source of its calls, and a ceiling refuses its call with isError.
func TestBillingMetersTheTypeScriptSDK(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	// A user ceiling: the indexer's embeddings (the system's spend) do not count.
	s.admin.must(200, "PUT", "/api/v1/billing/budgets", map[string]any{"budgets": []any{map[string]any{"window": "DAILY", "credits": 1, "scope": "user"}}})
	run := m.runTSClient(t, httpTarget(s, "/mcp", s.adminToken), []call{
		{Tool: "search_metadata", Arguments: map[string]any{"query": "orders"}},
		{Tool: "search_metadata", Arguments: map[string]any{"query": "orders"}},
	})
	if run.Results[0].IsError || !run.Results[1].IsError || run.Results[1].Text == nil || !strings.Contains(*run.Results[1].Text, "429") {
		t.Fatalf("results = %v", run.Results)
	}
	src := s.admin.must(200, "GET", "/api/v1/billing/credits/breakdown/sources", nil)
	found := false
	for _, x := range list(src["sources"]) {
		found = found || str(object(x)["source"]) == "meridian-e2e-ts-sdk"
	}
	if !found {
		t.Errorf("sources = %v, want meridian-e2e-ts-sdk", src)
	}
	users := s.admin.must(200, "GET", "/api/v1/billing/mcp/usage/breakdown/users", nil)
	if u := object(list(users["users"])[0]); str(u["client"]) != "meridian-e2e-ts-sdk 1.0.0" || num(u["errors"]) != 1 {
		t.Errorf("users = %v", users)
	}
}

// TestBillingCreditAlertsAndDigestGoThroughTheNotifier: a credit alert fires once per
// threshold through the event subscriptions' notifier, to a signed webhook and to
// e-mail, and not again after a restart; the weekly digest e-mails the admins.
func TestBillingCreditAlertsAndDigestGoThroughTheNotifier(t *testing.T) {
	t.Parallel()
	sink := eventstest.NewSMTPSink(t)
	hook := eventstest.NewReceiver(t, "alert-secret")
	s := startServerWith(t, "--webhook-allowed-networks", "127.0.0.0/8,::1", "--smtp-host", sink.Host,
		"--smtp-port", strconv.Itoa(sink.Port), "--smtp-from", "catalog@example.com")
	got := s.admin.must(200, "PUT", "/api/v1/billing/creditAlert", map[string]any{
		"rules": []any{map[string]any{"type": "dailyCredits", "thresholds": []any{2, 1000000}}},
		"destinations": []any{
			map[string]any{"type": "Webhook", "config": map[string]any{"endpoint": hook.URL, "secretKey": "alert-secret"}},
			map[string]any{"type": "Email", "config": map[string]any{"receivers": []any{"ops@example.com"}}},
		}})
	if str(object(object(list(got["destinations"])[0])["config"])["secretKey"]) != "*********" {
		t.Errorf("the webhook secret is not masked: %v", got)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	for i := 0; i < 3; i++ {
		if status, res := mcpToolCall(hc, s.base, s.adminToken, "e2e/1", "search_metadata", map[string]any{"query": "x"}); status != 200 || res["isError"] == true {
			t.Fatalf("call: %d %v", status, res)
		}
	}
	events := hook.Wait(1, 15*time.Second)
	if len(events) != 1 || str(events[0]["rule"]) != "dailyCredits" || num(events[0]["threshold"]) != 2 || hook.BadSignatures() != 0 {
		t.Fatalf("webhook got %v (bad signatures %d)", events, hook.BadSignatures())
	}
	mails := sink.Wait(1, 15*time.Second)
	if len(mails) != 1 || mails[0].To[0] != "ops@example.com" || !strings.Contains(mails[0].Data, "dailyCredits") {
		t.Fatalf("mails = %+v", mails)
	}
	// After a crash and a restart, the crossed threshold does not fire again.
	s.crash()
	r := s.restart(t)
	if status, res := mcpToolCall(hc, r.base, r.adminToken, "e2e/1", "search_metadata", map[string]any{"query": "x"}); status != 200 || res["isError"] == true {
		t.Fatalf("call after restart: %d %v", status, res)
	}
	time.Sleep(2 * time.Second)
	if n := len(hook.Events()); n != 1 {
		t.Fatalf("the webhook got %d alerts after the restart, want still 1", n)
	}
	d := r.admin.must(200, "POST", "/api/v1/billing/weekly-impact/send-digest", nil)
	if rc := list(d["recipients"]); len(rc) != 1 || str(rc[0]) != "admin@meridian.local" || num(d["sent"]) != 1 {
		t.Fatalf("digest = %v", d)
	}
	mails = sink.Wait(2, 15*time.Second)
	if len(mails) != 2 || mails[1].To[0] != "admin@meridian.local" || !strings.Contains(mails[1].Data, "weekly AI credit impact") {
		t.Fatalf("digest mail = %+v", mails)
	}
}

// TestBillingMetersExecutionsAndSPARQLByOperation: the REST operations the price table
// names are metered by their operation id: an execution record created costs one
// credit, a SPARQL query three, and a refused one (400) nothing.
func TestBillingMetersExecutionsAndSPARQLByOperation(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.admin
	a.must(http.StatusCreated, "POST", "/api/v1/services/mcpServices", map[string]any{"name": "mcp", "serviceType": "Mcp"})
	server := a.must(http.StatusCreated, "POST", "/api/v1/mcpServers", map[string]any{"name": "files", "serverType": "FileSystem", "service": "mcp"})
	sid := str(server["id"])
	rec := map[string]any{"server": map[string]any{"id": sid, "type": "mcpServer"}, "serverId": sid,
		"timestamp": time.Now().UnixMilli(), "status": "Success"}
	a.must(http.StatusCreated, "POST", "/api/v1/mcpExecutions", rec)
	rec["status"] = "Done"
	expectError(t, a.do("POST", "/api/v1/mcpExecutions", rec, nil), http.StatusBadRequest, "")
	a.must(http.StatusOK, "GET", "/api/v1/rdf/sparql?query="+strings.ReplaceAll("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1", " ", "%20")+"&format=json", nil)
	apps := a.must(http.StatusOK, "GET", "/api/v1/billing/credits/apps", nil)
	got := map[string][2]float64{}
	for _, app := range list(apps["apps"]) {
		for _, x := range list(object(app)["actionsBreakdown"]) {
			o := object(x)
			got[str(o["action"])] = [2]float64{num(o["actions"]), num(o["credits"])}
		}
	}
	if got["createMcpExecution"] != [2]float64{2, 1} || got["sparqlQuery"] != [2]float64{1, 3} {
		t.Errorf("metered REST operations = %v", got)
	}
}

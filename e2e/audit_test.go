package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// auditEntries searches the audit log as admin.
func auditEntries(t *testing.T, s *server, query string) []map[string]any {
	t.Helper()
	page := s.admin.must(http.StatusOK, "GET", "/api/v1/audit/logs?limit=1000&"+query, nil)
	var out []map[string]any
	for _, e := range list(page["data"]) {
		out = append(out, object(e))
	}
	return out
}

// waitAudit polls the audit log until query finds at least n entries.
func waitAudit(t *testing.T, s *server, query string, n int) []map[string]any {
	t.Helper()
	var got []map[string]any
	eventually(t, 10*time.Second, "the audit log holds "+query, func() bool {
		got = auditEntries(t, s, query)
		return len(got) >= n
	})
	return got
}

// TestAuditLogRecordsWritesAndFailedLogins: a failed login (a bad token) and every
// write (REST, MCP, allowed or refused) appear in the audit log, with who, what, when
// and from where; the log is searchable, exportable as CSV and JSON, append-only, and
// admins only.
func TestAuditLogRecordsWritesAndFailedLogins(t *testing.T) {
	t.Parallel()
	s := startServerWith(t, "--trusted-proxies", "127.0.0.1")
	a := s.admin
	start := time.Now().UnixMilli()

	// A failed login: a token that does not verify.
	expectError(t, s.client(t, "not.a.token").do("GET", "/api/v1/tables", nil, nil), 401, "")
	fails := waitAudit(t, s, "kind=authFailure", 1)
	if f := fails[0]; f["status"] != float64(401) || f["outcome"] != "failure" || f["remoteAddr"] != "127.0.0.1" || f["path"] != "/api/v1/tables" {
		t.Fatalf("auth failure entry: %v", f)
	}

	// A REST write through a trusted proxy: the client address comes from X-Forwarded-For.
	r := a.do("POST", "/api/v1/glossaries", map[string]any{"name": "Audited", "description": "d"},
		map[string]string{"X-Forwarded-For": "198.51.100.23"})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %s", r)
	}
	id := str(r.obj(t)["id"])
	writes := waitAudit(t, s, "kind=write&source=rest&entityType=glossary", 1)
	w := writes[0]
	if w["userName"] != "admin" || w["method"] != "POST" || w["entityId"] != id || w["entityFullyQualifiedName"] != "Audited" ||
		w["remoteAddr"] != "198.51.100.23" || w["status"] != float64(201) || w["eventType"] != "entityCreated" || num(w["timestamp"]) < float64(start) || str(w["requestId"]) == "" {
		t.Fatalf("write entry: %v", w)
	}
	// The committed change is recorded from the outbox as well.
	changes := waitAudit(t, s, "kind=change&entityType=glossary", 1)
	if changes[0]["eventType"] != "entityCreated" || changes[0]["entityId"] != id || changes[0]["entityFullyQualifiedName"] != "Audited" {
		t.Fatalf("change entry: %v", changes[0])
	}

	// A refused write is recorded with its outcome.
	carol := s.user(t, "carol", "DataConsumer")
	expectError(t, carol.c.do("POST", "/api/v1/glossaries", map[string]any{"name": "Nope", "description": "d"}, nil), 403, "")
	refused := waitAudit(t, s, "userName=carol&kind=write", 1)
	if refused[0]["status"] != float64(403) || refused[0]["outcome"] != "failure" || str(refused[0]["message"]) == "" {
		t.Fatalf("refused write: %v", refused[0])
	}

	// An MCP write tool call.
	rpc := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_glossary","arguments":{"name":"ByMCP","description":"d"}}}`
	if r := a.do("POST", "/mcp", rpc, mcpHeaders()); r.status != http.StatusOK {
		t.Fatalf("MCP call: %s", r)
	}
	mcp := waitAudit(t, s, "source=mcp&kind=write", 1)
	if mcp[0]["path"] != "create_glossary" || mcp[0]["userName"] != "admin" || mcp[0]["remoteAddr"] != "127.0.0.1" {
		t.Fatalf("MCP entry: %v", mcp[0])
	}
	// An MCP authentication failure.
	s.client(t, "bad").do("POST", "/mcp", rpc, mcpHeaders())
	waitAudit(t, s, "source=mcp&kind=authFailure", 1)

	// Search: text (case-insensitive), user, time.
	if got := auditEntries(t, s, "q=AUDITED"); len(got) < 2 {
		t.Fatalf("text search found %d entries", len(got))
	}
	if got := auditEntries(t, s, "userName=nobody"); len(got) != 0 {
		t.Fatalf("unknown user found %v", got)
	}
	if got := auditEntries(t, s, "startTs=1&endTs=2"); len(got) != 0 {
		t.Fatalf("time window found %v", got)
	}
	expectError(t, a.do("GET", "/api/v1/audit/logs?kind=other", nil, nil), 400, "kind must be one of")
	expectError(t, a.do("GET", "/api/v1/audit/logs?q="+strings.Repeat("x", 300), nil, nil), 400, "longer than")

	// Export: CSV and JSON, streamed.
	csvResp := a.do("GET", "/api/v1/audit/logs/export?format=csv&entityType=glossary", nil, nil)
	if csvResp.status != http.StatusOK || !strings.HasPrefix(csvResp.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV export: %s", csvResp)
	}
	recs, err := csv.NewReader(bytes.NewReader(csvResp.raw)).ReadAll()
	if err != nil || len(recs) < 3 || recs[0][0] != "id" {
		t.Fatalf("CSV export: %v, %v", recs, err)
	}
	jsonResp := a.do("GET", "/api/v1/audit/logs/export?format=json&q="+url.QueryEscape("audited"), nil, nil)
	var all []map[string]any
	if err := json.Unmarshal(jsonResp.raw, &all); err != nil || len(all) < 2 {
		t.Fatalf("JSON export: %s, %v", jsonResp, err)
	}
	expectError(t, a.do("GET", "/api/v1/audit/logs/export?format=xml", nil, nil), 400, "format must be one of")

	// Admins only; append-only (no update or delete route).
	expectError(t, carol.c.do("GET", "/api/v1/audit/logs", nil, nil), 403, "")
	expectError(t, carol.c.do("GET", "/api/v1/audit/logs/export", nil, nil), 403, "")
	for _, m := range []string{"DELETE", "PUT", "PATCH", "POST"} {
		if r := a.do(m, "/api/v1/audit/logs", nil, nil); r.status != http.StatusMethodNotAllowed {
			t.Errorf("%s /api/v1/audit/logs: %s, want 405", m, r)
		}
	}
}

// TestCollabInputsWithNULAreClientErrors: a NUL character (which PostgreSQL's text and
// jsonb cannot hold) in a filter, a record or a written path is a 400 or is dropped from
// the audit entry, never a 500, and the audit log goes on recording afterwards.
func TestCollabInputsWithNULAreClientErrors(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.admin
	for _, path := range []string{"/api/v1/audit/logs?q=%00", "/api/v1/audit/logs?userName=a%00b", "/api/v1/activity?userName=%00",
		"/api/v1/activity/user/a%00", "/api/v1/audit/logs/export?q=%00"} {
		expectError(t, a.do("GET", path, nil, nil), 400, "NUL")
	}
	a.must(http.StatusCreated, "POST", "/api/v1/services/mcpServices", map[string]any{"name": "mcp", "serviceType": "Mcp"})
	server := a.must(http.StatusCreated, "POST", "/api/v1/mcpServers", map[string]any{"name": "nul", "serverType": "Custom", "service": "mcp"})
	expectError(t, a.do("POST", "/api/v1/mcpExecutions", `{"server":{"type":"mcpServer"},"serverId":"`+str(server["id"])+
		`","timestamp":1767225600000,"status":"Running","executedBy":"a\u0000b"}`, nil), 400, "NUL")
	// A write to a path holding NUL is answered 4xx and audited without it.
	expectError(t, a.do("DELETE", "/api/v1/mcpExecutions/a%00b", nil, nil), 400, "")
	a.must(http.StatusCreated, "POST", "/api/v1/glossaries", map[string]any{"name": "AfterNUL", "description": "d"})
	got := waitAudit(t, s, "q=afternul&kind=write", 1)
	if got[0]["entityFullyQualifiedName"] != "AfterNUL" {
		t.Fatalf("entry after the NUL write: %v", got[0])
	}
	waitAudit(t, s, "q="+url.QueryEscape("/api/v1/mcpExecutions/ab"), 1)
}

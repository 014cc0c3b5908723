package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestExecutionRecordsFollowTheSpecification drives /api/v1/mcpExecutions and
// /api/v1/agentExecutions: create (the referenced server or agent must exist, the
// status enum holds), get, the time-window list (startTs and endTs together), limit,
// delete at a timestamp, soft and hard delete, and who may do what.
func TestExecutionRecordsFollowTheSpecification(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.admin
	a.must(http.StatusCreated, "POST", "/api/v1/services/mcpServices", map[string]any{"name": "mcp", "serviceType": "Mcp"})
	server := a.must(http.StatusCreated, "POST", "/api/v1/mcpServers", map[string]any{"name": "files", "serverType": "FileSystem", "service": "mcp"})
	agent := a.must(http.StatusCreated, "POST", "/api/v1/aiApplications", map[string]any{"name": "helper", "applicationType": "Agent"})
	sid, aid := str(server["id"]), str(agent["id"])
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	mcp := func(ts int64, status string) map[string]any {
		return map[string]any{"server": map[string]any{"id": sid, "type": "mcpServer"}, "serverId": sid, "timestamp": ts, "status": status,
			"executedBy": "ingestion-bot", "environment": "Production"}
	}

	// Create, with the server's reference filled in.
	var ids []string
	for i := range 6 { // one every 6 hours: 4 in the first day, 2 in the next
		rec := a.must(http.StatusCreated, "POST", "/api/v1/mcpExecutions", mcp(day+int64(i)*6*3600_000, "Success"))
		if object(rec["server"])["fullyQualifiedName"] != "mcp.files" {
			t.Fatalf("server reference not filled in: %v", rec)
		}
		ids = append(ids, str(rec["id"]))
	}
	got := a.must(http.StatusOK, "GET", "/api/v1/mcpExecutions/"+ids[0], nil)
	if got["status"] != "Success" || got["serverId"] != sid || got["environment"] != "Production" {
		t.Fatalf("get: %v", got)
	}

	// Validation and the referenced server.
	bad := mcp(day+1, "Done")
	expectError(t, a.do("POST", "/api/v1/mcpExecutions", bad, nil), 400, "status must be one of")
	noStatus := mcp(day+1, "")
	delete(noStatus, "status")
	expectError(t, a.do("POST", "/api/v1/mcpExecutions", noStatus, nil), 400, "status is required")
	missing := "0b6f7f4e-58a8-4f0e-9d0e-2c1f4c5a6b7d"
	ghost := mcp(day+1, "Running")
	ghost["serverId"], ghost["server"] = missing, map[string]any{"type": "mcpServer"}
	expectError(t, a.do("POST", "/api/v1/mcpExecutions", ghost, nil), 404, missing)
	expectError(t, a.do("POST", "/api/v1/mcpExecutions", mcp(day, "Failed"), nil), 409, "already exists")

	// The time window: both ends or neither.
	list := func(query string) map[string]any {
		return a.must(http.StatusOK, "GET", "/api/v1/mcpExecutions?serverId="+sid+query, nil)
	}
	oneDay := fmt.Sprintf("&startTs=%d&endTs=%d", day, day+86_400_000-1)
	if l := list(oneDay); len(list(oneDay)["data"].([]any)) != 4 || num(object(l["paging"])["total"]) != 4 {
		t.Fatalf("one day: %v", l)
	}
	if l := list(oneDay + "&limit=3"); len(l["data"].([]any)) != 3 || str(object(l["paging"])["after"]) == "" {
		t.Fatalf("limit 3: %v", l)
	} else {
		next := list(oneDay + "&limit=3&after=" + url.QueryEscape(str(object(l["paging"])["after"])))
		if len(next["data"].([]any)) != 1 {
			t.Fatalf("second page: %v", next)
		}
	}
	expectError(t, a.do("GET", fmt.Sprintf("/api/v1/mcpExecutions?serverId=%s&startTs=%d", sid, day), nil, nil), 400,
		"startTs and endTs must be supplied together")
	expectError(t, a.do("GET", fmt.Sprintf("/api/v1/mcpExecutions?serverId=%s&endTs=%d", sid, day), nil, nil), 400,
		"startTs and endTs must be supplied together")
	expectError(t, a.do("GET", "/api/v1/mcpExecutions?serverId="+sid+"&startTs=abc&endTs=1", nil, nil), 400, "startTs")

	// Who may do what: a data consumer reads but does not write.
	carol := s.user(t, "carol", "DataConsumer")
	carol.c.must(http.StatusOK, "GET", "/api/v1/mcpExecutions/"+ids[0], nil)
	carol.c.must(http.StatusOK, "GET", "/api/v1/mcpExecutions?serverId="+sid, nil)
	expectError(t, carol.c.do("POST", "/api/v1/mcpExecutions", mcp(day+7, "Running"), nil), 403, "")
	expectError(t, carol.c.do("DELETE", "/api/v1/mcpExecutions/"+ids[0], nil, nil), 403, "")
	expectError(t, carol.c.do("GET", "/api/v1/mcpExecutions", nil, nil), 403, "serverId is required")
	expectError(t, s.client(t, "").do("GET", "/api/v1/mcpExecutions?serverId="+sid, nil, nil), 401, "")

	// Delete at a timestamp, then soft and hard delete by id.
	a.must(http.StatusNoContent, "DELETE", fmt.Sprintf("/api/v1/mcpExecutions/%s/%d", sid, day+5*6*3600_000), nil)
	expectError(t, a.do("DELETE", fmt.Sprintf("/api/v1/mcpExecutions/%s/%d", sid, day+5*6*3600_000), nil, nil), 404, "")
	soft := a.must(http.StatusOK, "DELETE", "/api/v1/mcpExecutions/"+ids[0], nil)
	if soft["deleted"] != true {
		t.Fatalf("soft delete: %v", soft)
	}
	expectError(t, a.do("GET", "/api/v1/mcpExecutions/"+ids[0], nil, nil), 404, "")
	a.must(http.StatusOK, "GET", "/api/v1/mcpExecutions/"+ids[0]+"?include=all", nil)
	a.must(http.StatusNoContent, "DELETE", "/api/v1/mcpExecutions/"+ids[0]+"?hardDelete=true", nil)
	expectError(t, a.do("GET", "/api/v1/mcpExecutions/"+ids[0]+"?include=all", nil, nil), 404, "")
	if l := list(""); num(object(l["paging"])["total"]) != 4 {
		t.Fatalf("after deletes: %v", l)
	}

	// Agent executions: PartialSuccess, input and output, and the agent must exist.
	arec := a.must(http.StatusCreated, "POST", "/api/v1/agentExecutions", map[string]any{"agent": map[string]any{"type": "aiApplication"},
		"agentId": aid, "timestamp": day, "status": "PartialSuccess", "input": "q", "output": "a"})
	if object(arec["agent"])["name"] != "helper" || arec["output"] != "a" {
		t.Fatalf("agent execution: %v", arec)
	}
	expectError(t, a.do("POST", "/api/v1/agentExecutions", map[string]any{"agent": map[string]any{"type": "aiApplication"},
		"agentId": sid, "timestamp": day, "status": "Success"}, nil), 404, "")
	expectError(t, a.do("GET", fmt.Sprintf("/api/v1/agentExecutions?agentId=%s&startTs=%d", aid, day), nil, nil), 400,
		"startTs and endTs must be supplied together")
	al := a.must(http.StatusOK, "GET", fmt.Sprintf("/api/v1/agentExecutions?agentId=%s&startTs=%d&endTs=%d&limit=5", aid, day, day+1), nil)
	if len(al["data"].([]any)) != 1 {
		t.Fatalf("agent list: %v", al)
	}
	a.must(http.StatusNoContent, "DELETE", fmt.Sprintf("/api/v1/agentExecutions/%s/%d", aid, day), nil)

	// A hard-deleted server takes its records.
	if r := a.do("DELETE", "/api/v1/mcpServers/"+sid+"?hardDelete=true", nil, nil); r.status != http.StatusOK && r.status != http.StatusNoContent {
		t.Fatalf("hard delete of the server: %s", r)
	}
	expectError(t, a.do("GET", "/api/v1/mcpExecutions/"+ids[1], nil, nil), 404, "")
}

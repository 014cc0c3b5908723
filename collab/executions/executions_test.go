package executions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/executions"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// TestModule is the executions module's conformance suite, on every driver.
func TestModule(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"CreateFillsTheReferenceAndGetReadsIt", testCreateGet},
		{"CreateValidatesAgainstTheRecordSchema", testValidation},
		{"TheReferencedServerOrAgentMustExist", testParentMustExist},
		{"OneRecordPerParentAndTimestamp", testConflict},
		{"ListHonoursTheTimeWindowAndPages", testList},
		{"StartAndEndComeTogether", testWindowRule},
		{"SoftAndHardDeleteByID", testDelete},
		{"DeleteByParentAndTimestamp", testDeleteAt},
		{"PermissionsFollowTheParent", testPermissions},
		{"AHardDeletedServerTakesItsRecords", testOnRemove},
		{"AgentExecutionsKeepInputAndOutput", testAgent},
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, newFixture(t, open)) })
		}
	})
}

type fixture struct {
	t        *testing.T
	ctx      context.Context
	ents     *store.Entities
	svc      *executions.Service
	admin    *meridian.Principal
	consumer *meridian.Principal
	server   meridian.Entity
	agent    meridian.Entity
}

const base = int64(1_767_225_600_000) // 2026-01-01T00:00:00Z

func newFixture(t *testing.T, open drivertest.Open) *fixture {
	db := open(t, executions.Module())
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	ents := store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry(), Validator: v, Policy: policy{}})
	svc, err := executions.New(ents)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: context.Background(), ents: ents, svc: svc,
		admin:    &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}},
		consumer: &meridian.Principal{Name: "carol", ID: "8d3f0d5e-7c1a-4b8e-9f65-2a41c0b7e913", Roles: []string{meridian.RoleDataConsumer}}}
	f.create("mcpService", `{"name":"mcp","serviceType":"Mcp"}`)
	f.server = f.create("mcpServer", `{"name":"files","serverType":"FileSystem","service":"mcp"}`)
	f.agent = f.create("aiApplication", `{"name":"helper","applicationType":"Agent"}`)
	return f
}

// policy lets admins do everything and everyone else view only.
type policy struct{}

func (policy) Authorize(p *meridian.Principal, op store.Operation, _ *meridian.Kind, _ meridian.Entity, _ []meridian.EntityRef) error {
	if p.IsAdmin() || op == store.OpView {
		return nil
	}
	return meridian.Errorf(meridian.EForbidden, "Principal: %s operations [%s] not allowed", p.Name, op)
}

func (f *fixture) create(kind, body string) meridian.Entity {
	f.t.Helper()
	res, err := f.ents.Create(f.ctx, f.admin, kind, f.doc(body))
	if err != nil {
		f.t.Fatalf("create %s: %v", kind, err)
	}
	return res.Entity
}

func (f *fixture) doc(s string) meridian.Entity {
	f.t.Helper()
	var e meridian.Entity
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		f.t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return e
}

func (f *fixture) mcp(ts int64, status string) string {
	return fmt.Sprintf(`{"server":{"id":%q,"type":"mcpServer"},"serverId":%q,"timestamp":%d,"status":%q}`, f.server.ID(), f.server.ID(), ts, status)
}

func decode(t *testing.T, raw json.RawMessage) meridian.Entity {
	t.Helper()
	var e meridian.Entity
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("listed record %s: %v", raw, err)
	}
	return e
}

func wantCode(t *testing.T, err error, code, contains string) {
	t.Helper()
	if meridian.ErrorCode(err) != code {
		t.Fatalf("error = %v (%s), want %s", err, meridian.ErrorCode(err), code)
	}
	if !strings.Contains(meridian.ErrorMessage(err), contains) {
		t.Fatalf("message %q does not contain %q", meridian.ErrorMessage(err), contains)
	}
}

func testCreateGet(t *testing.T, f *fixture) {
	body := fmt.Sprintf(`{"server":{"type":"mcpServer"},"serverId":%q,"timestamp":%d,"endTimestamp":%d,"status":"Success","executedBy":"bot","environment":"Production","toolCalls":[{"name":"read"}]}`,
		f.server.ID(), base, base+1500)
	got, err := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(body))
	if err != nil {
		t.Fatal(err)
	}
	ref := got["server"].(map[string]any)
	if ref["id"] != f.server.ID() || ref["fullyQualifiedName"] != "mcp.files" || ref["name"] != "files" {
		t.Fatalf("server reference not filled in: %v", ref)
	}
	if got["durationMs"] != int64(1500) || got.ID() == "" {
		t.Fatalf("durationMs or id missing: %v", got)
	}
	read, err := f.svc.Get(f.ctx, f.consumer, executions.MCP, got.ID(), store.IncludeNonDeleted)
	if err != nil {
		t.Fatal(err)
	}
	if read["status"] != "Success" || read["environment"] != "Production" || read["deleted"] != false {
		t.Fatalf("read back %v", read)
	}
	if calls, _ := read["toolCalls"].([]any); len(calls) != 1 {
		t.Fatalf("nested records not kept: %v", read)
	}
	// The other series does not see it.
	_, err = f.svc.Get(f.ctx, f.admin, executions.Agent, got.ID(), store.IncludeAll)
	wantCode(t, err, meridian.ENotFound, "agentExecution instance for")
}

func testValidation(t *testing.T, f *fixture) {
	id := f.server.ID()
	cases := []struct{ body, want string }{
		{fmt.Sprintf(`{"server":{"type":"mcpServer"},"serverId":%q,"timestamp":%d}`, id, base), "status is required"},
		{fmt.Sprintf(`{"server":{"type":"mcpServer"},"serverId":%q,"timestamp":%d,"status":"Done"}`, id, base), "status must be one of"},
		{fmt.Sprintf(`{"server":{"type":"mcpServer"},"serverId":%q,"timestamp":%d,"status":"PartialSuccess"}`, id, base), "status must be one of"},
		{fmt.Sprintf(`{"serverId":%q,"timestamp":%d,"status":"Running"}`, id, base), "server is required"},
		{fmt.Sprintf(`{"server":{"type":"table"},"serverId":%q,"timestamp":%d,"status":"Running"}`, id, base), "server.type"},
		{fmt.Sprintf(`{"server":{"type":"mcpServer"},"serverId":"nope","timestamp":%d,"status":"Running"}`, base), "serverId"},
		{fmt.Sprintf(`{"server":{"type":"mcpServer"},"serverId":%q,"timestamp":12.5,"status":"Running"}`, id), "timestamp"},
		{fmt.Sprintf(`{"server":{"type":"mcpServer"},"serverId":%q,"timestamp":1700,"status":"Running"}`, id), "timestamp"},
		{fmt.Sprintf(`{"server":{"type":"mcpServer","id":"8d3f0d5e-7c1a-4b8e-9f65-2a41c0b7e913"},"serverId":%q,"timestamp":%d,"status":"Running"}`, id, base), "does not match serverId"},
		{fmt.Sprintf(`{"server":{"type":"mcpServer"},"serverId":%q,"timestamp":%d,"endTimestamp":%d,"status":"Failed"}`, id, base, base-1), "is before timestamp"},
	}
	for _, c := range cases {
		_, err := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(c.body))
		wantCode(t, err, meridian.EInvalid, c.want)
	}
	_, err := f.svc.Create(f.ctx, f.admin, executions.MCP, nil)
	wantCode(t, err, meridian.EInvalid, "JSON object")
	nul := f.doc(f.mcp(base, "Running"))
	nul["executedBy"] = "a\x00b"
	_, err = f.svc.Create(f.ctx, f.admin, executions.MCP, nul)
	wantCode(t, err, meridian.EInvalid, "NUL")
	nul = f.doc(f.mcp(base, "Running"))
	nul["toolCalls"] = []any{map[string]any{"na\x00me": 1}}
	_, err = f.svc.Create(f.ctx, f.admin, executions.MCP, nul)
	wantCode(t, err, meridian.EInvalid, "NUL")
}

func testParentMustExist(t *testing.T, f *fixture) {
	missing := "0b6f7f4e-58a8-4f0e-9d0e-2c1f4c5a6b7d"
	_, err := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(fmt.Sprintf(
		`{"server":{"type":"mcpServer"},"serverId":%q,"timestamp":%d,"status":"Running"}`, missing, base)))
	wantCode(t, err, meridian.ENotFound, missing)
	// An agent id is not a server.
	_, err = f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(fmt.Sprintf(
		`{"server":{"type":"mcpServer"},"serverId":%q,"timestamp":%d,"status":"Running"}`, f.agent.ID(), base)))
	wantCode(t, err, meridian.ENotFound, "")
}

func testConflict(t *testing.T, f *fixture) {
	if _, err := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(f.mcp(base, "Running"))); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(f.mcp(base, "Success")))
	wantCode(t, err, meridian.EConflict, "already exists")
	// The failed create wrote nothing.
	page, err := f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: f.server.ID()})
	if err != nil || page.Total != 1 || decode(t, page.Data[0])["status"] != "Running" {
		t.Fatalf("after conflict: %+v, %v", page, err)
	}
}

func testList(t *testing.T, f *fixture) {
	for i := range 25 {
		if _, err := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(f.mcp(base+int64(i)*1000, "Success"))); err != nil {
			t.Fatal(err)
		}
	}
	q := executions.ListQuery{ParentID: f.server.ID(), HasStart: true, HasEnd: true, Start: base + 5000, End: base + 19000, Limit: 4}
	var seen []int64
	for {
		page, err := f.svc.List(f.ctx, f.consumer, executions.MCP, q)
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 15 {
			t.Fatalf("total = %d, want 15", page.Total)
		}
		for _, raw := range page.Data {
			e := decode(t, raw)
			if e["deleted"] != false {
				t.Fatalf("listed record: %v", e)
			}
			ts, _ := e["timestamp"].(float64)
			seen = append(seen, int64(ts))
		}
		if page.After == "" {
			break
		}
		q.After = page.After
	}
	if len(seen) != 15 || seen[0] != base+19000 || seen[14] != base+5000 {
		t.Fatalf("pages = %v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] >= seen[i-1] {
			t.Fatalf("not newest first: %v", seen)
		}
	}
	page, err := f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: f.server.ID()})
	if err != nil || len(page.Data) != executions.DefaultLimit || page.Total != 25 {
		t.Fatalf("default page: %d rows, total %d, %v", len(page.Data), page.Total, err)
	}
	_, err = f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: f.server.ID(), Limit: executions.MaxLimit + 1})
	wantCode(t, err, meridian.EInvalid, "limit")
	_, err = f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: f.server.ID(), After: "!!"})
	wantCode(t, err, meridian.EInvalid, "cursor")
	_, err = f.svc.List(f.ctx, f.consumer, executions.MCP, executions.ListQuery{})
	wantCode(t, err, meridian.EForbidden, "serverId is required")
	all, err := f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{Limit: 100})
	if err != nil || all.Total != 25 {
		t.Fatalf("admin list of every server: %d, %v", all.Total, err)
	}
}

func testWindowRule(t *testing.T, f *fixture) {
	id := f.server.ID()
	_, err := f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: id, HasStart: true, Start: base})
	wantCode(t, err, meridian.EInvalid, "startTs and endTs must be supplied together: endTs is missing")
	_, err = f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: id, HasEnd: true, End: base})
	wantCode(t, err, meridian.EInvalid, "startTs and endTs must be supplied together: startTs is missing")
	_, err = f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: id, HasStart: true, HasEnd: true, Start: base + 1, End: base})
	wantCode(t, err, meridian.EInvalid, "is after endTs")
}

func testDelete(t *testing.T, f *fixture) {
	a, _ := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(f.mcp(base, "Running")))
	b, _ := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(f.mcp(base+1, "Failed")))
	soft, err := f.svc.Delete(f.ctx, f.admin, executions.MCP, a.ID(), false)
	if err != nil || soft["deleted"] != true {
		t.Fatalf("soft delete: %v, %v", soft, err)
	}
	_, err = f.svc.Get(f.ctx, f.admin, executions.MCP, a.ID(), store.IncludeNonDeleted)
	wantCode(t, err, meridian.ENotFound, "")
	if got, err := f.svc.Get(f.ctx, f.admin, executions.MCP, a.ID(), store.IncludeAll); err != nil || got["deleted"] != true {
		t.Fatalf("include=all: %v, %v", got, err)
	}
	page, _ := f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: f.server.ID()})
	if page.Total != 1 {
		t.Fatalf("soft-deleted record listed: %+v", page)
	}
	all, _ := f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: f.server.ID(), Include: store.IncludeDeleted})
	if all.Total != 1 || decode(t, all.Data[0])["deleted"] != true {
		t.Fatalf("include=deleted: %+v", all)
	}
	_, err = f.svc.Delete(f.ctx, f.admin, executions.MCP, a.ID(), false)
	wantCode(t, err, meridian.ENotFound, "")
	for _, id := range []string{a.ID(), b.ID()} {
		if _, err := f.svc.Delete(f.ctx, f.admin, executions.MCP, id, true); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.Get(f.ctx, f.admin, executions.MCP, id, store.IncludeAll)
		wantCode(t, err, meridian.ENotFound, "")
	}
}

func testDeleteAt(t *testing.T, f *fixture) {
	if _, err := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(f.mcp(base, "Running"))); err != nil {
		t.Fatal(err)
	}
	wantCode(t, f.svc.DeleteAt(f.ctx, f.admin, executions.MCP, f.server.ID(), base+1), meridian.ENotFound, "at timestamp")
	if err := f.svc.DeleteAt(f.ctx, f.admin, executions.MCP, f.server.ID(), base); err != nil {
		t.Fatal(err)
	}
	page, _ := f.svc.List(f.ctx, f.admin, executions.MCP, executions.ListQuery{ParentID: f.server.ID(), Include: store.IncludeAll})
	if page.Total != 0 {
		t.Fatalf("record left: %+v", page)
	}
	wantCode(t, f.svc.DeleteAt(f.ctx, f.admin, executions.MCP, "x", base), meridian.EInvalid, "UUID")
}

func testPermissions(t *testing.T, f *fixture) {
	_, err := f.svc.Create(f.ctx, f.consumer, executions.MCP, f.doc(f.mcp(base, "Running")))
	wantCode(t, err, meridian.EForbidden, "Edit")
	rec, err := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(f.mcp(base, "Running")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Delete(f.ctx, f.consumer, executions.MCP, rec.ID(), false)
	wantCode(t, err, meridian.EForbidden, "Delete")
	wantCode(t, f.svc.DeleteAt(f.ctx, f.consumer, executions.MCP, f.server.ID(), base), meridian.EForbidden, "HardDelete")
}

func testOnRemove(t *testing.T, f *fixture) {
	rec, err := f.svc.Create(f.ctx, f.admin, executions.MCP, f.doc(f.mcp(base, "Running")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ents.Delete(f.ctx, f.admin, "mcpServer", store.ByID(f.server.ID()), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Get(f.ctx, f.admin, executions.MCP, rec.ID(), store.IncludeAll)
	wantCode(t, err, meridian.ENotFound, "")
}

func testAgent(t *testing.T, f *fixture) {
	body := fmt.Sprintf(`{"agent":{"type":"aiApplication"},"agentId":%q,"timestamp":%d,"status":"PartialSuccess","input":"hi","output":"hello"}`, f.agent.ID(), base)
	got, err := f.svc.Create(f.ctx, f.admin, executions.Agent, f.doc(body))
	if err != nil {
		t.Fatal(err)
	}
	if got["agent"].(map[string]any)["name"] != "helper" || got["output"] != "hello" {
		t.Fatalf("agent execution: %v", got)
	}
	_, err = f.svc.Create(f.ctx, f.admin, executions.Agent, f.doc(fmt.Sprintf(
		`{"agent":{"type":"mcpServer"},"agentId":%q,"timestamp":%d,"status":"Success"}`, f.agent.ID(), base+1)))
	wantCode(t, err, meridian.EInvalid, "agent.type")
	page, err := f.svc.List(f.ctx, f.consumer, executions.Agent, executions.ListQuery{ParentID: f.agent.ID(),
		HasStart: true, HasEnd: true, Start: base, End: base + 86_400_000})
	if err != nil || page.Total != 1 {
		t.Fatalf("agent list: %+v, %v", page, err)
	}
}

package e2e

// Tasks and suggestions, black box: the specification's flows (accept is apply then
// resolve, reject is a rejecting resolution, accept-all and reject-all are bulk), the
// creator-cannot-approve rule, the task operations' 403s, task versions, lists with
// startTs/endTs, and the OpenAPI document listing every task and feed endpoint.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// taskWorld is a server with table svc.db.sch.orders (columns id, note) owned by bob,
// and users alice, bob, carol (DataConsumer) and nobody (no role).
type taskWorld struct {
	s                         *server
	alice, bob, carol, nobody *principal
	tableID, link             string
}

func newTaskWorld(t *testing.T) *taskWorld {
	s := startServer(t)
	// nobody exists before its token, so it keeps no role.
	s.admin.must(http.StatusCreated, "POST", "/api/v1/users", map[string]any{"name": "nobody", "email": "nobody@example.com"})
	w := &taskWorld{s: s, alice: s.user(t, "alice", "DataConsumer"), bob: s.user(t, "bob", "DataConsumer"),
		carol: s.user(t, "carol", "DataConsumer"), nobody: s.user(t, "nobody", "")}
	if roles := list(w.nobody.c.must(http.StatusOK, "GET", "/api/v1/users/me?fields=roles", nil)["roles"]); len(roles) != 0 {
		t.Fatalf("nobody has roles %v", roles)
	}
	schemaFQN, _ := hierarchy(t, s.admin, "svc", "db", "sch")
	tbl := table(t, s.admin, schemaFQN, "orders", map[string]any{"owners": []any{map[string]any{"id": w.bob.id, "type": "user"}}})
	w.tableID = str(tbl["id"])
	w.link = "<#E::table::" + str(tbl["fullyQualifiedName"]) + ">"
	return w
}

// suggest creates, as p, a description suggestion for column note assigned to the users.
func (w *taskWorld) suggest(t *testing.T, p *client, value string, assignees ...string) map[string]any {
	t.Helper()
	a := []any{}
	for _, x := range assignees {
		a = append(a, x)
	}
	return p.must(http.StatusCreated, "POST", "/api/v1/tasks", map[string]any{"type": "Suggestion", "about": w.link, "assignees": a,
		"payload": map[string]any{"fieldPath": "columns.note.description", "suggestionType": "SuggestDescription", "suggestedValue": value}})
}

func (w *taskWorld) table(t *testing.T) map[string]any {
	return w.s.admin.must(http.StatusOK, "GET", "/api/v1/tables/"+w.tableID, nil)
}

func noteDescription(tbl map[string]any) any {
	for _, c := range list(tbl["columns"]) {
		if object(c)["name"] == "note" {
			return object(c)["description"]
		}
	}
	return nil
}

func TestSuggestionAcceptAppliesThenResolvesAndRejectChangesNothing(t *testing.T) {
	t.Parallel()
	w := newTaskWorld(t)
	task := w.suggest(t, w.alice.c, "Free text from the customer.", "bob")
	if task["name"] != "TASK-00001" || task["status"] != "Open" || object(task["createdBy"])["name"] != "alice" || task["category"] != "MetadataUpdate" {
		t.Fatalf("created task: %v", task)
	}
	id := str(task["id"])
	done := w.bob.c.must(http.StatusOK, "PUT", "/api/v1/tasks/"+id+"/suggestion/apply", nil)
	if done["status"] != "Approved" || object(done["resolution"])["type"] != "Approved" {
		t.Fatalf("accepted task: %v", done)
	}
	tbl := w.table(t)
	wantVersion(t, tbl, 0.2)
	if noteDescription(tbl) != "Free text from the customer." {
		t.Fatalf("note description = %v", noteDescription(tbl))
	}
	summary := object(object(tbl["changeDescription"])["changeSummary"])
	named := false
	for _, v := range summary {
		if object(object(v)["task"])["id"] == id {
			named = true
		}
	}
	if !named {
		t.Fatalf("the table's change description does not name the task: %v", tbl["changeDescription"])
	}

	// Reject: resolve with a rejecting resolution; the table stays as it is.
	other := w.suggest(t, w.alice.c, "Wrong.", "bob")
	rejected := w.bob.c.must(http.StatusOK, "POST", "/api/v1/tasks/"+str(other["id"])+"/resolve",
		map[string]any{"resolutionType": "Rejected", "comment": "not accurate"})
	if rejected["status"] != "Rejected" {
		t.Fatalf("rejected task: %v", rejected)
	}
	wantVersion(t, w.table(t), 0.2)
	expectError(t, w.bob.c.do("POST", "/api/v1/tasks/"+str(other["id"])+"/resolve", nil, nil), 400, "already Rejected")

	// Versions: created 0.1, claimed while applying 0.2 (InProgress), resolved 0.3.
	h := w.alice.c.must(http.StatusOK, "GET", "/api/v1/tasks/"+id+"/versions", nil)
	if h["entityType"] != "task" || len(list(h["versions"])) != 3 {
		t.Fatalf("versions: %v", h)
	}
	v1 := w.alice.c.must(http.StatusOK, "GET", "/api/v1/tasks/"+id+"/versions/0.1", nil)
	if v1["status"] != "Open" {
		t.Fatalf("version 0.1 status = %v", v1["status"])
	}
	// The change events name the task types.
	ev := w.s.admin.must(http.StatusOK, "GET", "/api/v1/events?entityType=task", nil)
	var types []string
	for _, e := range list(ev["data"]) {
		types = append(types, str(object(e)["eventType"]))
	}
	if !strings.Contains(strings.Join(types, ","), "taskCreated") || !strings.Contains(strings.Join(types, ","), "taskUpdated") {
		t.Fatalf("task events = %v", types)
	}
}

func TestTaskCreatorCannotApproveTheirOwnTask(t *testing.T) {
	t.Parallel()
	w := newTaskWorld(t)
	own := w.suggest(t, w.alice.c, "Mine.", "alice")
	id := str(own["id"])
	expectError(t, w.alice.c.do("PUT", "/api/v1/tasks/"+id+"/suggestion/apply", nil, nil), 403, "creator")
	expectError(t, w.alice.c.do("POST", "/api/v1/tasks/"+id+"/resolve", map[string]any{"resolutionType": "Approved"}, nil), 403, "creator")
	expectError(t, w.alice.c.do("PATCH", "/api/v1/tasks/"+id, ops(patchOp("replace", "/status", "Approved"),
		patchOp("add", "/resolution", map[string]any{"type": "Approved"})), nil), 403, "")
	// Even an admin who created the task.
	mine := w.suggest(t, w.s.admin, "Admin's.", "admin")
	expectError(t, w.s.admin.do("PUT", "/api/v1/tasks/"+str(mine["id"])+"/suggestion/apply", nil, nil), 403, "creator")
	if noteDescription(w.table(t)) != nil {
		t.Fatal("a refused approval changed the table")
	}
	// The creator may still withdraw it.
	closed := w.alice.c.must(http.StatusOK, "POST", "/api/v1/tasks/"+id+"/close", map[string]any{"comment": "withdrawn"})
	if closed["status"] != "Cancelled" {
		t.Fatalf("closed: %v", closed)
	}
}

func TestTaskOperationsWithoutPolicyAre403(t *testing.T) {
	t.Parallel()
	w := newTaskWorld(t)
	body := map[string]any{"type": "Suggestion", "about": w.link, "assignees": []any{"bob"},
		"payload": map[string]any{"fieldPath": "description", "suggestionType": "SuggestDescription", "suggestedValue": "x"}}
	expectError(t, w.nobody.c.do("POST", "/api/v1/tasks", body, nil), 403, "CreateTask")
	expectError(t, w.nobody.c.do("PUT", "/api/v1/tasks", body, nil), 403, "CreateTask")
	task := w.suggest(t, w.alice.c, "x", "bob")
	id := str(task["id"])
	expectError(t, w.carol.c.do("POST", "/api/v1/tasks/"+id+"/resolve", map[string]any{"resolutionType": "Rejected"}, nil), 403, "ResolveTask")
	expectError(t, w.alice.c.do("POST", "/api/v1/tasks/"+id+"/resolve", map[string]any{"resolutionType": "Rejected"}, nil), 403, "ResolveTask")
	expectError(t, w.carol.c.do("POST", "/api/v1/tasks/"+id+"/close", nil, nil), 403, "CloseTask")
	expectError(t, w.carol.c.do("POST", "/api/v1/tasks/"+id+"/reassign", map[string]any{"assignees": []any{"carol"}}, nil), 403, "ReassignTask")
	expectError(t, w.carol.c.do("PATCH", "/api/v1/tasks/"+id, ops(patchOp("add", "/description", "x")), nil), 403, "EditTask")
	expectError(t, w.carol.c.do("PUT", "/api/v1/tasks/"+id+"/suggestion/apply", nil, nil), 403, "")
	// Assignees resolve; reassigning moves that right.
	w.bob.c.must(http.StatusOK, "POST", "/api/v1/tasks/"+id+"/reassign", map[string]any{"assignees": []any{"carol"}})
	expectError(t, w.bob.c.do("POST", "/api/v1/tasks/"+id+"/resolve", map[string]any{"resolutionType": "Rejected"}, nil), 403, "")
	w.carol.c.must(http.StatusOK, "POST", "/api/v1/tasks/"+id+"/resolve", map[string]any{"resolutionType": "Rejected"})
	// Bad input is 400, not a crash.
	expectError(t, w.alice.c.do("POST", "/api/v1/tasks", map[string]any{"type": "DataAccessRequest", "about": w.link,
		"payload": map[string]any{"accessType": "Read"}}, nil), 400, "justification")
	expectError(t, w.alice.c.do("POST", "/api/v1/tasks", map[string]any{"type": "Suggestion", "about": w.link,
		"payload": map[string]any{"fieldPath": `columns."unterminated.description`, "suggestionType": "SuggestDescription", "suggestedValue": "x"}}, nil), 400, "fieldPath")
	expectError(t, w.alice.c.do("POST", "/api/v1/tasks/"+id+"/resolve", map[string]any{"resolutionType": "Maybe"}, nil), 400, "resolutionType")
	expectError(t, w.alice.c.do("POST", "/api/v1/tasks/not-a-uuid/resolve", nil, nil), 400, "")
}

func TestTaskBulkAcceptAllAndRejectAll(t *testing.T) {
	t.Parallel()
	w := newTaskWorld(t)
	w.suggest(t, w.alice.c, "First.", "bob")
	w.s.admin.must(http.StatusCreated, "POST", "/api/v1/classifications", map[string]any{"name": "PII", "description": "Personal data"})
	w.s.admin.must(http.StatusCreated, "POST", "/api/v1/tags", map[string]any{"name": "Sensitive", "classification": "PII", "description": "Sensitive"})
	w.alice.c.must(http.StatusCreated, "POST", "/api/v1/tasks", map[string]any{"type": "Suggestion", "about": w.link, "assignees": []any{"bob"},
		"payload": map[string]any{"fieldPath": "columns.id.tags", "suggestionType": "SuggestTagLabel", "tagLabels": []any{map[string]any{"tagFQN": "PII.Sensitive"}}}})
	res := w.bob.c.must(http.StatusOK, "POST", "/api/v1/tasks/bulk", map[string]any{"operation": "Approve", "about": w.link})
	if num(res["numberOfRowsPassed"]) != 2 || num(res["numberOfRowsFailed"]) != 0 {
		t.Fatalf("accept-all: %v", res)
	}
	tbl := w.table(t)
	wantVersion(t, tbl, 0.3)
	if noteDescription(tbl) != "First." {
		t.Fatalf("note = %v", noteDescription(tbl))
	}
	a := w.suggest(t, w.alice.c, "Second.", "bob")
	b := w.suggest(t, w.alice.c, "Third.", "bob")
	res = w.bob.c.must(http.StatusOK, "POST", "/api/v1/tasks/bulk", map[string]any{"operation": "Reject", "about": w.link})
	if num(res["numberOfRowsPassed"]) != 2 {
		t.Fatalf("reject-all: %v", res)
	}
	wantVersion(t, w.table(t), 0.3)
	for _, task := range []map[string]any{a, b} {
		got := w.bob.c.must(http.StatusOK, "GET", "/api/v1/tasks/"+str(task["id"]), nil)
		if got["status"] != "Rejected" {
			t.Fatalf("status after reject-all = %v", got["status"])
		}
	}
	expectError(t, w.bob.c.do("POST", "/api/v1/tasks/bulk", map[string]any{"operation": "Explode"}, nil), 400, "operation")
	expectError(t, w.bob.c.do("POST", "/api/v1/tasks/bulk", map[string]any{"operation": "Approve"}, nil), 400, "")
}

func TestTaskListsFilterAndWindow(t *testing.T) {
	t.Parallel()
	w := newTaskWorld(t)
	w.suggest(t, w.alice.c, "a", "bob")
	w.suggest(t, w.alice.c, "b", "carol")
	w.alice.c.must(http.StatusCreated, "POST", "/api/v1/tasks", map[string]any{"type": "DataAccessRequest", "about": w.link,
		"payload": map[string]any{"accessType": "Read", "justification": "Quarterly report"}})
	count := func(path string, want int) {
		t.Helper()
		got := w.bob.c.must(http.StatusOK, "GET", path, nil)
		if len(list(got["data"])) != want {
			t.Fatalf("%s: %d tasks, want %d", path, len(list(got["data"])), want)
		}
	}
	future := time.Now().Add(time.Hour).UnixMilli()
	count("/api/v1/tasks", 3)
	count("/api/v1/tasks?type=Suggestion", 2)
	count("/api/v1/tasks?assignee=carol", 1)
	count("/api/v1/tasks?about="+esc(w.link), 3)
	count(fmt.Sprintf("/api/v1/tasks?startTs=%d", future), 0)
	count(fmt.Sprintf("/api/v1/tasks?startTs=1&endTs=%d&limit=2", future), 2)
	count("/api/v1/tasks/assigned", 1)
	count("/api/v1/tasks/created", 0)
	count("/api/v1/tasks/owned", 3)
	count("/api/v1/tasks/dataAccessRequests", 1)
	if c := w.alice.c.must(http.StatusOK, "GET", "/api/v1/tasks/count?createdBy=alice", nil); num(c["count"]) != 3 {
		t.Fatalf("count = %v", c)
	}
	expectError(t, w.bob.c.do("GET", fmt.Sprintf("/api/v1/tasks?startTs=%d&endTs=1", future), nil, nil), 400, "startTs")
	expectError(t, w.bob.c.do("GET", "/api/v1/tasks?startTs=yesterday", nil, nil), 400, "")
	expectError(t, w.bob.c.do("GET", "/api/v1/tasks?about=%3C%23E%3A%3A", nil, nil), 400, "")
}

func TestOpenAPIListsTheTaskAndFeedEndpoints(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	doc := s.client(t, "").must(http.StatusOK, "GET", "/api/v1/openapi.json", nil)
	paths := object(doc["paths"])
	want := map[string][]string{
		"/v1/tasks":                                             {"get", "post", "put"},
		"/v1/tasks/{id}":                                        {"get", "patch", "delete"},
		"/v1/tasks/name/{fqn}":                                  {"get"},
		"/v1/tasks/{id}/resolve":                                {"post"},
		"/v1/tasks/{id}/close":                                  {"post"},
		"/v1/tasks/{id}/reassign":                               {"post"},
		"/v1/tasks/{id}/suggestion/apply":                       {"put"},
		"/v1/tasks/{id}/comments":                               {"post"},
		"/v1/tasks/{id}/comments/{commentId}":                   {"patch", "delete"},
		"/v1/tasks/assigned":                                    {"get"},
		"/v1/tasks/created":                                     {"get"},
		"/v1/tasks/owned":                                       {"get"},
		"/v1/tasks/visible":                                     {"get"},
		"/v1/tasks/count":                                       {"get"},
		"/v1/tasks/dataAccessRequests":                          {"get"},
		"/v1/tasks/bulk":                                        {"post"},
		"/v1/tasks/{id}/versions":                               {"get"},
		"/v1/tasks/{id}/versions/{version}":                     {"get"},
		"/v1/taskFormSchemas":                                   {"get", "post", "put"},
		"/v1/feed":                                              {"get", "post"},
		"/v1/feed/{id}":                                         {"get", "delete"},
		"/v1/feed/{id}/posts":                                   {"get", "post"},
		"/v1/feed/{id}/reactions/{reactionType}":                {"put", "delete"},
		"/v1/feed/tasks/{taskId}":                               {"get"},
		"/v1/feed/tasks/{taskId}/resolve":                       {"put"},
		"/v1/feed/tasks/{taskId}/close":                         {"put"},
		"/v1/feed/{id}/posts/{postId}/reactions/{reactionType}": {"put", "delete"},
	}
	for path, methods := range want {
		item := object(paths[path])
		for _, m := range methods {
			if item[m] == nil {
				t.Errorf("the OpenAPI document has no %s %s", strings.ToUpper(m), path)
			}
		}
	}
}

// TestTaskAssignedToATeamIsResolvedByAMember: a task assigned to a team is in each
// member's assigned list and a member resolves it, as the memberships say when the
// token is checked: carol joins after her token was issued and is seen at once; dave,
// outside the team, is refused.
func TestTaskAssignedToATeamIsResolvedByAMember(t *testing.T) {
	t.Parallel()
	w := newTaskWorld(t)
	dave := w.s.user(t, "dave", "DataConsumer")
	team := w.s.admin.must(http.StatusCreated, "POST", "/api/v1/teams", map[string]any{"name": "stewards", "teamType": "Group"})
	task := w.alice.c.must(http.StatusCreated, "POST", "/api/v1/tasks", map[string]any{"type": "CustomTask", "about": w.link,
		"assignees": []any{"bob"}, "description": "Review the orders table."})
	id := str(task["id"])
	w.alice.c.must(http.StatusOK, "PATCH", "/api/v1/tasks/"+id, ops(patchOp("replace", "/assignees",
		[]any{map[string]any{"type": "team", "id": str(team["id"])}})))
	assigned := func(c *client) int {
		return len(list(c.must(http.StatusOK, "GET", "/api/v1/tasks/assigned", nil)["data"]))
	}
	if n := assigned(w.carol.c); n != 0 {
		t.Fatalf("carol sees %d assigned tasks before joining", n)
	}
	expectError(t, w.carol.c.do("POST", "/api/v1/tasks/"+id+"/resolve", map[string]any{"resolutionType": "Approved"}, nil), 403, "")
	w.s.admin.must(http.StatusOK, "PATCH", "/api/v1/teams/"+str(team["id"]), ops(patchOp("add", "/users",
		[]any{map[string]any{"id": w.carol.id, "type": "user"}})))
	if n := assigned(w.carol.c); n != 1 {
		t.Fatalf("carol, a member, sees %d assigned tasks, want 1", n)
	}
	if n := assigned(dave.c); n != 0 {
		t.Fatalf("dave sees %d", n)
	}
	expectError(t, dave.c.do("POST", "/api/v1/tasks/"+id+"/resolve", map[string]any{"resolutionType": "Approved"}, nil), 403, "")
	resolved := w.carol.c.must(http.StatusOK, "POST", "/api/v1/tasks/"+id+"/resolve", map[string]any{"resolutionType": "Approved"})
	if resolved["status"] != "Approved" {
		t.Fatalf("resolved: %v", resolved["status"])
	}
}

package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/collab/tasks"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// TestModule is the tasks module's conformance suite: tasks over the engine and the
// feed threads in the module's tables, on every driver.
func TestModule(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"AcceptingASuggestionAppliesItThenResolves", testAcceptSuggestion},
		{"RejectingASuggestionChangesNothing", testRejectSuggestion},
		{"AFailedApplyGivesTheTaskBack", testFailedApplyGivesTheTaskBack},
		{"ConcurrentResolvesApplyOnce", testConcurrentResolvesApplyOnce},
		{"AClaimHoldsOffOtherResolves", testAClaimHoldsOffPatches},
		{"TheCreatorNeverApprovesTheirOwnTask", testCreatorCannotApprove},
		{"TaskOperationsNeedTheirPolicy", testTaskPolicy},
		{"ATeamAssigneeStandsForItsMembers", testTeamAssignee},
		{"PayloadsAreTypedPerTaskType", testPayloads},
		{"TaskFormSchemasAreChecked", testTaskForms},
		{"ListsFilterAndWindow", testLists},
		{"BulkAcceptsAndRejectsAllOfAnEntitysSuggestions", testBulk},
		{"ReassignAndCommentsAreVersioned", testReassignAndComments},
		{"TaskWritesEmitTaskEvents", testTaskEvents},
		{"FeedConversationsPostsAndReactions", testFeedConversations},
		{"FeedRefusesAnnouncementsOtherTaskTypesAndBlankAbout", testFeedRefusals},
		{"FeedTaskThreadsResolveAndClose", testFeedTaskThreads},
		{"ThreadsAndAssigneesAreBounded", testThreadsAreBounded},
		{"AHardDeleteTakesTheThreads", testHardDeleteTakesThreads},
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, newFixture(t, open)) })
		}
	})
}

// fixture is an engine with the role policy over a fresh catalog with the tasks module,
// holding table svc.db.sch.orders (columns id, zip) owned by bob, tag PII.Sensitive,
// and users alice, bob, carol (DataConsumer) and nobody (no role).
type fixture struct {
	t                         *testing.T
	ctx                       context.Context
	ents                      *store.Entities
	svc                       *tasks.Service
	admin                     *meridian.Principal
	alice, bob, carol, nobody *meridian.Principal
	table                     meridian.Entity
}

func newFixture(t *testing.T, open drivertest.Open) *fixture {
	db := open(t, tasks.Module())
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	ents := store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry(), Validator: v, Policy: auth.Policy{}})
	f := &fixture{t: t, ctx: context.Background(), ents: ents, svc: tasks.New(ents, auth.Policy{}),
		admin: &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}}
	user := func(name string, roles ...string) *meridian.Principal {
		r := []any{}
		for _, x := range roles {
			r = append(r, x)
		}
		u := f.create("user", map[string]any{"name": name, "email": name + "@example.com", "roles": r})
		return &meridian.Principal{ID: u.ID(), Name: name, Roles: roles}
	}
	f.alice, f.bob, f.carol = user("alice", meridian.RoleDataConsumer), user("bob", meridian.RoleDataConsumer), user("carol", meridian.RoleDataConsumer)
	f.nobody = user("nobody")
	f.create("databaseService", map[string]any{"name": "svc", "serviceType": "Mysql"})
	f.create("database", map[string]any{"name": "db", "service": "svc"})
	f.create("databaseSchema", map[string]any{"name": "sch", "database": "svc.db"})
	f.table = f.create("table", f.doc(`{"name":"orders","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"INT"},{"name":"zip","dataType":"VARCHAR","dataLength":10}],
		"owners":[{"id":"`+f.bob.ID+`","type":"user"}]}`))
	f.create("classification", map[string]any{"name": "PII", "description": "Personal data"})
	f.create("tag", map[string]any{"name": "Sensitive", "classification": "PII", "description": "Sensitive"})
	return f
}

func (f *fixture) doc(s string) meridian.Entity {
	f.t.Helper()
	var e meridian.Entity
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		f.t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return e
}

func (f *fixture) create(kind string, body meridian.Entity) meridian.Entity {
	f.t.Helper()
	res, err := f.ents.Create(f.ctx, f.admin, kind, body)
	if err != nil {
		f.t.Fatalf("create %s: %v", kind, err)
	}
	return res.Entity
}

const orders = "<#E::table::svc.db.sch.orders>"

// suggest creates, as p, a description suggestion for column zip assigned to bob.
func (f *fixture) suggest(p *meridian.Principal, value string, assignees ...string) meridian.Entity {
	f.t.Helper()
	if len(assignees) == 0 {
		assignees = []string{"bob"}
	}
	res, err := f.svc.Create(f.ctx, p, f.suggestion(value, assignees...))
	if err != nil {
		f.t.Fatalf("create suggestion: %v", err)
	}
	return res.Entity
}

func (f *fixture) suggestion(value string, assignees ...string) meridian.Entity {
	a := []any{}
	for _, x := range assignees {
		a = append(a, x)
	}
	return meridian.Entity{"type": "Suggestion", "about": orders, "assignees": a,
		"payload": map[string]any{"fieldPath": "columns.zip.description", "suggestionType": "SuggestDescription", "suggestedValue": value}}
}

func (f *fixture) tableNow() meridian.Entity {
	f.t.Helper()
	e, err := f.ents.Get(f.ctx, f.admin, "table", store.ByID(f.table.ID()), store.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

func zipDescription(t meridian.Entity) any {
	for _, c := range t["columns"].([]any) {
		if m := c.(map[string]any); m["name"] == "zip" {
			return m["description"]
		}
	}
	return nil
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if meridian.ErrorCode(err) != code {
		t.Fatalf("got %v (%s), want %s", err, meridian.ErrorCode(err), code)
	}
}

func testAcceptSuggestion(t *testing.T, f *fixture) {
	task := f.suggest(f.alice, "The postal code.")
	if task.Name() != "TASK-00001" || task.String("status") != "Open" || task.String("category") != "MetadataUpdate" {
		t.Fatalf("new task: %v", task)
	}
	if cb := task["createdBy"].(map[string]any); cb["name"] != "alice" || cb["id"] != f.alice.ID {
		t.Fatalf("createdBy = %v", cb)
	}
	backdated, err := f.svc.Create(f.ctx, f.alice, meridian.Entity{"type": "CustomTask", "createdAt": float64(1),
		"createdBy": map[string]any{"id": f.bob.ID, "type": "user", "name": "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	if backdated.Entity["createdAt"] == float64(1) || backdated.Entity["createdBy"].(map[string]any)["name"] != "alice" {
		t.Fatalf("a body set createdAt or createdBy: %v %v", backdated.Entity["createdAt"], backdated.Entity["createdBy"])
	}
	if _, ok := task["assigneeNames"]; ok {
		t.Fatal("the hidden filter fields are answered")
	}
	done, err := f.svc.ApplySuggestion(f.ctx, f.bob, task.ID(), tasks.Resolution{})
	if err != nil {
		t.Fatal(err)
	}
	if done.String("status") != "Approved" || done.Version().String() != "0.3" { // Open, InProgress (claimed), Approved
		t.Fatalf("resolved task: status %s version %s", done.String("status"), done.Version())
	}
	res := done["resolution"].(map[string]any)
	if res["type"] != "Approved" || res["newValue"] != "The postal code." || res["resolvedBy"].(map[string]any)["name"] != "bob" {
		t.Fatalf("resolution = %v", res)
	}
	tbl := f.tableNow()
	if zipDescription(tbl) != "The postal code." || tbl.Version().String() != "0.2" {
		t.Fatalf("table: version %s zip %v", tbl.Version(), zipDescription(tbl))
	}
	cd := tbl["changeDescription"].(map[string]any)
	summary, _ := cd["changeSummary"].(map[string]any)
	found := false
	for _, v := range summary {
		m := v.(map[string]any)
		if task, _ := m["task"].(map[string]any); task != nil && task["id"] == done.ID() && m["changeSource"] == "Suggested" {
			found = true
		}
	}
	if !found {
		t.Fatalf("the table's change description does not name the task: %v", cd)
	}
	// A resolved task is done.
	_, err = f.svc.Resolve(f.ctx, f.bob, task.ID(), tasks.Resolution{Type: "Rejected"})
	wantCode(t, err, meridian.EInvalid)
	versions, err := f.ents.Versions(f.ctx, f.admin, meridian.KindTask, task.ID())
	if err != nil || len(versions) != 3 {
		t.Fatalf("task versions = %d, %v", len(versions), err)
	}
	if _, hidden := done["applying"]; hidden {
		t.Fatal("the claim is answered")
	}
}

func testFailedApplyGivesTheTaskBack(t *testing.T, f *fixture) {
	task := f.suggest(f.alice, "The postal code.")
	// The column goes away before the suggestion is accepted.
	if _, err := f.ents.Patch(f.ctx, f.admin, "table", store.ByID(f.table.ID()), []byte(`[{"op":"remove","path":"/columns/1"}]`), ""); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.ApplySuggestion(f.ctx, f.bob, task.ID(), tasks.Resolution{})
	wantCode(t, err, meridian.ENotFound)
	got, err := f.ents.Get(f.ctx, f.bob, meridian.KindTask, store.ByID(task.ID()), store.GetOptions{})
	if err != nil || got.String("status") != "Open" {
		t.Fatalf("task after a failed apply: %v, %v", got["status"], err)
	}
	// It can still be rejected.
	if _, err := f.svc.Resolve(f.ctx, f.bob, task.ID(), tasks.Resolution{Type: "Rejected"}); err != nil {
		t.Fatal(err)
	}
}

func testAClaimHoldsOffPatches(t *testing.T, f *fixture) {
	task := f.suggest(f.alice, "x")
	// A claim as an accept leaves it while applying (the service's claim is internal; an
	// admin PATCH sets the same marker here).
	if _, err := f.ents.Patch(f.ctx, f.admin, meridian.KindTask, store.ByID(task.ID()),
		[]byte(fmt.Sprintf(`[{"op":"replace","path":"/status","value":"InProgress"},{"op":"add","path":"/applying","value":{"by":"bob","at":%d}}]`, time.Now().UnixMilli())), ""); err != nil {
		t.Fatal(err)
	}
	_, err := f.ents.Patch(f.ctx, f.bob, meridian.KindTask, store.ByID(task.ID()),
		[]byte(`[{"op":"replace","path":"/status","value":"Rejected"},{"op":"add","path":"/resolution","value":{"type":"Rejected"}}]`), "")
	wantCode(t, err, meridian.EConflict)
	_, err = f.svc.Resolve(f.ctx, f.bob, task.ID(), tasks.Resolution{Type: "Rejected"})
	wantCode(t, err, meridian.EConflict)
}

func testConcurrentResolvesApplyOnce(t *testing.T, f *fixture) {
	task := f.suggest(f.alice, "Once.")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			typ := "Approved"
			if i%2 == 1 {
				typ = "Rejected"
			}
			_, errs[i] = f.svc.Resolve(f.ctx, f.bob, task.ID(), tasks.Resolution{Type: typ})
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		}
	}
	got, err := f.ents.Get(f.ctx, f.bob, meridian.KindTask, store.ByID(task.ID()), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tbl := f.tableNow()
	if ok != 1 {
		t.Fatalf("%d of 4 concurrent resolves succeeded: %v", ok, errs)
	}
	switch got.String("status") {
	case "Approved":
		if zipDescription(tbl) != "Once." {
			t.Fatalf("approved but the table says %v", zipDescription(tbl))
		}
	case "Rejected":
		if zipDescription(tbl) != nil {
			t.Fatalf("rejected but the table says %v", zipDescription(tbl))
		}
	default:
		t.Fatalf("status %s", got.String("status"))
	}
}

func testRejectSuggestion(t *testing.T, f *fixture) {
	task := f.suggest(f.alice, "Wrong.")
	done, err := f.svc.Resolve(f.ctx, f.bob, task.ID(), tasks.Resolution{Type: "Rejected", Comment: "no"})
	if err != nil {
		t.Fatal(err)
	}
	if done.String("status") != "Rejected" {
		t.Fatalf("status = %s", done.String("status"))
	}
	tbl := f.tableNow()
	if tbl.Version().String() != "0.1" || zipDescription(tbl) != nil {
		t.Fatalf("a rejected suggestion changed the table: version %s", tbl.Version())
	}
}

func testCreatorCannotApprove(t *testing.T, f *fixture) {
	// alice assigns her own suggestion to herself: policy lets an assignee resolve, the
	// rule still refuses the approval.
	own := f.suggest(f.alice, "Mine.", "alice")
	_, err := f.svc.ApplySuggestion(f.ctx, f.alice, own.ID(), tasks.Resolution{})
	wantCode(t, err, meridian.EForbidden)
	_, err = f.svc.Resolve(f.ctx, f.alice, own.ID(), tasks.Resolution{Type: "Completed"})
	wantCode(t, err, meridian.EForbidden)
	// Nor through a PATCH of the status.
	_, err = f.ents.Patch(f.ctx, f.alice, meridian.KindTask, store.ByID(own.ID()),
		[]byte(`[{"op":"replace","path":"/status","value":"Approved"},{"op":"add","path":"/resolution","value":{"type":"Approved"}}]`), "")
	wantCode(t, err, meridian.EForbidden)
	if zipDescription(f.tableNow()) != nil {
		t.Fatal("the refused approval changed the table")
	}
	// Admins do everything but approve their own task.
	adminOwn := f.suggest(f.admin, "Admin's.")
	_, err = f.svc.ApplySuggestion(f.ctx, f.admin, adminOwn.ID(), tasks.Resolution{})
	wantCode(t, err, meridian.EForbidden)
	if _, err := f.svc.Resolve(f.ctx, f.admin, adminOwn.ID(), tasks.Resolution{Type: "Rejected"}); err != nil {
		t.Fatalf("an admin rejects their own task: %v", err)
	}
	// The creator may withdraw (close) their task.
	if _, err := f.svc.Close(f.ctx, f.alice, own.ID(), "withdrawn"); err != nil {
		t.Fatalf("the creator closes: %v", err)
	}
}

func testTaskPolicy(t *testing.T, f *fixture) {
	_, err := f.svc.Create(f.ctx, f.nobody, f.suggestion("x"))
	wantCode(t, err, meridian.EForbidden)
	ro := &meridian.Principal{ID: f.alice.ID, Name: "alice", Roles: f.alice.Roles, Scopes: []string{meridian.ScopeRead}}
	_, err = f.svc.Create(f.ctx, ro, f.suggestion("x"))
	wantCode(t, err, meridian.EForbidden)
	task := f.suggest(f.alice, "x")
	// carol is neither creator nor assignee.
	_, err = f.svc.Resolve(f.ctx, f.carol, task.ID(), tasks.Resolution{Type: "Rejected"})
	wantCode(t, err, meridian.EForbidden)
	_, err = f.svc.Close(f.ctx, f.carol, task.ID(), "")
	wantCode(t, err, meridian.EForbidden)
	_, err = f.svc.Reassign(f.ctx, f.carol, task.ID(), []any{"carol"})
	wantCode(t, err, meridian.EForbidden)
	_, err = f.ents.Patch(f.ctx, f.carol, meridian.KindTask, store.ByID(task.ID()), []byte(`[{"op":"add","path":"/description","value":"x"}]`), "")
	wantCode(t, err, meridian.EForbidden)
	_, err = f.svc.AddComment(f.ctx, f.nobody, task.ID(), "hi")
	wantCode(t, err, meridian.EForbidden)
	// The creator may not resolve what is not assigned to them.
	_, err = f.svc.Resolve(f.ctx, f.alice, task.ID(), tasks.Resolution{Type: "Rejected"})
	wantCode(t, err, meridian.EForbidden)
	// The creator edits their task; an assignee too.
	if _, err := f.ents.Patch(f.ctx, f.alice, meridian.KindTask, store.ByID(task.ID()), []byte(`[{"op":"add","path":"/description","value":"please"}]`), ""); err != nil {
		t.Fatalf("creator edits: %v", err)
	}
	if _, err := f.svc.AddComment(f.ctx, f.bob, task.ID(), "looking"); err != nil {
		t.Fatalf("assignee comments: %v", err)
	}
	// A PATCH cannot move the status of someone else's assignment either.
	_, err = f.ents.Patch(f.ctx, f.alice, meridian.KindTask, store.ByID(task.ID()),
		[]byte(`[{"op":"replace","path":"/assignees","value":["alice"]}]`), "")
	if err != nil {
		t.Fatalf("the creator may reassign: %v", err)
	}
	_, err = f.ents.Patch(f.ctx, f.bob, meridian.KindTask, store.ByID(task.ID()), []byte(`[{"op":"replace","path":"/status","value":"Rejected"}]`), "")
	wantCode(t, err, meridian.EForbidden) // bob is no longer an assignee nor creator: no EditTask
}

func testPayloads(t *testing.T, f *fixture) {
	cases := []struct {
		name string
		body string
		code string
	}{
		{"data access request without justification", `{"type":"DataAccessRequest","about":"` + orders + `","payload":{"accessType":"Read"}}`, meridian.EInvalid},
		{"data access request with an unknown field", `{"type":"DataAccessRequest","about":"` + orders + `","payload":{"accessType":"Read","justification":"x","extra":1}}`, meridian.EInvalid},
		{"suggestion without fieldPath", `{"type":"Suggestion","about":"` + orders + `","payload":{"suggestionType":"SuggestDescription","suggestedValue":"x"}}`, meridian.EInvalid},
		{"tag suggestion without labels", `{"type":"Suggestion","about":"` + orders + `","payload":{"fieldPath":"tags","suggestionType":"SuggestTagLabel"}}`, meridian.EInvalid},
		{"suggestion with a bad fieldPath", `{"type":"Suggestion","about":"` + orders + `","payload":{"fieldPath":"columns..description","suggestionType":"SuggestDescription","suggestedValue":"x"}}`, meridian.EInvalid},
		{"suggestion for a missing column", `{"type":"Suggestion","about":"` + orders + `","payload":{"fieldPath":"columns.nope.description","suggestionType":"SuggestDescription","suggestedValue":"x"}}`, meridian.ENotFound},
		{"suggestion about nothing", `{"type":"Suggestion","payload":{"fieldPath":"description","suggestionType":"SuggestDescription","suggestedValue":"x"}}`, meridian.EInvalid},
		{"about a missing entity", `{"type":"Suggestion","about":"<#E::table::svc.db.sch.nope>","payload":{"fieldPath":"description","suggestionType":"SuggestDescription","suggestedValue":"x"}}`, meridian.ENotFound},
		{"an unknown type", `{"type":"Whatever"}`, meridian.EInvalid},
		{"an unknown assignee", `{"type":"CustomTask","assignees":["zed"]}`, meridian.ENotFound},
		{"an unknown team assignee", `{"type":"CustomTask","assignees":[{"type":"team","name":"x"}]}`, meridian.ENotFound},
		{"a glossary assignee", `{"type":"CustomTask","assignees":[{"type":"glossary","name":"x"}]}`, meridian.EInvalid},
		{"created resolved", `{"type":"CustomTask","status":"Approved"}`, meridian.EInvalid},
		{"glossary approval with a bad status", `{"type":"GlossaryApproval","about":"` + orders + `","payload":{"proposedStatus":"Maybe"}}`, meridian.EInvalid},
		{"incident with a bad severity", `{"type":"IncidentResolution","payload":{"severity":"Severity9"}}`, meridian.EInvalid},
		{"ownership update without newOwners", `{"type":"OwnershipUpdate","about":"` + orders + `","payload":{}}`, meridian.EInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.Create(f.ctx, f.alice, f.doc(tc.body))
			wantCode(t, err, tc.code)
		})
	}
	ok := []string{
		`{"type":"DataAccessRequest","about":"` + orders + `","payload":{"accessType":"Read","justification":"Quarterly report"}}`,
		`{"type":"TagUpdate","about":"` + orders + `","payload":{"fieldPath":"columns.zip.tags","tagsToAdd":[{"tagFQN":"PII.Sensitive"}]}}`,
		`{"type":"CustomTask","payload":{"anything":[1,2]}}`,
		`{"type":"TestCaseResolution","payload":{"testCaseResolutionStatusType":"Ack"}}`,
	}
	for _, b := range ok {
		if _, err := f.svc.Create(f.ctx, f.alice, f.doc(b)); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
}

func testTaskForms(t *testing.T, f *fixture) {
	form := f.create(meridian.KindTaskFormSchema, f.doc(`{"name":"dar_form","taskType":"DataAccessRequest","formSchema":{"type":"object"}}`))
	body := func(extra string) meridian.Entity {
		return f.doc(`{"type":"DataAccessRequest","about":"` + orders + `","payload":{"accessType":"Read","justification":"x"}` + extra + `}`)
	}
	if _, err := f.svc.Create(f.ctx, f.alice, body(`,"taskFormSchemaId":"`+form.ID()+`","taskFormSchemaVersion":0.1`)); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.Create(f.ctx, f.alice, body(`,"taskFormSchemaId":"`+form.ID()+`","taskFormSchemaVersion":0.5`))
	wantCode(t, err, meridian.EInvalid)
	_, err = f.svc.Create(f.ctx, f.alice, body(`,"taskFormSchemaId":"0b5cf3e3-0000-4000-8000-000000000000"`))
	wantCode(t, err, meridian.EInvalid)
	_, err = f.svc.Create(f.ctx, f.alice, f.doc(`{"type":"CustomTask","taskFormSchemaId":"`+form.ID()+`"}`))
	wantCode(t, err, meridian.EInvalid) // a form for another task type
	_, err = f.svc.Create(f.ctx, f.alice, body(`,"taskFormSchemaVersion":0.1`))
	wantCode(t, err, meridian.EInvalid)
}

func testLists(t *testing.T, f *fixture) {
	a := f.suggest(f.alice, "a")
	f.suggest(f.alice, "b", "carol")
	if _, err := f.svc.Create(f.ctx, f.alice, f.doc(`{"type":"DataAccessRequest","about":"`+orders+`","payload":{"accessType":"Read","justification":"x"}}`)); err != nil {
		t.Fatal(err)
	}
	count := func(q tasks.Query, want int) {
		t.Helper()
		page, err := f.svc.List(f.ctx, f.bob, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != want {
			t.Fatalf("%+v: %d tasks, want %d", q, len(page.Data), want)
		}
	}
	count(tasks.Query{}, 3)
	count(tasks.Query{Filters: map[string]string{"type": "Suggestion"}}, 2)
	count(tasks.Query{Filters: map[string]string{"assignee": "carol"}}, 1)
	count(tasks.Query{About: orders}, 3)
	count(tasks.Query{About: "svc.db.sch.other"}, 0)
	future := time.Now().Add(time.Hour).UnixMilli()
	count(tasks.Query{StartTs: future}, 0)
	count(tasks.Query{StartTs: 1, EndTs: future}, 3)
	count(tasks.Query{StartTs: 1, EndTs: future, Options: store.ListOptions{Limit: 2}}, 2)
	page, err := f.svc.List(f.ctx, f.bob, tasks.Query{StartTs: 1, EndTs: future, Options: store.ListOptions{Limit: 2}})
	if err != nil || page.After == "" {
		t.Fatalf("windowed page 1: after %q, %v", page.After, err)
	}
	next, err := f.svc.List(f.ctx, f.bob, tasks.Query{StartTs: 1, EndTs: future, Options: store.ListOptions{Limit: 2, After: page.After}})
	if err != nil || len(next.Data) != 1 || next.After != "" {
		t.Fatalf("windowed page 2: %d, after %q, %v", len(next.Data), next.After, err)
	}
	_, err = f.svc.List(f.ctx, f.bob, tasks.Query{StartTs: future, EndTs: 1})
	wantCode(t, err, meridian.EInvalid)
	mine, err := f.svc.Assigned(f.ctx, f.bob, tasks.Query{})
	if err != nil || len(mine.Data) != 1 || mine.Data[0].ID() != a.ID() {
		t.Fatalf("assigned to bob: %v, %v", mine.Data, err)
	}
	dar, err := f.svc.DataAccessRequests(f.ctx, f.bob, tasks.Query{})
	if err != nil || len(dar.Data) != 1 {
		t.Fatalf("data access requests: %d, %v", len(dar.Data), err)
	}
	owned, err := f.svc.Owned(f.ctx, f.bob, tasks.Query{}) // bob owns the table
	if err != nil || len(owned.Data) != 3 {
		t.Fatalf("owned by bob: %d, %v", len(owned.Data), err)
	}
	owned, err = f.svc.Owned(f.ctx, f.carol, tasks.Query{})
	if err != nil || len(owned.Data) != 0 {
		t.Fatalf("owned by carol: %d, %v", len(owned.Data), err)
	}
	n, err := f.svc.Count(f.ctx, f.bob, tasks.Query{Filters: map[string]string{"createdBy": "alice"}})
	if err != nil || n != 3 {
		t.Fatalf("count = %d, %v", n, err)
	}
}

func testBulk(t *testing.T, f *fixture) {
	f.suggest(f.alice, "one")
	tag, err := f.svc.Create(f.ctx, f.alice, f.doc(`{"type":"Suggestion","about":"`+orders+`","assignees":["bob"],
		"payload":{"fieldPath":"columns.id.tags","suggestionType":"SuggestTagLabel","tagLabels":[{"tagFQN":"PII.Sensitive"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	other := f.suggest(f.alice, "not bob's", "carol")
	res, err := f.svc.Bulk(f.ctx, f.bob, tasks.BulkRequest{Operation: tasks.BulkApprove, About: orders})
	if err != nil {
		t.Fatal(err)
	}
	if res.Processed != 3 || res.Passed != 2 || res.Failed != 1 || res.Failures[0].TaskID != other.ID() || res.Failures[0].Code != meridian.EForbidden {
		t.Fatalf("bulk approve: %+v", res)
	}
	tbl := f.tableNow()
	if zipDescription(tbl) != "one" || tbl.Version().String() != "0.3" {
		t.Fatalf("table after accept-all: version %s zip %v", tbl.Version(), zipDescription(tbl))
	}
	got, _ := f.ents.Get(f.ctx, f.bob, meridian.KindTask, store.ByID(tag.Entity.ID()), store.GetOptions{})
	if got.String("status") != "Approved" {
		t.Fatalf("tag suggestion status %s", got.String("status"))
	}
	// Reject-all by carol leaves the table alone.
	res, err = f.svc.Bulk(f.ctx, f.carol, tasks.BulkRequest{Operation: tasks.BulkReject, TaskIDs: []string{other.ID()}})
	if err != nil || res.Passed != 1 {
		t.Fatalf("bulk reject: %+v, %v", res, err)
	}
	if f.tableNow().Version().String() != "0.3" {
		t.Fatal("reject-all changed the table")
	}
	_, err = f.svc.Bulk(f.ctx, f.bob, tasks.BulkRequest{Operation: "Explode", About: orders})
	wantCode(t, err, meridian.EInvalid)
	_, err = f.svc.Bulk(f.ctx, f.bob, tasks.BulkRequest{Operation: tasks.BulkApprove, TaskIDs: make([]string, tasks.MaxBulkTasks+1)})
	wantCode(t, err, meridian.EInvalid)
}

func testReassignAndComments(t *testing.T, f *fixture) {
	task := f.suggest(f.alice, "x")
	got, err := f.svc.Reassign(f.ctx, f.bob, task.ID(), []any{"carol"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version().String() != "0.2" || got["assignees"].([]any)[0].(map[string]any)["name"] != "carol" {
		t.Fatalf("reassigned: %v", got["assignees"])
	}
	_, err = f.svc.Resolve(f.ctx, f.bob, task.ID(), tasks.Resolution{Type: "Rejected"})
	wantCode(t, err, meridian.EForbidden)
	got, err = f.svc.AddComment(f.ctx, f.carol, task.ID(), "on it")
	if err != nil {
		t.Fatal(err)
	}
	c := got["comments"].([]any)[0].(map[string]any)
	if got["commentCount"] != float64(1) || c["author"].(map[string]any)["name"] != "carol" {
		t.Fatalf("comment: %v", got["comments"])
	}
	_, err = f.svc.EditComment(f.ctx, f.alice, task.ID(), c["id"].(string), "hijack")
	wantCode(t, err, meridian.EForbidden)
	if _, err := f.svc.EditComment(f.ctx, f.carol, task.ID(), c["id"].(string), "done soon"); err != nil {
		t.Fatal(err)
	}
	got, err = f.svc.DeleteComment(f.ctx, f.carol, task.ID(), c["id"].(string))
	if err != nil || got["commentCount"] != float64(0) {
		t.Fatalf("delete comment: %v", err)
	}
	_, err = f.svc.AddComment(f.ctx, f.carol, task.ID(), "  ")
	wantCode(t, err, meridian.EInvalid)
}

func testTaskEvents(t *testing.T, f *fixture) {
	task := f.suggest(f.alice, "x")
	if _, err := f.svc.Resolve(f.ctx, f.bob, task.ID(), tasks.Resolution{Type: "Rejected"}); err != nil {
		t.Fatal(err)
	}
	page, err := f.ents.Events(f.ctx, f.admin, store.EventsOptions{EntityTypes: []string{meridian.KindTask}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range page.Data {
		types = append(types, e.EventType)
	}
	if len(types) != 2 || types[0] != meridian.EventTaskCreated || types[1] != meridian.EventTaskUpdated {
		t.Fatalf("task events = %v", types)
	}
}

func testFeedConversations(t *testing.T, f *fixture) {
	th, err := f.svc.CreateThread(f.ctx, f.alice, tasks.CreateThread{Message: "Is zip nullable?", About: orders + ""})
	if err != nil {
		t.Fatal(err)
	}
	if th.String("type") != "Conversation" || th["entityRef"].(map[string]any)["id"] != f.table.ID() {
		t.Fatalf("thread: %v", th)
	}
	th, err = f.svc.AddPost(f.ctx, f.bob, th.ID(), "Yes.")
	if err != nil || th["postsCount"] != float64(1) {
		t.Fatalf("post: %v", err)
	}
	post := th["posts"].([]any)[0].(map[string]any)["id"].(string)
	if _, err := f.svc.React(f.ctx, f.alice, th.ID(), "", "thumbsUp", true); err != nil {
		t.Fatal(err)
	}
	th, err = f.svc.React(f.ctx, f.alice, th.ID(), post, "heart", true)
	if err != nil || len(th["reactions"].([]any)) != 1 || len(th["posts"].([]any)[0].(map[string]any)["reactions"].([]any)) != 1 {
		t.Fatalf("reactions: %v %v", th, err)
	}
	th, err = f.svc.React(f.ctx, f.alice, th.ID(), "", "thumbsUp", false)
	if err != nil || len(th["reactions"].([]any)) != 0 {
		t.Fatalf("remove reaction: %v", err)
	}
	_, err = f.svc.React(f.ctx, f.alice, th.ID(), "", "shrug", true)
	wantCode(t, err, meridian.EInvalid)
	_, err = f.svc.DeletePost(f.ctx, f.alice, th.ID(), post)
	wantCode(t, err, meridian.EForbidden)
	second, err := f.svc.CreateThread(f.ctx, f.bob, tasks.CreateThread{Message: "Second", About: "<#E::table::svc.db.sch.orders::columns::zip>"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if _, err := f.svc.AddPost(f.ctx, f.alice, second.ID(), fmt.Sprintf("post %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	list, after, total, err := f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{Limit: 1})
	if err == nil && (len(list[0]["posts"].([]any)) != tasks.DefaultListPosts || list[0]["postsCount"] != float64(4) ||
		list[0]["posts"].([]any)[2].(map[string]any)["message"] != "post 3") {
		t.Fatalf("a listed thread answers its newest %d posts: %v", tasks.DefaultListPosts, list[0])
	}
	if l, _, _, err := f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{Limit: 1, LimitPosts: tasks.NoPosts}); err != nil || len(l[0]["posts"].([]any)) != 0 {
		t.Fatalf("limitPosts 0: %v", err)
	}
	_, _, _, err = f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{Limit: tasks.MaxThreadPage + 1})
	wantCode(t, err, meridian.EInvalid)
	list, after, total, err = f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{Limit: 1})
	if err != nil || total != 2 || len(list) != 1 || list[0].ID() != second.ID() || after == "" {
		t.Fatalf("page 1: %d of %d, after %q, %v", len(list), total, after, err)
	}
	list, after, _, err = f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{Limit: 1, After: after})
	if err != nil || len(list) != 1 || list[0].ID() != th.ID() || after != "" {
		t.Fatalf("page 2: %v, after %q, %v", list, after, err)
	}
	future := time.Now().Add(time.Hour).UnixMilli()
	list, _, total, err = f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{StartTs: future})
	if err != nil || len(list) != 0 || total != 0 {
		t.Fatalf("window: %d, %v", len(list), err)
	}
	list, _, _, err = f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{EntityLink: orders, EndTs: future})
	if err != nil || len(list) != 2 {
		t.Fatalf("about orders: %d, %v", len(list), err)
	}
	_, _, _, err = f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{After: "bm90IGEgY3Vyc29y"})
	wantCode(t, err, meridian.EInvalid)
	wantCode(t, f.svc.DeleteThread(f.ctx, f.bob, th.ID()), meridian.EForbidden)
	if err := f.svc.DeleteThread(f.ctx, f.alice, th.ID()); err != nil {
		t.Fatal(err)
	}
	// Every thread write is in the outbox, named by the FQN of the entity it is about.
	page, err := f.ents.Events(f.ctx, f.admin, store.EventsOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Data {
		if e.EntityType == tasks.ThreadEntityType && e.EntityID == th.ID() {
			if e.EntityFQN != "svc.db.sch.orders" {
				t.Errorf("thread event names %q", e.EntityFQN)
			}
			got = append(got, e.EventType)
		}
	}
	if want := "entityCreated entityUpdated entityUpdated entityUpdated entityUpdated entityDeleted"; strings.Join(got, " ") != want {
		t.Fatalf("thread events %v, want %s", got, want)
	}
	_, err = f.svc.GetThread(f.ctx, f.alice, th.ID())
	wantCode(t, err, meridian.ENotFound)
}

func testThreadsAreBounded(t *testing.T, f *fixture) {
	th, err := f.svc.CreateThread(f.ctx, f.alice, tasks.CreateThread{Message: "big", About: orders})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", tasks.MaxCommentBytes)
	for i := 0; ; i++ {
		_, err := f.svc.AddPost(f.ctx, f.alice, th.ID(), big)
		if err != nil {
			wantCode(t, err, meridian.EInvalid)
			if !strings.Contains(meridian.ErrorMessage(err), "full") {
				t.Fatalf("message %q", meridian.ErrorMessage(err))
			}
			break
		}
		if i > tasks.MaxThreadBytes/tasks.MaxCommentBytes {
			t.Fatal("a thread grows past its bound")
		}
	}
	_, err = f.svc.Create(f.ctx, f.alice, meridian.Entity{"type": "CustomTask", "assignees": make([]any, meridian.MaxTaskAssignees+1)})
	wantCode(t, err, meridian.EInvalid)
}

func testFeedRefusals(t *testing.T, f *fixture) {
	cases := []struct {
		name string
		c    tasks.CreateThread
		want string
	}{
		{"an announcement", tasks.CreateThread{Message: "m", About: orders, Type: "Announcement"}, tasks.AnnouncementsMoved},
		{"a blank about", tasks.CreateThread{Message: "m", About: "  "}, ""},
		{"a generic task", tasks.CreateThread{Message: "m", About: orders, Type: "Task",
			TaskDetails: &tasks.TaskDetails{Type: "Generic", Assignees: []any{"bob"}}}, ""},
		{"a suggestion task", tasks.CreateThread{Message: "m", About: orders, Type: "Task",
			TaskDetails: &tasks.TaskDetails{Type: "Suggestion", Assignees: []any{"bob"}}}, ""},
		{"a task without details", tasks.CreateThread{Message: "m", About: orders, Type: "Task"}, ""},
		{"details on a conversation", tasks.CreateThread{Message: "m", About: orders,
			TaskDetails: &tasks.TaskDetails{Type: "RequestDescription", Assignees: []any{"bob"}}}, ""},
		{"an approval about a column", tasks.CreateThread{Message: "m", About: "<#E::table::svc.db.sch.orders::columns::zip>", Type: "Task",
			TaskDetails: &tasks.TaskDetails{Type: "RequestApproval", Assignees: []any{"bob"}}}, ""},
		{"a tag task with a bad value", tasks.CreateThread{Message: "m", About: orders, Type: "Task",
			TaskDetails: &tasks.TaskDetails{Type: "UpdateTag", Assignees: []any{"bob"}, Suggestion: "PII.Sensitive"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.CreateThread(f.ctx, f.alice, tc.c)
			wantCode(t, err, meridian.EInvalid)
			if tc.want != "" && meridian.ErrorMessage(err) != tc.want {
				t.Fatalf("message %q, want %q", meridian.ErrorMessage(err), tc.want)
			}
		})
	}
	_, _, _, err := f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{Type: "Announcement"})
	wantCode(t, err, meridian.EInvalid)
	_, err = f.svc.CreateThread(f.ctx, f.nobody, tasks.CreateThread{Message: "m", About: orders, Type: "Task",
		TaskDetails: &tasks.TaskDetails{Type: "RequestDescription", Assignees: []any{"bob"}}})
	wantCode(t, err, meridian.EForbidden)
}

func testFeedTaskThreads(t *testing.T, f *fixture) {
	th, err := f.svc.CreateThread(f.ctx, f.alice, tasks.CreateThread{Message: "Describe zip", About: "<#E::table::svc.db.sch.orders::columns::zip::description>",
		Type: "Task", TaskDetails: &tasks.TaskDetails{Type: "RequestDescription", Assignees: []any{"bob"}, Suggestion: "Postal code"}})
	if err != nil {
		t.Fatal(err)
	}
	id := "1"
	if th["task"].(map[string]any)["id"] != float64(1) {
		t.Fatalf("task id %v", th["task"])
	}
	got, err := f.svc.GetTaskThread(f.ctx, f.bob, id)
	if err != nil || got.ID() != th.ID() {
		t.Fatalf("get task thread: %v", err)
	}
	_, err = f.svc.ResolveTaskThread(f.ctx, f.alice, id, tasks.ResolveThreadTask{})
	wantCode(t, err, meridian.EForbidden) // the creator, not an assignee
	_, err = f.svc.ResolveTaskThread(f.ctx, f.carol, id, tasks.ResolveThreadTask{})
	wantCode(t, err, meridian.EForbidden)
	done, err := f.svc.ResolveTaskThread(f.ctx, f.bob, id, tasks.ResolveThreadTask{NewValue: "The postal code"})
	if err != nil {
		t.Fatal(err)
	}
	if done["task"].(map[string]any)["status"] != "Closed" || zipDescription(f.tableNow()) != "The postal code" {
		t.Fatalf("resolved: %v, zip %v", done["task"], zipDescription(f.tableNow()))
	}
	_, err = f.svc.CloseTaskThread(f.ctx, f.bob, id, "")
	wantCode(t, err, meridian.EInvalid)
	page, err := f.ents.Events(f.ctx, f.admin, store.EventsOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range page.Data {
		if e.EntityID == th.ID() {
			types = append(types, e.EventType)
		}
	}
	if strings.Join(types, " ") != "taskCreated taskUpdated" {
		t.Fatalf("task thread events %v", types)
	}
	// Own task assigned to oneself: never approved by its creator, closed by them.
	own, err := f.svc.CreateThread(f.ctx, f.alice, tasks.CreateThread{Message: "Approve", About: orders,
		Type: "Task", TaskDetails: &tasks.TaskDetails{Type: "RequestApproval", Assignees: []any{"alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.ResolveTaskThread(f.ctx, f.alice, own.ID(), tasks.ResolveThreadTask{})
	wantCode(t, err, meridian.EForbidden)
	closed, err := f.svc.CloseTaskThread(f.ctx, f.alice, own.ID(), "never mind")
	if err != nil || closed["task"].(map[string]any)["status"] != "Closed" || closed["postsCount"] != float64(1) {
		t.Fatalf("close: %v", err)
	}
	list, _, _, err := f.svc.ListThreads(f.ctx, f.alice, tasks.ThreadQuery{Type: "Task", TaskStatus: "Closed"})
	if err != nil || len(list) != 2 {
		t.Fatalf("closed task threads: %d, %v", len(list), err)
	}
}

func testHardDeleteTakesThreads(t *testing.T, f *fixture) {
	th, err := f.svc.CreateThread(f.ctx, f.alice, tasks.CreateThread{Message: "m", About: orders})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ents.Delete(f.ctx, f.admin, "table", store.ByID(f.table.ID()), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.GetThread(f.ctx, f.alice, th.ID())
	wantCode(t, err, meridian.ENotFound)
}

// TestFeedCallsOnAnAnnouncementAre400: a kind that left the feed (announcements) makes
// any feed call naming one of its entities a 400 with the specification's message.
func TestFeedCallsOnAnAnnouncementAre400(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		db := open(t, tasks.Module())
		reg, err := meridian.NewRegistry(append(meridian.DefaultKinds(),
			&meridian.Kind{Name: "announcementLike", Collection: "announcementLikes", LeftTheFeed: true, SoftDelete: true})...)
		if err != nil {
			t.Fatal(err)
		}
		ents := store.New(store.Config{Driver: db, Registry: reg})
		svc := tasks.New(ents, nil)
		ctx := context.Background()
		admin := &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}
		res, err := ents.Create(ctx, admin, "announcementLike", meridian.Entity{"name": "maintenance"})
		if err != nil {
			t.Fatal(err)
		}
		id := res.Entity.ID()
		_, err = svc.GetThread(ctx, admin, id)
		if meridian.ErrorCode(err) != meridian.EInvalid || meridian.ErrorMessage(err) != tasks.AnnouncementsMoved {
			t.Fatalf("get: %v", err)
		}
		_, err = svc.AddPost(ctx, admin, id, "hi")
		wantCode(t, err, meridian.EInvalid)
		_, err = svc.React(ctx, admin, id, "", "heart", true)
		wantCode(t, err, meridian.EInvalid)
		wantCode(t, svc.DeleteThread(ctx, admin, id), meridian.EInvalid)
		_, err = svc.GetThread(ctx, admin, "8342c8eb-6762-4fd7-87c2-7450623d226f")
		wantCode(t, err, meridian.ENotFound)
	})
}

// testTeamAssignee: a task assigned to a team is resolved by a direct member (the
// principal's Teams, which the auth layer reads from the user's memberships) and is in
// that member's assigned list; a user outside the team can do neither.
func testTeamAssignee(t *testing.T, f *fixture) {
	team := f.create("team", map[string]any{"name": "stewards", "teamType": "Group", "users": []any{f.carol.ID}})
	carol := *f.carol
	carol.Teams = []string{team.ID()}
	created, err := f.svc.Create(f.ctx, f.alice, meridian.Entity{"type": "CustomTask",
		"assignees": []any{map[string]any{"type": "team", "name": "stewards"}, "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	task := created.Entity
	as := task["assignees"].([]any)
	if len(as) != 2 || as[0].(map[string]any)["type"] != meridian.KindTeam || as[0].(map[string]any)["id"] != team.ID() {
		t.Fatalf("assignees %v", as)
	}
	for _, hidden := range []string{"assigneeKeys", "assigneeNames"} {
		if _, ok := task[hidden]; ok {
			t.Errorf("%s answered", hidden)
		}
	}
	assigned := func(p *meridian.Principal) []string {
		t.Helper()
		page, err := f.svc.Assigned(f.ctx, p, tasks.Query{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range page.Data {
			ids = append(ids, e.ID())
		}
		return ids
	}
	if got := assigned(&carol); len(got) != 1 || got[0] != task.ID() {
		t.Errorf("carol's assigned list %v, want the team's task", got)
	}
	if got := assigned(f.bob); len(got) != 1 {
		t.Errorf("bob's assigned list %v, want his task", got)
	}
	if got := assigned(f.carol); len(got) != 0 {
		t.Errorf("carol without her teams sees %v", got)
	}
	_, err = f.svc.Resolve(f.ctx, f.carol, task.ID(), tasks.Resolution{Type: "Approved"})
	wantCode(t, err, meridian.EForbidden) // not a member as far as this principal says
	if _, err := f.svc.Resolve(f.ctx, &carol, task.ID(), tasks.Resolution{Type: "Approved"}); err != nil {
		t.Fatalf("a member of the assignee team resolves: %v", err)
	}
}

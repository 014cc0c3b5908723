package quality_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// TestModule is the quality module's conformance suite: the points table it owns, and
// test case results over the engine, on every driver.
func TestModule(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"PointsUpsertListAndGoWithTheEntity", testPoints},
		{"ResultsAreValidated", testResultsValidated},
		{"ResultsListNewestFirstWithinTheRange", testResultsList},
		{"LatestResultShowsOnReadsWithoutANewVersion", testLatestResult},
		{"SummariesCarryTheLatestStatus", testSummaries},
		{"AddingAResultNeedsEdit", testResultsNeedEdit},
		{"AHardDeleteTakesTheResults", testHardDelete},
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, newFixture(t, open)) })
		}
	})
}

// fixture is an engine over a fresh catalog opened with the quality module, holding
// table svc.db.sch.orders with test cases rows (a table test) and zip_not_null (a
// column test), and no results.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	db     store.Driver
	ents   *store.Entities
	admin  *meridian.Principal
	rows   meridian.Entity // the table test case
	column meridian.Entity // the column test case
}

func newFixture(t *testing.T, open drivertest.Open) *fixture {
	db := open(t, quality.Module())
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: context.Background(), db: db, admin: &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}},
		ents: store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry(), Validator: v})}
	if _, err := f.ents.SeedTestDefinitions(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.create("databaseService", `{"name":"svc","serviceType":"Mysql"}`)
	f.create("database", `{"name":"db","service":"svc"}`)
	f.create("databaseSchema", `{"name":"sch","database":"svc.db"}`)
	f.create("table", `{"name":"orders","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"INT"},{"name":"zip","dataType":"VARCHAR","dataLength":10}]}`)
	f.rows = f.create("testCase", `{"name":"rows","entityLink":"<#E::table::svc.db.sch.orders>","testDefinition":"tableRowCountToBeBetween",
		"parameterValues":[{"name":"minValue","value":"10"},{"name":"maxValue","value":"1000"}]}`)
	f.column = f.create("testCase", `{"name":"zip_not_null","entityLink":"<#E::table::svc.db.sch.orders::columns::zip>","testDefinition":"columnValuesToBeNotNull"}`)
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

func (f *fixture) create(kind, body string) meridian.Entity {
	f.t.Helper()
	res, err := f.ents.Create(f.ctx, f.admin, kind, f.doc(body))
	if err != nil {
		f.t.Fatalf("create %s: %v", kind, err)
	}
	return res.Entity
}

// add records the results of the rows test case.
func (f *fixture) add(results ...string) {
	f.t.Helper()
	for _, r := range results {
		if _, err := quality.AddResult(f.ctx, f.ents, f.admin, f.rows.FQN(), f.doc(r)); err != nil {
			f.t.Fatal(err)
		}
	}
}

// the three results add records in testResultsList and after.
var results = []string{
	`{"timestamp":1735689600000,"testCaseStatus":"Failed","result":"Found 1500 rows; expected between 10 and 1000","testResultValue":[{"name":"rowCount","value":"1500"}],"failedRows":1500,"passedRows":0}`,
	`{"timestamp":1735862400000,"testCaseStatus":"Success","result":"Found 500 rows"}`,
	`{"timestamp":1735776000000,"testCaseStatus":"Aborted","result":"timeout"}`,
}

// inTx runs fn in a transaction and commits it when writable.
func (f *fixture) inTx(writable bool, fn func(db store.SQL)) {
	f.t.Helper()
	if err := f.ents.InTx(f.ctx, writable, func(tx store.Tx) error { fn(tx.SQL()); return nil }); err != nil {
		f.t.Fatal(err)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := meridian.ErrorCode(err); got != code {
		t.Fatalf("error %v, want code %q", err, code)
	}
}

func testPoints(t *testing.T, f *fixture) {
	g := f.create("glossary", `{"name":"g","description":"d"}`)
	ctx, id := f.ctx, g.ID()
	f.inTx(true, func(db store.SQL) {
		for _, p := range []quality.Point{
			{Series: "s", Timestamp: 1_700_000_000_002, Doc: []byte(`{"v":2}`)},
			{Series: "s", Timestamp: 1_700_000_000_001, Doc: []byte(`{"v":1}`)},
			{Series: "s", Timestamp: 1_700_000_000_003, Doc: []byte(`{"v":3}`)},
			{Series: "s", Timestamp: 1_700_000_000_002, Doc: []byte(`{"v":22}`)}, // replaces
			{Series: "other", Timestamp: 1_700_000_000_009, Doc: []byte(`{"v":9}`)},
		} {
			p.EntityID = id
			if err := quality.PutPoint(ctx, db, p); err != nil {
				t.Fatal(err)
			}
		}
	})
	f.inTx(false, func(db store.SQL) {
		pts, err := quality.Points(ctx, db, quality.PointQuery{Series: "s", EntityID: id})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range pts {
			got = append(got, strings.ReplaceAll(string(p.Doc), " ", ""))
		}
		if strings.Join(got, ";") != `{"v":3};{"v":22};{"v":1}` || pts[0].Timestamp != 1_700_000_000_003 || pts[0].Series != "s" || pts[0].EntityID != id {
			t.Fatalf("points newest first: %v", got)
		}
		pts, _ = quality.Points(ctx, db, quality.PointQuery{Series: "s", EntityID: id, From: 1_700_000_000_002, To: 1_700_000_000_002})
		if len(pts) != 1 || pts[0].Timestamp != 1_700_000_000_002 {
			t.Fatalf("range: %v", pts)
		}
		pts, _ = quality.Points(ctx, db, quality.PointQuery{Series: "s", EntityID: id, Limit: 2})
		if len(pts) != 2 || pts[1].Timestamp != 1_700_000_000_002 {
			t.Fatalf("limit: %v", pts)
		}
		if pts, err := quality.Points(ctx, db, quality.PointQuery{Series: "none", EntityID: id}); err != nil || pts == nil || len(pts) != 0 {
			t.Fatalf("an empty series: %#v, %v", pts, err)
		}
		latest, err := quality.LatestPoint(ctx, db, "s", id)
		if err != nil || latest.Timestamp != 1_700_000_000_003 {
			t.Fatalf("latest %v %v", latest, err)
		}
		_, err = quality.LatestPoint(ctx, db, "none", id)
		wantCode(t, err, meridian.ENotFound)
	})
	f.inTx(true, func(db store.SQL) {
		if err := quality.DeletePoints(ctx, db, "s", id); err != nil {
			t.Fatal(err)
		}
		if pts, _ := quality.Points(ctx, db, quality.PointQuery{Series: "s", EntityID: id}); len(pts) != 0 {
			t.Fatalf("deleted points remain: %v", pts)
		}
		if pts, _ := quality.Points(ctx, db, quality.PointQuery{Series: "other", EntityID: id}); len(pts) != 1 {
			t.Fatalf("DeletePoints took another series: %v", pts)
		}
	})
	if _, err := f.ents.Delete(ctx, f.admin, "glossary", store.ByID(id), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	f.inTx(false, func(db store.SQL) {
		if pts, _ := quality.Points(ctx, db, quality.PointQuery{Series: "other", EntityID: id}); len(pts) != 0 {
			t.Fatalf("a hard delete left points: %v", pts)
		}
	})
}

func testResultsValidated(t *testing.T, f *fixture) {
	for _, c := range []struct {
		fqn, result, code, msg string
	}{
		{f.rows.FQN(), `{"timestamp":1735689600,"testCaseStatus":"Success"}`, meridian.EInvalid,
			"Timestamp 1735689600 is not valid, it should be in milliseconds since epoch"},
		{f.rows.FQN(), `{"testCaseStatus":"Success"}`, meridian.EInvalid, "timestamp is required"},
		{f.rows.FQN(), `{"timestamp":1735689600000,"testCaseStatus":"Broken"}`, meridian.EInvalid,
			"testCaseStatus must be one of Success, Failed, Aborted, Queued"},
		{f.rows.FQN(), `{"timestamp":1735689600000,"testCaseStatus":"Failed","testResultValue":[{"name":"rowCount","value":1500}]}`,
			meridian.EInvalid, "testResultValue[0].value must be a string"},
		{f.rows.FQN(), `{"timestamp":1735689600000,"testCaseStatus":"Failed","passedRows":-1}`, meridian.EInvalid,
			"passedRows must be a non-negative integer"},
		{"svc.db.sch.orders.nope", `{"timestamp":1735689600000,"testCaseStatus":"Failed"}`, meridian.ENotFound, ""},
	} {
		_, err := quality.AddResult(f.ctx, f.ents, f.admin, c.fqn, f.doc(c.result))
		wantCode(t, err, c.code)
		if c.msg != "" && meridian.ErrorMessage(err) != c.msg {
			t.Errorf("message %q, want %q", meridian.ErrorMessage(err), c.msg)
		}
	}
	if _, err := quality.AddResult(f.ctx, f.ents, f.admin, f.rows.FQN(), nil); meridian.ErrorCode(err) != meridian.EInvalid {
		t.Errorf("a nil result: %v", err)
	}
}

func testResultsList(t *testing.T, f *fixture) {
	f.add(results...)
	fqn := f.rows.FQN()
	all, err := quality.ListResults(f.ctx, f.ents, f.admin, fqn, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0]["testCaseStatus"] != "Success" || all[2]["testCaseStatus"] != "Failed" || all[0]["testCaseFQN"] != fqn || all[0]["id"] == "" {
		t.Fatalf("results %v", all)
	}
	some, err := quality.ListResults(f.ctx, f.ents, f.admin, fqn, 1735689600000, 1735776000000)
	if err != nil || len(some) != 2 || some[0]["testCaseStatus"] != "Aborted" {
		t.Fatalf("range %v %v", some, err)
	}
	_, err = quality.ListResults(f.ctx, f.ents, f.admin, fqn, 10, 5)
	wantCode(t, err, meridian.EInvalid)
	// A result at a recorded timestamp replaces it.
	f.add(`{"timestamp":1735776000000,"testCaseStatus":"Queued"}`)
	if again, _ := quality.ListResults(f.ctx, f.ents, f.admin, fqn, 0, 0); len(again) != 3 || again[1]["testCaseStatus"] != "Queued" {
		t.Fatalf("after a replacement %v", again)
	}
	none, err := quality.ListResults(f.ctx, f.ents, f.admin, f.column.FQN(), 0, 0)
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("a test case without results: %#v, %v", none, err)
	}
}

func testLatestResult(t *testing.T, f *fixture) {
	f.add(results...)
	get := func(id, fields string) meridian.Entity {
		t.Helper()
		e, err := f.ents.Get(f.ctx, f.admin, "testCase", store.ByID(id), store.GetOptions{Fields: fields})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	plain := get(f.rows.ID(), "")
	if _, ok := plain["testCaseResult"]; ok || plain["testCaseStatus"] != "Success" || plain.Version() != meridian.InitialVersion {
		t.Fatalf("plain read %v", plain)
	}
	r, _ := get(f.rows.ID(), "testCaseResult")["testCaseResult"].(map[string]any)
	if r["timestamp"] != float64(1735862400000) || r["result"] != "Found 500 rows" {
		t.Fatalf("testCaseResult %v", r)
	}
	if e := get(f.column.ID(), "testCaseResult"); e["testCaseResult"] != nil || e["testCaseStatus"] != nil {
		t.Fatalf("a test without results has a status: %v", e)
	}
	page, err := f.ents.List(f.ctx, f.admin, "testCase", store.ListOptions{Limit: 10, Fields: "testCaseResult"})
	if err != nil || len(page.Data) != 2 {
		t.Fatalf("list %v %v", page, err)
	}
	for _, e := range page.Data {
		if e.Name() == "rows" && e["testCaseResult"] == nil {
			t.Fatalf("list without testCaseResult: %v", e)
		}
	}
	evs, err := f.ents.Events(f.ctx, f.admin, store.EventsOptions{EntityTypes: []string{"testCase"}})
	if err != nil {
		t.Fatal(err)
	}
	var updates []meridian.ChangeEvent
	for _, ev := range evs.Data {
		if ev.EventType == meridian.EventEntityUpdated {
			updates = append(updates, ev)
		}
	}
	if len(updates) != 3 || updates[0].EntityID != f.rows.ID() || updates[0].ChangeDescription.FieldsUpdated[0].Name != "testCaseResult" ||
		updates[0].CurrentVersion != updates[0].PreviousVersion {
		t.Fatalf("result events %+v", updates)
	}
}

func testSummaries(t *testing.T, f *fixture) {
	f.add(results...)
	table, err := f.ents.Get(f.ctx, f.admin, "table", store.ByFQN("svc.db.sch.orders"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := quality.TestCasesOf(f.ctx, f.ents, f.admin, []string{table.ID(), f.rows.ID()})
	if err != nil {
		t.Fatal(err)
	}
	got := sums[table.ID()]
	if len(got) != 2 || got[0].Name != "rows" || got[0].Status != "Success" || got[0].Timestamp != 1735862400000 ||
		got[0].TestDefinition != "tableRowCountToBeBetween" || got[1].Status != quality.StatusNeverRun || got[1].EntityLink == "" {
		t.Fatalf("summaries %+v", got)
	}
	if _, ok := sums[f.rows.ID()]; ok || len(sums) != 1 {
		t.Fatalf("an entity without test cases is in the map: %v", sums)
	}
	if _, err := f.ents.Delete(f.ctx, f.admin, "testCase", store.ByID(f.column.ID()), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if sums, _ := quality.TestCasesOf(f.ctx, f.ents, f.admin, []string{table.ID()}); len(sums[table.ID()]) != 1 {
		t.Fatalf("a soft-deleted test case is summarized: %+v", sums)
	}
}

// viewer may View anything and nothing else.
type viewer struct{}

func (viewer) Authorize(p *meridian.Principal, op store.Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) error {
	if op == store.OpView || p.IsAdmin() {
		return nil
	}
	return meridian.Errorf(meridian.EForbidden, "not allowed")
}

func testResultsNeedEdit(t *testing.T, f *fixture) {
	ents := store.New(store.Config{Driver: f.db, Registry: meridian.DefaultRegistry(), Policy: viewer{}})
	bob := &meridian.Principal{Name: "bob", Roles: []string{meridian.RoleDataConsumer}}
	_, err := quality.AddResult(f.ctx, ents, bob, f.rows.FQN(), f.doc(results[0]))
	wantCode(t, err, meridian.EForbidden)
	if list, err := quality.ListResults(f.ctx, ents, bob, f.rows.FQN(), 0, 0); err != nil || len(list) != 0 {
		t.Fatalf("a viewer lists %v, %v", list, err)
	}
}

func testHardDelete(t *testing.T, f *fixture) {
	f.add(results...)
	table, err := f.ents.Get(f.ctx, f.admin, "table", store.ByFQN("svc.db.sch.orders"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ents.Delete(f.ctx, f.admin, "table", store.ByID(table.ID()), store.DeleteOptions{Hard: true, Recursive: true}); err != nil {
		t.Fatal(err)
	}
	f.inTx(false, func(db store.SQL) {
		if pts, _ := quality.Points(f.ctx, db, quality.PointQuery{Series: quality.SeriesTestCaseResult, EntityID: f.rows.ID()}); len(pts) != 0 {
			t.Fatalf("results survived: %d", len(pts))
		}
	})
}

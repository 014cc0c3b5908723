package storetest

import (
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

func testTimeSeries(t *testing.T, f *Fixture) {
	g := f.Create("glossary", `{"name":"g","description":"d"}`)
	tx, err := f.Driver.Begin(f.Ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	put := func(series string, ts int64, doc string) {
		t.Helper()
		if err := tx.PutPoint(f.Ctx, store.Point{Series: series, EntityID: g.ID(), Timestamp: ts, Doc: []byte(doc)}); err != nil {
			t.Fatal(err)
		}
	}
	put("s", 1_700_000_000_002, `{"v":2}`)
	put("s", 1_700_000_000_001, `{"v":1}`)
	put("s", 1_700_000_000_003, `{"v":3}`)
	put("s", 1_700_000_000_002, `{"v":22}`) // replaces
	put("other", 1_700_000_000_009, `{"v":9}`)
	pts, err := tx.Points(f.Ctx, store.PointQuery{Series: "s", EntityID: g.ID()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pts {
		got = append(got, strings.ReplaceAll(string(p.Doc), " ", ""))
	}
	if strings.Join(got, ";") != `{"v":3};{"v":22};{"v":1}` || pts[0].Timestamp != 1_700_000_000_003 || pts[0].Series != "s" {
		t.Fatalf("points newest first: %v", got)
	}
	pts, _ = tx.Points(f.Ctx, store.PointQuery{Series: "s", EntityID: g.ID(), From: 1_700_000_000_002, To: 1_700_000_000_002})
	if len(pts) != 1 || pts[0].Timestamp != 1_700_000_000_002 {
		t.Fatalf("range: %v", pts)
	}
	pts, _ = tx.Points(f.Ctx, store.PointQuery{Series: "s", EntityID: g.ID(), Limit: 2})
	if len(pts) != 2 {
		t.Fatalf("limit: %d", len(pts))
	}
	latest, err := tx.LatestPoint(f.Ctx, "s", g.ID())
	if err != nil || latest.Timestamp != 1_700_000_000_003 {
		t.Fatalf("latest %v %v", latest, err)
	}
	_, err = tx.LatestPoint(f.Ctx, "none", g.ID())
	WantCode(t, err, meridian.ENotFound)
	if err := tx.DeletePoints(f.Ctx, "s", g.ID()); err != nil {
		t.Fatal(err)
	}
	if pts, _ := tx.Points(f.Ctx, store.PointQuery{Series: "s", EntityID: g.ID()}); len(pts) != 0 {
		t.Fatalf("deleted points remain: %v", pts)
	}
	if err := tx.Remove(f.Ctx, g.ID()); err != nil {
		t.Fatal(err)
	}
	if pts, _ := tx.Points(f.Ctx, store.PointQuery{Series: "other", EntityID: g.ID()}); len(pts) != 0 {
		t.Fatalf("Remove left points: %v", pts)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func testSeedTestDefinitions(t *testing.T, f *Fixture) {
	n, err := f.E.SeedTestDefinitions(f.Ctx)
	if err != nil || n < 25 {
		t.Fatalf("seeded %d, %v", n, err)
	}
	if n, err := f.E.SeedTestDefinitions(f.Ctx); err != nil || n != 0 {
		t.Fatalf("seeding again changed %d definitions (%v)", n, err)
	}
	for _, c := range []struct {
		entityType string
		want       []string
	}{
		{"TABLE", []string{"tableRowCountToBeBetween", "tableRowCountToEqual", "tableColumnCountToBeBetween", "tableColumnCountToEqual",
			"tableColumnNameToExist", "tableColumnToMatchSet", "tableCustomSQLQuery", "tableDiff", "tableRowInsertedCountToBeBetween"}},
		{"COLUMN", []string{"columnValuesToBeNotNull", "columnValuesToBeUnique", "columnValuesToBeBetween", "columnValuesToBeInSet",
			"columnValuesToBeNotInSet", "columnValuesToMatchRegex", "columnValuesToNotMatchRegex", "columnValuesLengthsToBeBetween",
			"columnValuesMissingCountToBeEqual", "columnValuesSumToBeBetween", "columnValueMaxToBeBetween", "columnValueMinToBeBetween",
			"columnValueMeanToBeBetween", "columnValueMedianToBeBetween", "columnValueStdDevToBeBetween", "columnValueToBeAtExpectedLocation"}},
	} {
		page, err := f.E.List(f.Ctx, f.Admin, "testDefinition", store.ListOptions{Limit: 100, Filters: map[string]string{"entityType": c.entityType, "testPlatform": "OpenMetadata"}})
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]meridian.Entity{}
		for _, d := range page.Data {
			have[d.Name()] = d
			if d.Version() != meridian.InitialVersion || d.String("provider") != "system" {
				t.Errorf("%s: version %v provider %q", d.Name(), d.Version(), d.String("provider"))
			}
		}
		for _, name := range c.want {
			if have[name] == nil {
				t.Errorf("%s definition %s missing", c.entityType, name)
			}
		}
	}
	d, err := f.E.Get(f.Ctx, f.Admin, "testDefinition", store.ByName("tableRowCountToBeBetween"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	params := d["parameterDefinition"].([]any)
	if len(params) != 2 || params[0].(map[string]any)["name"] != "minValue" || params[0].(map[string]any)["dataType"] != "INT" {
		t.Fatalf("parameters %v", params)
	}
	_, err = f.E.Delete(f.Ctx, f.Admin, "testDefinition", store.ByID(d.ID()), store.DeleteOptions{Hard: true})
	WantCode(t, err, meridian.EInvalid)
	WantMessage(t, err, "System entity [tableRowCountToBeBetween] of type testDefinition can not be deleted.")
}

// testCase creates a test case as admin.
func (f *Fixture) testCase(body string) (meridian.Entity, error) {
	res, err := f.E.Create(f.Ctx, f.Admin, "testCase", f.Doc(body))
	return res.Entity, err
}

func testTestCaseResults(t *testing.T, f *Fixture) {
	if _, err := f.E.SeedTestDefinitions(f.Ctx); err != nil {
		t.Fatal(err)
	}
	f.Hierarchy()
	f.Table("orders", `[{"name":"id","dataType":"INT"},{"name":"zip","dataType":"VARCHAR","dataLength":10}]`)
	t.Run("parameters and links are checked against the definition", func(t *testing.T) {
		for _, c := range []struct {
			body, code, msg string
		}{
			{`{"name":"t1","entityLink":"<#E::table::svc.db.sch.orders>","testDefinition":"tableRowCountToBeBetween","parameterValues":[{"name":"minRows","value":"1"}]}`,
				meridian.EInvalid, "minRows"},
			{`{"name":"t2","entityLink":"<#E::table::svc.db.sch.orders>","testDefinition":"tableRowCountToEqual"}`,
				meridian.EInvalid, "Required parameter 'value'"},
			{`{"name":"t3","entityLink":"<#E::table::svc.db.sch.orders::columns::nope>","testDefinition":"columnValuesToBeNotNull"}`,
				meridian.ENotFound, "Column nope not found"},
			{`{"name":"t4","entityLink":"<#E::table::svc.db.sch.orders>","testDefinition":"columnValuesToBeNotNull"}`,
				meridian.EInvalid, "tests a column"},
			{`{"name":"t5","entityLink":"<#E::table::svc.db.sch.orders>","testDefinition":"noSuchTest"}`,
				meridian.ENotFound, "noSuchTest"},
		} {
			_, err := f.testCase(c.body)
			WantCode(t, err, c.code)
			if !strings.Contains(meridian.ErrorMessage(err), c.msg) {
				t.Errorf("message %q does not mention %q", meridian.ErrorMessage(err), c.msg)
			}
		}
	})
	tc, err := f.testCase(`{"name":"rows","entityLink":"<#E::table::svc.db.sch.orders>","testDefinition":"tableRowCountToBeBetween",
		"parameterValues":[{"name":"minValue","value":"10"},{"name":"maxValue","value":"1000"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	col, err := f.testCase(`{"name":"zip_not_null","entityLink":"<#E::table::svc.db.sch.orders::columns::zip>","testDefinition":"columnValuesToBeNotNull"}`)
	if err != nil || col.FQN() != "svc.db.sch.orders.zip.zip_not_null" {
		t.Fatalf("column test %v %v", col, err)
	}
	fqn := tc.FQN()
	t.Run("results are validated", func(t *testing.T) {
		_, err := f.E.AddTestCaseResult(f.Ctx, f.Admin, fqn, f.Doc(`{"timestamp":1735689600,"testCaseStatus":"Success"}`))
		WantCode(t, err, meridian.EInvalid)
		WantMessage(t, err, "Timestamp 1735689600 is not valid, it should be in milliseconds since epoch")
		_, err = f.E.AddTestCaseResult(f.Ctx, f.Admin, fqn, f.Doc(`{"timestamp":1735689600000,"testCaseStatus":"Broken"}`))
		WantCode(t, err, meridian.EInvalid)
		_, err = f.E.AddTestCaseResult(f.Ctx, f.Admin, fqn, f.Doc(`{"timestamp":1735689600000,"testCaseStatus":"Failed","testResultValue":[{"name":"rowCount","value":1500}]}`))
		WantCode(t, err, meridian.EInvalid)
		_, err = f.E.AddTestCaseResult(f.Ctx, f.Admin, "svc.db.sch.orders.nope", f.Doc(`{"timestamp":1735689600000,"testCaseStatus":"Failed"}`))
		WantCode(t, err, meridian.ENotFound)
	})
	for _, r := range []string{
		`{"timestamp":1735689600000,"testCaseStatus":"Failed","result":"Found 1500 rows; expected between 10 and 1000","testResultValue":[{"name":"rowCount","value":"1500"}],"failedRows":1500,"passedRows":0}`,
		`{"timestamp":1735862400000,"testCaseStatus":"Success","result":"Found 500 rows"}`,
		`{"timestamp":1735776000000,"testCaseStatus":"Aborted","result":"timeout"}`,
	} {
		if _, err := f.E.AddTestCaseResult(f.Ctx, f.Admin, fqn, f.Doc(r)); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("list is newest first within the range", func(t *testing.T) {
		all, err := f.E.ListTestCaseResults(f.Ctx, f.Admin, fqn, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 3 || all[0]["testCaseStatus"] != "Success" || all[2]["testCaseStatus"] != "Failed" || all[0]["testCaseFQN"] != fqn {
			t.Fatalf("results %v", all)
		}
		some, err := f.E.ListTestCaseResults(f.Ctx, f.Admin, fqn, 1735689600000, 1735776000000)
		if err != nil || len(some) != 2 || some[0]["testCaseStatus"] != "Aborted" {
			t.Fatalf("range %v %v", some, err)
		}
		_, err = f.E.ListTestCaseResults(f.Ctx, f.Admin, fqn, 10, 5)
		WantCode(t, err, meridian.EInvalid)
	})
	t.Run("latest result shows only when asked, without a new version", func(t *testing.T) {
		plain := f.Get("testCase", tc.ID(), "", store.IncludeNonDeleted)
		if _, ok := plain["testCaseResult"]; ok || plain["testCaseStatus"] != "Success" || plain.Version() != meridian.InitialVersion {
			t.Fatalf("plain read %v", plain)
		}
		full := f.Get("testCase", tc.ID(), "testCaseResult", store.IncludeNonDeleted)
		r, _ := full["testCaseResult"].(map[string]any)
		if r["timestamp"] != float64(1735862400000) || r["result"] != "Found 500 rows" {
			t.Fatalf("testCaseResult %v", full["testCaseResult"])
		}
		page, err := f.E.List(f.Ctx, f.Admin, "testCase", store.ListOptions{Limit: 10, Fields: "testCaseResult"})
		if err != nil || len(page.Data) != 2 {
			t.Fatalf("list %v %v", page, err)
		}
		for _, e := range page.Data {
			if e.Name() == "rows" && e["testCaseResult"] == nil {
				t.Fatalf("list without testCaseResult: %v", e)
			}
			if e.Name() == "zip_not_null" && (e["testCaseResult"] != nil || e["testCaseStatus"] != nil) {
				t.Fatalf("a test without results has a status: %v", e)
			}
		}
		evs := f.events(meridian.EventEntityUpdated)
		if len(evs) != 3 || evs[0].EntityID != tc.ID() || evs[0].ChangeDescription.FieldsUpdated[0].Name != "testCaseResult" {
			t.Fatalf("result events %+v", evs)
		}
	})
	t.Run("summaries carry the latest status", func(t *testing.T) {
		table, _ := f.E.Get(f.Ctx, f.Admin, "table", store.ByName("svc.db.sch.orders"), store.GetOptions{})
		sums, err := f.E.TestCasesOf(f.Ctx, f.Admin, []string{table.ID()})
		if err != nil {
			t.Fatal(err)
		}
		got := sums[table.ID()]
		if len(got) != 2 || got[0].Name != "rows" || got[0].Status != "Success" || got[1].Status != store.StatusNeverRun ||
			got[0].TestDefinition != "tableRowCountToBeBetween" {
			t.Fatalf("summaries %+v", got)
		}
	})
	t.Run("a hard delete of the table takes the results", func(t *testing.T) {
		table, _ := f.E.Get(f.Ctx, f.Admin, "table", store.ByName("svc.db.sch.orders"), store.GetOptions{})
		if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(table.ID()), store.DeleteOptions{Hard: true, Recursive: true}); err != nil {
			t.Fatal(err)
		}
		tx, err := f.Driver.Begin(f.Ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if pts, _ := tx.Points(f.Ctx, store.PointQuery{Series: store.SeriesTestCaseResult, EntityID: tc.ID()}); len(pts) != 0 {
			t.Fatalf("results survived: %d", len(pts))
		}
	})
}

package storetest

import (
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

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
	// AnyOf: any of several values of one parameter matches, ANDed with the filters.
	count := func(o store.ListOptions) int {
		t.Helper()
		o.Limit = 0
		page, err := f.E.List(f.Ctx, f.Admin, "testDefinition", o)
		if err != nil {
			t.Fatal(err)
		}
		return page.Total
	}
	byType := func(types ...string) int {
		return count(store.ListOptions{AnyOf: map[string][]string{"entityType": types}, Filters: map[string]string{"testPlatform": "OpenMetadata"}})
	}
	table, column := byType("TABLE"), byType("COLUMN")
	if both := byType("TABLE", "COLUMN", "NOPE"); table < 9 || column < 16 || both != table+column {
		t.Errorf("AnyOf TABLE, COLUMN: %d; TABLE %d, COLUMN %d", both, table, column)
	}
	if none := byType(); none != 0 {
		t.Errorf("AnyOf no value matched %d definitions, want none", none)
	}
	_, tooMany := f.E.List(f.Ctx, f.Admin, "testDefinition", store.ListOptions{AnyOf: map[string][]string{"entityType": make([]string, store.MaxAnyOf+1)}})
	WantCode(t, tooMany, meridian.EInvalid)
	d, err := f.E.Get(f.Ctx, f.Admin, "testDefinition", store.ByFQN("tableRowCountToBeBetween"), store.GetOptions{})
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

func testTestCaseRules(t *testing.T, f *Fixture) {
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
	// The computed fields are the quality module's: values a client writes are dropped.
	tc, err := f.testCase(`{"name":"rows","entityLink":"<#E::table::svc.db.sch.orders>","testDefinition":"tableRowCountToBeBetween",
		"parameterValues":[{"name":"minValue","value":"10"},{"name":"maxValue","value":"1000"}],
		"testCaseStatus":"Failed","testCaseResult":{"timestamp":1735689600000,"testCaseStatus":"Failed"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Get("testCase", tc.ID(), "testCaseResult", store.IncludeNonDeleted); got["testCaseStatus"] != nil || got["testCaseResult"] != nil {
		t.Fatalf("stored computed fields: %v", got)
	}
	col, err := f.testCase(`{"name":"zip_not_null","entityLink":"<#E::table::svc.db.sch.orders::columns::zip>","testDefinition":"columnValuesToBeNotNull"}`)
	if err != nil || col.FQN() != "svc.db.sch.orders.zip.zip_not_null" {
		t.Fatalf("column test %v %v", col, err)
	}
}

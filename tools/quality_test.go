package tools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/tools"
)

func seeded(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, tools.Config{})
	if _, err := f.c.Entities.SeedTestDefinitions(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGetTestDefinitions(t *testing.T) {
	f := seeded(t)
	t.Run("table definitions by default, paged by cursor", func(t *testing.T) {
		seen := map[string]bool{}
		args := map[string]any{"limit": 4}
		pages := 0
		for {
			out := f.ok(t, f.c.Admin, "get_test_definitions", args)
			pages++
			for _, d := range list(out["data"]) {
				m := obj(d)
				if m["entityType"] != "TABLE" || seen[m["name"].(string)] {
					t.Fatalf("definition %v (seen %v)", m["name"], seen)
				}
				seen[m["name"].(string)] = true
			}
			if num(out["total"]) != 9 {
				t.Fatalf("total %v", out["total"])
			}
			next, _ := out["nextCursor"].(string)
			if next == "" {
				break
			}
			args = map[string]any{"limit": 4, "after": next} // the legacy name works too
		}
		if pages != 3 || len(seen) != 9 || !seen["tableRowCountToBeBetween"] {
			t.Fatalf("pages %d, seen %v", pages, seen)
		}
	})
	t.Run("column definitions, case-insensitive, with parameters", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_test_definitions", map[string]any{"entityType": "column", "testPlatform": "openmetadata", "limit": 500})
		if num(out["total"]) != 16 || num(out["returned"]) != 16 {
			t.Fatalf("got %v of %v", out["returned"], out["total"])
		}
		for _, d := range list(out["data"]) {
			m := obj(d)
			if m["name"] == "columnValuesToBeInSet" {
				p := obj(list(m["parameterDefinition"])[0])
				if p["name"] != "allowedValues" || p["dataType"] != "ARRAY" || p["required"] != true {
					t.Fatalf("parameters %v", m["parameterDefinition"])
				}
				return
			}
		}
		t.Fatal("columnValuesToBeInSet missing")
	})
	t.Run("other platforms have none; bad input is refused", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_test_definitions", map[string]any{"testPlatform": "DBT"})
		if num(out["total"]) != 0 || len(list(out["data"])) != 0 {
			t.Fatalf("got %v", out)
		}
		if b := f.fail(t, f.c.Admin, "get_test_definitions", map[string]any{"entityType": "ROW"}); b.StatusCode != 400 {
			t.Fatalf("got %+v", b)
		}
		if b := f.fail(t, f.c.Admin, "get_test_definitions", map[string]any{"cursor": "garbage!"}); b.StatusCode != 400 {
			t.Fatalf("got %+v", b)
		}
	})
}

func TestCreateTestCase(t *testing.T) {
	f := seeded(t)
	fqn := f.c.Table(t, "pg", "dwh", "sales", "orders", 3)
	t.Run("table test", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "create_test_case", map[string]any{"name": "row_count", "fqn": fqn,
			"testDefinitionName": "tableRowCountToBeBetween",
			"parameterValues":    []any{map[string]any{"name": "minValue", "value": 10}, map[string]any{"name": "maxValue", "value": "1000"}}})
		if out["fullyQualifiedName"] != fqn+".row_count" || out["entityLink"] != "<#E::table::"+fqn+">" ||
			out["description"] != "Test case created by MCP tool" || out["changeType"] != "entityCreated" {
			t.Fatalf("got %v", out)
		}
		p := obj(list(out["parameterValues"])[0])
		if p["value"] != "10" || obj(out["testDefinition"])["name"] != "tableRowCountToBeBetween" {
			t.Fatalf("parameters %v, definition %v", out["parameterValues"], out["testDefinition"])
		}
	})
	t.Run("column test builds the column link", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "create_test_case", map[string]any{"name": "not_null", "fqn": fqn, "columnName": "col_0002",
			"testDefinitionName": "columnValuesToBeNotNull", "description": "ids are set"})
		if out["entityLink"] != "<#E::table::"+fqn+"::columns::col_0002>" || out["fullyQualifiedName"] != fqn+".col_0002.not_null" {
			t.Fatalf("got %v", out)
		}
	})
	for _, c := range []struct {
		name   string
		args   map[string]any
		status int
		text   string
	}{
		{"unknown definition", map[string]any{"name": "x", "fqn": fqn, "testDefinitionName": "tableIsPretty"}, 404, "tableIsPretty"},
		{"unknown parameter", map[string]any{"name": "x", "fqn": fqn, "testDefinitionName": "tableRowCountToBeBetween",
			"parameterValues": []any{map[string]any{"name": "minRows", "value": "1"}}}, 400, "minRows"},
		{"missing required parameter", map[string]any{"name": "x", "fqn": fqn, "testDefinitionName": "tableColumnCountToEqual"}, 400, "columnCount"},
		{"unknown column", map[string]any{"name": "x", "fqn": fqn, "testDefinitionName": "columnValuesToBeUnique", "columnName": "nope"}, 404, "nope"},
		{"unknown table", map[string]any{"name": "x", "fqn": "pg.dwh.sales.nope", "testDefinitionName": "tableRowCountToBeBetween"}, 404, "pg.dwh.sales.nope"},
		{"column definition on a table", map[string]any{"name": "x", "fqn": fqn, "testDefinitionName": "columnValuesToBeUnique"}, 400, "column"},
		{"not a table", map[string]any{"name": "x", "fqn": fqn, "testDefinitionName": "tableRowCountToBeBetween", "entityType": "dashboard"}, 400, "dashboard"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := f.fail(t, f.c.Admin, "create_test_case", c.args)
			if b.StatusCode != c.status || !strings.Contains(b.Error, c.text) {
				t.Fatalf("got %+v", b)
			}
		})
	}
}

func TestRootCauseAnalysis(t *testing.T) {
	f, fq := lineageFixture(t)
	if _, err := f.c.Entities.SeedTestDefinitions(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	addTest := func(table, name, status string, ts int64) {
		t.Helper()
		f.ok(t, f.c.Admin, "create_test_case", map[string]any{"name": name, "fqn": fq[table], "testDefinitionName": "tableRowCountToBeBetween",
			"parameterValues": []any{map[string]any{"name": "minValue", "value": "1"}}})
		if _, err := quality.AddResult(ctx, f.c.Entities, f.c.Admin, fq[table]+"."+name,
			meridian.Entity{"timestamp": float64(ts), "testCaseStatus": status, "result": status + " at " + table}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("nothing fails", func(t *testing.T) {
		addTest("orders", "rows_ok", "Success", 1735689600000)
		out := f.ok(t, f.c.Admin, "root_cause_analysis", map[string]any{"entityType": "table", "fqn": fq["report"]})
		if out["status"] != "success" || out["rootHasFailingTests"] != false || num(out["failingUpstreamNodesCount"]) != 0 ||
			out["downstreamImpact"] != nil || num(out["upstreamNodesChecked"]) != 3 {
			t.Fatalf("got %v", out)
		}
	})
	addTest("raw", "rows", "Success", 1735689600000)
	if _, err := quality.AddResult(ctx, f.c.Entities, f.c.Admin, fq["raw"]+".rows",
		meridian.Entity{"timestamp": float64(1735776000000), "testCaseStatus": "Failed", "result": "Found 0 rows"}); err != nil {
		t.Fatal(err)
	}
	t.Run("a failing test upstream is the root cause, with the downstream impact", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "root_cause_analysis", map[string]any{"entityType": "table", "fqn": fq["facts"]})
		if out["status"] != "failed" || out["rootHasFailingTests"] != false || num(out["failingUpstreamNodesCount"]) != 1 {
			t.Fatalf("got %v", out)
		}
		node := obj(list(out["failingUpstreamNodes"])[0])
		test := obj(list(node["failingTests"])[0])
		if node["fqn"] != fq["raw"] || node["depth"] != float64(2) || test["result"] != "Found 0 rows" ||
			test["timestamp"] != float64(1735776000000) || test["testCaseStatus"] != "Failed" {
			t.Fatalf("node %v", node)
		}
		impact := obj(out["downstreamImpact"])
		if num(impact["total"]) != 2 || obj(list(impact["nodes"])[0])["fqn"] != fq["report"] {
			t.Fatalf("impact %v", impact)
		}
		var sql bool
		for _, e := range list(out["upstreamEdges"]) {
			if obj(e)["hasSql"] == true {
				sql = true
			}
		}
		if !sql {
			t.Fatalf("edges %v", out["upstreamEdges"])
		}
	})
	t.Run("the entity's own failing tests", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "root_cause_analysis", map[string]any{"entityType": "table", "fqn": fq["raw"], "upstreamDepth": 2})
		if out["status"] != "failed" || out["rootHasFailingTests"] != true || len(list(out["rootFailingTests"])) != 1 {
			t.Fatalf("got %v", out)
		}
	})
	t.Run("unknown entity", func(t *testing.T) {
		if b := f.fail(t, f.c.Admin, "root_cause_analysis", map[string]any{"entityType": "table", "fqn": "pg.x.y.z"}); b.StatusCode != 404 {
			t.Fatalf("got %+v", b)
		}
	})
	t.Run("get_entity_details quality section", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_entity_details", map[string]any{"entityType": "table", "fqn": fq["raw"], "include": []any{"quality", "lineage"}})
		q := obj(out["quality"])
		tests := list(q["tests"])
		if q["status"] != "failed" || num(q["total"]) != 1 || num(q["failed"]) != 1 || len(tests) != 1 ||
			obj(tests[0])["testCaseStatus"] != "Failed" || obj(tests[0])["testDefinition"] != "tableRowCountToBeBetween" {
			t.Fatalf("quality %v", q)
		}
		if len(list(obj(out["lineage"])["downstream"])) != 1 {
			t.Fatalf("lineage %v", out["lineage"])
		}
	})
}

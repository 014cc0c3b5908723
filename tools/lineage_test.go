package tools_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/tools"
)

// lineageFixture: raw -> orders -> facts -> report, and a dashboard fed by report.
func lineageFixture(t *testing.T) (*fixture, map[string]string) {
	t.Helper()
	f := newFixture(t, tools.Config{})
	fq := map[string]string{}
	for _, n := range []string{"raw", "orders", "facts", "report"} {
		fq[n] = f.c.Table(t, "pg", "dwh", "sales", n, 3)
	}
	f.c.Create(t, "dashboardService", meridian.Entity{"name": "bi", "serviceType": "Superset"})
	fq["dash"] = f.c.Create(t, "dashboard", meridian.Entity{"name": "sales", "service": "bi"}).FQN()
	for _, e := range []struct{ from, to, typ string }{
		{"raw", "orders", "table"}, {"orders", "facts", "table"}, {"facts", "report", "table"}, {"report", "dash", "dashboard"},
	} {
		args := map[string]any{"fromEntity": map[string]any{"type": "table", "fqn": fq[e.from]},
			"toEntity": map[string]any{"type": e.typ, "fqn": fq[e.to]}}
		if e.from == "raw" {
			args["sqlQuery"] = "INSERT INTO orders SELECT * FROM raw" + strings.Repeat(" -- padding", 100)
			args["columnsLineage"] = []any{map[string]any{"fromColumns": []any{"col_0001"}, "toColumn": "col_0001", "function": "identity"}}
		}
		out := f.ok(t, f.c.Admin, "create_lineage", args)
		if out["result"] != "Lineage Edge created successfully" || out["changeType"] != "entityLineageAdded" {
			t.Fatalf("create_lineage: %v", out)
		}
	}
	return f, fq
}

func TestCreateLineage(t *testing.T) {
	f, fq := lineageFixture(t)
	t.Run("the same edge again changes nothing", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "create_lineage", map[string]any{"fromEntity": map[string]any{"type": "table", "fqn": fq["orders"]},
			"toEntity": map[string]any{"type": "table", "fqn": fq["facts"]}})
		if out["changeType"] != "entityNoChange" {
			t.Fatalf("got %v", out)
		}
	})
	t.Run("by id, with new details", func(t *testing.T) {
		e, _ := f.c.Entities.Get(context.Background(), f.c.Admin, "table", store.ByFQN(fq["orders"]), store.GetOptions{})
		out := f.ok(t, f.c.Admin, "create_lineage", map[string]any{"fromEntity": map[string]any{"type": "table", "id": e.ID()},
			"toEntity": `{"type":"table","fqn":"` + fq["facts"] + `"}`, "description": "daily rollup"})
		if out["changeType"] != "entityLineageUpdated" || out["fromEntity"] != fq["orders"] {
			t.Fatalf("got %v", out)
		}
	})
	for _, c := range []struct {
		name   string
		args   map[string]any
		status int
		text   string
	}{
		{"unknown end", map[string]any{"fromEntity": map[string]any{"type": "table", "fqn": "pg.dwh.sales.nope"},
			"toEntity": map[string]any{"type": "table", "fqn": fq["facts"]}}, 404, "not found"},
		{"end without id or fqn", map[string]any{"fromEntity": map[string]any{"type": "table"},
			"toEntity": map[string]any{"type": "table", "fqn": fq["facts"]}}, 400, "must include 'type'"},
		{"unknown type", map[string]any{"fromEntity": map[string]any{"type": "tabel", "fqn": fq["raw"]},
			"toEntity": map[string]any{"type": "table", "fqn": fq["facts"]}}, 400, "Unknown entity type"},
		{"self edge", map[string]any{"fromEntity": map[string]any{"type": "table", "fqn": fq["raw"]},
			"toEntity": map[string]any{"type": "table", "fqn": fq["raw"]}}, 400, "itself"},
		{"unknown column", map[string]any{"fromEntity": map[string]any{"type": "table", "fqn": fq["raw"]},
			"toEntity":       map[string]any{"type": "table", "fqn": fq["facts"]},
			"columnsLineage": []any{map[string]any{"fromColumns": []any{"nope"}, "toColumn": "col_0001"}}}, 400, "Invalid column name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := f.fail(t, f.c.Admin, "create_lineage", c.args)
			if body.StatusCode != c.status || !strings.Contains(body.Error, c.text) {
				t.Fatalf("got %+v", body)
			}
		})
	}
	t.Run("a DataConsumer needs to own both ends", func(t *testing.T) {
		dc := f.c.User(t, "dora", meridian.RoleDataConsumer)
		body := f.fail(t, dc, "create_lineage", map[string]any{"fromEntity": map[string]any{"type": "table", "fqn": fq["raw"]},
			"toEntity": map[string]any{"type": "table", "fqn": fq["report"]}})
		if body.StatusCode != 403 {
			t.Fatalf("got %+v", body)
		}
	})
}

func TestGetEntityLineage(t *testing.T) {
	f, fq := lineageFixture(t)
	t.Run("compact graph, depths and flags", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_entity_lineage", map[string]any{"entityType": "table", "fqn": fq["facts"]})
		if num(out["total"]) != 4 || num(out["totalEdges"]) != 4 || out["truncated"] != false || num(out["upstreamDepth"]) != 3 {
			t.Fatalf("got %v", out)
		}
		nodes := list(out["nodes"])
		first := obj(nodes[0])
		if first["depth"] != float64(1) || first["fqn"] == nil || first["type"] == nil || first["id"] == nil {
			t.Fatalf("nodes %v", nodes)
		}
		var withSQL map[string]any
		for _, e := range list(out["upstreamEdges"]) {
			if obj(e)["fromEntity"] == fq["raw"] {
				withSQL = obj(e)
			}
		}
		if withSQL == nil || withSQL["hasSql"] != true || withSQL["sqlQuery"] != nil || withSQL["columnsLineage"] != nil {
			t.Fatalf("edge %v", withSQL)
		}
		var dash map[string]any
		for _, n := range nodes {
			if obj(n)["type"] == "dashboard" {
				dash = obj(n)
			}
		}
		if dash == nil || dash["depth"] != float64(2) || dash["direction"] != "downstream" {
			t.Fatalf("dashboard node %v", dash)
		}
	})
	t.Run("sql and columns on request, sql capped", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_entity_lineage", map[string]any{"entityType": "table", "fqn": fq["orders"],
			"includeSql": true, "includeColumnLineage": "true", "upstreamDepth": "1", "downstreamDepth": 1})
		up := obj(list(out["upstreamEdges"])[0])
		sql, _ := up["sqlQuery"].(string)
		if len([]rune(sql)) != 503 || up["sqlQueryTruncated"] != true || len(list(up["columnsLineage"])) != 1 {
			t.Fatalf("edge %v", up)
		}
		if num(out["total"]) != 2 {
			t.Fatalf("depth 1: %v", out["nodes"])
		}
	})
	t.Run("depths are clamped to 10 and must be at least 1", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_entity_lineage", map[string]any{"entityType": "table", "fqn": fq["raw"], "downstreamDepth": 50})
		if num(out["downstreamDepth"]) != 10 || num(out["total"]) != 4 {
			t.Fatalf("got %v", out)
		}
		body := f.fail(t, f.c.Admin, "get_entity_lineage", map[string]any{"entityType": "table", "fqn": fq["raw"], "upstreamDepth": 0})
		if body.StatusCode != 400 {
			t.Fatalf("got %+v", body)
		}
		body = f.fail(t, f.c.Admin, "get_entity_lineage", map[string]any{"entityType": "table", "fqn": fq["raw"], "upstreamDepth": "deep"})
		if body.StatusCode != 400 {
			t.Fatalf("got %+v", body)
		}
	})
	t.Run("unknown fqn is 404 with a hint", func(t *testing.T) {
		body := f.fail(t, f.c.Admin, "get_entity_lineage", map[string]any{"entity_type": "table", "fqn": "pg.dwh.sales.nope"})
		if body.StatusCode != 404 || !strings.Contains(body.Hint, "search_metadata") {
			t.Fatalf("got %+v", body)
		}
	})
	t.Run("get_entity_details lineage section is one hop", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_entity_details", map[string]any{"entityType": "table", "fqn": fq["orders"], "include": []any{"lineage"}})
		sec := obj(out["lineage"])
		up, down := list(sec["upstream"]), list(sec["downstream"])
		if len(up) != 1 || len(down) != 1 || obj(up[0])["fqn"] != fq["raw"] || obj(up[0])["hasSql"] != true || obj(down[0])["fqn"] != fq["facts"] {
			t.Fatalf("section %v", sec)
		}
	})
}

// TestLineageBudget reads a lineage graph of 500 nodes: every page fits the budget and
// is a bounded partial page, and following nextCursor returns every node and every edge
// exactly once.
func TestLineageBudget(t *testing.T) {
	f := newFixture(t, tools.Config{})
	ctx := context.Background()
	f.c.Table(t, "warehouse", "analytics", "reporting", "root", 1)
	long := strings.Repeat("x", 60)
	// A tree upstream of root: 10 at depth 1, 100 at depth 2, 389 at depth 3.
	parents := []string{"warehouse.analytics.reporting.root"}
	made, edges := 1, 0
	for depth := 1; made < 500; depth++ {
		var next []string
		for i := 0; made < 500 && i < len(parents)*10; i++ {
			name := fmt.Sprintf("src_d%d_%03d_%s", depth, i, long)
			e := f.c.Create(t, "table", meridian.Entity{"name": name, "databaseSchema": "warehouse.analytics.reporting", "columns": []any{}})
			made++
			_, err := f.c.Entities.AddLineage(ctx, f.c.Admin, store.AddLineage{Edge: store.EdgeInput{
				FromEntity:     meridian.EntityRef{Type: "table", ID: e.ID()},
				ToEntity:       meridian.EntityRef{Type: "table", FullyQualifiedName: parents[i/10]},
				LineageDetails: &store.LineageDetails{SQLQuery: "INSERT INTO t SELECT * FROM " + name}}})
			if err != nil {
				t.Fatal(err)
			}
			edges++
			next = append(next, e.FQN())
		}
		parents = next
	}
	seenNodes, seenEdges := map[string]int{}, map[string]int{}
	args := map[string]any{"entityType": "table", "fqn": "warehouse.analytics.reporting.root", "includeSql": true}
	pages := 0
	for {
		res := f.call(t, f.c.Admin, "get_entity_lineage", args)
		if res.IsError {
			t.Fatalf("page %d: %s", pages, res.Text)
		}
		if len(res.Text) > tools.DefaultBudget {
			t.Fatalf("page %d is %d characters, over the budget", pages, len(res.Text))
		}
		out := res.Structured
		pages++
		nodes := list(out["nodes"])
		if len(nodes) == 0 || num(out["returned"]) != len(nodes) || num(out["total"]) != 499 {
			t.Fatalf("page %d: returned %v of %v, %d nodes", pages, out["returned"], out["total"], len(nodes))
		}
		for _, n := range nodes {
			seenNodes[obj(n)["fqn"].(string)]++
		}
		for _, e := range list(out["upstreamEdges"]) {
			key := obj(e)["fromEntity"].(string) + ">" + obj(e)["toEntity"].(string)
			seenEdges[key]++
			for _, end := range []string{obj(e)["fromEntity"].(string), obj(e)["toEntity"].(string)} {
				if end != "warehouse.analytics.reporting.root" && seenNodes[end] == 0 {
					t.Fatalf("edge %s before its end %s", key, end)
				}
			}
		}
		next, _ := out["nextCursor"].(string)
		if next == "" {
			if out["truncated"] != false || out["hasMore"] != false {
				t.Fatalf("last page flagged partial: %v", out["truncated"])
			}
			break
		}
		if out["truncated"] != true {
			t.Fatal("a page with nextCursor must be flagged truncated")
		}
		args["cursor"] = next
	}
	t.Logf("500-node graph: %d pages", pages)
	if pages < 2 {
		t.Fatalf("a 500-node graph fit in %d page", pages)
	}
	if len(seenNodes) != 499 || len(seenEdges) != edges {
		t.Fatalf("saw %d nodes and %d edges, want 499 and %d", len(seenNodes), len(seenEdges), edges)
	}
	for k, n := range seenNodes {
		if n != 1 {
			t.Fatalf("node %s seen %d times", k, n)
		}
	}
	for k, n := range seenEdges {
		if n != 1 {
			t.Fatalf("edge %s seen %d times", k, n)
		}
	}
	// root_cause_analysis over the same graph stays within the budget too.
	res := f.call(t, f.c.Admin, "root_cause_analysis", map[string]any{"entityType": "table", "fqn": "warehouse.analytics.reporting.root"})
	if res.IsError || len(res.Text) > tools.DefaultBudget || res.Structured["status"] != "success" ||
		num(res.Structured["upstreamNodesChecked"]) != 499 {
		t.Fatalf("root cause: %d chars, %v", len(res.Text), res.Structured["status"])
	}
}

package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/tools"
)

// graphFixture is a catalog of n tables with a built knowledge graph.
func graphFixture(t *testing.T, cfg tools.Config, n int) *fixture {
	t.Helper()
	f := newFixture(t, cfg)
	for i := 0; i < n; i++ {
		f.c.Table(t, "pg", "dwh", "sales", fmt.Sprintf("t%03d", i), 3)
	}
	if err := f.c.BuildGraph(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSparqlQueryFitsTheBudgetForEveryCaller(t *testing.T) {
	f := graphFixture(t, tools.Config{Budget: 4000}, 30)
	reader := f.c.User(t, "reader", meridian.RoleDataConsumer)
	for _, format := range []string{"json", "csv", "tsv"} {
		t.Run(format, func(t *testing.T) {
			res := f.call(t, reader, "sparql_query", map[string]any{"format": format,
				"query": `SELECT ?c ?d WHERE { ?c a mer:Column ; dct:identifier ?d }`})
			if res.IsError || res.Structured["completeness"] != "TRUNCATED" || len(res.Text) > 4000 {
				t.Fatalf("%d chars: %.300s", len(res.Text), res.Text)
			}
			body := res.Structured["result"].(string)
			if format == "json" && !json.Valid([]byte(body)) {
				t.Fatalf("partial JSON: %.300s", body)
			}
		})
	}
	res := f.call(t, reader, "sparql_query", map[string]any{"query": `ASK { ?t a dcat:Dataset }`})
	if res.IsError || !strings.Contains(res.Structured["result"].(string), `"boolean":true`) {
		t.Fatalf("ask: %s", res.Text)
	}
}

func TestGraphToolErrorsCarryCodesAndHints(t *testing.T) {
	f := graphFixture(t, tools.Config{}, 1)
	reader := f.c.User(t, "reader", meridian.RoleDataConsumer)
	for _, c := range []struct {
		tool   string
		args   map[string]any
		code   string
		status int
	}{
		{"sparql_query", map[string]any{"query": "INSERT DATA { <a:b> <a:c> 1 }"}, "QUERY_FORM_NOT_ALLOWED", 400},
		{"sparql_query", map[string]any{"query": "SELECT * FROM <g:1> WHERE { ?s ?p ?o }"}, "GRAPH_SELECTION_NOT_ALLOWED", 400},
		{"sparql_query", map[string]any{"query": "SELECT * WHERE { ?s ?p ?o }", "format": "turtle"}, "FORMAT_NOT_SUPPORTED", 400},
		{"sparql_query", map[string]any{"query": "ASK { ?s ?p ?o }", "includeDeleted": true}, "admins", 403},
		{"entity_neighborhood", map[string]any{"entityType": "table", "fqn": "pg.dwh.sales.nope"}, "not found", 404},
		{"find_by_tag", map[string]any{"tag": "No.Such"}, "No tag", 404},
	} {
		res := f.call(t, reader, c.tool, c.args)
		if !res.IsError || res.StatusCode != c.status || !strings.Contains(res.Text, c.code) {
			t.Errorf("%s %v: %s", c.tool, c.args, res.Text)
		}
	}
	res := f.call(t, reader, "entity_neighborhood", map[string]any{"entityType": "table", "fqn": "pg.dwh.sales.t000", "depth": 2})
	if res.IsError || !strings.Contains(res.Structured["turtle"].(string), "mer:Column") {
		t.Fatalf("neighbourhood: %.500s", res.Text)
	}
	res = f.call(t, reader, "ontology_describe", map[string]any{})
	if res.IsError || !strings.Contains(res.Text, `"instances":1`) {
		t.Fatalf("ontology: %.500s", res.Text)
	}
}

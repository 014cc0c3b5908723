package shapes_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/graph/shapes"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

var drivers = []struct {
	name string
	cfg  func(t *testing.T) app.Config
}{
	{"SQLite", func(t *testing.T) app.Config { return app.Config{} }},
	{"PostgreSQL", func(t *testing.T) app.Config { return app.Config{DatabaseURL: pgtest.NewDatabase(t)} }},
}

// live opens a catalog whose graph is built and kept in step, with its jobs running.
func live(t *testing.T, cfg app.Config) *catalogtest.Catalog {
	t.Helper()
	c := catalogtest.Open(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.BuildGraph(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { c.Dispatcher.Run(ctx) })
	wg.Go(func() { c.Jobs.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return c
}

// titled requires a title (a display name) on every table, and a data type on every
// column.
const titled = `@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix mer: <https://meridian-catalog.github.io/ontology#> .
@prefix dct: <http://purl.org/dc/terms/> .
<urn:shape:TableTitle> a sh:NodeShape ; sh:targetClass mer:Table ;
  sh:property [ sh:path dct:title ; sh:minCount 1 ; sh:message "a table needs a display name" ] .
<urn:shape:ColumnType> a sh:NodeShape ; sh:targetClass mer:Column ;
  sh:property [ sh:path mer:dataType ; sh:minCount 1 ] .
`

// call runs a tool and decodes its structured answer.
func call(t *testing.T, c *catalogtest.Catalog, p *meridian.Principal, args map[string]any) map[string]any {
	t.Helper()
	res, err := c.Tools.Call(context.Background(), p, "shacl_validate", args)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("shacl_validate %v: %s", args, res.Text)
	}
	return res.Structured
}

// eventuallyConforms polls shacl_validate until it answers conforms == want.
func eventuallyConforms(t *testing.T, c *catalogtest.Catalog, p *meridian.Principal, args map[string]any, want bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		res, err := c.Tools.Call(context.Background(), p, "shacl_validate", args)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError && res.StatusCode != 404 { // 404 until the projection has the entity
			t.Fatalf("shacl_validate %v: %s", args, res.Text)
		}
		out := res.Structured
		if !res.IsError && out["conforms"] == want {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("conforms is %v after 2s, want %v: %v", out["conforms"], want, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestShaclViolationFoundThenFixed(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			c := live(t, d.cfg(t))
			reader := c.User(t, "reader", meridian.RoleDataConsumer)
			fqn := c.Table(t, "pg", "dwh", "sales", "orders", 2)
			other := c.Table(t, "pg", "dwh", "sales", "customers", 1)
			iriOf := func(fqn string) string {
				e, err := c.Entities.Get(ctx, c.Admin, "table", store.ByFQN(fqn), store.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return graph.EntityIRI("table", e.ID())
			}
			ordersIRI, customersIRI := iriOf(fqn), iriOf(other)

			// Stored shapes with the standard operations; bad Turtle is refused by the kind.
			if _, err := c.Entities.Create(ctx, c.Admin, meridian.KindShaclShape, meridian.Entity{"name": "broken", "shapes": "@prefix sh: <"}); meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("broken Turtle: %v, want EInvalid", err)
			}
			if _, err := c.Entities.Create(ctx, c.Admin, meridian.KindShaclShape, meridian.Entity{"name": "noshape", "shapes": "<urn:a> <urn:b> <urn:c> ."}); meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("Turtle without a shape: %v, want EInvalid", err)
			}
			stored := c.Create(t, meridian.KindShaclShape, meridian.Entity{"name": "titled", "shapes": titled})
			if tc, _ := json.Marshal(stored["targetClasses"]); !strings.Contains(string(tc), "ontology#Table") {
				t.Fatalf("targetClasses = %s", tc)
			}

			byName := map[string]any{"shapeName": "titled", "entityType": "table", "fqn": fqn}
			inline := map[string]any{"shapes": titled, "entityType": "table", "fqn": fqn, "depth": 1}
			for _, args := range []map[string]any{byName, inline} {
				out := eventuallyConforms(t, c, reader, args, false)
				text, _ := json.Marshal(out["results"])
				if !strings.Contains(string(text), "a table needs a display name") || !strings.Contains(string(text), "Violation") ||
					!strings.Contains(string(text), "http://purl.org/dc/terms/title") {
					t.Fatalf("results = %s", text)
				}
				if strings.Contains(string(text), customersIRI) || !strings.Contains(string(text), ordersIRI) {
					t.Fatalf("a result about another entity: %s", text)
				}
			}

			tbl, err := c.Entities.Get(ctx, c.Admin, "table", store.ByFQN(fqn), store.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Entities.Patch(ctx, c.Admin, "table", store.ByID(tbl.ID()),
				[]byte(`[{"op":"add","path":"/displayName","value":"Orders"}]`), ""); err != nil {
				t.Fatal(err)
			}
			eventuallyConforms(t, c, reader, byName, true)
			eventuallyConforms(t, c, reader, inline, true)

			// A class focus: the other table still has no title.
			out := call(t, c, reader, map[string]any{"shapeName": "titled", "class": "mer:Table"})
			text, _ := json.Marshal(out["results"])
			if out["conforms"] != false || !strings.Contains(string(text), customersIRI) || strings.Contains(string(text), ordersIRI) {
				t.Fatalf("class focus: %v", out)
			}

			// The whole graph, as a durable job.
			started := call(t, c, reader, map[string]any{"shapeName": "titled", "wholeGraph": true})
			id, _ := started["jobId"].(string)
			var j jobs.Job
			for deadline := time.Now().Add(10 * time.Second); ; {
				if j, err = c.Jobs.Get(ctx, reader, id); err != nil {
					t.Fatal(err)
				}
				if j.Status == jobs.StatusCompleted || j.Status == jobs.StatusFailed || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			var res shapes.JobResult
			if err := json.Unmarshal(j.Result, &res); err != nil || j.Status != jobs.StatusCompleted {
				t.Fatalf("job %s: %s %s", j.Status, j.Error, j.Result)
			}
			if res.Conforms || res.Violations != 1 || res.Checked < 5 || res.Results[0].FocusNode != customersIRI {
				t.Fatalf("whole graph: %+v", res)
			}
		})
	}
}

func TestShaclValidateRefusesBadRequests(t *testing.T) {
	c := live(t, app.Config{})
	reader := c.User(t, "reader", meridian.RoleDataConsumer)
	fqn := c.Table(t, "pg", "dwh", "sales", "orders", 1)
	tests := []struct {
		name string
		args map[string]any
		code int
	}{
		{"no shapes", map[string]any{"entityType": "table", "fqn": fqn}, 400},
		{"both shapes and a name", map[string]any{"shapes": titled, "shapeName": "x", "entityType": "table", "fqn": fqn}, 400},
		{"not Turtle", map[string]any{"shapes": "this is { not turtle", "entityType": "table", "fqn": fqn}, 400},
		{"no focus", map[string]any{"shapes": titled}, 400},
		{"two focuses", map[string]any{"shapes": titled, "entityType": "table", "fqn": fqn, "class": "mer:Table"}, 400},
		{"unknown stored shape", map[string]any{"shapeName": "nope", "entityType": "table", "fqn": fqn}, 404},
		{"unknown entity", map[string]any{"shapes": titled, "entityType": "table", "fqn": "no.such.table"}, 404},
		{"class not an IRI", map[string]any{"shapes": titled, "class": "not a class"}, 400},
		{"too long", map[string]any{"shapes": strings.Repeat("#", meridian.MaxShaclShapes+1), "entityType": "table", "fqn": fqn}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Tools.Call(context.Background(), reader, "shacl_validate", tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.StatusCode != tt.code {
				t.Fatalf("status %d isError %v (%s), want %d", res.StatusCode, res.IsError, res.Text, tt.code)
			}
		})
	}
}

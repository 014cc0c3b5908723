package graph_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// drivers are fresh catalogs on both drivers.
var drivers = []struct {
	name string
	cfg  func(t *testing.T) app.Config
}{
	{"SQLite", func(t *testing.T) app.Config { return app.Config{} }},
	{"PostgreSQL", func(t *testing.T) app.Config { return app.Config{DatabaseURL: pgtest.NewDatabase(t)} }},
}

// live opens a catalog whose graph is built and kept in step by a running dispatcher.
func live(t *testing.T, cfg app.Config) *catalogtest.Catalog {
	t.Helper()
	c := catalogtest.Open(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.BuildGraph(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { c.Dispatcher.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return c
}

// selectCol runs a SELECT and returns the values of its first variable, sorted.
func selectCol(t *testing.T, c *catalogtest.Catalog, p *meridian.Principal, q string, includeDeleted bool) []string {
	t.Helper()
	r, err := c.Graph.Run(context.Background(), p, graph.Request{Query: q, IncludeDeleted: includeDeleted})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for _, row := range r.Rows {
		out = append(out, row[0].Value)
	}
	sort.Strings(out)
	return out
}

// eventually polls until the query answers want, for at most a second.
func eventually(t *testing.T, c *catalogtest.Catalog, p *meridian.Principal, q string, includeDeleted bool, want []string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	var got []string
	for {
		got = selectCol(t, c, p, q, includeDeleted)
		if strings.Join(got, "|") == strings.Join(want, "|") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s\nafter 1s: %v, want %v", q, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProjectionFollowsEveryChangeWithinASecond(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			c := live(t, d.cfg(t))
			reader := c.User(t, "reader", meridian.RoleDataConsumer)
			fqn := c.Table(t, "pg", "dwh", "sales", "orders", 2)
			tbl, _ := c.Entities.Get(ctx, c.Admin, "table", store.ByFQN(fqn), store.GetOptions{})
			byFQN := `SELECT ?d WHERE { ?t dct:identifier "pg.dwh.sales.orders" ; a dcat:Dataset , mer:Table ; dct:description ?d }`
			columns := `SELECT ?n WHERE { ?t dct:identifier "pg.dwh.sales.orders" ; mer:column ?c . ?c a mer:Column ; rdfs:label ?n }`

			eventually(t, c, reader, byFQN, false, []string{"Table orders"})
			eventually(t, c, reader, columns, false, []string{"col_0001", "col_0002"})

			if _, err := c.Entities.Patch(ctx, c.Admin, "table", store.ByID(tbl.ID()),
				[]byte(`[{"op":"replace","path":"/description","value":"Orders, patched"}]`), ""); err != nil {
				t.Fatal(err)
			}
			eventually(t, c, reader, byFQN, false, []string{"Orders, patched"})

			if _, err := c.Entities.Delete(ctx, c.Admin, "table", store.ByID(tbl.ID()), store.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, c, reader, byFQN, false, nil)
			eventually(t, c, reader, columns, false, nil)
			eventually(t, c, c.Admin, byFQN, true, []string{"Orders, patched"})

			if _, err := c.Entities.Restore(ctx, c.Admin, "table", tbl.ID()); err != nil {
				t.Fatal(err)
			}
			eventually(t, c, reader, byFQN, false, []string{"Orders, patched"})

			if _, err := c.Entities.Delete(ctx, c.Admin, "table", store.ByID(tbl.ID()), store.DeleteOptions{Hard: true}); err != nil {
				t.Fatal(err)
			}
			eventually(t, c, c.Admin, byFQN, true, nil)
			eventually(t, c, c.Admin, columns, true, nil)
		})
	}
}

func TestLineageClosureMatchesTheLineageAPI(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			c := live(t, d.cfg(t))
			fq := map[string]string{}
			for _, n := range []string{"raw", "clean", "side", "facts", "report", "other"} {
				fq[n] = c.Table(t, "pg", "dwh", "sales", n, 2)
			}
			for _, e := range [][2]string{{"raw", "clean"}, {"clean", "facts"}, {"side", "facts"}, {"facts", "report"}, {"other", "side"}} {
				_, err := c.Entities.AddLineage(ctx, c.Admin, store.AddLineage{Edge: store.EdgeInput{
					FromEntity: meridian.EntityRef{Type: "table", FullyQualifiedName: fq[e[0]]},
					ToEntity:   meridian.EntityRef{Type: "table", FullyQualifiedName: fq[e[1]]},
					LineageDetails: &store.LineageDetails{ColumnsLineage: []store.ColumnLineage{
						{FromColumns: []string{fq[e[0]] + ".col_0001"}, ToColumn: fq[e[1]] + ".col_0001"}}}}})
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Dispatcher.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			l, err := c.Entities.GetLineage(ctx, c.Admin, "table", store.ByFQN(fq["report"]), store.LineageOptions{Upstream: store.MaxLineageDepth})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, n := range l.Nodes {
				want = append(want, n.FullyQualifiedName)
			}
			sort.Strings(want)
			closure := `SELECT DISTINCT ?f WHERE { ?r dct:identifier "` + fq["report"] + `" ; prov:wasDerivedFrom+ ?u . ?u dct:identifier ?f }`
			eventually(t, c, c.Admin, closure, false, want)
			if len(want) != 5 {
				t.Fatalf("lineage API nodes: %v", want)
			}
			cols := `SELECT DISTINCT ?f WHERE { ?c dct:identifier "` + fq["report"] + `.col_0001" ; prov:wasDerivedFrom+ ?u . ?u dct:identifier ?f }`
			var wantCols []string
			for _, f := range want {
				wantCols = append(wantCols, f+".col_0001")
			}
			eventually(t, c, c.Admin, cols, false, wantCols)

			// A hard delete of an upstream table takes its edges along.
			if _, err := c.Entities.Delete(ctx, c.Admin, "table", store.ByFQN(fq["raw"]), store.DeleteOptions{Hard: true}); err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, f := range want {
				if f != fq["raw"] {
					left = append(left, f)
				}
			}
			eventually(t, c, c.Admin, closure, true, left)
			eventually(t, c, c.Admin, `SELECT ?s WHERE { ?s prov:wasDerivedFrom ?u FILTER NOT EXISTS { ?u ?p ?o } }`, true, nil)
		})
	}
}

func TestFindByTagIncludesDescendantsAndColumns(t *testing.T) {
	ctx := context.Background()
	c := live(t, app.Config{})
	c.Create(t, "classification", meridian.Entity{"name": "PII", "description": "personal data"})
	c.Create(t, "tag", meridian.Entity{"name": "Sensitive", "classification": "PII", "description": "sensitive"})
	c.Create(t, "tag", meridian.Entity{"name": "Email", "parent": "PII.Sensitive", "description": "an email address"})
	c.Create(t, "tag", meridian.Entity{"name": "Public", "classification": "PII", "description": "public"})
	tagged := func(name, tag string, onColumn bool) {
		fqn := c.Table(t, "pg", "dwh", "crm", name, 1)
		label := []any{map[string]any{"tagFQN": tag, "source": "Classification", "labelType": "Manual", "state": "Confirmed"}}
		path := "/tags"
		if onColumn {
			path = "/columns/0/tags"
		}
		patch, _ := json.Marshal([]any{map[string]any{"op": "add", "path": path, "value": label}})
		if _, err := c.Entities.Patch(ctx, c.Admin, "table", store.ByFQN(fqn), patch, ""); err != nil {
			t.Fatal(err)
		}
	}
	tagged("customers", "PII.Sensitive", false)
	tagged("contacts", "PII.Sensitive.Email", true)
	tagged("cities", "PII.Public", false)
	if err := c.Dispatcher.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	reader := c.User(t, "reader", meridian.RoleDataConsumer)
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		page, err := c.Graph.FindByTag(ctx, reader, "PII.Sensitive", []string{"table"}, 1, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			got = append(got, e.FQN)
		}
		if after = page.After; after == "" || pages > 5 {
			break
		}
	}
	if strings.Join(got, ",") != "pg.dwh.crm.contacts,pg.dwh.crm.customers" {
		t.Fatalf("tagged with PII.Sensitive or below: %v", got)
	}
	page, err := c.Graph.FindByTag(ctx, reader, "PII.Sensitive", []string{"dashboard"}, 10, "")
	if err != nil || len(page.Entities) != 0 {
		t.Fatalf("dashboards only: %v %v", page, err)
	}
	if _, err := c.Graph.FindByTag(ctx, reader, "PII.Nope", nil, 10, ""); meridian.ErrorCode(err) != meridian.ENotFound {
		t.Fatalf("unknown tag: %v", err)
	}
	broader := selectCol(t, c, reader, `SELECT ?b WHERE { ?t dct:identifier "PII.Sensitive.Email" ; skos:broader ?p ; skos:inScheme ?s . ?p dct:identifier ?b . ?s a skos:ConceptScheme }`, false)
	if strings.Join(broader, ",") != "PII.Sensitive" {
		t.Fatalf("skos:broader of the child tag: %v", broader)
	}
}

func TestNonAdminCallerQueriesButCannotSeeDeleted(t *testing.T) {
	ctx := context.Background()
	c := live(t, app.Config{})
	c.Table(t, "pg", "dwh", "sales", "orders", 1)
	reader := c.User(t, "reader", meridian.RoleDataConsumer)
	if err := c.Dispatcher.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	ans, err := c.Graph.Query(ctx, reader, graph.Request{Query: "SELECT ?t WHERE { ?t a dcat:Dataset }", Format: graph.FormatCSV})
	if err != nil || !strings.Contains(string(ans.Body), graph.NSID+"table/") || ans.Completeness != graph.Complete {
		t.Fatalf("reader query: %v %s", err, ans.Body)
	}
	if _, err := c.Graph.Query(ctx, reader, graph.Request{Query: "ASK { ?s ?p ?o }", IncludeDeleted: true}); meridian.ErrorCode(err) != meridian.EForbidden {
		t.Fatalf("reader asking for deleted entities: %v", err)
	}
	if _, err := c.Graph.Query(ctx, nil, graph.Request{Query: "ASK { ?s ?p ?o }"}); meridian.ErrorCode(err) != meridian.EUnauthorized {
		t.Fatalf("no caller: %v", err)
	}
	n, err := c.Graph.Neighborhood(ctx, reader, mustLocate(t, c, reader, "table", "pg.dwh.sales.orders"), 2, 200, false)
	if err != nil || n.Nodes < 3 || len(n.Edges) == 0 {
		t.Fatalf("neighbourhood: %+v %v", n, err)
	}
	info, err := c.Graph.DescribeOntology(ctx, reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range info.Classes {
		if cl.IRI == graph.ClassIRI("table") && cl.Instances != 1 {
			t.Fatalf("mer:Table instances: %d", cl.Instances)
		}
	}
}

func mustLocate(t *testing.T, c *catalogtest.Catalog, p *meridian.Principal, kind, fqn string) string {
	t.Helper()
	iri, err := c.Graph.Locate(context.Background(), p, kind, fqn, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return iri
}

func TestRecursiveDeletesAndRestoresReachTheWholeTree(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			c := live(t, d.cfg(t))
			c.Table(t, "pg", "dwh", "sales", "orders", 1)
			c.Table(t, "pg", "dwh", "sales", "lines", 1)
			tables := `SELECT ?n WHERE { ?t a mer:Table ; rdfs:label ?n }`
			eventually(t, c, c.Admin, tables, false, []string{"lines", "orders"})
			sch, err := c.Entities.Get(ctx, c.Admin, "databaseSchema", store.ByFQN("pg.dwh.sales"), store.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Entities.Delete(ctx, c.Admin, "databaseSchema", store.ByID(sch.ID()), store.DeleteOptions{Recursive: true}); err != nil {
				t.Fatal(err)
			}
			eventually(t, c, c.Admin, tables, false, nil)
			eventually(t, c, c.Admin, tables, true, []string{"lines", "orders"})
			if _, err := c.Entities.Restore(ctx, c.Admin, "databaseSchema", sch.ID()); err != nil {
				t.Fatal(err)
			}
			eventually(t, c, c.Admin, tables, false, []string{"lines", "orders"})
			if _, err := c.Entities.Delete(ctx, c.Admin, "databaseService", store.ByFQN("pg"), store.DeleteOptions{Hard: true, Recursive: true}); err != nil {
				t.Fatal(err)
			}
			eventually(t, c, c.Admin, `SELECT ?f WHERE { ?e dct:identifier ?f FILTER(STRSTARTS(?f, "pg")) }`, true, nil)
		})
	}
}

func TestContractsAndLatestTestStatusAreProjected(t *testing.T) {
	ctx := context.Background()
	c := live(t, app.Config{})
	fqn := c.Table(t, "pg", "dwh", "sales", "orders", 1)
	c.Create(t, "dataContract", meridian.Entity{"name": "orders_contract", "entity": map[string]any{"type": "table", "fullyQualifiedName": fqn}})
	tc := c.Create(t, "testCase", meridian.Entity{"name": "col_not_null", "entityLink": "<#E::table::" + fqn + "::columns::col_0001>",
		"testDefinition": map[string]any{"fullyQualifiedName": "columnValuesToBeNotNull", "type": "testDefinition"}})
	if _, err := quality.AddResult(ctx, c.Entities, c.Admin, tc.FQN(), meridian.Entity{"timestamp": float64(time.Now().UnixMilli()),
		"testCaseStatus": "Failed", "result": "3 nulls"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, c, c.Admin, `SELECT ?target WHERE { ?tc a mer:TestCase ; mer:testCaseStatus "Failed" ; mer:entityLink ?x . ?x dct:identifier ?target }`,
		false, []string{fqn + ".col_0001"})
	eventually(t, c, c.Admin, `SELECT ?n WHERE { ?k a mer:DataContract ; mer:entity ?t ; rdfs:label ?n . ?t dct:identifier "`+fqn+`" }`,
		false, []string{"orders_contract"})
	owned := c.User(t, "owner", meridian.RoleDataConsumer)
	patch, _ := json.Marshal([]any{map[string]any{"op": "add", "path": "/owners", "value": []any{map[string]any{"id": owned.ID, "type": "user"}}}})
	if _, err := c.Entities.Patch(ctx, c.Admin, "table", store.ByFQN(fqn), patch, ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, c, c.Admin, `SELECT ?o WHERE { ?t dct:identifier "`+fqn+`" ; mer:owners ?u . ?u rdfs:label ?o }`, false, []string{"owner"})
}

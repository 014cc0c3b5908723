package remote_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/graph/remote"
	"github.com/meridian-catalog/meridian/graph/remote/remotetest"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// TestCatalogKeepsVirtuosoInStep opens a catalog configured for the remote store (as
// `meridian serve` with MERIDIAN_SPARQL_ENDPOINT is) and follows a table through
// create, patch, soft delete, restore and hard delete on Virtuoso, on both drivers.
func TestCatalogKeepsVirtuosoInStep(t *testing.T) {
	remotetest.Client(t, remote.Config{}) // skips (or fails under CI) without Virtuoso
	drivers := []struct {
		name string
		cfg  func(t *testing.T) app.Config
	}{
		{"SQLite", func(t *testing.T) app.Config { return app.Config{} }},
		{"PostgreSQL", func(t *testing.T) app.Config { return app.Config{DatabaseURL: pgtest.NewDatabase(t)} }},
	}
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			b := make([]byte, 6)
			_, _ = rand.Read(b)
			g := "urn:meridian:test:catalog:" + hex.EncodeToString(b)
			t.Setenv(remote.EnvGraph, g)
			cfg := d.cfg(t)
			cfg.Graph = app.GraphConfig{Endpoint: remotetest.Endpoint(), UpdateEndpoint: remotetest.Endpoint()}
			c := catalogtest.Open(t, cfg)
			backend, ok := c.Graph.Backend().(*remote.Backend)
			if !ok {
				t.Fatalf("the catalog's graph backend is %T, want the remote one", c.Graph.Backend())
			}
			t.Cleanup(func() { _ = backend.Reset(context.Background()) })
			ctx, cancel := context.WithCancel(context.Background())
			if err := c.BuildGraph(ctx); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Go(func() { c.Dispatcher.Run(ctx) })
			t.Cleanup(func() { cancel(); wg.Wait() })

			reader := c.User(t, "reader", meridian.RoleDataConsumer)
			fqn := c.Table(t, "pg", "dwh", "sales", "orders", 2)
			upFQN := c.Table(t, "pg", "dwh", "sales", "raw_orders", 1)
			tbl, _ := c.Entities.Get(ctx, c.Admin, "table", store.ByFQN(fqn), store.GetOptions{})
			if _, err := c.Entities.AddLineage(ctx, c.Admin, store.AddLineage{Edge: store.EdgeInput{
				FromEntity: meridian.EntityRef{Type: "table", FullyQualifiedName: upFQN},
				ToEntity:   meridian.EntityRef{Type: "table", FullyQualifiedName: fqn}}}); err != nil {
				t.Fatal(err)
			}
			byFQN := `SELECT ?d WHERE { ?t dct:identifier "pg.dwh.sales.orders" ; a dcat:Dataset ; dct:description ?d }`
			columns := `SELECT ?n WHERE { ?t dct:identifier "pg.dwh.sales.orders" ; mer:column ?c . ?c rdfs:label ?n }`
			lineage := `SELECT ?id WHERE { ?t dct:identifier "pg.dwh.sales.orders" ; prov:wasDerivedFrom+ ?u . ?u dct:identifier ?id }`
			eventually := func(p *meridian.Principal, q string, includeDeleted bool, want ...string) {
				t.Helper()
				deadline := time.Now().Add(15 * time.Second)
				for {
					r, err := c.Graph.Run(ctx, p, graph.Request{Query: q, IncludeDeleted: includeDeleted})
					if err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					var got []string
					for _, row := range r.Rows {
						got = append(got, row[0].Value)
					}
					sort.Strings(got)
					if strings.Join(got, "|") == strings.Join(want, "|") {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s\nafter 15s: %v, want %v", q, got, want)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			eventually(reader, byFQN, false, "Table orders")
			eventually(reader, columns, false, "col_0001", "col_0002")
			eventually(reader, lineage, false, upFQN)

			if _, err := c.Entities.Patch(ctx, c.Admin, "table", store.ByID(tbl.ID()),
				[]byte(`[{"op":"replace","path":"/description","value":"Orders, patched"}]`), ""); err != nil {
				t.Fatal(err)
			}
			eventually(reader, byFQN, false, "Orders, patched")
			if _, err := c.Entities.Delete(ctx, c.Admin, "table", store.ByID(tbl.ID()), store.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(reader, byFQN, false)
			eventually(reader, columns, false)
			eventually(c.Admin, byFQN, true, "Orders, patched")
			if _, err := c.Entities.Restore(ctx, c.Admin, "table", tbl.ID()); err != nil {
				t.Fatal(err)
			}
			eventually(reader, byFQN, false, "Orders, patched")
			eventually(reader, lineage, false, upFQN)
			if _, err := c.Entities.Delete(ctx, c.Admin, "table", store.ByID(tbl.ID()), store.DeleteOptions{Hard: true}); err != nil {
				t.Fatal(err)
			}
			eventually(c.Admin, byFQN, true)
			eventually(c.Admin, columns, true)
		})
	}
}

// TestSameAnswersOnTheCatalogsProjection projects one real catalog (tables with
// columns, a lineage chain with a branch, tags in a hierarchy, a glossary term, an
// owner) into Virtuoso, as the server does, and into an embedded store, and asks both
// the fixed set of questions: lineage closure, a tag's descendants, find_by_tag, a
// two-join SELECT and an entity's neighbourhood.
func TestSameAnswersOnTheCatalogsProjection(t *testing.T) {
	remotetest.Client(t, remote.Config{})
	ctx := context.Background()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	t.Setenv(remote.EnvGraph, "urn:meridian:test:same:"+hex.EncodeToString(b))
	c := catalogtest.Open(t, app.Config{Graph: app.GraphConfig{Endpoint: remotetest.Endpoint(), UpdateEndpoint: remotetest.Endpoint()}})
	t.Cleanup(func() { _ = c.Graph.Backend().Reset(context.Background()) })

	fq := map[string]string{}
	for _, n := range []string{"raw", "clean", "side", "facts", "report", "other"} {
		fq[n] = c.Table(t, "pg", "dwh", "sales", n, 3)
	}
	for _, e := range [][2]string{{"raw", "clean"}, {"clean", "facts"}, {"side", "facts"}, {"facts", "report"}, {"other", "side"}} {
		if _, err := c.Entities.AddLineage(ctx, c.Admin, store.AddLineage{Edge: store.EdgeInput{
			FromEntity: meridian.EntityRef{Type: "table", FullyQualifiedName: fq[e[0]]},
			ToEntity:   meridian.EntityRef{Type: "table", FullyQualifiedName: fq[e[1]]},
			LineageDetails: &store.LineageDetails{ColumnsLineage: []store.ColumnLineage{
				{FromColumns: []string{fq[e[0]] + ".col_0001"}, ToColumn: fq[e[1]] + ".col_0001"}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	c.Create(t, "classification", meridian.Entity{"name": "PII", "description": "personal data"})
	c.Create(t, "tag", meridian.Entity{"name": "Sensitive", "classification": "PII", "description": "sensitive"})
	c.Create(t, "tag", meridian.Entity{"name": "Email", "parent": "PII.Sensitive", "description": "emails"})
	label := func(fqn string) map[string]any {
		return map[string]any{"tagFQN": fqn, "source": "Classification", "labelType": "Manual", "state": "Confirmed"}
	}
	for n, tag := range map[string]string{"facts": "PII.Sensitive", "report": "PII.Sensitive.Email"} {
		tbl, err := c.Entities.Get(ctx, c.Admin, "table", store.ByFQN(fq[n]), store.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		patch := fmt.Sprintf(`[{"op":"add","path":"/tags","value":[%s]}]`, mustJSON(t, label(tag)))
		if _, err := c.Entities.Patch(ctx, c.Admin, "table", store.ByID(tbl.ID()), []byte(patch), ""); err != nil {
			t.Fatal(err)
		}
	}

	// Both stores projected from the same catalog, by the same projector.
	if err := c.BuildGraph(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Graph.Sync().Rebuild(ctx, &graph.CatalogSource{Entities: c.Entities}, nil); err != nil {
		t.Fatal(err)
	}
	emb := graph.NewEmbedded()
	embSync := graph.NewSync(c.Entities.Registry(), &graph.CatalogSource{Entities: c.Entities}, emb, nil)
	if _, err := embSync.Rebuild(ctx, &graph.CatalogSource{Entities: c.Entities}, nil); err != nil {
		t.Fatal(err)
	}
	services := map[string]*graph.Service{"virtuoso": c.Graph, "embedded": graph.NewService(graph.Config{Backend: emb, Sync: embSync})}
	reader := c.User(t, "reader", meridian.RoleDataConsumer)
	report := func(n string) string {
		tbl, _ := c.Entities.Get(ctx, c.Admin, "table", store.ByFQN(fq[n]), store.GetOptions{})
		return graph.EntityIRI("table", tbl.ID())
	}
	questions := []struct {
		name string
		ask  func(s *graph.Service) (string, error)
	}{
		{"lineage closure", func(s *graph.Service) (string, error) {
			return selectAll(ctx, s, reader, `SELECT ?id WHERE { <`+report("report")+`> prov:wasDerivedFrom+ ?u . ?u dct:identifier ?id }`)
		}},
		{"column lineage closure", func(s *graph.Service) (string, error) {
			return selectAll(ctx, s, reader, `SELECT ?id WHERE { ?c dct:identifier "`+fq["report"]+`.col_0001" ; prov:wasDerivedFrom+ ?u . ?u dct:identifier ?id }`)
		}},
		{"tag descendants", func(s *graph.Service) (string, error) {
			return selectAll(ctx, s, reader, `SELECT ?id WHERE { ?top dct:identifier "PII.Sensitive" . ?t skos:broader* ?top . ?t dct:identifier ?id }`)
		}},
		{"find_by_tag", func(s *graph.Service) (string, error) {
			page, err := s.FindByTag(ctx, reader, "PII.Sensitive", nil, 50, "")
			if err != nil {
				return "", err
			}
			var out []string
			for _, e := range page.Entities {
				out = append(out, e.EntityType+" "+e.FQN)
			}
			return strings.Join(out, "\n"), nil
		}},
		{"two-join select", func(s *graph.Service) (string, error) {
			return selectAll(ctx, s, reader, `SELECT ?down ?col WHERE { ?d prov:wasDerivedFrom ?u . ?u dct:identifier "`+fq["facts"]+
				`" . ?d dct:identifier ?down ; mer:column ?c . ?c rdfs:label ?col }`)
		}},
		{"neighbourhood", func(s *graph.Service) (string, error) {
			n, err := s.Neighborhood(ctx, reader, report("facts"), 2, 2000, false)
			if err != nil {
				return "", err
			}
			var out []string
			for _, tr := range n.Triples {
				out = append(out, fmt.Sprint(tr))
			}
			sort.Strings(out)
			return string(n.Completeness) + "\n" + strings.Join(out, "\n"), nil
		}},
	}
	for _, q := range questions {
		t.Run(q.name, func(t *testing.T) {
			want, err := q.ask(services["embedded"])
			if err != nil || want == "" {
				t.Fatalf("embedded: %q, %v", want, err)
			}
			got, err := q.ask(services["virtuoso"])
			if err != nil {
				t.Fatalf("virtuoso: %v", err)
			}
			if got != want {
				t.Fatalf("virtuoso answers\n%s\nthe embedded store\n%s", got, want)
			}
		})
	}
}

// selectAll runs a SELECT and returns its rows, sorted, one a line.
func selectAll(ctx context.Context, s *graph.Service, p *meridian.Principal, q string) (string, error) {
	r, err := s.Run(ctx, p, graph.Request{Query: q, Limit: graph.MaxRows})
	if err != nil {
		return "", err
	}
	var out []string
	for _, row := range r.Rows {
		var cells []string
		for _, v := range row {
			cells = append(cells, v.Value)
		}
		out = append(out, strings.Join(cells, " "))
	}
	sort.Strings(out)
	return string(r.Completeness) + "\n" + strings.Join(out, "\n"), nil
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

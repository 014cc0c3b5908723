package remote_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

package vectors_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/vectors"
)

var admin = meridian.System

// configs are fresh catalogs on both drivers.
var configs = []struct {
	name string
	cfg  func(t *testing.T) app.Config
}{
	{"SQLite", func(t *testing.T) app.Config { return app.Config{DataDir: t.TempDir()} }},
	{"PostgreSQL", func(t *testing.T) app.Config {
		return app.Config{DataDir: t.TempDir(), DatabaseURL: pgtest.NewDatabase(t)}
	}},
}

func openCatalog(t *testing.T, cfg app.Config) *app.Catalog {
	t.Helper()
	c, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// createSchema creates the database service shop, its database dw and the schema
// public in it, and returns the schema's FQN.
func createSchema(tb testing.TB, c *app.Catalog) string {
	tb.Helper()
	for _, e := range []struct{ kind, name, parent string }{{"databaseService", "shop", ""}, {"database", "dw", "shop"}, {"databaseSchema", "public", "shop.dw"}} {
		body := meridian.Entity{"name": e.name}
		switch e.kind {
		case "databaseService":
			body["serviceType"] = "Postgres"
		case "database":
			body["service"] = e.parent
		default:
			body["database"] = e.parent
		}
		if _, err := c.Entities.Create(context.Background(), admin, e.kind, body); err != nil {
			tb.Fatal(err)
		}
	}
	return "shop.dw.public"
}

func term(t *testing.T, c *app.Catalog, name, desc string) meridian.Entity {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Entities.Create(ctx, admin, "glossary", meridian.Entity{"name": "Business", "description": "terms"}); err != nil && meridian.ErrorCode(err) != meridian.EConflict {
		t.Fatal(err)
	}
	res, err := c.Entities.Create(ctx, admin, "glossaryTerm", meridian.Entity{"name": name, "description": desc, "glossary": "Business"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Entity
}

func vectorSearch(t *testing.T, c *app.Catalog, mode search.Mode, text string) []search.Hit {
	t.Helper()
	res, err := c.Search.Search(context.Background(), admin, search.Query{Mode: mode, Text: text, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	return res.Hits
}

func first(hits []search.Hit) string {
	if len(hits) == 0 {
		return ""
	}
	return hits[0].FQN
}

// TestIndexerResumesAfterRestart: entities written while no dispatcher runs are
// embedded when a restarted catalog delivers the outbox from the indexer's position;
// deletes follow.
func TestIndexerResumesAfterRestart(t *testing.T) {
	for _, d := range configs {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := d.cfg(t)
			c := openCatalog(t, cfg)
			term(t, c, "CustomerOrders", "Orders placed by customers, with their totals")
			if err := c.Dispatcher.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			hits := vectorSearch(t, c, search.Vector, "customer orders")
			if first(hits) != "Business.CustomerOrders" || hits[0].Passage == "" || len(hits[0].Source) == 0 {
				t.Fatalf("hits = %+v", hits)
			}
			pos, _ := c.Dispatcher.Position(ctx, vectors.ConsumerName)
			// Written while the indexer is stopped, as after a crash.
			term(t, c, "WarehouseStock", "Units on hand in each depot")
			c.Close()

			c = openCatalog(t, cfg)
			if got := first(vectorSearch(t, c, search.Vector, "warehouse stock units")); got == "Business.WarehouseStock" {
				t.Fatal("found before the outbox was delivered")
			}
			if err := c.Dispatcher.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if got := first(vectorSearch(t, c, search.Vector, "warehouse stock units")); got != "Business.WarehouseStock" {
				t.Errorf("after the restart: first hit %q", got)
			}
			if after, _ := c.Dispatcher.Position(ctx, vectors.ConsumerName); after <= pos {
				t.Errorf("position %d, was %d", after, pos)
			}
			if _, err := c.Entities.Delete(ctx, admin, "glossaryTerm", store.ByFQN("Business.WarehouseStock"), store.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := c.Dispatcher.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if got := first(vectorSearch(t, c, search.Vector, "warehouse stock units")); got == "Business.WarehouseStock" {
				t.Error("a soft-deleted term is still found")
			}
		})
	}
}

// hashingEndpoint serves the hashing embedder's vectors as an OpenAI-compatible
// endpoint: another model with the same dimension.
func hashingEndpoint(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		vs, _ := vectors.Hashing{}.Embed(r.Context(), req.Input)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var a struct {
			Data []item `json:"data"`
		}
		for i, v := range vs {
			a.Data = append(a.Data, item{i, v})
		}
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestModelChangeNeverMixesVectors: vectors embedded by model A are not searched by
// model B, even of the same dimension, until a reindex embeds them with B; the reindex
// then removes A's.
func TestModelChangeNeverMixesVectors(t *testing.T) {
	for _, d := range configs {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := d.cfg(t)
			c := openCatalog(t, cfg)
			term(t, c, "CustomerOrders", "Orders placed by customers")
			if err := c.Dispatcher.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Indexer.Reindex(ctx, nil, nil); err != nil {
				t.Fatal(err)
			}
			c.Close()

			cfg.Embedder = app.EmbedderConfig{Kind: app.EmbedderHTTP, HTTPConfig: vectors.HTTPConfig{URL: hashingEndpoint(t), Model: "b", Dimension: vectors.HashingDimension}}
			c = openCatalog(t, cfg)
			if current, _ := c.Indexer.Current(ctx); current {
				t.Error("the index claims to be current for model B")
			}
			if hits := vectorSearch(t, c, search.Vector, "customer orders"); len(hits) != 0 {
				t.Fatalf("model B found model A's vectors: %+v", hits)
			}
			res, err := c.Indexer.Reindex(ctx, nil, nil)
			if err != nil || res.Embedded == 0 || res.Pruned == 0 {
				t.Fatalf("reindex = %+v, %v", res, err)
			}
			if got := first(vectorSearch(t, c, search.Vector, "customer orders")); got != "Business.CustomerOrders" {
				t.Errorf("after the reindex: %q", got)
			}
			if n, _ := c.Vectors.Count(ctx, vectors.HashingModel, vectors.HashingDimension); n != 0 {
				t.Errorf("model A kept %d entities", n)
			}
			if current, _ := c.Indexer.Current(ctx); !current {
				t.Error("not current after the reindex")
			}
		})
	}
}

// TestIndexerHandlesABatchInOrder: events delivered as one batch are indexed as if one
// by one: an entity changed twice is found by its last text, one created then hard
// deleted in the same batch has no vectors, and the position passes the batch.
func TestIndexerHandlesABatchInOrder(t *testing.T) {
	for _, d := range configs {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			c := openCatalog(t, d.cfg(t))
			term(t, c, "Alpha", "Orders placed by customers, with their totals")
			beta := term(t, c, "Beta", "Refunds granted to customers")
			patch := []byte(`[{"op": "replace", "path": "/description", "value": "Units on hand in each depot"}]`)
			if _, err := c.Entities.Patch(ctx, admin, "glossaryTerm", store.ByFQN("Business.Alpha"), patch, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Entities.Delete(ctx, admin, "glossaryTerm", store.ByFQN("Business.Beta"), store.DeleteOptions{Hard: true}); err != nil {
				t.Fatal(err)
			}
			if err := c.Dispatcher.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if got := first(vectorSearch(t, c, search.Vector, "units on hand in each depot")); got != "Business.Alpha" {
				t.Errorf("first hit %q, want the patched Business.Alpha", got)
			}
			if _, _, found, err := c.Vectors.Stored(ctx, beta.ID(), vectors.HashingModel, vectors.HashingDimension); err != nil || found {
				t.Errorf("the hard-deleted term has vectors (found %v, err %v)", found, err)
			}
			status, err := c.Dispatcher.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range status {
				if s.Name == vectors.ConsumerName && s.Pending != 0 {
					t.Errorf("%d events still pending", s.Pending)
				}
			}
		})
	}
}

package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/vectors"
)

var system = &meridian.Principal{Name: "system", Roles: []string{meridian.RoleAdmin}}

// drivers are the two stores a catalog opens on; each returns a Config on a fresh one.
var drivers = []struct {
	name   string
	config func(t *testing.T) app.Config
}{
	{"sqlite", func(t *testing.T) app.Config { return app.Config{DataDir: t.TempDir()} }},
	{"postgres", func(t *testing.T) app.Config {
		return app.Config{DataDir: t.TempDir(), DatabaseURL: pgtest.NewDatabase(t)}
	}},
}

func open(t *testing.T, cfg app.Config) *app.Catalog {
	t.Helper()
	c, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestOpenWiresEveryPart: a fresh catalog is ready, seeded with the built-in test
// definitions, serves the tools, and writes through the engine.
func TestOpenWiresEveryPart(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			c := open(t, d.config(t))
			if c.Driver == nil || c.Schemas == nil || c.Entities == nil || c.Auth == nil || c.Dispatcher == nil || c.Tools == nil {
				t.Fatalf("a part is missing: %+v", c)
			}
			if err := c.Ready(ctx); err != nil {
				t.Errorf("Ready = %v", err)
			}
			defs, err := c.Entities.List(ctx, system, "testDefinition", store.ListOptions{Limit: 1})
			if err != nil || defs.Total == 0 {
				t.Errorf("test definitions: %d, %v; want the built-in ones", defs.Total, err)
			}
			if n := len(c.Tools.Tools()); n < 16 || c.Tools.ReadOnly() {
				t.Errorf("tools: %d, read-only %v", n, c.Tools.ReadOnly())
			}
			res, err := c.Tools.Call(ctx, system, "create_glossary", map[string]any{"name": "G", "description": "d"})
			if err != nil || res.IsError {
				t.Fatalf("create_glossary: %v %s", err, res.Text)
			}
			if _, err := c.Entities.Get(ctx, system, "glossary", store.ByFQN("G"), store.GetOptions{}); err != nil {
				t.Errorf("the tool's write is not in the engine: %v", err)
			}
		})
	}
}

// TestOpenKeepsTheCatalog: reopening the data directory finds the entities and the
// signing key of the previous run.
func TestOpenKeepsTheCatalog(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := d.config(t)
			c, err := app.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Entities.Create(ctx, system, "glossary", meridian.Entity{"name": "Kept", "description": "d"}); err != nil {
				t.Fatal(err)
			}
			u, err := c.Entities.Create(ctx, system, "user", meridian.Entity{"name": "ann", "email": "ann@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			raw, _, err := c.Auth.Issue(ctx, auth.Subject{ID: u.Entity.ID(), Name: "ann"}, meridian.TokenTypePersonal, time.Hour, "t")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}

			c = open(t, cfg)
			if _, err := c.Entities.Get(ctx, system, "glossary", store.ByFQN("Kept"), store.GetOptions{}); err != nil {
				t.Errorf("the glossary is gone: %v", err)
			}
			if p, err := c.Auth.Verify(ctx, raw); err != nil || p.Name != "ann" {
				t.Errorf("the token of the previous run: %v, %v", p, err)
			}
		})
	}
}

// TestOpenAppliesTheToolSettings: ReadOnly and Budget reach the tools; a budget below
// the tools' minimum is refused.
func TestOpenAppliesTheToolSettings(t *testing.T) {
	c := open(t, app.Config{DataDir: t.TempDir(), ReadOnly: true, Budget: 5000})
	if !c.Tools.ReadOnly() || c.Tools.Env().Budget != 5000 {
		t.Errorf("read-only %v, budget %d; want true, 5000", c.Tools.ReadOnly(), c.Tools.Env().Budget)
	}
	if _, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), Budget: 10}); err == nil {
		t.Error("Open accepted a budget of 10 characters")
	}
}

func TestOpenRefusesAnEmptyDataDir(t *testing.T) {
	for _, cfg := range []app.Config{{}, {DataDir: "  "}, {DatabaseURL: "postgres://x"}} {
		if _, err := app.Open(context.Background(), cfg); err == nil {
			t.Errorf("Open(%+v) = nil error", cfg)
		}
	}
}

// TestOpenDriverOpensTheSameStore: OpenDriver (the bench's raw lookups) reads the
// database of a catalog opened with the same Config.
func TestOpenDriverOpensTheSameStore(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := d.config(t)
			c, err := app.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Entities.Create(ctx, system, "glossary", meridian.Entity{"name": "Raw", "description": "d"})
			if cerr := c.Close(); err != nil || cerr != nil {
				t.Fatal(err, cerr)
			}
			db, err := app.OpenDriver(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			tx, err := db.Begin(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.GetByFQN(ctx, "glossary", "Raw"); err != nil {
				t.Errorf("GetByFQN: %v", err)
			}
		})
	}
}

func TestNewEmbedderChoosesTheConfiguredModel(t *testing.T) {
	for _, tc := range []struct {
		kind, model string
		dim         int
	}{
		{"", "hashing-v1", 512},
		{"hashing", "hashing-v1", 512},
		{"use-lite", "use-lite-en@0.2.0-fp16", 512},
	} {
		e, err := app.NewEmbedder(app.EmbedderConfig{Kind: tc.kind, HTTPConfig: vectors.HTTPConfig{MaxBatch: 1}})
		if err != nil {
			t.Fatalf("%q: %v", tc.kind, err)
		}
		if e.Model() != tc.model || e.Dimension() != tc.dim {
			t.Errorf("%q: model %s dimension %d, want %s %d", tc.kind, e.Model(), e.Dimension(), tc.model, tc.dim)
		}
	}
	if _, err := app.NewEmbedder(app.EmbedderConfig{Kind: "word2vec"}); err == nil || !strings.Contains(err.Error(), "use-lite") {
		t.Fatalf("an unknown embedder must list the known ones: %v", err)
	}
}

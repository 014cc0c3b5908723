package storetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/postgres"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/store/sqlite"
)

// Engine benchmarks on both drivers: the write and read paths the REST API and the
// MCP tools spend their time in, below HTTP. Run with
//
//	go test ./store/storetest -run '^$' -bench . -benchtime 2000x
//
// PostgreSQL sub-benchmarks skip when no server is reachable (see pgtest).

// benchDrivers opens a fresh database per driver.
var benchDrivers = []struct {
	name string
	open func(b *testing.B) store.Driver
}{
	{"sqlite", func(b *testing.B) store.Driver {
		db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "catalog.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}},
	{"postgres", func(b *testing.B) store.Driver {
		url := pgtest.NewDatabase(b)
		db, err := postgres.Open(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}},
}

// benchCatalog is an engine over a fresh driver with a service, a database, a schema
// and the tags the benchmark tables carry.
type benchCatalog struct {
	ctx   context.Context
	e     *store.Entities
	admin *meridian.Principal
}

func newBenchCatalog(b *testing.B, open func(b *testing.B) store.Driver) *benchCatalog {
	b.Helper()
	v, err := schema.New()
	if err != nil {
		b.Fatal(err)
	}
	c := &benchCatalog{ctx: context.Background(), admin: &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}}
	c.e = store.New(store.Config{Driver: open(b), Registry: meridian.DefaultRegistry(), Validator: v})
	for _, s := range []struct{ kind, body string }{
		{"classification", `{"name":"Tier","description":"Business criticality."}`},
		{"tag", `{"name":"Tier1","classification":"Tier","description":"Tier 1."}`},
		{"classification", `{"name":"PII","description":"Personal data."}`},
		{"tag", `{"name":"Sensitive","classification":"PII","description":"Sensitive."}`},
		{"databaseService", `{"name":"warehouse","serviceType":"Postgres"}`},
		{"database", `{"name":"sales","service":"warehouse"}`},
		{"databaseSchema", `{"name":"public","database":"warehouse.sales"}`},
	} {
		var body meridian.Entity
		if err := json.Unmarshal([]byte(s.body), &body); err != nil {
			b.Fatal(err)
		}
		if _, err := c.e.Create(c.ctx, c.admin, s.kind, body); err != nil {
			b.Fatalf("create %s: %v", s.kind, err)
		}
	}
	return c
}

// table returns the create body of table i: 20 columns, half of them described, a Tier
// tag, and a PII tag on the email column, like the bench harness's tables.
func benchTable(i int) meridian.Entity {
	kinds := []struct{ suffix, dataType string }{
		{"id", "BIGINT"}, {"name", "VARCHAR"}, {"amount", "DECIMAL"}, {"created_at", "TIMESTAMP"},
		{"status", "VARCHAR"}, {"email", "VARCHAR"}, {"count", "INT"}, {"flag", "BOOLEAN"},
		{"score", "DOUBLE"}, {"notes", "TEXT"},
	}
	cols := make([]any, 0, 20)
	for j := 0; j < 20; j++ {
		k := kinds[j%len(kinds)]
		name := fmt.Sprintf("%s_%d_%s", []string{"customer", "order"}[j/len(kinds)], j, k.suffix)
		c := map[string]any{"name": name, "dataType": k.dataType}
		if k.dataType == "VARCHAR" {
			c["dataLength"] = 256.0
		}
		if j%2 == 0 {
			c["description"] = "The " + name + " of the row."
		}
		if k.suffix == "email" {
			c["tags"] = []any{map[string]any{"tagFQN": "PII.Sensitive"}}
		}
		cols = append(cols, c)
	}
	return meridian.Entity{
		"name":           fmt.Sprintf("fact_order_daily_%d", i),
		"databaseSchema": "warehouse.sales.public",
		"description":    "Daily order, one row per order and customer. Loaded nightly from the ERP export.",
		"tableType":      "Regular",
		"columns":        cols,
		"tags":           []any{map[string]any{"tagFQN": "Tier.Tier1"}},
	}
}

func benchFQN(i int) string { return fmt.Sprintf("warehouse.sales.public.fact_order_daily_%d", i) }

// load creates tables 0..n-1.
func (c *benchCatalog) load(b *testing.B, n int) {
	b.Helper()
	for i := 0; i < n; i++ {
		if _, err := c.e.Create(c.ctx, c.admin, "table", benchTable(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateTable creates a table with 20 columns and tags: draft, validation, the
// row, relations, the version snapshot, the search document and the outbox event in
// one transaction.
func BenchmarkCreateTable(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			c := newBenchCatalog(b, d.open)
			i := 0
			start := cpuTime()
			for b.Loop() {
				if _, err := c.e.Create(c.ctx, c.admin, "table", benchTable(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportCPU(b, start)
		})
	}
}

// benchTables is how many tables the read and patch benchmarks spread over.
const benchTables = 200

// BenchmarkPatch changes a table's description by name with JSON Patch: every call
// makes a new version.
func BenchmarkPatch(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			c := newBenchCatalog(b, d.open)
			c.load(b, benchTables)
			i := 0
			start := cpuTime()
			for b.Loop() {
				patch := fmt.Sprintf(`[{"op":"add","path":"/description","value":"Description number %d."}]`, i)
				if _, err := c.e.Patch(c.ctx, c.admin, "table", store.ByFQN(benchFQN(i%benchTables)), []byte(patch), ""); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkGetByName reads a table by name with every field of the table kind, as
// get_entity_details does.
func BenchmarkGetByName(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			c := newBenchCatalog(b, d.open)
			c.load(b, benchTables)
			k, _ := meridian.DefaultRegistry().Kind("table")
			fields := strings.Join(k.Fields, ",")
			i := 0
			start := cpuTime()
			for b.Loop() {
				if _, err := c.e.Get(c.ctx, c.admin, "table", store.ByFQN(benchFQN(i%benchTables)), store.GetOptions{Fields: fields}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkCreateTableConcurrent creates tables from 8 goroutines at once, as the
// bench's 8 ingest clients do: on SQLite the writes share group commits.
func BenchmarkCreateTableConcurrent(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			c := newBenchCatalog(b, d.open)
			var next atomic.Int64
			start := cpuTime()
			b.SetParallelism(8 / runtime.GOMAXPROCS(0))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.e.Create(c.ctx, c.admin, "table", benchTable(int(next.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportCPU(b, start)
		})
	}
}

// BenchmarkBulkCreateTables creates tables 100 per bulk call (b.N counts tables).
func BenchmarkBulkCreateTables(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			c := newBenchCatalog(b, d.open)
			start := cpuTime()
			for i := 0; i < b.N; i += 100 {
				bodies := make([]meridian.Entity, 0, 100)
				for j := i; j < min(i+100, b.N); j++ {
					bodies = append(bodies, benchTable(j))
				}
				if _, err := c.e.BulkCreateOrUpdate(c.ctx, c.admin, "table", bodies); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkBulkCreateTablesConcurrent creates tables 100 per bulk call from 8
// goroutines at once, as the bench's 8 bulk clients do (b.N counts tables).
func BenchmarkBulkCreateTablesConcurrent(b *testing.B) {
	for _, d := range benchDrivers {
		b.Run(d.name, func(b *testing.B) {
			c := newBenchCatalog(b, d.open)
			const clients, per = 8, 100
			var next atomic.Int64
			start := cpuTime()
			var wg sync.WaitGroup
			for range clients {
				wg.Go(func() {
					for {
						first := int(next.Add(per)) - per
						if first >= b.N {
							return
						}
						bodies := make([]meridian.Entity, 0, per)
						for j := first; j < min(first+per, b.N); j++ {
							bodies = append(bodies, benchTable(j))
						}
						items, err := c.e.BulkCreateOrUpdate(c.ctx, c.admin, "table", bodies)
						if err != nil {
							b.Error(err)
							return
						}
						for _, it := range items {
							if it.Err != nil {
								b.Error(it.Err)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			reportCPU(b, start)
		})
	}
}

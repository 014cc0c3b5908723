package graph_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// benchTables is how many tables BenchmarkRebuildFromTheCatalog's catalog holds (with
// their service, database and schemas, a tag and lineage from an earlier table), 2000
// unless MERIDIAN_BENCH_TABLES says otherwise.
func benchTables() int {
	if n, err := strconv.Atoi(os.Getenv("MERIDIAN_BENCH_TABLES")); err == nil && n > 0 {
		return n
	}
	return 2000
}

// BenchmarkRebuildFromTheCatalog rebuilds the projection of a catalog of benchTables
// tables on both drivers and reports entities/s.
func BenchmarkRebuildFromTheCatalog(b *testing.B) {
	b.Run("SQLite", func(b *testing.B) { benchmarkRebuild(b, app.Config{}) })
	b.Run("PostgreSQL", func(b *testing.B) { benchmarkRebuild(b, app.Config{DatabaseURL: pgtest.NewDatabase(b)}) })
}

func benchmarkRebuild(b *testing.B, cfg app.Config) {
	ctx := context.Background()
	c := catalogtest.Open(b, cfg)
	c.Table(b, "svc", "db", "s0", "seed", 1)
	for i := 1; i < 10; i++ {
		c.Create(b, "databaseSchema", meridian.Entity{"name": fmt.Sprint("s", i), "database": "svc.db"})
	}
	c.Create(b, "classification", meridian.Entity{"name": "Tier", "description": "Tiers"})
	c.Create(b, "tag", meridian.Entity{"name": "Gold", "description": "Gold", "classification": "Tier"})
	const batch = 500
	tables := benchTables()
	for from := 0; from < tables; from += batch {
		var bodies []meridian.Entity
		for i := from; i < min(from+batch, tables); i++ {
			cols := make([]any, 6)
			for j := range cols {
				cols[j] = map[string]any{"name": fmt.Sprintf("c%d", j), "dataType": "INT", "description": "A column"}
			}
			bodies = append(bodies, meridian.Entity{"name": fmt.Sprint("t", i), "databaseSchema": fmt.Sprint("svc.db.s", i%10),
				"columns": cols, "description": fmt.Sprint("Table ", i), "tags": []any{map[string]any{"tagFQN": "Tier.Gold"}}})
		}
		items, err := c.Entities.BulkCreateOrUpdate(ctx, c.Admin, "table", bodies)
		if err != nil {
			b.Fatal(err)
		}
		for _, it := range items {
			if it.Err != nil {
				b.Fatal(it.Err)
			}
		}
	}
	for i := 1; i < tables; i += 3 {
		if _, err := c.Entities.AddLineage(ctx, c.Admin, store.AddLineage{Edge: store.EdgeInput{
			FromEntity: meridian.EntityRef{Type: "table", FullyQualifiedName: fmt.Sprint("svc.db.s", (i/2)%10, ".t", i/2)},
			ToEntity:   meridian.EntityRef{Type: "table", FullyQualifiedName: fmt.Sprint("svc.db.s", i%10, ".t", i)}}}); err != nil {
			b.Fatal(err)
		}
	}
	src := &graph.CatalogSource{Entities: c.Entities}
	b.ResetTimer()
	var entities int
	start, cpu := time.Now(), cpuTime(b)
	for range b.N {
		res, err := c.Graph.Sync().Rebuild(ctx, src, nil)
		if err != nil {
			b.Fatal(err)
		}
		entities += res.Entities
	}
	b.ReportMetric(float64(entities)/time.Since(start).Seconds(), "entities/s")
	// The process's CPU time is steadier than the wall clock on a shared machine.
	b.ReportMetric(float64(entities)/(cpuTime(b)-cpu).Seconds(), "entities/cpu-s")
	b.StopTimer()

	// What a start with a snapshot costs instead: loading it and catching up (nothing
	// to replay here).
	path := filepath.Join(b.TempDir(), "graph.snapshot")
	saved, ok, err := c.Graph.Sync().SaveSnapshot(path, true)
	if err != nil || !ok {
		b.Fatalf("snapshot: %v, %v", ok, err)
	}
	restored, ok, err := c.Graph.Sync().Restore(ctx, path, src)
	if err != nil || !ok {
		b.Fatalf("restore: %v, %v", ok, err)
	}
	b.ReportMetric(float64(saved.Took.Milliseconds()), "snapshot-write-ms")
	b.ReportMetric(float64(saved.Bytes)/(1<<20), "snapshot-MiB")
	b.ReportMetric(float64(restored.Took.Milliseconds()), "restore-ms")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

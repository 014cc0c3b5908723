package vectors_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/search"
)

// BenchmarkSearchModes times the search service's vector and hybrid modes in-process
// (embedding, index search, fusion, authorization and loading the page's documents) on
// a SQLite catalog of MERIDIAN_BENCH_TABLES tables (2,000 by default) with 20 columns
// each, indexed with the hashing embedder, for natural questions like bench/'s.
func BenchmarkSearchModes(b *testing.B) {
	n := 2000
	if s := os.Getenv("MERIDIAN_BENCH_TABLES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("MERIDIAN_BENCH_TABLES=%q is not a positive count", s)
		}
		n = v
	}
	ctx := context.Background()
	c, err := app.Open(ctx, app.Config{DataDir: b.TempDir(), Embedder: app.EmbedderConfig{Kind: app.EmbedderHashing}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	schema := createSchema(b, c)
	words := []string{"customer", "order", "invoice", "payment", "product", "inventory", "shipment", "account", "session",
		"campaign", "refund", "supplier", "warehouse", "ticket", "subscription", "churn", "forecast", "region", "store", "price"}
	grains := []string{"daily", "hourly", "weekly", "monthly", "events", "history", "summary", "latest"}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	for i := range n {
		subj, grain := pick(words), pick(grains)
		cols := make([]any, 20)
		for j := range cols {
			cols[j] = map[string]any{"name": fmt.Sprintf("%s_%s_%d", pick(words), pick([]string{"id", "amount", "date", "status"}), j),
				"dataType": "VARCHAR", "dataLength": 64, "description": "The " + pick(words) + " value."}
		}
		body := meridian.Entity{"name": fmt.Sprintf("fact_%s_%s_%d", subj, grain, i), "databaseSchema": schema, "columns": cols,
			"description": fmt.Sprintf("%s %s, one row per %s and %s.", grain, subj, subj, pick(words))}
		if _, err := c.Entities.Create(ctx, admin, "table", body); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Dispatcher.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	qs := make([]string, 64)
	for i := range qs {
		qs[i] = fmt.Sprintf("which table has the %s %s figures per %s?", pick(grains), pick(words), pick(words))
	}
	for _, mode := range []search.Mode{search.Vector, search.Hybrid, search.Keyword} {
		b.Run(string(mode), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				q := search.Query{Mode: mode, Text: qs[i%len(qs)], Kinds: []string{"table"}, Size: 10}
				if mode == search.Keyword {
					q.Terms = search.Words(q.Text)
				}
				if _, err := c.Search.Search(ctx, admin, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

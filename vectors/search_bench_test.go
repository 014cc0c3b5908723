package vectors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/store/drivertest"
)

// benchVectors is how many 512-d vectors BenchmarkSearch indexes:
// MERIDIAN_BENCH_VECTORS, 10,000 by default (issue 9's target is 100,000).
func benchVectors(b *testing.B) int {
	n := 10000
	if s := os.Getenv("MERIDIAN_BENCH_VECTORS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("MERIDIAN_BENCH_VECTORS=%q is not a positive count", s)
		}
		n = v
	}
	return n
}

// benchRecall is the mean recall@k of the index's table-filtered searches for qs
// against exact kNN over vs (every tenth vector is a dashboard).
func benchRecall(b *testing.B, ix *Index, vs, qs [][]float32, k int) float64 {
	found, total := 0, 0
	for _, qv := range qs {
		hits, err := ix.Search(context.Background(), Query{Model: "bench", Dim: len(qv), K: k, Kinds: []string{"table"}, Vector: qv})
		if err != nil {
			b.Fatal(err)
		}
		want := exact(vs, qv, k, func(i int) bool { return i%10 != 0 })
		for _, h := range hits {
			if slices.Contains(want, h.EntityID) {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}

// catalogVectors returns the hashing embeddings of n generated table documents (a
// name, a description and columns over a small vocabulary, like bench/'s catalog) and
// of k natural questions over the same vocabulary.
func catalogVectors(n, k int) (docs, questions [][]float32) {
	r := rand.New(rand.NewPCG(1, 1))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	subjects := []string{"customer", "order", "invoice", "payment", "product", "inventory", "shipment", "account", "session",
		"campaign", "lead", "revenue", "refund", "supplier", "warehouse", "employee", "ticket", "subscription", "churn",
		"forecast", "click", "pageview", "device", "region", "store", "price", "discount", "cart", "review", "loyalty",
		"partner", "contract", "budget", "ledger", "transaction", "vendor", "claim", "coupon", "visit", "quota"}
	grains := []string{"daily", "hourly", "weekly", "monthly", "events", "history", "summary", "latest"}
	layers := []string{"raw", "stg", "int", "fact", "dim", "agg", "snapshot", "mart"}
	suffixes := []string{"id", "name", "code", "status", "amount", "count", "created at", "date", "flag", "type", "score", "email"}
	texts := make([]string, n)
	for i := range texts {
		subj, grain := pick(subjects), pick(grains)
		var cols []string
		for range 12 {
			cols = append(cols, pick([]string{subj, pick(subjects)})+" "+pick(suffixes))
		}
		texts[i] = fmt.Sprintf("%s %s %s %d. table. %s %s, one row per %s and %s. Columns: %s", pick(layers), subj, grain, i,
			grain, subj, subj, pick(subjects), strings.Join(cols, ", "))
	}
	qtexts := make([]string, k)
	for i := range qtexts {
		qtexts[i] = fmt.Sprintf("which table has the %s %s figures per %s?", pick(grains), pick(subjects), pick(subjects))
	}
	docs, _ = Hashing{}.Embed(context.Background(), texts)
	questions, _ = Hashing{}.Embed(context.Background(), qtexts)
	return docs, questions
}

// BenchmarkSearch times a k=100 search filtered to tables (as semantic_search asks)
// over benchVectors 512-d hashing embeddings of generated tables on each driver, after loading them in
// batches of 1,000 (the load rate is reported once per driver).
func BenchmarkSearch(b *testing.B) {
	n := benchVectors(b)
	for _, d := range drivertest.Drivers {
		b.Run(d.Name, func(b *testing.B) {
			ctx := context.Background()
			ix := NewIndex(d.Open(b, Module()))
			const dim = 512
			vs, qs := catalogVectors(n, 64)
			// On PostgreSQL the HNSW index is built once the rows are in (CREATE INDEX on
			// a loaded table is much faster than growing it row by row); the load rate
			// below then leaves out the graph, the build time is logged.
			pg := d.Name == "PostgreSQL"
			if pg {
				execSQL(b, ix, "DROP INDEX vectors_hnsw_512")
				ix.hnsw[dim] = true // not created again by the load
			}
			start := time.Now()
			var batch []Entry
			for i, v := range vs {
				kind := "table"
				if i%10 == 0 {
					kind = "dashboard"
				}
				batch = append(batch, Entry{EntityID: fmt.Sprintf("e%05d", i), Kind: kind, FQN: fmt.Sprintf("svc.db.s.t%06d", i),
					Service: "svc", Model: "bench", Dim: dim, Hash: "h", Chunks: []Chunk{{Text: "a table of things", Vector: v}}})
				if len(batch) == 1000 || i == len(vs)-1 {
					if err := ix.UpsertMany(ctx, batch); err != nil {
						b.Fatal(err)
					}
					batch = nil
				}
			}
			b.Logf("%s: loaded %d vectors in %s (%.0f/s)", d.Name, n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())
			if pg {
				start = time.Now()
				delete(ix.hnsw, dim) // created by the next write
				if err := ix.Upsert(ctx, Entry{EntityID: "probe", Kind: "probe", Model: "other", Dim: dim, Hash: "h",
					Chunks: []Chunk{{Text: "t", Vector: vs[0]}}}); err != nil {
					b.Fatal(err)
				}
				b.Logf("%s: built the HNSW index in %s", d.Name, time.Since(start).Round(time.Millisecond))
			}
			q := Query{Model: "bench", Dim: dim, K: 100, Kinds: []string{"table"}}
			q.Vector = qs[0]
			if _, err := ix.Search(ctx, q); err != nil { // loads the matrix on SQLite
				b.Fatal(err)
			}
			r10, r100 := benchRecall(b, ix, vs, qs[:20], 10), benchRecall(b, ix, vs, qs[:20], 100)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				q.Vector = qs[i%len(qs)]
				if _, err := ix.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r10, "recall@10")
			b.ReportMetric(r100, "recall@100")
		})
	}
}

// execSQL runs one statement in a write transaction of ix's database.
func execSQL(b *testing.B, ix *Index, query string) {
	b.Helper()
	tx, err := ix.db.Begin(context.Background(), true)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.SQL().Exec(context.Background(), query); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

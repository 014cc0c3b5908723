package vectors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// clustered returns n unit vectors around a few centres, as text embeddings cluster.
func clustered(r *rand.Rand, n, dim, centres int) [][]float32 {
	cs := make([][]float32, centres)
	for i := range cs {
		cs[i] = unit(r, dim)
	}
	out := make([][]float32, n)
	for i := range out {
		c, noise := cs[r.IntN(centres)], unit(r, dim)
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.8*noise[j]
		}
		out[i] = Normalise(v)
	}
	return out
}

// exact returns the ids of the k vectors nearest to q among those passing keep.
func exact(vs [][]float32, q []float32, k int, keep func(i int) bool) []string {
	type scored struct {
		id    string
		score float32
	}
	var all []scored
	for i, v := range vs {
		if keep(i) {
			all = append(all, scored{fmt.Sprintf("e%05d", i), dot(q, v)})
		}
	}
	slices.SortFunc(all, func(a, b scored) int {
		if a.score > b.score {
			return -1
		}
		if a.score < b.score {
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	out := []string{}
	for _, s := range all[:min(k, len(all))] {
		out = append(out, s.id)
	}
	return out
}

// TestApproximateRecallAgainstExactKNN: on both drivers, recall@10 of the index against
// exact kNN over 10,000 vectors is at least 0.95, unfiltered and filtered by kind
// (10% of the vectors) and by tag. On PostgreSQL the HNSW index is forced, so the
// approximation is what is measured.
func TestApproximateRecallAgainstExactKNN(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: skips the 10,000-vector recall measurement")
	}
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		ctx := context.Background()
		ix := NewIndex(open(t, Module()))
		ix.forceIndex = true
		const n, dim, k, queries = 10000, 256, 10, 40
		r := rand.New(rand.NewPCG(7, 9))
		vs := clustered(r, n, dim, 50)
		kind := func(i int) string {
			if i%10 == 0 {
				return "dashboard"
			}
			return "table"
		}
		tag := func(i int) string { return fmt.Sprintf("tier.t%d", i%4) }
		// The HNSW index is built once the rows are in, as after a bulk load (faster than
		// growing it row by row on a shared machine).
		ix.hnsw[dim] = true
		var batch []Entry
		for i, v := range vs {
			batch = append(batch, Entry{EntityID: fmt.Sprintf("e%05d", i), Kind: kind(i), FQN: fmt.Sprintf("s.e%05d", i),
				Tags: []string{tag(i)}, Model: "recall", Dim: dim, Hash: "h", Chunks: []Chunk{{Text: "t", Vector: v}}})
			if len(batch) == 1000 {
				if err := ix.UpsertMany(ctx, batch); err != nil {
					t.Fatal(err)
				}
				batch = nil
			}
		}
		delete(ix.hnsw, dim)
		if err := ix.Upsert(ctx, Entry{EntityID: "probe", Kind: "probe", Model: "other", Dim: dim, Hash: "h",
			Chunks: []Chunk{{Text: "t", Vector: vs[0]}}}); err != nil {
			t.Fatal(err)
		}
		if plan := ix.plan(t, Query{Model: "recall", Dim: dim, K: k, Vector: vs[0], Kinds: []string{"dashboard"}}); plan != "" &&
			!strings.Contains(plan, fmt.Sprintf("vectors_hnsw_%d", dim)) {
			t.Fatalf("the search does not use the HNSW index:\n%s", plan)
		}
		cases := []struct {
			name string
			q    Query
			keep func(i int) bool
		}{
			{"unfiltered", Query{}, func(int) bool { return true }},
			{"kind filter (10%)", Query{Kinds: []string{"dashboard"}}, func(i int) bool { return kind(i) == "dashboard" }},
			{"tag filter (25%)", Query{Tags: []string{"TIER.T1"}}, func(i int) bool { return tag(i) == "tier.t1" }},
		}
		for _, c := range cases {
			found, total := 0, 0
			for range queries {
				qv := clustered(r, 1, dim, 1)[0]
				if r.IntN(2) == 0 {
					qv = vs[r.IntN(n)] // a query near stored data
				}
				q := c.q
				q.Model, q.Dim, q.K, q.Vector = "recall", dim, k, qv
				hits, err := ix.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				want := exact(vs, qv, k, c.keep)
				for _, h := range hits {
					if slices.Contains(want, h.EntityID) {
						found++
					}
				}
				total += len(want)
			}
			recall := float64(found) / float64(total)
			t.Logf("%s: recall@%d = %.3f", c.name, k, recall)
			if recall < 0.95 {
				t.Errorf("%s: recall@%d = %.3f, want ≥ 0.95", c.name, k, recall)
			}
		}
	})
}

// plan returns PostgreSQL's plan of q's search, configured as ix searches ("" on SQLite).
func (ix *Index) plan(t *testing.T, q Query) string {
	t.Helper()
	ctx := context.Background()
	tx, err := ix.db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	db := tx.SQL()
	if db.Dialect() != store.DialectPostgres {
		return ""
	}
	if err := ix.configureSearch(ctx, db, q.K); err != nil {
		t.Fatal(err)
	}
	query, args := pgSearch(q, q.K)
	rows, err := db.Query(ctx, "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// TestSearchUsesHNSWWithoutStatistics: on PostgreSQL a search reads the HNSW index even
// when the table has never been analysed (rows loaded since, or autovacuum off), where
// the planner took the table for empty and sorted every row instead.
func TestSearchUsesHNSWWithoutStatistics(t *testing.T) {
	ctx := context.Background()
	ix := NewIndex(drivertest.Postgres(t, Module()))
	r := rand.New(rand.NewPCG(5, 7))
	var batch []Entry
	for i := range 2000 {
		batch = append(batch, entry(fmt.Sprintf("e%05d", i), "table", "svc", nil, "m", unit(r, 512)))
	}
	if err := ix.UpsertMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, q := range []Query{{}, {Kinds: []string{"table"}, Services: []string{"svc"}}} {
		q.Model, q.Dim, q.K, q.Vector = "m", 512, 100, unit(r, 512)
		if plan := ix.plan(t, q); !strings.Contains(plan, "vectors_hnsw_512") {
			t.Errorf("the search does not use the HNSW index:\n%s", plan)
		}
	}
}

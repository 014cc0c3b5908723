package sqlite

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/search"
)

// segments counts the full-text index's FTS5 segments.
func segments(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	if err := db.reader.QueryRowContext(context.Background(), "SELECT count(DISTINCT segid) FROM search_fts_idx").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// indexDocs indexes n documents (ids from first on) in one transaction, which adds
// one segment to the full-text index.
func indexDocs(t *testing.T, db *DB, first, n int) {
	t.Helper()
	ctx := context.Background()
	words := []string{"orders", "refunds", "customers", "invoices", "shipments", "payments", "daily", "monthly"}
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for i := first; i < first+n; i++ {
		id := fmt.Sprintf("t%05d", i)
		desc := fmt.Sprintf("%s %s of store %d with word%d", words[i%len(words)], words[(i/len(words))%len(words)], i%13, i)
		if err := tx.Index(ctx, search.Doc{ID: id, Kind: "table", FQN: "svc.db.s." + id, Name: id, Description: desc, Source: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// answers runs a few strict and relaxed searches and returns their hits' ids and scores.
func answers(t *testing.T, db *DB) [][]string {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var out [][]string
	for _, q := range []search.Query{
		{Terms: []string{"orders"}, Size: 50},
		{Terms: []string{"daily", "refunds"}, Size: 50},
		{Terms: []string{"monthly", "payments", "store", "word7"}, Size: 50},
		{Terms: []string{"invoices", "nothing"}, Size: 20, Strict: true},
	} {
		res, err := tx.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		hits := []string{fmt.Sprint(res.Total)}
		for _, h := range res.Hits {
			hits = append(hits, fmt.Sprintf("%s %.9f", h.ID, h.Score))
		}
		out = append(out, hits)
	}
	return out
}

func TestMergingTheFullTextIndexLeavesOneSegmentAndTheSameAnswers(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	for i := range 10 {
		indexDocs(t, db, 30*i, 30)
	}
	before := segments(t, db)
	if before < 2 {
		t.Fatalf("the index has %d segment(s) after 10 transactions: the test needs several", before)
	}
	want := answers(t, db)
	if frag, err := db.searchFragmented(ctx); err != nil || !frag {
		t.Fatalf("searchFragmented = %v, %v with %d segments of similar size, want true", frag, err, before)
	}
	steps := 0
	for done := false; !done; steps++ {
		var err error
		if done, err = db.mergeStep(ctx, steps == 0); err != nil {
			t.Fatal(err)
		}
		if steps > 100 {
			t.Fatal("the merge did not end in 100 steps")
		}
	}
	if n := segments(t, db); n != 1 {
		t.Errorf("after the merge the index has %d segments, want 1", n)
	}
	if got := answers(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("answers after the merge:\n%q\nwant (before):\n%q", got, want)
	}
	if frag, err := db.searchFragmented(ctx); err != nil || frag {
		t.Errorf("searchFragmented = %v, %v after the merge, want false", frag, err)
	}
}

func TestASmallChangeToALargeIndexIsNotWorthMerging(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	indexDocs(t, db, 0, 3000)
	indexDocs(t, db, 3000, 5)
	if n := segments(t, db); n != 2 {
		t.Fatalf("the index has %d segments, want 2", n)
	}
	if frag, err := db.searchFragmented(ctx); err != nil || frag {
		t.Errorf("searchFragmented = %v, %v for 5 documents beside 3,000, want false", frag, err)
	}
	indexDocs(t, db, 3005, 1000)
	if frag, err := db.searchFragmented(ctx); err != nil || !frag {
		t.Errorf("searchFragmented = %v, %v for 1,005 documents beside 3,000, want true", frag, err)
	}
}

func TestMaintainMergesOnlyOnceTheWriterIsIdle(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	for i := range 10 {
		indexDocs(t, db, 30*i, 30)
	}
	before := segments(t, db)
	var m merger
	t0 := time.Now()
	for _, step := range []struct {
		at   time.Duration
		want int // segments after the tick
	}{
		{0, before},              // the commits are seen: the quiet starts now
		{mergeQuiet / 2, before}, // not quiet long enough
		{mergeQuiet, 1},          // quiet: merged
		{2 * mergeQuiet, 1},      // settled
	} {
		if err := m.tick(ctx, db, t0.Add(step.at)); err != nil {
			t.Fatal(err)
		}
		if n := segments(t, db); n != step.want {
			t.Fatalf("after the tick at %v: %d segments, want %d", step.at, n, step.want)
		}
	}
	// A write starts the quiet again.
	indexDocs(t, db, 300, 30)
	t1 := t0.Add(3 * mergeQuiet)
	for _, step := range []struct {
		at   time.Duration
		want int
	}{{0, 2}, {mergeQuiet / 2, 2}, {mergeQuiet, 1}} {
		if err := m.tick(ctx, db, t1.Add(step.at)); err != nil {
			t.Fatal(err)
		}
		if n := segments(t, db); n != step.want {
			t.Fatalf("after the write, tick at %v: %d segments, want %d", step.at, n, step.want)
		}
	}
}

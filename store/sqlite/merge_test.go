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

// fragmented opens a database whose full-text index holds 300 documents indexed in
// 10 transactions, and returns it with its number of segments (several).
func fragmented(t *testing.T) (*DB, int) {
	t.Helper()
	db, _ := openTemp(t)
	for i := range 10 {
		indexDocs(t, db, 30*i, 30)
	}
	n := segments(t, db)
	if n < 2 {
		t.Fatalf("the index has %d segment(s) after 10 transactions: the test needs several", n)
	}
	return db, n
}

func TestMergingTheFullTextIndexLeavesOneSegmentAndTheSameAnswers(t *testing.T) {
	db, before := fragmented(t)
	ctx := context.Background()
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

func TestMaintainMergesOnceNoDocumentWasIndexedForAWhile(t *testing.T) {
	db, before := fragmented(t)
	ctx := context.Background()
	setting := func(v string) { putSetting(t, db, v) } // a commit that indexes nothing
	type tick struct {
		at   time.Duration
		do   func()
		want int // segments after the tick
	}
	run := func(t0 time.Time, m *merger, ticks []tick) {
		t.Helper()
		for _, tk := range ticks {
			if tk.do != nil {
				tk.do()
			}
			if err := m.tick(ctx, db, t0.Add(tk.at)); err != nil {
				t.Fatal(err)
			}
			if n := segments(t, db); n != tk.want {
				t.Fatalf("after the tick at %v: %d segments, want %d", tk.at, n, tk.want)
			}
		}
	}
	var m merger
	t0 := time.Now()
	run(t0, &m, []tick{
		{0, nil, before}, // the index writes are seen: the quiet starts
		{mergeQuiet / 2, func() { setting("1") }, before}, // not quiet long enough
		{mergeQuiet, func() { setting("2") }, 1},          // other commits do not hold it back
		{2 * mergeQuiet, nil, 1},                          // settled
	})
	// Indexing starts the quiet again.
	t1 := t0.Add(3 * mergeQuiet)
	run(t1, &m, []tick{
		{0, func() { indexDocs(t, db, 300, 30) }, 2},
		{mergeQuiet / 2, nil, 2},
		{mergeQuiet, nil, 1},
	})
}

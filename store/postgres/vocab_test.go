package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/storetest"
)

// The vocabulary's pending changes and their folding (vocab.go). store/storetest checks
// typo correction itself on both drivers.

// wordsDoc is a table document whose column words are words.
func wordsDoc(id string, words []string) search.Doc {
	return search.Doc{ID: id, Kind: "table", FQN: "svc.db.s." + id, Name: "table", Columns: strings.Join(words, " "),
		Source: []byte(`{}`)}
}

// stopFolding stops db's background folder, so that only the test folds.
func stopFolding(db *DB) { db.vocab.close() }

// vocabCount answers the count the vocabulary gives word, 0 when it has none.
func vocabCount(t *testing.T, db *DB, word string) int {
	t.Helper()
	n := 0
	storetest.Read(t, db, func(rtx store.Tx) error {
		near, err := (&keywordIndex{t: rtx.(*tx)}).Vocabulary(context.Background(), word)
		for _, w := range near {
			if w.Word == word {
				n = w.Docs
			}
		}
		return err
	})
	return n
}

// pendingRows counts the vocabulary and term changes not folded yet.
func pendingRows(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	err := db.pool.QueryRow(context.Background(),
		"SELECT (SELECT count(*) FROM search_vocab_pending) + (SELECT count(*) FROM search_terms_pending)").Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// termCounts returns the counts of search_terms plus their pending changes (those not
// 0), and the documents holding each term as counted from search_docs' tsvectors.
func termCounts(t *testing.T, db *DB) (got, want map[string]int) {
	t.Helper()
	read := func(query string) map[string]int {
		rows, err := db.pool.Query(context.Background(), query)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kv [2]any, err error) {
			var term string
			var n int
			err = r.Scan(&term, &n)
			return [2]any{term, n}, err
		})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int{}
		for _, kv := range out {
			m[kv[0].(string)] = kv[1].(int)
		}
		return m
	}
	got = read(`SELECT term, sum(docs)::int FROM (SELECT term, docs FROM search_terms
    UNION ALL SELECT term, delta FROM search_terms_pending) AS t GROUP BY term HAVING sum(docs) <> 0`)
	want = read("SELECT t, count(*)::int FROM search_docs, unnest(tsvector_to_array(tsv)) AS t GROUP BY t")
	return got, want
}

// fold folds the vocabulary, failing the test on an error.
func fold(t *testing.T, db *DB) int64 {
	t.Helper()
	n, err := foldVocabulary(context.Background(), db.pool)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVocabularyWritersDoNotWaitForEachOther: transactions indexing documents with the
// same words, none committed yet, each index at once (before pending changes, the
// second waited for the first's lock on the shared words' counts until it committed),
// and once they commit the counts hold every one of them.
func TestVocabularyWritersDoNotWaitForEachOther(t *testing.T) {
	db, _ := openTemp(t)
	stopFolding(db)
	const writers = 16
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var open []store.Tx
	defer func() {
		for _, tx := range open {
			tx.Rollback()
		}
	}()
	for i := 0; i < writers; i++ {
		// Without the write lock, as entity writers would be if they did not queue.
		tx, err := db.BeginUnordered(ctx)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, tx)
		if err := tx.Index(ctx, wordsDoc(fmt.Sprint("d", i), []string{"customer", "orders", "amount"})); err != nil {
			t.Fatalf("writer %d of %d, the others open: %v", i+1, writers, err)
		}
	}
	for _, tx := range open {
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []string{"customer", "orders", "amount"} {
		if n := vocabCount(t, db, w); n != writers {
			t.Errorf("%s counts %d documents, want %d", w, n, writers)
		}
	}
}

// TestVocabularyCountsStayExact: concurrent writers create, replace and delete
// documents while folds run; the vocabulary counts each word's documents exactly,
// whether its changes wait in search_vocab_pending or were folded, and a last fold
// leaves nothing pending and search_vocab exact on its own. The counts of the index's
// terms (search_terms) stay exact alike.
func TestVocabularyCountsStayExact(t *testing.T) {
	db, _ := openTemp(t)
	stopFolding(db)
	ctx := context.Background()
	const writers, docs, rounds = 8, 12, 6
	final := make([][]search.Doc, writers) // each writer's documents as they end, nil when deleted
	write := func(w int, rnd *rand.Rand) error {
		final[w] = make([]search.Doc, docs)
		for r := 0; r < rounds; r++ {
			tx, err := db.Begin(ctx, true)
			if err != nil {
				return err
			}
			for i := range final[w] {
				id := fmt.Sprintf("w%dd%d", w, i)
				switch rnd.IntN(4) {
				case 0: // delete (the trigger's changes)
					err = tx.Unindex(ctx, id)
					final[w][i] = search.Doc{}
				default: // create or replace
					words := slicesSample(rnd, columnWords)
					final[w][i] = wordsDoc(id, words)
					err = tx.Index(ctx, final[w][i])
				}
				if err != nil {
					tx.Rollback()
					return err
				}
			}
			if err := tx.Commit(); err != nil {
				return err
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	done := make(chan struct{})
	go func() { // a folder beside the writers
		defer close(errs)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := foldVocabulary(ctx, db.pool); err != nil {
				errs <- err
				return
			}
		}
	}()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := write(w, rand.New(rand.NewPCG(uint64(w), 7))); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(done)
	for err := range errs {
		t.Fatal(err)
	}
	// A last round unfolded: its changes are read from search_vocab_pending.
	if err := write(0, rand.New(rand.NewPCG(99, 7))); err != nil {
		t.Fatal(err)
	}
	if pendingRows(t, db) == 0 {
		t.Fatal("nothing pending after the last round")
	}
	want := map[string]int{}
	for _, ds := range final {
		for _, d := range ds {
			for _, word := range d.Terms().Vocabulary {
				want[word]++
			}
		}
	}
	wantCounts := func(when string) {
		for _, word := range columnWords {
			if got := vocabCount(t, db, word); got != want[word] {
				t.Errorf("%s: %s counts %d documents, want %d", when, word, got, want[word])
			}
		}
		if got, want := termCounts(t, db); len(want) == 0 || !maps.Equal(got, want) {
			t.Errorf("%s: search_terms counts %v, the documents hold %v", when, got, want)
		}
	}
	wantCounts("changes pending")
	if fold(t, db) == 0 {
		t.Error("the last fold folded nothing")
	}
	wantCounts("folded")
	if n := pendingRows(t, db); n != 0 {
		t.Errorf("%d rows pending after a fold", n)
	}
	rows, _ := db.pool.Query(ctx, "SELECT word, docs FROM search_vocab WHERE docs <> 0")
	got := map[string]int{}
	for rows.Next() {
		var word string
		var n int
		if err := rows.Scan(&word, &n); err != nil {
			t.Fatal(err)
		}
		got[word] = n
	}
	if rows.Err() != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("search_vocab %v (%v), want %v", got, rows.Err(), want)
	}
}

// slicesSample returns a random subset of words, at least one, in their order.
func slicesSample(rnd *rand.Rand, words []string) []string {
	var out []string
	for _, w := range words {
		if rnd.IntN(2) == 0 {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		out = append(out, words[rnd.IntN(len(words))])
	}
	return out
}

// TestVocabularyFolding: one folder at a time (another skips at once, folding
// nothing); a fold takes the pending changes into search_vocab and vacuums; the
// background folder folds after commits, and Close stops it.
func TestVocabularyFolding(t *testing.T) {
	ctx := context.Background()
	index := func(t *testing.T, db *DB, ids ...string) {
		storetest.Write(t, db, func(tx store.Tx) error {
			for _, id := range ids {
				if err := tx.Index(ctx, wordsDoc(id, []string{"customer", "revenue"})); err != nil {
					return err
				}
			}
			return nil
		})
	}
	t.Run("a second folder skips", func(t *testing.T) {
		db, _ := openTemp(t)
		stopFolding(db)
		index(t, db, "a", "b")
		other, err := db.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Rollback(ctx)
		if _, err := other.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", vocabFoldLock); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if n, err := foldVocabulary(short, db.pool); n != 0 || !errors.Is(err, errFoldBusy) {
			t.Errorf("fold beside another: %d rows, %v; want 0, %v", n, err, errFoldBusy)
		}
		other.Rollback(ctx)
		if n := fold(t, db); n != 10 {
			t.Errorf("fold folded %d rows, want 10 (4 words, 6 terms)", n)
		}
		if n := vocabCount(t, db, "customer"); n != 2 {
			t.Errorf("customer counts %d, want 2", n)
		}
	})
	t.Run("the background folder folds what commits and stops at Close", func(t *testing.T) {
		db, _ := openTemp(t)
		ids := make([]string, foldAfter)
		for i := range ids {
			ids[i] = fmt.Sprint("d", i)
		}
		index(t, db, ids...)
		deadline := time.Now().Add(10 * time.Second)
		for pendingRows(t, db) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := pendingRows(t, db); n != 0 {
			t.Errorf("%d rows still pending", n)
		}
		db.Close()
		select {
		case <-db.vocab.done:
		default:
			t.Error("the folder runs after Close")
		}
	})
}

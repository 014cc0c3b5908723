package sqlite

import (
	"context"
	"slices"
	"testing"

	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// The full-text rows and vocabulary counts Index holds back (ftsRow, tx.vocab) must
// answer as if written at once.

func TestHeldFullTextRowsAnswerAsIfWritten(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	doc := func(id, desc string) search.Doc {
		return search.Doc{ID: id, Kind: "table", FQN: "svc.db.s." + id, Name: id, Description: desc, Source: []byte(`{}`)}
	}
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"index a", func() error { return tx.Index(ctx, doc("a", "invoices paid")) }},
		{"index b", func() error { return tx.Index(ctx, doc("b", "invoices overdue")) }},
		{"reindex a", func() error { return tx.Index(ctx, doc("a", "refunds")) }},
		{"index c, rolled back", func() error {
			q := tx.SQL()
			if _, err := q.Exec(ctx, "SAVEPOINT t"); err != nil {
				return err
			}
			if err := tx.Index(ctx, doc("c", "invoices lost")); err != nil {
				return err
			}
			if _, err := q.Exec(ctx, "ROLLBACK TO SAVEPOINT t"); err != nil {
				return err
			}
			_, err := q.Exec(ctx, "RELEASE SAVEPOINT t")
			return err
		}},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
	}
	check := func(t *testing.T, tx store.Tx) {
		for _, c := range []struct {
			word string
			want []string
		}{
			{"invoices", []string{"b"}},
			{"refunds", []string{"a"}},
			{"lost", nil},
		} {
			if got := findIDs(t, tx, c.word); !slices.Equal(got, c.want) {
				t.Errorf("%s matches %q, want %q", c.word, got, c.want)
			}
		}
	}
	t.Run("in the transaction", func(t *testing.T) { check(t, tx) })
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	t.Run("after commit", func(t *testing.T) {
		rtx, err := db.Begin(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer rtx.Rollback()
		check(t, rtx)
		var n int
		if err := rtx.SQL().QueryRow(ctx, "SELECT count(*) FROM search_fts").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("%d full-text rows, want 2 (a and b)", n)
		}
		checkVocabulary(t, rtx, map[string]int{"invoices": 1, "overdue": 1, "refunds": 1, "lost": 0})
	})
	t.Run("after a removal", func(t *testing.T) {
		wtx, err := db.Begin(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		defer wtx.Rollback()
		if err := wtx.Index(ctx, doc("d", "invoices refunds")); err != nil {
			t.Fatal(err)
		}
		if err := wtx.Unindex(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if err := wtx.Commit(); err != nil {
			t.Fatal(err)
		}
		rtx, err := db.Begin(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer rtx.Rollback()
		checkVocabulary(t, rtx, map[string]int{"invoices": 1, "overdue": 0, "refunds": 2, "lost": 0})
	})
}

// checkVocabulary compares the vocabulary's document counts of some words (0 for a word
// it does not hold) with want.
func checkVocabulary(t *testing.T, tx store.Tx, want map[string]int) {
	t.Helper()
	for word, n := range want {
		var got int
		err := tx.SQL().QueryRow(context.Background(), "SELECT COALESCE(SUM(docs), 0) FROM search_vocab WHERE word = $1", word).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Errorf("the vocabulary counts %q in %d documents, want %d", word, got, n)
		}
	}
}

func TestIndexOfACreatedDocumentNeverReplacesOne(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	created := search.Doc{ID: "a", Kind: "table", FQN: "svc.db.s.a", Name: "a", Description: "invoices", Source: []byte(`{}`), Created: true}
	if err := tx.Index(ctx, created); err != nil {
		t.Fatalf("index a created document: %v", err)
	}
	// The same ID said to be new again: an error, not a second full-text row.
	if err := tx.Index(ctx, created); err == nil {
		t.Fatal("a created document replaced one of the same ID")
	}
	updated := created
	updated.Created, updated.Description = false, "refunds"
	if err := tx.Index(ctx, updated); err != nil {
		t.Fatalf("index a changed document: %v", err)
	}
	for word, want := range map[string][]string{"invoices": nil, "refunds": {"a"}} {
		if got := findIDs(t, tx, word); !slices.Equal(got, want) {
			t.Errorf("%s matches %q, want %q", word, got, want)
		}
	}
	var n int
	if err := tx.SQL().QueryRow(ctx, "SELECT count(*) FROM search_docs").Scan(&n); err != nil || n != 1 {
		t.Errorf("%d search documents (%v), want 1", n, err)
	}
}

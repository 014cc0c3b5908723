package sqlite

import (
	"context"
	"slices"
	"testing"

	"github.com/meridian-catalog/meridian/search"
)

// TestTermCacheFollowsTheKeywordIndex checks the cache of the terms a query word
// expands into (terms.go): a commit that leaves the keyword index alone keeps it, and
// any change to the index, by this DB or by another one on the same file (another
// process), is seen by the next search, including a rolled-back one that must not be.
func TestTermCacheFollowsTheKeywordIndex(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t)
	write := func(db *DB, do func(tx *tx) error, commit bool) {
		t.Helper()
		w, err := db.Begin(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Rollback()
		if err := do(w.(*tx)); err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	index := func(db *DB, id, name string, commit bool) {
		t.Helper()
		write(db, func(tx *tx) error {
			return tx.Index(ctx, search.Doc{ID: id, Kind: "table", FQN: "svc.db.s." + id, Name: name, Source: []byte(`{}`)})
		}, commit)
	}
	// find searches a for the word as a prefix, the way a question's word is matched.
	find := func(word string) []string {
		t.Helper()
		r, err := a.Begin(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Rollback()
		return findIDs(t, r, word)
	}
	generation := func() int64 {
		t.Helper()
		a.terms.mu.Lock()
		defer a.terms.mu.Unlock()
		return a.terms.version
	}

	index(a, "t1", "monthly revenue", true)
	steps := []struct {
		name      string
		do        func()
		want      []string
		keepCache bool // the cache's generation stays what the last search saw
	}{
		{"first search", func() {}, []string{"t1"}, false},
		{"a commit outside the index keeps the cache", func() {
			write(a, func(tx *tx) error { return tx.PutSetting(ctx, "outbox.position.x", "7") }, true)
		}, []string{"t1"}, true},
		{"a document indexed here", func() { index(a, "t2", "montreal sales", true) }, []string{"t1", "t2"}, false},
		{"a document indexed and rolled back", func() { index(a, "t3", "montage", false) }, []string{"t1", "t2"}, true},
		{"a document indexed by another process", func() { index(b, "t4", "month end", true) }, []string{"t1", "t2", "t4"}, false},
		{"a document removed by another process", func() {
			write(b, func(tx *tx) error { return tx.Unindex(ctx, "t2") }, true)
		}, []string{"t1", "t4"}, false},
		{"a document renamed", func() { index(a, "t1", "yearly revenue", true) }, []string{"t4"}, false},
	}
	last := int64(-1)
	for _, s := range steps {
		s.do()
		if got := find("mont"); !slices.Equal(got, s.want) {
			t.Errorf("%s: mont matches %q, want %q", s.name, got, s.want)
		}
		g := generation()
		if s.keepCache && g != last {
			t.Errorf("%s: the term cache moved from generation %d to %d", s.name, last, g)
		}
		if !s.keepCache && g == last {
			t.Errorf("%s: the term cache stayed at generation %d", s.name, g)
		}
		last = g
	}
}

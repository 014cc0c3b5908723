package storetest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// testDriverSearchAnyWordPages: a page of an any-word search holds the same hits, with
// the same scores, as the same stretch of the whole ranking, whatever its size. A
// driver may score only the documents holding most of the words when they fill the
// page (store/sqlite narrows so); the whole ranking here is asked for with a page
// larger than every such set.
func testDriverSearchAnyWordPages(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	words := []string{"alpha", "bravo", "charlie", "delta"}
	Write(t, db, func(tx store.Tx) error {
		for i := range 42 {
			mask := i%14 + 1 // never all four words
			var held []string
			for b, w := range words {
				if mask&(1<<b) != 0 {
					held = append(held, w)
				}
			}
			id := fmt.Sprintf("d%02d", i)
			doc := searchDoc(id, "table", "svc.db.s."+id, id, nil)
			switch i / 14 { // the words in the name, the description or the columns
			case 0:
				doc.Name = strings.Join(append([]string{id}, held...), " ")
			case 1:
				doc.Description = strings.Join(held, " ")
			default:
				doc.Columns = strings.Join(held, " ")
			}
			if err := tx.Index(ctx, doc); err != nil {
				return err
			}
		}
		return nil
	})
	counted := func(from, size, upTo int) search.Result {
		var res search.Result
		Read(t, db, func(tx store.Tx) error {
			var err error
			res, err = tx.Search(ctx, search.Query{Terms: words, From: from, Size: size, CountUpTo: upTo})
			return err
		})
		return res
	}
	query := func(from, size int) search.Result { return counted(from, size, 0) }
	whole := query(0, 100)
	if !whole.Relaxed || whole.Total != 42 || len(whole.Hits) != 42 {
		t.Fatalf("whole ranking: relaxed %v, total %d, %d hits; want relaxed, 42 and 42", whole.Relaxed, whole.Total, len(whole.Hits))
	}
	// A count limit holds however the page was narrowed.
	for _, c := range []struct{ from, size, upTo, total int }{
		{0, 3, 5, 5}, {0, 3, 3, 3}, {0, 3, 100, 42}, {10, 3, 12, 12}, {40, 5, 100, 42}, {50, 5, 100, 42}, {50, 5, 7, 7},
	} {
		res := counted(c.from, c.size, c.upTo)
		want := whole.Hits[min(c.from, len(whole.Hits)):min(c.from+c.size, len(whole.Hits))]
		if res.Total != c.total || res.TotalAtLeast != (c.total == c.upTo) || hitIDs(res.Hits) != hitIDs(want) {
			t.Fatalf("from %d size %d counting up to %d: %s, total %d (at least %v); want %s, total %d",
				c.from, c.size, c.upTo, hitIDs(res.Hits), res.Total, res.TotalAtLeast, hitIDs(want), c.total)
		}
	}
	for _, from := range []int{0, 3, 10} {
		for size := 1; size <= 20; size++ {
			page := query(from, size)
			want := whole.Hits[from:min(from+size, len(whole.Hits))]
			if page.Total != whole.Total || hitIDs(page.Hits) != hitIDs(want) {
				t.Fatalf("from %d size %d: %s (total %d), want %s (total %d)", from, size,
					hitIDs(page.Hits), page.Total, hitIDs(want), whole.Total)
			}
			for i, h := range page.Hits {
				if math.Abs(h.Score-want[i].Score) > 1e-9*math.Abs(want[i].Score) {
					t.Fatalf("from %d size %d: %s scores %v, %v in the whole ranking", from, size, h.ID, h.Score, want[i].Score)
				}
			}
		}
	}
}

// testDriverSearchManyTermsUnderAPrefix: a word matches every indexed word starting
// with it, however many there are (the drivers expand a word into the terms it starts
// when they are few, and keep it a prefix otherwise), and no longer matches a word of
// a document once the document is replaced or removed.
func testDriverSearchManyTermsUnderAPrefix(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	endings := "bcdfghjklm"
	Write(t, db, func(tx store.Tx) error {
		for i, head := range []string{"zorpa", "zorpe"} {
			for j, e := range endings {
				id := fmt.Sprintf("z%d%d", i, j)
				if err := tx.Index(ctx, searchDoc(id, "table", "svc.db.s."+id, head+string(e), nil)); err != nil {
					return err
				}
			}
		}
		return tx.Index(ctx, searchDoc("other", "table", "svc.db.s.other", "zorp", nil))
	})
	for _, c := range []struct {
		word  string
		total int
	}{
		{"zorpa", 10}, // ten terms start with it
		{"zorp", 21},  // twenty-one
		{"zorpab", 1},
		{"zorpax", 0},
	} {
		Read(t, db, func(tx store.Tx) error {
			res, err := tx.Search(ctx, search.Query{Terms: []string{c.word}, Size: 50, Strict: true})
			if err != nil {
				return err
			}
			if res.Total != c.total || len(res.Hits) != c.total {
				t.Errorf("%s: total %d, %d hits; want %d", c.word, res.Total, len(res.Hits), c.total)
			}
			return nil
		})
	}
	// A term written after a search of its prefix is found by the next search (a driver
	// that keeps the terms under a prefix between searches must forget them), and by a
	// search in the writing transaction itself.
	total := func(tx store.Tx, word string) int {
		res, err := tx.Search(ctx, search.Query{Terms: []string{word}, Size: 50, Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		return res.Total
	}
	Write(t, db, func(tx store.Tx) error {
		if err := tx.Index(ctx, searchDoc("new", "table", "svc.db.s.new", "zorpan", nil)); err != nil {
			return err
		}
		if n := total(tx, "zorpa"); n != 11 {
			t.Errorf("zorpa in the writing transaction: total %d, want 11", n)
		}
		return nil
	})
	Read(t, db, func(tx store.Tx) error {
		if n := total(tx, "zorpa"); n != 11 {
			t.Errorf("zorpa after a new term was written: total %d, want 11", n)
		}
		return nil
	})
	Write(t, db, func(tx store.Tx) error {
		if err := tx.Unindex(ctx, "new"); err != nil {
			return err
		}
		return tx.Index(ctx, searchDoc("z00", "table", "svc.db.s.z00", "quux", nil))
	})
	Read(t, db, func(tx store.Tx) error {
		for word, want := range map[string]int{"zorpa": 9, "zorpan": 0, "zorpab": 0, "quux": 1} {
			if n := total(tx, word); n != want {
				t.Errorf("%s after a removal and a replacement: total %d, want %d", word, n, want)
			}
		}
		return nil
	})
}

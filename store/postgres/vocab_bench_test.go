package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// columnWords are the words of the generated tables' columns: every table holds
// most of them, so their vocabulary counts are the rows every writer updates.
var columnWords = strings.Fields(`customer order amount date email address status created updated
region product price quantity invoice payment account balance currency country city`)

// letters spells n in the letters a to z (the vocabulary leaves out words with digits).
func letters(n int) string {
	var b []byte
	for {
		b = append(b, byte('a'+n%26))
		n /= 26
		if n == 0 {
			return string(b)
		}
	}
}

// sharedWordsDoc is table n: a name word of its own and 20 column words, all but one
// shared with every other table.
func sharedWordsDoc(n int) search.Doc {
	cols := make([]string, 0, len(columnWords))
	for i, w := range columnWords {
		if (n+i)%len(columnWords) != 0 {
			cols = append(cols, w)
		}
	}
	name := "table " + letters(n) + "tbl"
	return search.Doc{ID: "t" + strconv.Itoa(n), Kind: "table", FQN: "svc.db.s.t" + strconv.Itoa(n), Name: name,
		Columns: strings.Join(cols, " "), Source: []byte(`{}`)}
}

// BenchmarkVocabularyWriters measures 8 concurrent writers, each indexing tables with
// shared words (b.N counts tables): "ordered" through Begin (the write lock, as entity
// writes), one table a transaction and 100 a transaction (as a bulk chunk), and
// "unordered" without the lock (BeginUnordered), one table a transaction, where only
// the vocabulary could make writers wait for each other. Every run starts from an
// empty database; fix -benchtime (e.g. 3000x) to compare runs.
func BenchmarkVocabularyWriters(b *testing.B) {
	ordered := func(db *DB, ctx context.Context) (store.Tx, error) { return db.Begin(ctx, true) }
	for _, mode := range []struct {
		name  string
		begin func(db *DB, ctx context.Context) (store.Tx, error)
		per   int // tables a transaction
	}{
		{"ordered", ordered, 1},
		{"ordered-100", ordered, 100},
		{"unordered", func(db *DB, ctx context.Context) (store.Tx, error) { return db.BeginUnordered(ctx) }, 1},
	} {
		b.Run(mode.name, func(b *testing.B) {
			db, _ := openTemp(b)
			ctx := context.Background()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := 0; w < benchWriters; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for first := int(next.Add(int64(mode.per))) - mode.per; first < b.N; first = int(next.Add(int64(mode.per))) - mode.per {
						if err := indexTables(ctx, db, mode.begin, first, min(first+mode.per, b.N)); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// benchWriters is how many writers BenchmarkVocabularyWriters runs at once.
const benchWriters = 8

// indexTables indexes tables from to end (excluded) in a transaction begun by begin.
func indexTables(ctx context.Context, db *DB, begin func(*DB, context.Context) (store.Tx, error), from, end int) error {
	tx, err := begin(db, ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for n := from; n < end; n++ {
		if err := tx.Index(ctx, sharedWordsDoc(n)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

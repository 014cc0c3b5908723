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
// shared words in a transaction of its own (one table per op): "ordered" through
// Begin (the write lock, as entity writes), "unordered" without it (BeginUnordered),
// where only the vocabulary could make them wait for each other. Every run starts from
// an empty database; fix -benchtime (e.g. 2000x) to compare runs.
func BenchmarkVocabularyWriters(b *testing.B) {
	for _, mode := range []struct {
		name  string
		begin func(db *DB, ctx context.Context) (store.Tx, error)
	}{
		{"ordered", func(db *DB, ctx context.Context) (store.Tx, error) { return db.Begin(ctx, true) }},
		{"unordered", func(db *DB, ctx context.Context) (store.Tx, error) { return db.BeginUnordered(ctx) }},
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
					for n := int(next.Add(1)); n <= b.N; n = int(next.Add(1)) {
						if err := indexOne(ctx, db, mode.begin, sharedWordsDoc(n)); err != nil {
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

// indexOne indexes d in a transaction begun by begin.
func indexOne(ctx context.Context, db *DB, begin func(*DB, context.Context) (store.Tx, error), d search.Doc) error {
	tx, err := begin(db, ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.Index(ctx, d); err != nil {
		return err
	}
	return tx.Commit()
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The vocabulary typo correction reads (search_vocab, migrations 0004 and 0005), and the
// index's terms that searches expand query words into (search_terms, 0006). Writers
// never update their counts: Index and the search_docs_vocab trigger append one row per
// word or term a document gains (+1) or loses (-1) to search_vocab_pending and
// search_terms_pending, which conflict with nothing, so writers never wait for each
// other there and leave no dead versions of the shared rows behind. A folder moves the
// pending rows into the counts: it deletes them and adds their sums to the counts in
// one statement per table, so every snapshot sees each change exactly once, in one
// table or the other, and a read sums both (vocabularyNear, termsStarting). Folders take a try-lock, so at most one works at a time and the
// others skip; each DB runs one in the background (vocabFolder), after every
// foldAfter documents its transactions committed, and every foldEvery while any wait.

// Folding's bounds.
const (
	foldAfter = 256             // documents indexed or removed that start a fold at once
	foldEvery = 1 * time.Second // the longest a committed change waits for a fold
)

// vocabFoldLock is the advisory lock key of the folder (pg_try_advisory_xact_lock).
const vocabFoldLock int64 = 0x4d5249_564f43 // "MRI" "VOC"

// foldInto returns the statement that moves every pending row it sees
// (<counts>_pending) into the counts table, in key order, and answers how many rows
// it moved. Both names are the constants below, never caller text.
func foldInto(counts, key string) string {
	return fmt.Sprintf(`WITH folded AS (
    DELETE FROM %[1]s_pending RETURNING %[2]s, delta
), sums AS (
    SELECT %[2]s, sum(delta)::int AS delta FROM folded GROUP BY %[2]s
), counted AS (
    INSERT INTO %[1]s (%[2]s, docs)
    SELECT %[2]s, delta FROM sums WHERE delta <> 0 ORDER BY %[2]s
    ON CONFLICT (%[2]s) DO UPDATE SET docs = %[1]s.docs + excluded.docs
)
SELECT count(*) FROM folded`, counts, key)
}

// The fold statements of the vocabulary and of the terms.
var (
	foldPending = foldInto("search_vocab", "word")
	foldTerms   = foldInto("search_terms", "term")
)

// vocabularyNear is Vocabulary's query: the words from $1 (inclusive) to $2
// (exclusive) of $3 to $4 letters held by documents, in word order, at most $5, each
// with its count in search_vocab plus its pending deltas.
const vocabularyNear = `SELECT word, sum(docs)::int FROM (
    SELECT word, docs FROM search_vocab WHERE word >= $1 AND word < $2 AND length(word) BETWEEN $3 AND $4
    UNION ALL
    SELECT word, delta FROM search_vocab_pending WHERE word >= $1 AND word < $2 AND length(word) BETWEEN $3 AND $4
) AS v GROUP BY word HAVING sum(docs) > 0 ORDER BY word LIMIT $5`

// errFoldBusy is foldVocabulary's answer when another folder holds the lock.
var errFoldBusy = errors.New("postgres: fold the search vocabulary: another folder is folding")

// foldVocabulary moves the pending vocabulary and term changes into search_vocab and
// search_terms, and then vacuums the four tables so that their dead rows (the folded
// rows, the replaced counts) do not pile up where autovacuum is off or slow. It answers
// how many pending rows it folded, and errFoldBusy at once when another folder holds
// the lock.
func foldVocabulary(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var n int64
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(t pgx.Tx) error {
		var mine bool
		if err := t.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", vocabFoldLock).Scan(&mine); err != nil {
			return err
		}
		if !mine {
			return errFoldBusy
		}
		var words, terms int64
		if err := t.QueryRow(ctx, foldPending).Scan(&words); err != nil {
			return err
		}
		if err := t.QueryRow(ctx, foldTerms).Scan(&terms); err != nil {
			return err
		}
		n = words + terms
		return nil
	})
	if errors.Is(err, errFoldBusy) {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: fold the search vocabulary: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	// No truncation: it would take a lock that writers wait for. A table another
	// VACUUM holds is skipped.
	if _, err := pool.Exec(ctx, "VACUUM (TRUNCATE false, SKIP_LOCKED) search_vocab_pending, search_vocab, search_terms_pending, search_terms"); err != nil {
		return n, fmt.Errorf("postgres: vacuum the search vocabulary: %w", err)
	}
	return n, nil
}

// vocabFolder folds the vocabulary in the background of one DB: at start (what an
// earlier run left), after foldAfter documents committed, and every foldEvery while
// any wait. A fold that failed, or found another folder at work (which may have
// started before this DB's last changes committed), is tried again at the next tick;
// reads are exact whatever waits.
type vocabFolder struct {
	pool    *pgxpool.Pool
	changed atomic.Int64  // documents committed since the last fold began
	kick    chan struct{} // a fold is due now
	stop    context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

// startVocabFolder starts the folder of pool.
func startVocabFolder(pool *pgxpool.Pool) *vocabFolder {
	ctx, stop := context.WithCancel(context.Background())
	f := &vocabFolder{pool: pool, kick: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	f.changed.Store(1) // fold once at start
	go f.run(ctx)
	return f
}

// committed records that a transaction committed n documents' changes, and starts a
// fold when foldAfter are waiting.
func (f *vocabFolder) committed(n int) {
	if n == 0 {
		return
	}
	if f.changed.Add(int64(n)) >= foldAfter {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
}

// run folds until ctx ends.
func (f *vocabFolder) run(ctx context.Context) {
	defer close(f.done)
	tick := time.NewTicker(foldEvery)
	defer tick.Stop()
	for {
		if f.changed.Swap(0) > 0 {
			if _, err := foldVocabulary(ctx, f.pool); err != nil {
				f.changed.Add(1) // try again at the next tick (busy: what the other missed)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		case <-tick.C:
		}
	}
}

// close stops the folder and waits for it: a fold under way is cancelled, and what it
// would have folded waits for the next start.
func (f *vocabFolder) close() {
	f.once.Do(func() {
		f.stop()
		<-f.done
	})
}

package sqlite

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/meridian-catalog/meridian/store"
)

// The full-text index (search_fts) is a set of b-trees, FTS5's segments: each
// transaction that indexes documents adds one, and FTS5 merges them by level as they
// pile up. A search reads every segment, so a question costs more on an index left in
// a dozen segments, as a bulk load leaves it, than on one (about 10% of a hybrid
// search at 100,000 tables, measured). Maintain merges the segments into one once no
// document has been indexed for a while, in steps short enough that a write arriving
// meanwhile waits for one step at most, and only when the segments beside the largest
// hold enough of the index to be worth rewriting it (mergeShare). Commits that index
// nothing (settings, metering, audit) do not hold it back, and documents indexed
// meanwhile pause it.

// Bounds of the full-text index's merging.
const (
	// mergeQuiet is how long no document must have been indexed before merging starts.
	mergeQuiet = 2 * time.Second
	// mergeTick is how often Maintain looks for index writes.
	mergeTick = 500 * time.Millisecond
	// mergePages is how many leaf pages one merge step writes, about 25 ms of the
	// writer at 100,000 tables.
	mergePages = 250
	// mergeShare: the index is merged when its segments other than the largest hold at
	// least 1/mergeShare of the largest's pages, so a rewrite of the whole index comes
	// after it has grown or changed by that share, not after every edit.
	mergeShare = 8
)

var _ store.Maintainer = (*DB)(nil)

// Maintain keeps the full-text index merged until ctx ends (see above). It runs
// where the catalog serves, and watches that process's index writes only.
func (db *DB) Maintain(ctx context.Context) {
	t := time.NewTicker(mergeTick)
	defer t.Stop()
	var m merger
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := m.tick(ctx, db, time.Now()); err != nil && ctx.Err() == nil {
			slog.Default().Warn("sqlite: merging the full-text index", "err", err)
		}
	}
}

// merger is Maintain's state between ticks.
type merger struct {
	writes   uint64    // the index writes last seen (DB.indexWrites)
	changed  time.Time // when they were last seen to move
	settled  bool      // nothing to merge since changed
	resuming bool      // a merge was started and paused: go on with it
}

// tick merges the index when no document has been indexed for mergeQuiet, until it
// is merged or a document is indexed. After an error it waits mergeQuiet again.
func (m *merger) tick(ctx context.Context, db *DB, now time.Time) (err error) {
	defer func() {
		if err != nil {
			m.changed = now
		}
	}()
	if w := db.indexWrites.Load(); w != m.writes {
		m.writes, m.changed, m.settled = w, now, false
	}
	if m.settled || now.Sub(m.changed) < mergeQuiet {
		return nil
	}
	if !m.resuming {
		frag, err := db.searchFragmented(ctx)
		if err != nil || !frag {
			m.settled = err == nil
			return err
		}
	}
	for {
		done, err := db.mergeStep(ctx, !m.resuming)
		if err != nil {
			return err
		}
		m.resuming = !done
		if done {
			m.settled = true
			return nil
		}
		if ctx.Err() != nil || db.indexWrites.Load() != m.writes {
			return nil // documents came: go on once they stop
		}
	}
}

// searchFragmented reports whether the full-text index is in several segments whose
// others hold at least 1/mergeShare of the largest. A segment's size is the page of
// its last term range, read from FTS5's term index (search_fts_idx: one row per leaf
// page range, a few thousand rows at 100,000 tables).
func (db *DB) searchFragmented(ctx context.Context) (bool, error) {
	rows, err := db.reader.QueryContext(ctx, "SELECT max(pgno) FROM search_fts_idx GROUP BY segid")
	if err != nil {
		return false, fmt.Errorf("sqlite: full-text segments: %w", err)
	}
	defer rows.Close()
	var n int
	var largest, all int64
	for rows.Next() {
		var pages int64
		if err := rows.Scan(&pages); err != nil {
			return false, fmt.Errorf("sqlite: full-text segments: %w", err)
		}
		n, all, largest = n+1, all+pages+1, max(largest, pages+1)
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("sqlite: full-text segments: %w", err)
	}
	return n > 1 && (all-largest)*mergeShare >= largest, nil
}

// mergeStep writes up to mergePages pages of the merge of the index into one segment,
// in a transaction of its own, and reports whether the merge is complete. FTS5 starts
// such a merge with a negative page count (every segment onto one level, then merged);
// a positive count goes on with a merge started, without restarting it when documents
// were indexed meanwhile. A step that merged nothing changes fewer than two rows.
func (db *DB) mergeStep(ctx context.Context, start bool) (done bool, err error) {
	pages := mergePages
	if start {
		pages = -pages
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("sqlite: begin: %w", err)
	}
	defer tx.Rollback()
	changes := func() (n int64, err error) {
		err = tx.QueryRowContext(ctx, "SELECT total_changes()").Scan(&n)
		return n, err
	}
	before, err := changes()
	if err != nil {
		return false, fmt.Errorf("sqlite: merge: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO search_fts (search_fts, rank) VALUES ('merge', ?)", pages); err != nil {
		return false, fmt.Errorf("sqlite: merge: %w", err)
	}
	after, err := changes()
	if err != nil {
		return false, fmt.Errorf("sqlite: merge: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("sqlite: commit: %w", err)
	}
	return after-before < 2, nil
}

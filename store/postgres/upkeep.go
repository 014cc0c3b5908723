package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meridian-catalog/meridian/store/rowscan"
)

// The tables' upkeep where autovacuum does not do it. PostgreSQL plans each query from
// the statistics ANALYZE gathers, and reuses the space of replaced and deleted rows
// only after VACUUM. Autovacuum does both, but it can be off, for the server (its
// autovacuum setting) or for a table (autovacuum_enabled). Then a catalog loaded after
// its tables were created is planned as if they were empty: a search for a word no
// document holds read every document (60 ms at 100,000 tables, against 0.03 ms through
// the index once analyzed), and every update leaves its dead row behind for good.
//
// So every upkeepEvery, and once at start, the upkeep looks at this schema's tables
// that autovacuum leaves alone and, by autovacuum's own thresholds and settings,
// vacuums those with enough dead or newly inserted rows and analyzes those changed
// enough since their last ANALYZE. Where autovacuum is on it does nothing. Nodes sharing the database need
// no turns: a table another VACUUM or ANALYZE holds is skipped (SKIP_LOCKED), and the
// next look finds whether it is still due. VACUUM never truncates, which would take a
// lock writers wait for.
const upkeepEvery = 30 * time.Second

// upkeepDue lists the tables of the current schema that autovacuum leaves alone and
// that are past its thresholds for VACUUM (dead rows, or rows inserted since the last
// VACUUM, whose pages it marks all-visible so that later reads need not look each
// row's transaction up) or for ANALYZE (rows changed since the last one): the table,
// and whether it needs VACUUM, which analyzes too. A table never analyzed counts as
// empty (reltuples -1), so 50 changed rows make it due.
const upkeepDue = `WITH t AS (
    SELECT s.relname AS name, s.n_dead_tup AS dead, s.n_ins_since_vacuum AS inserted,
           s.n_mod_since_analyze AS changed, greatest(c.reltuples, 0) AS tuples
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema()
      AND (NOT current_setting('autovacuum')::bool
           OR EXISTS (SELECT 1 FROM unnest(c.reloptions) AS o
                      WHERE lower(o) IN ('autovacuum_enabled=false', 'autovacuum_enabled=off',
                                         'autovacuum_enabled=no', 'autovacuum_enabled=0')))
), due AS (
    SELECT name,
           dead > current_setting('autovacuum_vacuum_threshold')::float8
                  + current_setting('autovacuum_vacuum_scale_factor')::float8 * tuples
           OR inserted > current_setting('autovacuum_vacuum_insert_threshold')::float8
                  + current_setting('autovacuum_vacuum_insert_scale_factor')::float8 * tuples AS vacuum,
           changed > current_setting('autovacuum_analyze_threshold')::float8
                  + current_setting('autovacuum_analyze_scale_factor')::float8 * tuples AS analyzed
    FROM t
)
SELECT name, vacuum FROM due WHERE vacuum OR analyzed ORDER BY name`

// upkeep vacuums or analyzes the tables upkeepDue lists, one statement per table, and
// answers the statements it ran. The table names come from the server's catalog and
// are quoted as identifiers.
func upkeep(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	rows, err := pool.Query(ctx, upkeepDue)
	if err != nil {
		return nil, fmt.Errorf("postgres: upkeep: %w", err)
	}
	due, err := rowscan.All(rows, func(s rowscan.Scanner) (string, error) {
		var (
			name   string
			vacuum bool
		)
		if err := s.Scan(&name, &vacuum); err != nil {
			return "", err
		}
		if vacuum {
			return "VACUUM (ANALYZE, SKIP_LOCKED, TRUNCATE false) " + pgx.Identifier{name}.Sanitize(), nil
		}
		return "ANALYZE (SKIP_LOCKED) " + pgx.Identifier{name}.Sanitize(), nil
	})
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("postgres: upkeep: %w", err)
	}
	for i, stmt := range due {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return due[:i], fmt.Errorf("postgres: upkeep: %s: %w", stmt, err)
		}
	}
	return due, nil
}

// upkeeper runs upkeep in the background of one DB, at start and every upkeepEvery. A
// failed round (a table it may not vacuum, a lost connection) is tried again at the
// next.
type upkeeper struct {
	stop context.CancelFunc
	done chan struct{}
	once sync.Once
}

// startUpkeep starts the upkeep of pool.
func startUpkeep(pool *pgxpool.Pool) *upkeeper {
	ctx, stop := context.WithCancel(context.Background())
	u := &upkeeper{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(u.done)
		tick := time.NewTicker(upkeepEvery)
		defer tick.Stop()
		for {
			_, _ = upkeep(ctx, pool)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return u
}

// close stops the upkeep and waits for it; a VACUUM under way is cancelled.
func (u *upkeeper) close() {
	u.once.Do(func() {
		u.stop()
		<-u.done
	})
}

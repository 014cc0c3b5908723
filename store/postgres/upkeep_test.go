package postgres

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestUpkeepAnalyzesAndVacuumsWhatAutovacuumLeavesAlone turns autovacuum off for two
// tables, changes them past autovacuum's thresholds (one by inserts, one by deletes),
// and checks that upkeep analyzes the first and vacuums the second; a third table,
// changed alike with autovacuum on for it, is left to autovacuum unless the server has
// autovacuum off.
func TestUpkeepAnalyzesAndVacuumsWhatAutovacuumLeavesAlone(t *testing.T) {
	db, _ := openTemp(t)
	db.upkeep.close() // the test runs upkeep itself
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if _, err := db.pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, table := range []string{"upkeep_inserted", "upkeep_deleted", "upkeep_autovacuumed"} {
		exec("CREATE TABLE " + table + " (id int PRIMARY KEY)")
		exec("INSERT INTO " + table + " SELECT generate_series(1, 1000)")
	}
	exec("ALTER TABLE upkeep_inserted SET (autovacuum_enabled = false)")
	exec("ALTER TABLE upkeep_deleted SET (autovacuum_enabled = off)")
	exec("ALTER TABLE upkeep_autovacuumed SET (autovacuum_enabled = true)")
	exec("VACUUM ANALYZE upkeep_inserted, upkeep_deleted, upkeep_autovacuumed")
	exec("INSERT INTO upkeep_inserted SELECT generate_series(1001, 1500)")
	exec("DELETE FROM upkeep_deleted WHERE id <= 600")
	exec("INSERT INTO upkeep_autovacuumed SELECT generate_series(1001, 1500)")
	var serverAutovacuum bool
	if err := db.pool.QueryRow(ctx, "SELECT current_setting('autovacuum')::bool").Scan(&serverAutovacuum); err != nil {
		t.Fatal(err)
	}

	want := []string{
		`ANALYZE (SKIP_LOCKED) "upkeep_inserted"`,
		`VACUUM (ANALYZE, SKIP_LOCKED, TRUNCATE false) "upkeep_deleted"`,
	}
	autovacuumed := `ANALYZE (SKIP_LOCKED) "upkeep_autovacuumed"`
	if !serverAutovacuum {
		want = append(want, autovacuumed)
	}
	// The server counts a backend's changes when the backend next goes idle, at most
	// a second or so later: upkeep runs until it has run everything wanted.
	ran := map[string]bool{}
	for deadline := time.Now().Add(15 * time.Second); ; {
		due, err := upkeep(ctx, db.pool)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range due {
			ran[s] = true
		}
		if !slices.ContainsFunc(want, func(s string) bool { return !ran[s] }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("upkeep ran %v, want %q", ran, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if serverAutovacuum && ran[autovacuumed] {
		t.Fatalf("upkeep analyzed a table autovacuum looks after")
	}

	var analyzed, vacuumed bool
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT n_mod_since_analyze = 0 FROM pg_stat_user_tables WHERE relname = 'upkeep_inserted' AND schemaname = current_schema()),
		(SELECT n_dead_tup = 0 FROM pg_stat_user_tables WHERE relname = 'upkeep_deleted' AND schemaname = current_schema())`).Scan(&analyzed, &vacuumed)
	if err != nil {
		t.Fatal(err)
	}
	if !analyzed || !vacuumed {
		t.Fatalf("after upkeep: analyzed %v, vacuumed %v", analyzed, vacuumed)
	}
	// Nothing of it is due any more.
	due, err := upkeep(ctx, db.pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range due {
		if slices.Contains(want, s) {
			t.Fatalf("a second upkeep ran %q again", s)
		}
	}
}

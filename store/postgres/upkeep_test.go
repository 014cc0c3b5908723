package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUpkeepAnalyzesAndVacuumsWhatAutovacuumLeavesAlone turns autovacuum off for some
// tables and changes them past autovacuum's thresholds: one by a few inserts (due for
// ANALYZE), one by many (due for VACUUM as well), one by deletes (VACUUM). It checks
// that upkeep analyzes or vacuums each as due; a fourth table, changed alike with
// autovacuum on for it, is left to autovacuum unless the server has autovacuum off.
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
	tables := []string{"upkeep_inserted", "upkeep_loaded", "upkeep_deleted", "upkeep_autovacuumed"}
	for _, table := range tables {
		exec("CREATE TABLE " + table + " (id int PRIMARY KEY)")
		exec("INSERT INTO " + table + " SELECT generate_series(1, 1000)")
	}
	exec("ALTER TABLE upkeep_inserted SET (autovacuum_enabled = false)")
	exec("ALTER TABLE upkeep_loaded SET (autovacuum_enabled = false)")
	exec("ALTER TABLE upkeep_deleted SET (autovacuum_enabled = off)")
	exec("ALTER TABLE upkeep_autovacuumed SET (autovacuum_enabled = true)")
	// The server counts a backend's changes when the backend next goes idle, at most a
	// second or so later. Counted after the VACUUM below, the first 1,000 rows would
	// make each table due again.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var counted int
		err := db.pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_user_tables WHERE relname = ANY($1) AND n_tup_ins >= 1000",
			tables).Scan(&counted)
		if err != nil {
			t.Fatal(err)
		}
		if counted == len(tables) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not count the inserted rows within 15 s")
		}
	}
	exec("VACUUM ANALYZE " + strings.Join(tables, ", "))
	exec("INSERT INTO upkeep_inserted SELECT generate_series(1001, 1500)") // past ANALYZE's 50 + 10%
	exec("INSERT INTO upkeep_loaded SELECT generate_series(1001, 6000)")   // past VACUUM's 1000 + 20% for inserts
	exec("DELETE FROM upkeep_deleted WHERE id <= 600")                     // past VACUUM's 50 + 20% for dead rows
	exec("INSERT INTO upkeep_autovacuumed SELECT generate_series(1001, 1500)")
	var serverAutovacuum bool
	if err := db.pool.QueryRow(ctx, "SELECT current_setting('autovacuum')::bool").Scan(&serverAutovacuum); err != nil {
		t.Fatal(err)
	}

	// What upkeep did to each table: "analyze" or "vacuum" (which analyzes too).
	did := map[string]string{}
	record := func(stmt string) {
		for _, table := range tables {
			if strings.HasSuffix(stmt, `"`+table+`"`) {
				if strings.HasPrefix(stmt, "VACUUM (ANALYZE, SKIP_LOCKED, TRUNCATE false) ") {
					did[table] = "vacuum"
				} else if strings.HasPrefix(stmt, "ANALYZE (SKIP_LOCKED) ") && did[table] == "" {
					did[table] = "analyze"
				}
			}
		}
	}
	want := map[string][]string{
		"upkeep_inserted": {"analyze"},
		"upkeep_loaded":   {"vacuum"},
		"upkeep_deleted":  {"vacuum"},
	}
	if !serverAutovacuum {
		want["upkeep_autovacuumed"] = []string{"analyze"}
	}
	done := func() bool {
		for table, ok := range want {
			if !slices.Contains(ok, did[table]) {
				return false
			}
		}
		return true
	}
	// upkeep runs until it has done everything wanted, once the changes are counted.
	for deadline := time.Now().Add(15 * time.Second); !done(); {
		due, err := upkeep(ctx, db.pool)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range due {
			record(stmt)
		}
		if time.Now().After(deadline) {
			t.Fatalf("upkeep did %v, want %v", did, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if serverAutovacuum && did["upkeep_autovacuumed"] != "" {
		t.Fatalf("upkeep ran %s on a table autovacuum looks after", did["upkeep_autovacuumed"])
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
	for _, stmt := range due {
		for table := range want {
			if strings.HasSuffix(stmt, `"`+table+`"`) {
				t.Fatalf("a second upkeep ran %q again", stmt)
			}
		}
	}
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/storetest"
)

// The driver contract (rows, lists, versions, relations, events, settings,
// search, transactions, concurrent writers, reopening) runs on SQLite in
// store/storetest (TestSQLiteDriver). What is here is SQLite's own: pragmas, the
// query_only reader pool, BEGIN IMMEDIATE, migrations and path checks.

// openTemp opens a fresh catalog file in a test directory; it closes when the test ends.
func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "catalog.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// openPair opens two DBs on one new file, as two processes would.
func openPair(t *testing.T) (a, b *DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.db")
	for _, db := range []**DB{&a, &b} {
		var err error
		if *db, err = Open(context.Background(), path); err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { (*db).Close() })
	}
	return a, b
}

// putSetting commits setting k = v in a write transaction of its own.
func putSetting(t *testing.T, db *DB, v string) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.PutSetting(ctx, "k", v); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// findIDs returns the sorted ids of the documents tx's strict keyword search for word
// finds (the first 10).
func findIDs(t *testing.T, tx store.Tx, word string) []string {
	t.Helper()
	res, err := tx.Search(context.Background(), search.Query{Terms: []string{word}, Strict: true, Size: 10})
	if err != nil {
		t.Fatalf("Search %s: %v", word, err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestReaderConnectionsAreQueryOnly(t *testing.T) {
	db, _ := openTemp(t)
	if _, err := db.reader.ExecContext(context.Background(), "INSERT INTO settings (key, value) VALUES ('k', 'v')"); err == nil {
		t.Error("reader pool accepted a write")
	}
}

func TestPragmas(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	tests := []struct {
		pragma string
		pool   string
		want   string
	}{
		{"journal_mode", "writer", "wal"},
		{"synchronous", "writer", "2"},
		{"foreign_keys", "writer", "1"},
		{"busy_timeout", "writer", "10000"},
		{"query_only", "reader", "1"},
		{"busy_timeout", "reader", "10000"},
	}
	for _, tt := range tests {
		t.Run(tt.pool+" "+tt.pragma, func(t *testing.T) {
			pool := db.writer
			if tt.pool == "reader" {
				pool = db.reader
			}
			var got string
			if err := pool.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("%s = %q, want %q", tt.pragma, got, tt.want)
			}
		})
	}
}

// testModule is a module with one table, numbered alike on both drivers.
func testModule(name string) store.Module {
	sql := []byte("CREATE TABLE " + name + "_rows (id TEXT NOT NULL PRIMARY KEY);")
	return store.Module{Name: name, Migrations: fstest.MapFS{
		"sqlite/0001_rows.sql":   {Data: sql},
		"postgres/0001_rows.sql": {Data: sql},
	}}
}

// migrationRows counts the rows module_migrations records for module.
func migrationRows(t *testing.T, db *DB, module string) int {
	t.Helper()
	var n int
	if err := db.reader.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM module_migrations WHERE module = ?", module).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	ms, err := coreMigrations()
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations: %d, %v", len(ms), err)
	}
	latest := ms[len(ms)-1].Version

	t.Run("reopening is a no-op", func(t *testing.T) {
		db, path := openTemp(t)
		storetest.Write(t, db, func(tx store.Tx) error { return tx.PutSetting(ctx, "k", "v") })
		db.Close()
		for i := 0; i < 2; i++ {
			db, err := Open(ctx, path, testModule("extra"))
			if err != nil {
				t.Fatalf("reopen %d: %v", i, err)
			}
			v, err := db.SchemaVersion(ctx)
			if err != nil || v != latest {
				t.Errorf("SchemaVersion %d, %v; want %d", v, err, latest)
			}
			if n := migrationRows(t, db, store.CoreModule); n != len(ms) {
				t.Errorf("module_migrations has %d engine rows, want %d", n, len(ms))
			}
			if n := migrationRows(t, db, "extra"); n != 1 {
				t.Errorf("module_migrations has %d rows of the module, want 1", n)
			}
			db.Close()
		}
	})
	t.Run("newer schema is refused", func(t *testing.T) {
		for _, module := range []string{store.CoreModule, "extra"} {
			db, path := openTemp(t)
			if _, err := db.writer.ExecContext(ctx, "INSERT INTO module_migrations (module, version, applied_at) VALUES (?, ?, 0)", module, latest+1); err != nil {
				t.Fatal(err)
			}
			db.Close()
			_, err := Open(ctx, path, testModule("extra"))
			want := "module " + module + ": database schema version"
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "is newer than this binary supports") {
				t.Errorf("Open: %v, want %q", err, want)
			}
		}
	})
	t.Run("malformed modules are refused", func(t *testing.T) {
		mismatched := testModule("odd")
		mismatched.Migrations = fstest.MapFS{"sqlite/0001_a.sql": {Data: []byte("SELECT 1;")}, "postgres/0002_a.sql": {Data: []byte("SELECT 1;")}}
		for name, modules := range map[string][]store.Module{
			"no name":            {testModule("")},
			"a taken name":       {testModule("a"), testModule("a")},
			"the engine's name":  {testModule(store.CoreModule)},
			"numbered unalike":   {mismatched},
			"without migrations": {{Name: "bare"}},
		} {
			if db, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), modules...); err == nil {
				db.Close()
				t.Errorf("%s: Open accepted %v", name, modules)
			}
		}
	})
	t.Run("path with a question mark is refused", func(t *testing.T) {
		if _, err := Open(ctx, filepath.Join(t.TempDir(), "a?b.db")); err == nil {
			t.Error("Open accepted a path with '?'")
		}
	})
}

func TestWritableTransactionLocksAtOnce(t *testing.T) {
	db, path := openTemp(t)
	ctx := context.Background()
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	tx, err := db.Begin(ctx, true) // no statement yet: BEGIN IMMEDIATE alone holds the lock
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.ExecContext(ctx, "INSERT INTO settings (key, value) VALUES ('x', 'y')")
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY {
		t.Errorf("write beside an open writable transaction: %v, want SQLITE_BUSY", err)
	}
	tx.Rollback()
	if _, err := other.ExecContext(ctx, "INSERT INTO settings (key, value) VALUES ('x', 'y')"); err != nil {
		t.Errorf("write after rollback: %v", err)
	}
}

// TestFixedStatementsArePreparedPerPool: the writer prepares every fixed statement, the
// readers only the reads, and each has SQL of its own.
func TestFixedStatementsArePreparedPerPool(t *testing.T) {
	db, _ := openTemp(t)
	seen := map[string]stmtID{}
	for id := stmtID(0); id < numStmts; id++ {
		if prev, dup := seen[stmtSQL[id]]; dup {
			t.Errorf("statements %d and %d have the same SQL %q", prev, id, stmtSQL[id])
		}
		seen[stmtSQL[id]] = id
		if db.writerStmts[id] == nil {
			t.Errorf("writer did not prepare %q", stmtSQL[id])
		}
		if got := db.readerStmts[id] != nil; got != (id < firstWrite) {
			t.Errorf("reader prepared %q: %v, want %v", stmtSQL[id], got, id < firstWrite)
		}
	}
}

// TestModuleStatementsArePreparedOnce: a module statement runs unprepared once, is
// prepared on its pool by the next Begin and bound from then on; a pool keeps at most
// maxModuleStmts of them.
func TestModuleStatementsArePreparedOnce(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "catalog.db"), testModule("extra"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string) {
		t.Helper()
		tx, err := db.Begin(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var n int
		if err := tx.SQL().QueryRow(ctx, q, "x").Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s: %d, %v", q, n, err)
		}
	}
	const q = "SELECT COUNT(*) FROM extra_rows WHERE id = $1"
	prepared := func() map[string]*sql.Stmt { return *db.readerModStmts.prepared.Load() }
	count(q)
	if len(prepared()) != 0 {
		t.Fatalf("prepared before a Begin: %v", prepared())
	}
	count(q)
	count(q)
	if st := prepared()[numbered(q)]; st == nil || len(prepared()) != 1 {
		t.Fatalf("prepared after the next Begin: %v", prepared())
	}
	if len(*db.writerModStmts.prepared.Load()) != 0 {
		t.Error("a read prepared on the writer pool")
	}
	for i := 0; i < maxModuleStmts+10; i++ {
		count(fmt.Sprintf("SELECT COUNT(*) + %d - %d FROM extra_rows WHERE id = $1", i, i))
	}
	count(q)
	if n := len(prepared()); n != maxModuleStmts {
		t.Errorf("%d statements prepared, want at most %d", n, maxModuleStmts)
	}
}

func TestWriterCheckpointsEveryTenThousandPagesAndBoundsTheLog(t *testing.T) {
	db, _ := openTemp(t)
	for _, c := range []struct {
		pragma string
		want   int
	}{
		{"wal_autocheckpoint", checkpointPages},
		{"journal_size_limit", walLimit},
	} {
		var got int
		if err := db.writer.QueryRowContext(context.Background(), "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("PRAGMA %s = %d on the writer, want %d", c.pragma, got, c.want)
		}
	}
}

// TestARefusedInsertLeavesTheTransaction checks what makes the driver a
// store.ConflictKeeper: an Insert the unique keys refuse answers EConflict, writes
// nothing, and the transaction goes on and commits what else it wrote.
func TestARefusedInsertLeavesTheTransaction(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	row := func(id, fqn string) store.Row {
		return store.Row{ID: id, Kind: "table", Name: id, FQN: fqn, Version: meridian.InitialVersion,
			UpdatedAt: 1700000000000, UpdatedBy: "admin", Doc: []byte(`{"id":"` + id + `"}`)}
	}
	storetest.Write(t, db, func(tx store.Tx) error { return tx.Insert(ctx, row("id-1", "s.orders")) })
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, ok := tx.(store.ConflictKeeper); !ok {
		t.Fatal("the write transaction is not a store.ConflictKeeper")
	}
	if err := tx.Insert(ctx, row("id-0", "s.before")); err != nil {
		t.Fatal(err)
	}
	storetest.WantCode(t, tx.Insert(ctx, row("id-2", "s.orders")), meridian.EConflict)
	if err := tx.Insert(ctx, row("id-3", "s.after")); err != nil {
		t.Fatalf("insert after the refused one: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	storetest.Read(t, db, func(tx store.Tx) error {
		for id, want := range map[string]string{"id-0": "", "id-1": "", "id-2": meridian.ENotFound, "id-3": ""} {
			_, err := tx.Get(ctx, "table", id)
			storetest.WantCode(t, err, want)
		}
		return nil
	})
}

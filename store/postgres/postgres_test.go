package postgres

import (
	"context"
	"errors"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgvector/pgvector-go"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/migration"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/store/storetest"
)

// The driver contract (rows, lists, versions, relations, events, settings,
// search, transactions, concurrent writers, reopening) runs on PostgreSQL in
// store/storetest (TestPostgresDriver). What is here is PostgreSQL's own: READ ONLY
// transactions, pool settings, pgvector, the advisory-locked migrations, the write
// lock at Begin, missing extensions and the fuzzy search fallback.

// openTemp opens a fresh catalog in a throwaway database; it closes when the test
// ends, before the database is dropped.
func openTemp(t testing.TB) (*DB, string) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	db, err := Open(context.Background(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, url
}

func TestReadOnlyTransactionsAreReadOnlyAtTheServer(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	ptx, err := db.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer ptx.Rollback(ctx)
	_, err = ptx.Exec(ctx, "INSERT INTO settings (key, value) VALUES ('k', 'v')")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "25006" {
		t.Errorf("write in a READ ONLY transaction: %v, want SQLSTATE 25006", err)
	}
}

func TestDefaultMaxConnsLeavesRoomForOtherServers(t *testing.T) {
	tests := []struct {
		name   string
		usable int
		want   int32
	}{
		{"PostgreSQL's default max_connections (100, 3 reserved)", 97, 24},
		{"a small server still gets a few", 10, FewestMaxConns},
		{"no usable connections reported", 0, FewestMaxConns},
		{"a large server is capped", 1000, DefaultMaxConns},
		{"exactly four times the cap", 4 * DefaultMaxConns, DefaultMaxConns},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := defaultMaxConns(tt.usable); got != tt.want {
				t.Errorf("defaultMaxConns(%d) = %d, want %d", tt.usable, got, tt.want)
			}
		})
	}
}

func TestPoolAndPgvector(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	usable, err := usableConnections(ctx, conn)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	quarter := defaultMaxConns(usable)
	tests := []struct {
		name     string
		url      string
		min, max int32
	}{
		{"defaults: a quarter of the server's connections", url, DefaultMinConns, quarter},
		{"pool_max_conns from the URL", url + "&pool_max_conns=5", DefaultMinConns, 5},
		{"min never above max", url + "&pool_max_conns=1", 1, 1},
		{"pool_min_conns from the URL", url + "&pool_min_conns=3", 3, quarter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(ctx, tt.url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			cfg := db.pool.Config()
			if cfg.MinConns != tt.min || cfg.MaxConns != tt.max {
				t.Errorf("pool min %d max %d, want %d and %d", cfg.MinConns, cfg.MaxConns, tt.min, tt.max)
			}
		})
	}
	t.Run("connections know pgvector's types", func(t *testing.T) {
		db, err := Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var v pgvector.Vector
		if err := db.pool.QueryRow(ctx, "SELECT $1::vector", pgvector.NewVector([]float32{1, 2.5, 3})).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v.Slice(), []float32{1, 2.5, 3}) {
			t.Errorf("vector round trip: %v", v.Slice())
		}
		var exts []string
		rows, _ := db.pool.Query(ctx, "SELECT extname FROM pg_extension WHERE extname IN ('vector', 'pg_trgm') ORDER BY extname")
		exts, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || strings.Join(exts, ",") != "pg_trgm,vector" {
			t.Errorf("extensions %v, %v", exts, err)
		}
	})
	t.Run("a bad URL does not echo its password", func(t *testing.T) {
		_, err := Open(ctx, "postgres://u:s3cret@127.0.0.1:5432/db?sslmode=bogus")
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open: %v", err)
		}
	})
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
	if err := db.pool.QueryRow(context.Background(), "SELECT COUNT(*) FROM module_migrations WHERE module = $1", module).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCoreMigrationsAreNumberedAsOnSQLite: the engine's migrations have the same
// numbers on both drivers.
func TestCoreMigrationsAreNumberedAsOnSQLite(t *testing.T) {
	ms, err := coreMigrations()
	if err != nil {
		t.Fatal(err)
	}
	lite, err := migration.Load(os.DirFS("../sqlite"), "migrations", "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := migration.Versions(ms), migration.Versions(lite); !slices.Equal(a, b) || len(a) == 0 {
		t.Errorf("PostgreSQL migrations %v, SQLite ones %v", a, b)
	}
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	ms, err := coreMigrations()
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations: %d, %v", len(ms), err)
	}
	latest := ms[len(ms)-1].Version

	t.Run("reopening is a no-op", func(t *testing.T) {
		db, url := openTemp(t)
		storetest.Write(t, db, func(tx store.Tx) error { return tx.PutSetting(ctx, "k", "v") })
		db.Close()
		for i := 0; i < 2; i++ {
			db, err := Open(ctx, url, testModule("extra"))
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
	t.Run("0006 counts the terms of the documents indexed before it", func(t *testing.T) {
		db, url := openTemp(t)
		stopFolding(db)
		storetest.IndexSearchDocs(t, db)
		undo := `DROP TABLE search_terms, search_terms_pending;
DELETE FROM module_migrations WHERE module = '` + store.CoreModule + `' AND version = 6`
		if _, err := db.pool.Exec(ctx, undo); err != nil {
			t.Fatal(err)
		}
		db.Close()
		db, err := Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if got, want := termCounts(t, db); len(want) == 0 || !maps.Equal(got, want) {
			t.Errorf("search_terms counts %v, the documents hold %v", got, want)
		}
	})
	t.Run("newer schema is refused", func(t *testing.T) {
		for _, module := range []string{store.CoreModule, "extra"} {
			db, url := openTemp(t)
			if _, err := db.pool.Exec(ctx, "INSERT INTO module_migrations (module, version, applied_at) VALUES ($1, $2, 0)", module, latest+1); err != nil {
				t.Fatal(err)
			}
			db.Close()
			_, err := Open(ctx, url, testModule("extra"))
			want := "module " + module + ": database schema version"
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "is newer than this binary supports") {
				t.Errorf("Open: %v, want %q", err, want)
			}
		}
	})
	t.Run("concurrent first starts apply each migration once", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		const starts = 8
		var wg sync.WaitGroup
		errs := make(chan error, starts)
		for i := 0; i < starts; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db, err := Open(ctx, url, testModule("extra"))
				if err != nil {
					errs <- err
					return
				}
				db.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		db, err := Open(ctx, url, testModule("extra"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if n := migrationRows(t, db, store.CoreModule); n != len(ms) {
			t.Errorf("module_migrations has %d engine rows, want %d", n, len(ms))
		}
		if n := migrationRows(t, db, "extra"); n != 1 {
			t.Errorf("module_migrations has %d rows of the module, want 1", n)
		}
	})
}

func TestWritableTransactionLocksAtOnce(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()

	tx, err := db.Begin(ctx, true) // no statement yet: Begin alone holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if other, err := db.Begin(short, true); err == nil {
		other.Rollback()
		t.Error("a second writable transaction began beside an open one")
	}
	rtx, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatalf("a reader waits for the writer: %v", err)
	}
	rtx.Rollback()
	tx.Rollback()
	other, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatalf("writable transaction after rollback: %v", err)
	}
	other.Rollback()
}

func TestMissingExtensionIsNamed(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	saved := extensions
	t.Cleanup(func() { extensions = saved })
	extensions = append(append(extensions[:0:0], saved...), struct{ name, missing string }{
		"meridian_no_such_extension", ErrNoPgvector})
	_, err := Open(ctx, url)
	if err == nil || err.Error() != "postgres: "+ErrNoPgvector {
		t.Errorf("Open: %v, want %q", err, ErrNoPgvector)
	}
	if !strings.Contains(ErrNoPgvector, `pgvector extension "vector" is not installed`) ||
		!strings.Contains(ErrNoPgvector, "scripts/install-pgvector.sh") {
		t.Errorf("message %q does not name the extension and the fix", ErrNoPgvector)
	}
}

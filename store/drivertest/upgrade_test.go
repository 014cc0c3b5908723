package drivertest_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/postgres"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/store/sqlite"
)

// A catalog made by the release before the module seam (commit ebaf027) opens with the
// current code, on each driver, and keeps its tokens and test results: the previous
// release's migrations (testdata/release-ebaf027, copied from that commit) are applied
// with its bookkeeping (schema_migrations), a token and a test case result are written
// as that release's driver wrote them, and the catalog is then opened with the auth
// and quality modules, twice.

const previousRelease = "testdata/release-ebaf027"

// The rows the previous release wrote.
const (
	testCaseID  = "8d3f0d5e-7c1a-4b8e-9f65-2a41c0b7e913"
	testCaseFQN = "svc.db.sch.orders.rows"
	testCaseDoc = `{"id":"` + testCaseID + `","name":"rows","fullyQualifiedName":"` + testCaseFQN + `","version":0.1,` +
		`"updatedAt":1735689000000,"updatedBy":"admin","deleted":false,"entityLink":"<#E::table::svc.db.sch.orders>"}`
	resultDoc = `{"timestamp":1735689600000,"testCaseStatus":"Failed","testCaseFQN":"` + testCaseFQN + `","id":"r1"}`
)

var oldToken = auth.Token{ID: "tk1", Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", UserName: "alice",
	Name: "ci", TokenType: meridian.TokenTypePersonal, CreatedAt: 1735689000000}

// previousMigrations reads the previous release's migrations of a driver, in order.
func previousMigrations(t *testing.T, driver string) []string {
	t.Helper()
	dir := filepath.Join(previousRelease, driver)
	names, err := fs.Glob(os.DirFS(dir), "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("previous release migrations in %s: %v, %v", dir, names, err)
	}
	var out []string
	for _, n := range names { // Glob sorts; the names start with their number
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// oldSQLite makes a catalog file as the previous release did and returns its path.
func oldSQLite(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)")
	for i, m := range previousMigrations(t, "sqlite") {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", i+1, time.Now().UnixMilli()); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO entities (id, kind, name, fqn, version, updated_at, updated_by, deleted, doc)
VALUES (?, 'testCase', 'rows', ?, 1, 1735689000000, 'admin', 0, ?)`, testCaseID, testCaseFQN, testCaseDoc)
	exec(`INSERT INTO entity_versions (id, version, doc) VALUES (?, 1, ?)`, testCaseID, testCaseDoc)
	exec("INSERT INTO tokens (id, hash, user_name, name, token_type, created_at, expires_at, revoked) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		oldToken.ID, oldToken.Hash, oldToken.UserName, oldToken.Name, oldToken.TokenType, oldToken.CreatedAt, oldToken.ExpiresAt, 0)
	exec(`INSERT INTO points (series, entity_id, ts, doc) VALUES (?, ?, ?, ?)
ON CONFLICT (series, entity_id, ts) DO UPDATE SET doc = excluded.doc`, quality.SeriesTestCaseResult, testCaseID, 1735689600000, resultDoc)
	return path
}

// oldPostgres makes a catalog database as the previous release did and returns its
// URL.
func oldPostgres(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE EXTENSION IF NOT EXISTS vector")
	exec("CREATE EXTENSION IF NOT EXISTS pg_trgm")
	exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER NOT NULL PRIMARY KEY, applied_at BIGINT NOT NULL)")
	for i, m := range previousMigrations(t, "postgres") {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Conn().PgConn().Exec(ctx, m).ReadAll(); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)", i+1, time.Now().UnixMilli()); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO entities (id, kind, name, fqn, version, updated_at, updated_by, deleted, doc)
VALUES ($1, 'testCase', 'rows', $2, 1, 1735689000000, 'admin', false, $3)`, testCaseID, testCaseFQN, testCaseDoc)
	exec(`INSERT INTO entity_versions (id, version, doc) VALUES ($1, 1, $2)`, testCaseID, testCaseDoc)
	exec("INSERT INTO tokens (id, hash, user_name, name, token_type, created_at, expires_at, revoked) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
		oldToken.ID, oldToken.Hash, oldToken.UserName, oldToken.Name, oldToken.TokenType, oldToken.CreatedAt, oldToken.ExpiresAt, false)
	exec(`INSERT INTO points (series, entity_id, ts, doc) VALUES ($1, $2, $3, $4)
ON CONFLICT (series, entity_id, ts) DO UPDATE SET doc = excluded.doc`, quality.SeriesTestCaseResult, testCaseID, 1735689600000, resultDoc)
	return url
}

func TestPreviousReleaseUpgradesInPlace(t *testing.T) {
	ctx := context.Background()
	modules := []store.Module{auth.Module(), quality.Module()}
	for _, d := range []struct {
		name string
		make func(t *testing.T) func() (store.Driver, error)
	}{
		{"SQLite", func(t *testing.T) func() (store.Driver, error) {
			path := oldSQLite(t)
			return func() (store.Driver, error) { return sqlite.Open(ctx, path, modules...) }
		}},
		{"PostgreSQL", func(t *testing.T) func() (store.Driver, error) {
			url := oldPostgres(t)
			return func() (store.Driver, error) { return postgres.Open(ctx, url, modules...) }
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			open := d.make(t)
			var first []string
			for i := 0; i < 2; i++ {
				db, err := open()
				if err != nil {
					t.Fatalf("open %d: %v", i+1, err)
				}
				applied := checkUpgraded(t, db)
				db.Close()
				if i == 0 {
					first = applied
				} else if !reflect.DeepEqual(applied, first) {
					t.Errorf("the second open changed the bookkeeping: %v, then %v", first, applied)
				}
			}
		})
	}
}

// checkUpgraded checks that the catalog keeps the previous release's token and test
// result, now served by the auth and quality modules, and returns its migration
// bookkeeping.
func checkUpgraded(t *testing.T, db store.Driver) []string {
	t.Helper()
	ctx := context.Background()
	a, err := auth.New(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	if toks, err := a.Tokens(ctx, "alice"); err != nil || len(toks) != 1 || toks[0] != oldToken {
		t.Errorf("tokens of alice = %+v, %v; want %+v", toks, err, oldToken)
	}
	admin := &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}
	ents := store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry()})
	tc, err := ents.Get(ctx, admin, "testCase", store.ByID(testCaseID), store.GetOptions{})
	if err != nil || tc["testCaseStatus"] != "Failed" {
		t.Errorf("test case = %v, %v; want status Failed from its result", tc, err)
	}
	if vs, err := ents.Versions(ctx, admin, "testCase", testCaseID); err != nil || len(vs) != 1 {
		t.Errorf("versions of the test case = %v, %v; want its one snapshot", vs, err)
	}
	if rs, err := quality.ListResults(ctx, ents, admin, testCaseFQN, 0, 0); err != nil || len(rs) != 1 || rs[0]["id"] != "r1" {
		t.Errorf("results = %v, %v", rs, err)
	}
	var applied []string
	err = ents.InTx(ctx, false, func(tx store.Tx) error {
		legacy := "SELECT COUNT(*) FROM sqlite_master WHERE name = 'schema_migrations'"
		if tx.SQL().Dialect() == store.DialectPostgres {
			legacy = "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'schema_migrations'"
		}
		var n int
		if err := tx.SQL().QueryRow(ctx, legacy).Scan(&n); err != nil || n != 0 {
			t.Errorf("schema_migrations is still there: %d, %v", n, err)
		}
		rows, err := tx.SQL().Query(ctx, "SELECT module, version, applied_at FROM module_migrations ORDER BY module, version")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				module             string
				version, appliedAt int64
			)
			if err := rows.Scan(&module, &version, &appliedAt); err != nil {
				return err
			}
			applied = append(applied, fmt.Sprintf("%s %d at %d", module, version, appliedAt))
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 16 { // auth 1 and 2, quality 1, store 1 to 13
		t.Errorf("module_migrations = %v", applied)
	}
	return applied
}

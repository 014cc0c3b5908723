package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner/dbtest"
	"github.com/meridian-catalog/meridian/queryrunner/engine"
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/all"
)

// collect is a sink that keeps what it receives.
type collect struct {
	cols []engine.Column
	rows [][]any
}

func (c *collect) Columns(cols []engine.Column) error { c.cols = cols; return nil }
func (c *collect) Row(v []any) error                  { c.rows = append(c.rows, v); return nil }

// target is one engine under test with its seeded database and the server-side
// statements that show whether a query still runs.
type target struct {
	name     string
	open     func(t *testing.T) dbtest.Target
	sleep    string
	running  func(t *testing.T, tg dbtest.Target) int
	checksum func(t *testing.T, tg dbtest.Target) string
	bigQuery string
}

func targets() []target {
	return []target{
		{
			name:  "Postgres",
			open:  func(t *testing.T) dbtest.Target { return dbtest.Postgres(t) },
			sleep: "SELECT pg_sleep(30)",
			running: func(t *testing.T, tg dbtest.Target) int {
				var n int
				if err := tg.PG.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'").Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			},
			checksum: func(t *testing.T, tg dbtest.Target) string { return dbtest.ChecksumPG(t, tg.PG) },
			bigQuery: "SELECT g FROM generate_series(1, 10000000) g",
		},
		{
			name:  "MariaDB",
			open:  func(t *testing.T) dbtest.Target { return dbtest.MySQL(t) },
			sleep: "SELECT SLEEP(30)",
			running: func(t *testing.T, tg dbtest.Target) int {
				var n int
				if err := tg.DB.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(30)'").Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			},
			checksum: func(t *testing.T, tg dbtest.Target) string { return dbtest.ChecksumMySQL(t, tg.DB) },
			bigQuery: "SELECT a.id * 1000 + b.id FROM items a, items b, items c",
		},
	}
}

func TestEngines(t *testing.T) {
	for _, tc := range targets() {
		t.Run(tc.name, func(t *testing.T) {
			tg := tc.open(t)
			e, ok := engine.Lookup(tg.Conn.Type)
			if !ok {
				t.Fatalf("engine %s not registered", tg.Conn.Type)
			}
			t.Run("AQueryStreamsColumnsAndRows", func(t *testing.T) {
				var s collect
				sum, err := e.Query(context.Background(), tg.Conn, "SELECT id, name, price FROM items WHERE id <= 3 ORDER BY id", engine.Limits{MaxRows: 10, Timeout: 10 * time.Second}, &s)
				if err != nil {
					t.Fatal(err)
				}
				if sum.Rows != 3 || sum.Truncated || len(s.rows) != 3 || len(s.cols) != 3 {
					t.Fatalf("summary %+v, %d rows, cols %v", sum, len(s.rows), s.cols)
				}
				if s.cols[0].Name != "id" || s.cols[0].Type == "" || s.rows[0][0] != int64(1) || s.rows[2][1] != "item 3" {
					t.Fatalf("cols %v rows %v", s.cols, s.rows)
				}
			})
			t.Run("TheRowCapStopsTheRun", func(t *testing.T) {
				var s collect
				start := time.Now()
				sum, err := e.Query(context.Background(), tg.Conn, tc.bigQuery, engine.Limits{MaxRows: 7, Timeout: 60 * time.Second}, &s)
				if err != nil {
					t.Fatal(err)
				}
				if sum.Rows != 7 || !sum.Truncated || len(s.rows) != 7 {
					t.Fatalf("summary %+v rows %d", sum, len(s.rows))
				}
				if d := time.Since(start); d > 20*time.Second {
					t.Fatalf("capped run took %v", d)
				}
			})
			t.Run("TheTransactionIsReadOnly", func(t *testing.T) {
				before := tc.checksum(t, tg)
				for _, q := range []string{"DELETE FROM items", "UPDATE items SET price = 0", "INSERT INTO items (id, name, price) VALUES (1000, 'x', 1)", "CREATE TABLE xx (a int)"} {
					_, err := e.Query(context.Background(), tg.Conn, q, engine.Limits{MaxRows: 10, Timeout: 10 * time.Second}, &collect{})
					if meridian.ErrorCode(err) != meridian.EInvalid {
						t.Errorf("%s: got %v, want the database to refuse it", q, err)
					}
				}
				if after := tc.checksum(t, tg); after != before {
					t.Fatalf("table changed: %s -> %s", before, after)
				}
			})
			t.Run("TheServerEnforcesTheStatementTimeout", func(t *testing.T) {
				start := time.Now()
				_, err := e.Query(context.Background(), tg.Conn, tc.sleep, engine.Limits{MaxRows: 10, Timeout: time.Second}, &collect{})
				if tc.name == "MariaDB" && err == nil {
					// MariaDB's max_statement_time interrupts SLEEP, which then returns 1.
					err = errors.New("interrupted")
				}
				if err == nil || time.Since(start) > 10*time.Second {
					t.Fatalf("err %v after %v", err, time.Since(start))
				}
				waitGone(t, func() int { return tc.running(t, tg) })
			})
			t.Run("CancellingStopsTheStatementOnTheServer", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					_, err := e.Query(ctx, tg.Conn, tc.sleep, engine.Limits{MaxRows: 10, Timeout: time.Minute}, &collect{})
					done <- err
				}()
				deadline := time.Now().Add(10 * time.Second)
				for tc.running(t, tg) == 0 {
					if time.Now().After(deadline) {
						t.Fatal("the statement never showed up on the server")
					}
					time.Sleep(50 * time.Millisecond)
				}
				cancel()
				select {
				case err := <-done:
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("err %v, want context.Canceled", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("Query did not return after cancel")
				}
				waitGone(t, func() int { return tc.running(t, tg) })
			})
			t.Run("IntrospectionListsDatabasesAndSchemas", func(t *testing.T) {
				dbs, err := e.Databases(context.Background(), tg.Conn)
				if err != nil || !contains(dbs, tg.Conn.Database) {
					t.Fatalf("databases %v err %v", dbs, err)
				}
				schemas, err := e.Schemas(context.Background(), tg.Conn, tg.Conn.Database)
				want := "public"
				if tc.name == "MariaDB" {
					want = tg.Conn.Database
				}
				if err != nil || !contains(schemas, want) {
					t.Fatalf("schemas %v err %v", schemas, err)
				}
				if err := e.Ping(context.Background(), tg.Conn); err != nil {
					t.Fatal(err)
				}
			})
			t.Run("AnUnknownUserIsRefusedWithoutTheSecret", func(t *testing.T) {
				c := tg.Conn
				c.Username = "nobody_here"
				c.Password = "Very-Secret-Pa55"
				err := e.Ping(context.Background(), c)
				if meridian.ErrorCode(err) != meridian.EUnauthorized {
					t.Fatalf("err %v code %s", err, meridian.ErrorCode(err))
				}
				if strings.Contains(err.Error(), c.Password) {
					t.Fatalf("message holds the password: %v", err)
				}
			})
		})
	}
}

func TestMariaDBWrongPasswordIsAClearErrorWithoutTheSecret(t *testing.T) {
	tg := dbtest.MySQL(t)
	user := dbtest.MySQLUser(t, tg.DB, tg.Conn.Database, "Right-Pa55word")
	c := tg.Conn
	c.Username = user
	c.Password = "Right-Pa55word"
	e, _ := engine.Lookup("Mysql")
	if err := e.Ping(context.Background(), c); err != nil {
		t.Fatalf("right password: %v", err)
	}
	c.Password = "Wrong-Pa55word-XYZ"
	err := e.Ping(context.Background(), c)
	if meridian.ErrorCode(err) != meridian.EUnauthorized || !strings.Contains(err.Error(), "refused the credentials") {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), c.Password) || strings.Contains(err.Error(), "Right-Pa55word") {
		t.Fatalf("message holds a password: %v", err)
	}
}

func TestSevenEngineTypesAreRegistered(t *testing.T) {
	got := engine.Types()
	if len(got) != 7 {
		t.Errorf("types %v, want seven", got)
	}
	for _, want := range []string{"BigQuery", "Mssql", "Mysql", "Postgres", "Redshift", "Snowflake", "Trino"} {
		if !contains(got, want) {
			t.Errorf("types %v lack %s", got, want)
		}
	}
}

func waitGone(t *testing.T, running func() int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for running() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the statement still runs on the server")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

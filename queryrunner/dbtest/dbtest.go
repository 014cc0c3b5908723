// Package dbtest gives Query Runner's tests real target databases: a throwaway
// PostgreSQL database (on the server pgtest uses) and a throwaway MariaDB/MySQL
// database on 127.0.0.1:3306 (root, empty password, unless MERIDIAN_TEST_MYSQL_ADDR,
// _USER and _PASSWORD say otherwise), each seeded with the same table and dropped when
// the test ends. Absent servers fail the test under CI=true and skip it elsewhere, with
// a message naming the component.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/meridian-catalog/meridian/queryrunner/engine"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
)

// SeedRows is how many rows Seed puts in the items table.
const SeedRows = 100

// Seed is the table every target database starts with: items(id, name, price) with
// SeedRows rows, and a sequence items_seq on PostgreSQL.
const seedPG = `CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL);
INSERT INTO items SELECT g, 'item ' || g, g * 1.5 FROM generate_series(1, 100) g;
CREATE SEQUENCE items_seq;`

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Target is a seeded database: the Conn to reach it as a user with full rights, and
// an admin connection for checks.
type Target struct {
	Conn engine.Conn
	// PG is set for PostgreSQL targets, DB for MySQL ones: connections with full
	// rights to the target database, for checks the test makes.
	PG *pgx.Conn
	DB *sql.DB
}

// Postgres creates and seeds a throwaway PostgreSQL database.
func Postgres(t testing.TB) Target {
	t.Helper()
	dbURL := pgtest.NewDatabase(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, seedPG); err != nil {
		t.Fatalf("seed: %v", err)
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		port = 5432
	}
	user := "postgres"
	pass := ""
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	return Target{PG: conn, Conn: engine.Conn{Type: "Postgres", AuthType: "basic", Host: u.Hostname(), Port: port,
		Username: user, Password: pass, Database: u.Path[1:]}}
}

// mysqlServer returns the address, user and password of the test MySQL server.
func mysqlServer() (host string, port int, user, pass string) {
	addr := os.Getenv("MERIDIAN_TEST_MYSQL_ADDR")
	if addr == "" {
		addr = "127.0.0.1:3306"
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		h, p = addr, "3306"
	}
	port, _ = strconv.Atoi(p)
	user = os.Getenv("MERIDIAN_TEST_MYSQL_USER")
	if user == "" {
		user = "root"
	}
	return h, port, user, os.Getenv("MERIDIAN_TEST_MYSQL_PASSWORD")
}

// OpenMySQL opens a pool on the test server's database (empty: none).
func OpenMySQL(t testing.TB, database string) *sql.DB {
	t.Helper()
	host, port, user, pass := mysqlServer()
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net = user, pass, "tcp"
	cfg.Addr = net.JoinHostPort(host, strconv.Itoa(port))
	cfg.DBName = database
	cfg.Timeout = 5 * time.Second
	cfg.MultiStatements = true
	c, err := gomysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		unavailable(t, "MariaDB/MySQL is not reachable at %s:%d as %s: %v; start the local MariaDB server", host, port, user, err)
	}
	return db
}

// MySQL creates and seeds a throwaway MariaDB/MySQL database.
func MySQL(t testing.TB) Target {
	t.Helper()
	host, port, user, pass := mysqlServer()
	root := OpenMySQL(t, "")
	name := randomName("meridian_qr_")
	ctx := context.Background()
	if _, err := root.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		root.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = root.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name)
		root.Close()
	})
	db := OpenMySQL(t, name)
	t.Cleanup(func() { db.Close() })
	seed := `CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, price DECIMAL(10,2) NOT NULL);
INSERT INTO items (id, name, price) WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 100) SELECT n, CONCAT('item ', n), n * 1.5 FROM g;`
	if _, err := db.ExecContext(ctx, seed); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return Target{DB: db, Conn: engine.Conn{Type: "Mysql", AuthType: "basic", Host: host, Port: port,
		Username: user, Password: pass, Database: name}}
}

// MySQLUser creates a user with password on the MySQL server, with SELECT on
// database, dropped when the test ends.
func MySQLUser(t testing.TB, db *sql.DB, database, password string) string {
	t.Helper()
	name := randomName("qr_")
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", name, password)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), fmt.Sprintf("DROP USER '%s'@'%%'", name)) })
	if _, err := db.ExecContext(ctx, fmt.Sprintf("GRANT SELECT ON %s.* TO '%s'@'%%'", database, name)); err != nil {
		t.Fatal(err)
	}
	return name
}

// ChecksumPG is a checksum of the items table on PostgreSQL, and its row count.
func ChecksumPG(t testing.TB, c *pgx.Conn) string {
	t.Helper()
	var s string
	if err := c.QueryRow(context.Background(), "SELECT count(*) || ':' || coalesce(md5(string_agg(id || '/' || name || '/' || price, ',' ORDER BY id)), '') || ':' || (SELECT last_value || '/' || is_called FROM items_seq) || ':' || (SELECT count(*) FROM pg_class WHERE relname LIKE 'x%') FROM items").Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// ChecksumMySQL is a checksum of the items table and the table list on MySQL.
func ChecksumMySQL(t testing.TB, db *sql.DB) string {
	t.Helper()
	var n int
	var sum sql.NullString
	if err := db.QueryRowContext(context.Background(), "SELECT COUNT(*), MD5(GROUP_CONCAT(CONCAT(id, '/', name, '/', price) ORDER BY id)) FROM items").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	var tables int
	if err := db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d:%s:%d", n, sum.String, tables)
}

// Package pgtest gives tests a throwaway PostgreSQL database. The server is the local
// one, postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable, unless
// MERIDIAN_TEST_POSTGRES_URL names another (any database on the server; it is only
// used to create and drop the test databases, so the role needs CREATEDB).
//
// When the server is unreachable or lacks pgvector, a test fails under CI=true and is
// skipped otherwise, with a message that says what is missing and how to fix it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is the server used when MERIDIAN_TEST_POSTGRES_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// EnvURL names the variable that overrides DefaultURL.
const EnvURL = "MERIDIAN_TEST_POSTGRES_URL"

// ServerURL returns the URL of the test server.
func ServerURL() string {
	if u := strings.TrimSpace(os.Getenv(EnvURL)); u != "" {
		return u
	}
	return DefaultURL
}

// unavailable fails the test in CI, where every component must be present, and skips
// it elsewhere.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// NewDatabase creates an empty database named meridian_test_<random> on the test
// server and returns its URL. The database is dropped when the test ends; close every
// connection to it before then (cleanups run last-registered first, so a driver opened
// after NewDatabase and closed in t.Cleanup is closed in time). pgvector must be
// installed on the server; the database does not have the extension yet.
func NewDatabase(t testing.TB) string {
	t.Helper()
	server := ServerURL()
	shown := redact(server)
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s=%q is not a postgres:// URL", EnvURL, shown)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		unavailable(t, "PostgreSQL is not reachable at %s: %v; run scripts/start-postgres.sh", shown, err)
	}
	defer admin.Close(context.Background())

	var vector bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')").Scan(&vector); err != nil {
		t.Fatalf("check for pgvector on %s: %v", shown, err)
	}
	if !vector {
		unavailable(t, "pgvector is not installed on the PostgreSQL server at %s; run scripts/install-pgvector.sh", shown)
	}

	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := "meridian_test_" + hex.EncodeToString(b)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		t.Fatalf("create database %s on %s: %v", name, shown, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	db := *u
	db.Path = "/" + name
	return db.String()
}

// redact hides the password of a URL for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

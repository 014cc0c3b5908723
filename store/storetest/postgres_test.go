package storetest_test

import (
	"context"
	"testing"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
	"github.com/meridian-catalog/meridian/store/postgres"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/store/storetest"
)

// TestPostgres runs the conformance suite on PostgreSQL, each sub-test in its own
// throwaway database. Without a reachable server or pgvector it skips, saying what is
// missing (and fails under CI=true).
func TestPostgres(t *testing.T) {
	storetest.Run(t, openPostgres)
}

// TestPostgresDriver runs the driver contract on PostgreSQL. Documents are jsonb, so
// they keep their meaning, not their bytes.
func TestPostgresDriver(t *testing.T) {
	storetest.RunDriver(t, openPostgres, storetest.DriverOptions{
		JSONB: true,
		Reopen: func(t *testing.T) func() store.Driver {
			url := pgtest.NewDatabase(t)
			return func() store.Driver { return openPostgresAt(t, url) }
		},
	})
}

// openPostgres opens a fresh catalog in a throwaway database.
func openPostgres(t *testing.T) store.Driver {
	return openPostgresAt(t, pgtest.NewDatabase(t))
}

// openPostgresAt opens the catalog at url; it closes when the test ends, if not
// before, and before the database is dropped.
func openPostgresAt(t *testing.T, url string) store.Driver {
	t.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestPostgresSeam runs the module seam's contract on PostgreSQL.
func TestPostgresSeam(t *testing.T) {
	storetest.RunSeam(t, drivertest.Postgres)
}

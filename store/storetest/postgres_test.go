package storetest_test

import (
	"context"
	"testing"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/postgres"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/store/storetest"
)

// TestPostgres runs the conformance suite on PostgreSQL, each sub-test in its own
// throwaway database. Without a reachable server or pgvector it skips, saying what is
// missing (and fails under CI=true).
func TestPostgres(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Driver {
		url := pgtest.NewDatabase(t)
		db, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

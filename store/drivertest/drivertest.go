// Package drivertest opens fresh, real catalog databases on every driver for the
// conformance suites of the engine's seam and of the modules (auth, quality, …): SQLite
// in a test directory and PostgreSQL in a throwaway database (store/postgres/pgtest,
// which skips with a message naming what is missing, and fails under CI=true).
package drivertest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/postgres"
	"github.com/meridian-catalog/meridian/store/postgres/pgtest"
	"github.com/meridian-catalog/meridian/store/sqlite"
)

// Open opens a fresh, empty catalog with modules. It closes when the test ends.
type Open func(t testing.TB, modules ...store.Module) store.Driver

// Drivers are the drivers a suite runs on, by name.
var Drivers = []struct {
	Name string
	Open Open
}{
	{"SQLite", SQLite},
	{"PostgreSQL", Postgres},
}

// Each runs fn once per driver, as a subtest named after it.
func Each(t *testing.T, fn func(t *testing.T, open Open)) {
	for _, d := range Drivers {
		t.Run(d.Name, func(t *testing.T) { fn(t, d.Open) })
	}
}

// SQLite opens a fresh catalog file in a test directory.
func SQLite(t testing.TB, modules ...store.Module) store.Driver {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "catalog.db"), modules...)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Postgres opens a fresh catalog in a throwaway database; it closes before the
// database is dropped.
func Postgres(t testing.TB, modules ...store.Module) store.Driver {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), modules...)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

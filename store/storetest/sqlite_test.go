package storetest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
	"github.com/meridian-catalog/meridian/store/sqlite"
	"github.com/meridian-catalog/meridian/store/storetest"
)

func TestSQLite(t *testing.T) {
	storetest.Run(t, openSQLite)
}

// TestSQLiteDriver runs the driver contract on SQLite, which returns documents byte
// for byte.
func TestSQLiteDriver(t *testing.T) {
	storetest.RunDriver(t, openSQLite, storetest.DriverOptions{
		Reopen: func(t *testing.T) func() store.Driver {
			path := filepath.Join(t.TempDir(), "catalog.db")
			return func() store.Driver { return openSQLiteAt(t, path) }
		},
	})
}

// openSQLite opens a fresh catalog file in a test directory.
func openSQLite(t *testing.T) store.Driver {
	return openSQLiteAt(t, filepath.Join(t.TempDir(), "catalog.db"))
}

// openSQLiteAt opens the catalog file at path; it closes when the test ends, if not
// before.
func openSQLiteAt(t *testing.T, path string) store.Driver {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestSQLiteSeam runs the module seam's contract on SQLite.
func TestSQLiteSeam(t *testing.T) {
	storetest.RunSeam(t, drivertest.SQLite)
}

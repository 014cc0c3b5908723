package storetest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/sqlite"
	"github.com/meridian-catalog/meridian/store/storetest"
)

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Driver {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "catalog.db"))
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

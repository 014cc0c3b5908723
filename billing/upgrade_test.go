package billing

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/sqlite"
)

// TestUpgradeKeepsTheRollup: a SQLite catalog migrated before 0003 keeps its ledger
// and its daily rollup when 0003 clusters the rollup, and the drain goes on adding to
// it.
func TestUpgradeKeepsTheRollup(t *testing.T) {
	ctx := context.Background()
	old := fstest.MapFS{}
	err := fs.WalkDir(migrations, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "0003_") {
			return err
		}
		b, err := fs.ReadFile(migrations, p)
		old[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "catalog.db")
	db, err := sqlite.Open(ctx, path, store.Module{Name: "billing", Migrations: old})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	e := Entry{ID: "e1", Ts: 3 * dayMs, Feature: FeatureMCPToolCalls, Action: "x", App: AppMCP, Source: "c", Client: "c 1", User: "alice",
		Agent: Unattributed, Conversation: "c1", Units: 1, Credits: micro, PriceVersion: 1}
	if err := insertEntries(ctx, tx.SQL(), []Entry{e}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = sqlite.Open(ctx, path, Module())
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer db.Close()
	tx, err = db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	e.ID = "e2"
	if err := insertEntries(ctx, tx.SQL(), []Entry{e}); err != nil {
		t.Fatal(err)
	}
	var actions, credits int64
	if err := tx.SQL().QueryRow(ctx, "SELECT actions, credits FROM billing_daily WHERE day = 3 AND user_name = 'alice'").Scan(&actions, &credits); err != nil {
		t.Fatal(err)
	}
	if actions != 2 || credits != 2*micro {
		t.Errorf("rollup after the upgrade: %d actions, %d micro-credits; want 2 and 2 credits", actions, credits)
	}
}

package postgres

import (
	"context"
	"testing"
)

// TestDataVersionChangesWithEveryCommitOfAnyNode checks the read cache's signal on
// PostgreSQL: a commit through another pool on the same database (another node)
// changes DataVersion, including the commit of a transaction that was already writing
// when the version was read. (Whether a read leaves it alone is not checked here: other
// tests write to other databases of the same server at the same time.)
func TestDataVersionChangesWithEveryCommitOfAnyNode(t *testing.T) {
	ctx := context.Background()
	a, url := openTemp(t)
	b, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	version := func() string {
		t.Helper()
		v, err := a.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	put := func(v string) {
		t.Helper()
		tx, err := b.Begin(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := tx.PutSetting(ctx, "k", v); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	v0 := version()
	put("1")
	v1 := version()
	if v1 == v0 {
		t.Fatalf("another node's commit left the data version at %s", v0)
	}

	// A transaction that has written before the version is read, and commits after.
	tx, err := b.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.PutSetting(ctx, "k", "2"); err != nil {
		t.Fatal(err)
	}
	during := version()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if after := version(); after == during {
		t.Fatalf("the commit of a transaction in progress left the data version at %s", during)
	}
}

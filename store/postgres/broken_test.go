package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// terminateBackends ends every other connection to the database at url, as an
// administrator's pg_terminate_backend or a failover does, and waits until they are gone.
// Stop the DB's background work first (stopBackground): a fold or an upkeep round the
// termination fails, or that starts after it, runs on a new connection that stays in
// the pool. The pool itself opens its minimum of connections in the background after
// Open, later on a loaded machine than the test reaches this: each round ends the
// connections found, so one that arrives after the first is ended too.
func terminateBackends(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var n int
		if err := c.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the terminated backends did not go away within 5s")
}

func testRow() store.Row {
	return store.Row{ID: uuid.NewString(), Kind: "table", Name: "orders", FQN: "svc.db.s.orders",
		Version: meridian.InitialVersion, UpdatedAt: 1, UpdatedBy: "admin", Doc: []byte(`{"name":"orders"}`)}
}

func TestReadsSurviveTerminatedBackends(t *testing.T) {
	db, url := openTemp(t)
	stopBackground(db)
	ctx := context.Background()
	row := testRow()
	w, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Insert(ctx, row); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		terminateBackends(t, url)
		r, err := db.Begin(ctx, false)
		if err != nil {
			t.Fatalf("round %d: begin a read after the backends were terminated: %v", round, err)
		}
		got, err := r.Get(ctx, "table", row.ID)
		r.Rollback()
		if err != nil || got.ID != row.ID {
			t.Fatalf("round %d: read after the backends were terminated: %v", round, err)
		}
	}
}

func TestAWriteThatLostItsConnectionIsUnavailable(t *testing.T) {
	db, url := openTemp(t)
	stopBackground(db)
	ctx := context.Background()
	w, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	terminateBackends(t, url)
	err = w.Insert(ctx, testRow())
	if meridian.ErrorCode(err) != meridian.EUnavailable {
		t.Fatalf("insert on a terminated connection: %v (code %q), want %s", err, meridian.ErrorCode(err), meridian.EUnavailable)
	}
	if err := w.Commit(); meridian.ErrorCode(err) != meridian.EUnavailable {
		t.Fatalf("commit on a terminated connection: %v, want %s", err, meridian.EUnavailable)
	}
	r, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatalf("the pool did not recover: %v", err)
	}
	r.Rollback()
}

// stopBackground stops db's background work (the vocabulary's folder, the upkeep and
// the change feed, whose listener would reconnect), so that it opens no connection
// while a test terminates them.
func stopBackground(db *DB) {
	db.vocab.close()
	db.upkeep.close()
	db.changes.close()
}

package vectors

import (
	"context"
	"math/rand/v2"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// TestHardDeleteRacingTheIndexerNeverDeadlocks hard-deletes an entity while the
// indexer rewrites its vectors, over and over: both take the generation row before
// vector rows, so neither waits on the other in a cycle (PostgreSQL answered
// 40P01 "deadlock detected" when the delete took vector rows first).
func TestHardDeleteRacingTheIndexerNeverDeadlocks(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		ctx := context.Background()
		db := open(t, Module())
		ix := NewIndex(db)
		r := rand.New(rand.NewPCG(3, 4))
		// At most inFlight rounds race at once (an upsert and a delete each): enough for
		// every order of the two, and few enough connections that the test packages
		// running beside this one keep theirs (PostgreSQL's max_connections is shared).
		const rounds, inFlight = 40, 8
		var g errgroup.Group
		g.SetLimit(2 * inFlight)
		for i := 0; i < rounds; i++ {
			e := entry("x", "table", "svc", nil, "m1", unit(r, 16), unit(r, 16), unit(r, 16))
			g.Go(func() error { return ix.Upsert(ctx, e) })
			g.Go(func() error { return hardDelete(ctx, db, "x") })
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
	})
}

// hardDelete removes an entity the way the engine does, in a writable transaction;
// the entity row itself does not exist here, which Remove reports after deleting the
// rest.
func hardDelete(ctx context.Context, db store.Driver, id string) error {
	tx, err := db.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.Remove(ctx, id); meridian.ErrorCode(err) != meridian.ENotFound {
		return err
	}
	return tx.Commit()
}

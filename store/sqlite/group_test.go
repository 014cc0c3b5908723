package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// TestGroupCommitsConcurrentWritesTogether sends 32 concurrent writes through a Group
// over the writer: fewer transactions than writes commit, every write but the failing
// one is durable, and the failing one is rolled back alone with its own error.
func TestGroupCommitsConcurrentWritesTogether(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	var begins atomic.Int64
	g := store.NewGroup(func(ctx context.Context) (store.Tx, error) {
		begins.Add(1)
		return db.Begin(ctx, true)
	})
	const writes, failing = 32, 7
	errFail := errors.New("this write fails")
	errs := make([]error, writes)
	var wg sync.WaitGroup
	for i := 0; i < writes; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = g.Group(ctx, func(tx store.Tx) error {
				if err := tx.PutSetting(ctx, fmt.Sprintf("k%02d", i), "v"); err != nil {
					return err
				}
				time.Sleep(time.Millisecond) // let the others queue
				if i == failing {
					return errFail
				}
				return nil
			})
		}(i)
	}
	wg.Wait()
	if n := begins.Load(); n >= writes {
		t.Errorf("%d transactions for %d concurrent writes: nothing was grouped", n, writes)
	}
	tx, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for i, err := range errs {
		_, gerr := tx.Setting(ctx, fmt.Sprintf("k%02d", i))
		switch {
		case i == failing:
			if !errors.Is(err, errFail) || meridian.ErrorCode(gerr) != meridian.ENotFound {
				t.Errorf("failing write: err %v, its setting %v", err, gerr)
			}
		case err != nil || gerr != nil:
			t.Errorf("write %d: err %v, its setting %v", i, err, gerr)
		}
	}
}

// TestGroupRaisesAPanicInItsWriterAndCommitsTheOthers sends writes through a Group
// while one of them panics: the panic comes back in that writer's own goroutine, the
// other writes commit, and the Group takes writes afterwards.
func TestGroupRaisesAPanicInItsWriterAndCommitsTheOthers(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	g := store.NewGroup(func(ctx context.Context) (store.Tx, error) { return db.Begin(ctx, true) })
	const writes, panicking = 16, 5
	errs := make([]error, writes)
	recovered := make([]any, writes)
	var wg sync.WaitGroup
	for i := range writes {
		wg.Go(func() {
			defer func() { recovered[i] = recover() }()
			errs[i] = g.Group(ctx, func(tx store.Tx) error {
				if err := tx.PutSetting(ctx, fmt.Sprintf("k%02d", i), "v"); err != nil {
					return err
				}
				time.Sleep(time.Millisecond) // let the others queue
				if i == panicking {
					panic("this write panics")
				}
				return nil
			})
		})
	}
	wg.Wait()
	if err := g.Group(ctx, func(tx store.Tx) error { return tx.PutSetting(ctx, "after", "v") }); err != nil {
		t.Fatalf("a write after the panic: %v", err)
	}
	tx, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for i := range writes {
		_, gerr := tx.Setting(ctx, fmt.Sprintf("k%02d", i))
		switch {
		case i == panicking:
			if recovered[i] != "this write panics" || meridian.ErrorCode(gerr) != meridian.ENotFound {
				t.Errorf("panicking write: recovered %v, its setting %v", recovered[i], gerr)
			}
		case recovered[i] != nil || errs[i] != nil || gerr != nil:
			t.Errorf("write %d: recovered %v, err %v, its setting %v", i, recovered[i], errs[i], gerr)
		}
	}
}

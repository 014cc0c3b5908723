package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// GroupCommitter is a Driver capability. A driver whose writers take turns anyway and
// whose every commit costs an fsync (SQLite) implements it, and the engine then sends
// each write transaction through Group instead of Begin and Commit: concurrent writes
// are committed together, one fsync for several transactions. Group returns f's error,
// or nil only once f's writes are durable. A Group is the usual implementation.
type GroupCommitter interface {
	Group(ctx context.Context, f func(Tx) error) error
	// GroupStats counts the groups committed so far.
	GroupStats() GroupStats
}

// GroupStats counts a Group's work since it was made: how busy the one writer is
// (Busy against the wall time) and how many writes share a commit (Writes / Groups).
type GroupStats struct {
	Groups int64         // the transactions the committer ran, committed or not
	Writes int64         // the writes they ran; a write run again counts again
	Busy   time.Duration // the time the committer spent on them, commits included
}

// MaxGroup is the most write transactions a Group commits together.
const MaxGroup = 64

// Group commits concurrent write transactions in groups. A committer goroutine runs
// while writes are waiting: it commits every write that queued (up to MaxGroup) in one
// transaction, then at once the writes that queued meanwhile, and ends when none is
// left; the next write starts another. Each write runs in a savepoint of that
// transaction, so a write that fails is rolled back alone and gets its own error, and
// the others commit (a write that guards itself, withoutSavepoint, runs without one,
// after the others). A write alone commits at once, with no delay.
//
// The committer, not each writer in turn, runs the groups one after another: handing
// the lead from one waiting writer to the next cost each group a goroutine wake-up, and
// on a busy machine that wait (milliseconds, all of it while no write can run) was half
// as long as the group itself.
//
// A write that succeeded in a group whose transaction was lost before its commit (a
// savepoint could not be rolled back or released, for example after SQLite rolled back
// the whole transaction on an interrupt) is run again in the next group, so f may run
// more than once; like any transaction body it must have no effect outside tx. A write
// that panics loses its group's transaction the same way, and the panic is raised
// again in the writer's own goroutine.
type Group struct {
	begin func(context.Context) (Tx, error)

	mu      sync.Mutex
	pending []*groupCall
	running bool // a committer goroutine is running

	groups, writes, busy atomic.Int64 // GroupStats
}

// groupCall is one write waiting in a Group.
type groupCall struct {
	ctx      context.Context
	f        func(Tx) error
	err      error
	panicked any           // what f panicked with, if it did
	done     chan struct{} // closed when err (or panicked) is final
}

// NewGroup returns a Group whose transactions begin, writable, with begin.
func NewGroup(begin func(context.Context) (Tx, error)) *Group {
	return &Group{begin: begin}
}

// Group runs f in a savepoint of a shared write transaction and returns once that
// transaction has committed (nil) or f has failed (its error). A failed commit is
// returned to every write of the group.
func (g *Group) Group(ctx context.Context, f func(Tx) error) error {
	c := &groupCall{ctx: ctx, f: f, done: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	if !g.running {
		g.running = true
		go g.run()
	}
	g.mu.Unlock()
	<-c.done
	if c.panicked != nil {
		panic(c.panicked)
	}
	return c.err
}

// Stats returns the Group's counts so far.
func (g *Group) Stats() GroupStats {
	return GroupStats{Groups: g.groups.Load(), Writes: g.writes.Load(), Busy: time.Duration(g.busy.Load())}
}

// run commits groups while writes are waiting.
func (g *Group) run() {
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		n := min(len(g.pending), MaxGroup)
		calls := g.pending[:n:n]
		g.pending = g.pending[n:]
		g.mu.Unlock()

		start := time.Now()
		retry := g.commit(calls)
		g.busy.Add(int64(time.Since(start)))
		g.groups.Add(1)
		g.writes.Add(int64(len(calls)))

		g.mu.Lock()
		g.pending = append(retry, g.pending...)
		g.mu.Unlock()
	}
}

// commit runs calls in one transaction and ends each with its outcome, except those
// it returns, which must run again in another transaction.
func (g *Group) commit(calls []*groupCall) (retry []*groupCall) {
	finish := func(c *groupCall, err error) {
		c.err = err
		close(c.done)
	}
	// The transaction outlives any one caller's context: a caller that goes away must
	// not roll back the others' writes.
	tx, err := g.begin(context.Background())
	if err != nil {
		for _, c := range calls {
			finish(c, err)
		}
		return nil
	}
	defer tx.Rollback()
	if len(calls) == 1 {
		// A write alone needs no savepoint: its failure rolls back the transaction.
		c := calls[0]
		err := c.ctx.Err()
		if err == nil {
			c.share(nil)
			err = c.run(tx)
		}
		if err == nil {
			err = tx.Commit()
		}
		finish(c, err)
		return nil
	}
	// The writes that run without a savepoint go last: they are the creates, whose
	// full-text rows SQLite then writes out once, as one index segment at the commit,
	// where every savepoint after them would write out those held so far as a segment
	// of its own. Writes that wait together are concurrent, so any order is theirs.
	calls = slices.Concat(
		slices.DeleteFunc(slices.Clone(calls), func(c *groupCall) bool { return unguarded(c.ctx) }),
		slices.DeleteFunc(slices.Clone(calls), func(c *groupCall) bool { return !unguarded(c.ctx) }))
	var ok []*groupCall
	// seen holds the rows this transaction answered to its prepared creates' replays
	// while only prepared creates wrote in it (seenRows), so that the creates of one
	// group, which mostly share their parent and tags, do not read them again. Any
	// other write may change a row: it empties seen.
	seen := seenRows{}
	for i, c := range calls {
		if err := c.ctx.Err(); err != nil {
			finish(c, err)
			continue
		}
		if !c.share(seen) {
			clear(seen)
		}
		var err error
		if unguarded(c.ctx) {
			err = c.run(tx)
		} else {
			err = savepoint(tx, c.run)
		}
		if errors.Is(err, errTxLost) {
			// The transaction is gone: this write fails, the others run again.
			finish(c, err)
			return append(ok, calls[i+1:]...)
		}
		if err != nil {
			finish(c, err)
			continue
		}
		ok = append(ok, c)
	}
	err = tx.Commit()
	for _, c := range ok {
		finish(c, err)
	}
	return nil
}

// share gives a prepared create (withPrepared) the rows its transaction found so far,
// seen, and reports whether the write is one. A write run again in another
// transaction is given that transaction's rows, never those of the one it lost.
func (c *groupCall) share(seen seenRows) bool {
	p, ok := c.ctx.Value(preparedKey{}).(*seenRows)
	if ok {
		*p = seen
	}
	return ok
}

// run calls the write's f with tx. A panic in f is kept for the writer's goroutine to
// raise again, and the transaction counts as lost: f may have left it half written.
func (c *groupCall) run(tx Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.panicked = r
			err = fmt.Errorf("%w: the write panicked: %v", errTxLost, r)
		}
	}()
	return c.f(tx)
}

// unguardedKey marks a context whose write guards itself (withoutSavepoint).
type unguardedKey struct{}

// withoutSavepoint returns a context in which a Group runs the write without a
// savepoint of its own. The write must then leave the transaction as it found it when
// it returns an error, unless that error wraps errTxLost (the Group then runs the
// group's other writes again in a new transaction). A savepoint costs two statements,
// and SQLite's FTS5 flushes its pending index data into a new segment at each one, so a
// write that can check everything before it writes is cheaper without.
func withoutSavepoint(ctx context.Context) context.Context {
	return context.WithValue(ctx, unguardedKey{}, true)
}

func unguarded(ctx context.Context) bool {
	v, _ := ctx.Value(unguardedKey{}).(bool)
	return v
}

// preparedKey marks a context whose write is a prepared create (optimistic.go),
// which only inserts a new entity. Its value is where a Group puts the rows that its
// transaction's replays found so far (seenRows).
type preparedKey struct{}

// withPrepared returns a context in which a Group runs the write as a prepared create:
// before it runs, *seen is set to the rows found so far that still stand. The write
// must empty *seen before it changes anything but its own new entity.
func withPrepared(ctx context.Context, seen *seenRows) context.Context {
	return context.WithValue(withoutSavepoint(ctx), preparedKey{}, seen)
}

// savepointName names the savepoint of one write; a nested one shadows the outer.
const savepointName = "meridian_write"

// errTxLost is wrapped by savepoint's error when the enclosing transaction can no
// longer be used.
var errTxLost = errors.New("the transaction was lost")

// savepoint runs f in a savepoint of tx: when f fails, its writes are rolled back and
// the transaction goes on without them. The error wraps errTxLost when the savepoint
// itself could not be set, released or rolled back. The savepoint statements run with
// a background context: a caller going away must not interrupt them.
func savepoint(tx Tx, f func(Tx) error) error {
	q, bg := tx.SQL(), context.Background()
	if _, err := q.Exec(bg, "SAVEPOINT "+savepointName); err != nil {
		return fmt.Errorf("%w: savepoint: %w", errTxLost, err)
	}
	if err := f(tx); err != nil {
		if _, rerr := q.Exec(bg, "ROLLBACK TO SAVEPOINT "+savepointName); rerr != nil {
			return fmt.Errorf("%w: %w (rollback to savepoint: %w)", errTxLost, err, rerr)
		}
		if _, rerr := q.Exec(bg, "RELEASE SAVEPOINT "+savepointName); rerr != nil {
			return fmt.Errorf("%w: %w (release savepoint: %w)", errTxLost, err, rerr)
		}
		return err
	}
	if _, err := q.Exec(bg, "RELEASE SAVEPOINT "+savepointName); err != nil {
		return fmt.Errorf("%w: release savepoint: %w", errTxLost, err)
	}
	return nil
}

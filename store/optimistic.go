package store

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/meridian-catalog/meridian"
)

// Optimistic creates. Every driver's writes take turns (SQLite's single writer,
// PostgreSQL's write lock), so the CPU a create spends before it writes (the draft,
// beforeWrite with its JSON Schema, encoding the row, snapshot, search document and
// event) and, on PostgreSQL, its round trips for the reads it makes, would be spent
// while every other writer waits. So a create first runs those steps against a
// read snapshot, outside the writer, recording every catalog read they make
// (readSet); under the writer it replays those reads and, when each answers as it did,
// writes what it prepared. Otherwise, or when the preparation failed or made a read
// that cannot be replayed, the create runs the usual way, wholly under the writer, so
// errors and races are answered exactly as before. beforeWrite stays the one sequence:
// it runs once per attempt, against the snapshot or under the writer, and its outcome
// depends on the catalog only through the replayed reads.
//
// A prepared create writes without a savepoint (commitCreate): once its reads replay,
// nothing can refuse it, and SQLite's FTS5 flushes its pending index data at every
// savepoint, so a group of creates then builds one index segment instead of one each.
// For the same reason, on a Pipeliner (PostgreSQL) its writes are sent together with
// the transaction's next statement instead of one round trip each.
//
// What changes is only when the work happens: the entity's updatedAt is taken when it
// is drafted (as before, a moment before its commit), and its change event's timestamp
// when it is written.

// precreate is a create drafted, checked and encoded against a read snapshot.
type precreate struct {
	reads *readSet
	d     draft
	st    staged
	// answer is the entity as the caller is answered with it. It shares nested values
	// with d.entity (shapeRead, not a deep copy): the write reads d.entity only for its
	// relations and never changes it, and once committed nothing but the answer holds
	// them, so the caller may change its answer freely.
	answer meridian.Entity
	// seen is what a Group sets before the write: the rows its transaction found for
	// earlier prepared creates (withPrepared); nil outside a group.
	seen seenRows
}

// optimistic reports whether creates in ctx are prepared outside the writer: when
// not already inside a bulk chunk's transaction.
func (s *Entities) optimistic(ctx context.Context) bool {
	return chunkTx(ctx) == nil
}

// precreate prepares a create of body in the read transaction rtx, or returns nil when
// the create must take the usual path. With orUpdate (CreateOrUpdate), the entity's FQN
// must be free and the caller allowed to create. Its row reads may be answered from
// the rows other creates found lately (recentRows).
func (s *Entities) precreate(ctx context.Context, rtx Tx, p *meridian.Principal, k *meridian.Kind, body meridian.Entity, orUpdate bool) *precreate {
	rs := &readSet{Tx: rtx, shared: s.recent}
	d, err := s.draft(ctx, rs, p, k, body)
	if err != nil {
		return nil
	}
	// The FQN must be free (CreateOrUpdate would update, Create conflict): replayed, or
	// checked by the Insert under the writer (ConflictKeeper), this read makes the write
	// certain not to conflict.
	if _, err := rs.claim(ctx, k.Name, d.entity.FQN()); meridian.ErrorCode(err) != meridian.ENotFound {
		return nil
	}
	if orUpdate && s.authorize(p, OpCreate, k, body, nil) != nil {
		return nil
	}
	if err := s.beforeWrite(ctx, rs, k, &meridian.Write{Principal: p, New: d.entity, Parent: d.parentDoc}); err != nil {
		return nil
	}
	st, err := s.stage(p, k, d)
	if err != nil || rs.unreplayed {
		return nil
	}
	return &precreate{reads: rs, d: d, st: st, answer: s.shapeRead(p, k, d.entity, nil)}
}

// precreateAll prepares the creates of bodies in parallel; an element is nil where the
// create must take the usual path. On a driver with a single writer in this process
// (SQLite), the writer's speed is the ingest's, so the preparations make room for it:
//
//   - Concurrent bulk chunks take turns (s.prepTurn, first come first served): a chunk
//     is prepared whole before the next one starts, so chunks reach the writer one
//     after another as each is ready. Prepared side by side, sharing the CPUs, eight
//     requests' chunks became ready together, the writer waited for the first and then
//     the preparations waited for it.
//   - A chunk is prepared on one goroutine fewer than there are CPUs, and each yields
//     its CPU after each create. Go's scheduler has no priorities: when the writer
//     wakes from its fsync, or is preempted after 10 ms of running, it waits in a run
//     queue until a running goroutine blocks or is preempted in turn; a preparation
//     (about 0.15 ms a create) otherwise held the CPU for up to 10 ms while the writer
//     waited (a quarter of the writer's time in a trace of the bulk endpoint).
//
// Together they took the engine's bulk from about 4,400 to 4,800 tables/s, and the
// second raised the bulk endpoint's by about 7% (alternating runs, 2 CPUs). Elsewhere
// (PostgreSQL) a preparation mostly waits for the database's answers: one goroutine a
// CPU, and the requests' preparations overlap those waits. A caller gone while waiting
// for its turn gets no preparation.
func (s *Entities) precreateAll(ctx context.Context, p *meridian.Principal, k *meridian.Kind, bodies []meridian.Entity) []*precreate {
	out := make([]*precreate, len(bodies))
	workers := runtime.GOMAXPROCS(0)
	if s.prepTurn != nil {
		select {
		case s.prepTurn <- struct{}{}:
			defer func() { <-s.prepTurn }()
		case <-ctx.Done():
			return out
		}
		workers = max(1, workers-1)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(bodies)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One read transaction serves every create this goroutine prepares (a
			// Begin and a Rollback cost about a tenth of a preparation): its snapshot
			// is older for the later ones, which their replay under the writer checks
			// as it checks any preparation's reads.
			rtx, err := s.db.Begin(ctx, false)
			if err != nil {
				for range next { // its share takes the usual path
				}
				return
			}
			defer rtx.Rollback()
			for i := range next {
				out[i] = s.precreate(ctx, rtx, p, k, bodies[i], true)
				if s.prepTurn != nil {
					runtime.Gosched()
				}
			}
		}()
	}
	for i := range bodies {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// create runs a create of body (or, with orUpdate, a CreateOrUpdate) in one write
// transaction: the create prepared outside the writer when the driver allows it and its
// reads still answer as they did, otherwise write, the usual path, wholly under the
// writer.
func (s *Entities) create(ctx context.Context, p *meridian.Principal, k *meridian.Kind, body meridian.Entity, orUpdate bool,
	write func(Tx) (Result, error)) (Result, error) {
	var pc *precreate
	if s.optimistic(ctx) {
		if rtx, err := s.db.Begin(ctx, false); err == nil {
			pc = s.precreate(ctx, rtx, p, k, body, orUpdate)
			_ = rtx.Rollback()
		}
	}
	var res Result
	err := s.inTx(pc.context(ctx), func(tx Tx) error {
		r, ok, err := s.commitCreate(ctx, tx, p, k, pc, pc.rows())
		if ok {
			res = r
			return err
		}
		clear(pc.rows()) // the usual path may change any row
		return pc.guard(tx, func(tx Tx) (err error) {
			res, err = write(tx)
			return err
		})
	})
	return res, err
}

// commitCreate writes a prepared create in tx when its reads still answer as they did,
// and reports whether it did (ok false: nothing was written, take the usual path). The
// rows in seen are not read again (readSet.replay); seen may be nil. On a
// ConflictKeeper the entity's own FQN is not read again either: its Insert, the
// write's first statement, finds it taken (EConflict, nothing written: ok false). It
// needs no savepoint: the replayed reads and that Insert leave nothing that can refuse
// the rest of the write (the FQN is free, the id new), so an error is the database's,
// and it wraps errTxLost: the transaction may hold part of the write.
func (s *Entities) commitCreate(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, pc *precreate, seen seenRows) (res Result, ok bool, err error) {
	if pc == nil || !pc.reads.replay(ctx, tx, seen) {
		return Result{}, false, nil
	}
	st := pc.st
	st.event.Timestamp = s.now().UnixMilli()
	if _, checks := tx.(ConflictKeeper); checks {
		err = tx.Insert(ctx, st.row)
		if meridian.ErrorCode(err) == meridian.EConflict {
			return Result{}, false, nil
		}
		if err == nil {
			err = s.putLinks(ctx, tx, k, pc.d, st)
		}
	} else {
		put := func() error { return s.put(ctx, tx, k, pc.d, st) }
		if pl, ok := tx.(Pipeliner); ok {
			err = pl.Pipeline(put)
		} else {
			err = put()
		}
	}
	if err != nil {
		return Result{}, true, fmt.Errorf("%w: %w", errTxLost, err)
	}
	return Result{Entity: pc.answer, Change: meridian.EventEntityCreated, Created: true}, true, nil
}

// context returns the context a prepared create's write runs in: without a savepoint
// of the group's own (commitCreate needs none; guard sets one for the usual path), and
// sharing the rows found by the group's earlier prepared creates (withPrepared).
func (pc *precreate) context(ctx context.Context) context.Context {
	if pc == nil {
		return ctx
	}
	return withPrepared(ctx, &pc.seen)
}

// rows returns the rows the write's transaction found for earlier prepared creates;
// nil for none (pc nil, or outside a group).
func (pc *precreate) rows() seenRows {
	if pc == nil {
		return nil
	}
	return pc.seen
}

// guard runs the usual path of a create whose preparation did not hold: in a savepoint
// when the write runs without the group's (so its failure leaves the transaction as it
// was), else directly.
func (pc *precreate) guard(tx Tx, f func(Tx) error) error {
	if pc == nil {
		return f(tx)
	}
	return savepoint(tx, f)
}

package store

import "context"

// What a capability that follows the engine from outside needs: a read that never
// queues behind long queries, and the head of the outbox. Auth's principal cache
// (auth/cache.go) uses both; the engine's post-commit hook is Config.Notify.

// Maintainer is a Driver capability: background upkeep of the database that the
// serving process runs (app.Catalog.Run), such as store/sqlite merging its full-text
// index once documents stop being indexed. Maintain returns when ctx ends.
type Maintainer interface {
	Maintain(ctx context.Context)
}

// ShortReader is a Driver capability: a small pool of read-only connections reserved
// for short reads (token verification), so they never wait behind long queries, such
// as searches, that can hold every connection of the driver's main reader pool.
// store/sqlite has one (its main reader pool is small); store/postgres has not (its
// pool of 64 connections leaves room), and BeginShort falls back to Begin.
type ShortReader interface {
	// BeginShort starts a read-only transaction on the reserved pool. The caller
	// keeps it short: a few indexed lookups, then Rollback.
	BeginShort(ctx context.Context) (Tx, error)
}

// BeginShort starts a read-only transaction for a short read: on db's reserved pool
// when db is a ShortReader, otherwise as db.Begin(ctx, false).
func BeginShort(ctx context.Context, db Driver) (Tx, error) {
	if r, ok := db.(ShortReader); ok {
		return r.BeginShort(ctx)
	}
	return db.Begin(ctx, false)
}

// UnorderedWriter is a Driver capability: writable transactions that do not take the
// lock ordering the engine's writes and their change events, for a module's own rows
// that record no change event (vector embeddings), so that such work neither waits for
// entity writes nor holds them back. store/postgres has it; store/sqlite has one writer
// and has not: InUnorderedTx joins its group commits instead.
type UnorderedWriter interface {
	// BeginUnordered starts a writable transaction without the write lock. The caller
	// must not write entity rows or change events in it.
	BeginUnordered(ctx context.Context) (Tx, error)
}

// beginUnordered starts a writable transaction for a module's rows that record no
// change event: without the write lock when db is an UnorderedWriter, otherwise as
// db.Begin(ctx, true).
func beginUnordered(ctx context.Context, db Driver) (Tx, error) {
	if w, ok := db.(UnorderedWriter); ok {
		return w.BeginUnordered(ctx)
	}
	return db.Begin(ctx, true)
}

// InUnorderedTx runs fn in a writable transaction for a module's own rows that record
// no change event, and returns nil once fn's writes are committed:
//
//   - on a GroupCommitter (SQLite), fn joins the next group commit, in a savepoint of
//     its own, instead of holding the single writer, and an fsync, for itself while
//     the engine's writes wait;
//   - on an UnorderedWriter (PostgreSQL), fn runs in a transaction of its own that does
//     not take the lock ordering the engine's writes;
//   - otherwise in a transaction of its own.
//
// fn may run more than once (a group whose transaction was lost runs again), so, like
// any transaction body, it must have no effect outside tx. Errors: the driver's and
// fn's.
func InUnorderedTx(ctx context.Context, db Driver, fn func(Tx) error) error {
	if g, ok := db.(GroupCommitter); ok {
		return g.Group(ctx, fn)
	}
	tx, err := beginUnordered(ctx, db)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// InModuleTx runs fn in one transaction on db over a module's own rows that record no
// change event: a writable one as InUnorderedTx runs it (fn may run more than once), a
// read-only one rolled back when fn returns. Errors: the driver's and fn's.
func InModuleTx(ctx context.Context, db Driver, writable bool, fn func(SQL) error) error {
	if writable {
		return InUnorderedTx(ctx, db, func(tx Tx) error { return fn(tx.SQL()) })
	}
	tx, err := db.Begin(ctx, false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx.SQL())
}

// OutboxHead returns, in tx, the sequence number of the newest change event, 0 when
// there is none: a follower that starts there sees every event committed after it,
// without replaying the backlog.
func OutboxHead(ctx context.Context, tx Tx) (int64, error) {
	var seq int64
	err := tx.SQL().QueryRow(ctx, "SELECT COALESCE(MAX(seq), 0) FROM change_events").Scan(&seq)
	return seq, err
}

package store

import (
	"context"

	"github.com/meridian-catalog/meridian"
)

// What a capability that follows the engine from outside needs: a read that never
// queues behind long queries, and the head of the outbox. Auth's principal cache
// (auth/cache.go) uses both; the engine's post-commit hook is Config.Notify.

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
// and has not, and BeginUnordered falls back to Begin.
type UnorderedWriter interface {
	// BeginUnordered starts a writable transaction without the write lock. The caller
	// must not write entity rows or change events in it.
	BeginUnordered(ctx context.Context) (Tx, error)
}

// BeginUnordered starts a writable transaction for a module's rows that record no
// change event: without the write lock when db is an UnorderedWriter, otherwise as
// db.Begin(ctx, true).
func BeginUnordered(ctx context.Context, db Driver) (Tx, error) {
	if w, ok := db.(UnorderedWriter); ok {
		return w.BeginUnordered(ctx)
	}
	return db.Begin(ctx, true)
}

// OutboxHead returns, in tx, the sequence number of the newest change event, 0 when
// there is none: a follower that starts there sees every event committed after it,
// without replaying the backlog.
func OutboxHead(ctx context.Context, tx Tx) (int64, error) {
	var seq int64
	err := tx.SQL().QueryRow(ctx, "SELECT COALESCE(MAX(seq), 0) FROM change_events").Scan(&seq)
	return seq, err
}

// Pipeliner is a Tx capability: writes held back and sent together. Pipeline runs f
// with the writes that answer only their success (Insert, Relate, PutVersion, Index,
// AppendEvent) held back, to be sent in one round trip with the transaction's next
// statement; a held write that fails fails that statement and every one after it,
// Commit included. So f must make writes that nothing in the catalog can refuse (a
// create whose reads replayed under the writer). store/postgres has it; store/sqlite
// has no round trips to save.
type Pipeliner interface {
	Pipeline(f func() error) error
}

// RowKey names a row read: by ID (FQN empty, Kind optional, as Get) or by Kind and FQN
// (as GetByFQN).
type RowKey struct{ Kind, ID, FQN string }

// RowBatcher is a Tx capability: many row reads in one round trip. GetRows answers,
// for each key in order, what Get or GetByFQN would. The engine uses it to replay the
// reads of a create prepared outside the writer (optimistic.go). store/postgres has it;
// store/sqlite has no round trips to save.
type RowBatcher interface {
	GetRows(ctx context.Context, keys []RowKey) ([]Row, []error)
}

// EncodedEventAppender is a Tx capability: AppendEvent of an event whose entity is
// already encoded (entity is e.Entity as JSON), so that a create encodes it once, before
// it takes the writer, for its search document and its event alike. Both drivers have
// it.
type EncodedEventAppender interface {
	AppendEncodedEvent(ctx context.Context, e meridian.ChangeEvent, entity []byte) error
}

package store

import (
	"context"
)

// inTx runs f in a writable transaction and returns nil only once f's writes are
// durable. Three ways, in order:
//
//   - inside a bulk chunk (withChunk), f runs in a savepoint of the chunk's
//     transaction, which the bulk write commits;
//   - on a driver that is a GroupCommitter, f joins the next group commit;
//   - otherwise f runs in a transaction of its own.
func (s *Entities) inTx(ctx context.Context, f func(Tx) error) error {
	if tx := chunkTx(ctx); tx != nil {
		return savepoint(tx, f)
	}
	var err error
	if g, ok := s.db.(GroupCommitter); ok {
		err = g.Group(ctx, f)
	} else {
		err = s.ownTx(ctx, f)
	}
	if err == nil {
		s.cache.clear()
		if s.notify != nil {
			s.notify()
		}
	}
	return err
}

// ownTx runs f in a transaction of its own and commits when f succeeds.
func (s *Entities) ownTx(ctx context.Context, f func(Tx) error) error {
	tx, err := s.db.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// chunkKey carries the open transaction of a bulk chunk in a context.
type chunkKey struct{}

// withChunk returns a context in which inTx runs each write in a savepoint of tx.
func withChunk(ctx context.Context, tx Tx) context.Context {
	return context.WithValue(ctx, chunkKey{}, tx)
}

// chunkTx returns the bulk chunk's transaction of ctx, or nil.
func chunkTx(ctx context.Context) Tx {
	tx, _ := ctx.Value(chunkKey{}).(Tx)
	return tx
}

// inReadTx runs f in a read-only transaction.
func (s *Entities) inReadTx(ctx context.Context, f func(Tx) error) error {
	tx, err := s.db.Begin(ctx, false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return f(tx)
}

package store

import (
	"context"
)

// inTx runs f in a writable transaction and commits when f succeeds.
func (s *Entities) inTx(ctx context.Context, f func(Tx) error) error {
	tx, err := s.db.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if s.notify != nil {
		s.notify()
	}
	return nil
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

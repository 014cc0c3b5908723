package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/rowscan"
)

// Pipelined writes. Under the driver's write lock every round trip is time all other
// writers wait, and a create makes about ten writes whose answers it needs only to
// know they succeeded. Inside Pipeline those writes are held back and sent in one
// batch with the next statement of the transaction (a read, a write of another kind,
// or COMMIT), so a create prepared outside the lock (store's optimistic creates) costs
// about one round trip per read it replays instead of one per statement.
//
// A held write that fails fails the transaction: the statement that sent it, and every
// statement after it, COMMIT included, return its error, so no write is acknowledged
// that did not happen.

// held is the writes of a transaction held back by Pipeline.
type held struct {
	on     bool
	batch  pgx.Batch
	checks []func(pgconn.CommandTag, error) error // one per queued statement
	err    error                                  // the first held write that failed
}

// Pipeline runs f with the writes that answer nothing but their success (Insert,
// Relate, PutVersion, Index, AppendEvent) held back, to be sent with the
// transaction's next statement. f is for writes that cannot fail for the catalog's
// sake (a create whose reads replayed): a held write's error, EConflict included, is
// the transaction's. Implements store.Pipeliner.
func (t *tx) Pipeline(f func() error) error {
	if t.tx.h.on {
		return f()
	}
	t.tx.h.on = true
	defer func() { t.tx.h.on = false }()
	return f()
}

// execOrHold runs a write whose answer is checked by check: at once, or, inside
// Pipeline, with the next statement sent.
func (g guarded) execOrHold(ctx context.Context, check func(pgconn.CommandTag, error) error, sql string, args ...any) error {
	if !g.h.on {
		tag, err := g.Exec(ctx, sql, args...)
		return check(tag, err)
	}
	g.h.batch.Queue(sql, args...)
	g.h.checks = append(g.h.checks, check)
	return nil
}

// send sends the held writes followed by b's statements, if any, in one batch, and
// checks the held writes' answers; the caller reads b's.
func (g guarded) send(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	if g.h.err != nil {
		return nil, g.h.err
	}
	if len(g.h.checks) == 0 {
		if b == nil {
			return nil, nil
		}
		return g.Tx.SendBatch(ctx, b), nil
	}
	batch, checks := g.h.batch, g.h.checks
	g.h.batch, g.h.checks = pgx.Batch{}, nil
	if b != nil {
		batch.QueuedQueries = append(batch.QueuedQueries, b.QueuedQueries...)
	}
	br := g.Tx.SendBatch(ctx, &batch)
	for _, check := range checks {
		tag, err := br.Exec()
		if err := check(tag, lost(err)); err != nil {
			_ = br.Close()
			g.h.err = fmt.Errorf("a write sent later failed: %w", err)
			return nil, g.h.err
		}
	}
	return br, nil
}

// flush sends the held writes, if any.
func (g guarded) flush(ctx context.Context) error {
	br, err := g.send(ctx, nil)
	if err != nil || br == nil {
		return err
	}
	return lost(br.Close())
}

// heldRow is the row of a query sent after held writes: it closes their batch once
// read.
type heldRow struct{ br pgx.BatchResults }

func (r heldRow) Scan(dest ...any) error {
	err := r.br.QueryRow().Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return lost(err)
}

// errRow is a row whose query could not be sent.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// errBatch is a batch that could not be sent.
type errBatch struct{ err error }

func (b errBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }
func (b errBatch) Query() (pgx.Rows, error)         { return nil, b.err }
func (b errBatch) QueryRow() pgx.Row                { return errRow{b.err} }
func (b errBatch) Close() error                     { return b.err }
func (b errBatch) Tx() pgx.Tx                       { return nil }

// wrapErr is the check of a write whose only failure is the database's: "postgres:
// <op>: <err>".
func wrapErr(op string) func(pgconn.CommandTag, error) error {
	return func(_ pgconn.CommandTag, err error) error {
		if err != nil {
			return fmt.Errorf("postgres: %s: %w", op, err)
		}
		return nil
	}
}

// GetRows reads many rows in one round trip (with the writes held back, if any):
// for each key, what Get (ID set) or GetByFQN answers. Implements store.RowBatcher.
func (t *tx) GetRows(ctx context.Context, keys []store.RowKey) ([]store.Row, []error) {
	rows, errs := make([]store.Row, len(keys)), make([]error, len(keys))
	var (
		b    pgx.Batch
		sent []int // the keys queued, in order
	)
	for i, k := range keys {
		switch {
		case k.ID != "" && k.Kind == "":
			b.Queue(selectByID, k.ID)
		case k.ID != "":
			b.Queue(selectByIDKind, k.ID, k.Kind)
		case strings.ContainsRune(k.FQN, 0):
			errs[i] = rowscan.EntityNotFound(k.Kind, k.FQN) // as GetByFQN
			continue
		default:
			b.Queue(selectByFQN, k.Kind, k.FQN)
		}
		sent = append(sent, i)
	}
	br := t.tx.SendBatch(ctx, &b)
	for _, i := range sent {
		k := keys[i]
		rows[i], errs[i] = rowscan.Row(br.QueryRow())
		switch {
		case errors.Is(errs[i], pgx.ErrNoRows) && k.ID != "":
			errs[i] = rowscan.EntityNotFound(k.Kind, k.ID)
		case errors.Is(errs[i], pgx.ErrNoRows):
			errs[i] = rowscan.EntityNotFound(k.Kind, k.FQN)
		case errs[i] != nil:
			errs[i] = fmt.Errorf("postgres: get entities: %w", errs[i])
		}
	}
	if err := br.Close(); err != nil {
		for _, i := range sent {
			if errs[i] == nil {
				rows[i], errs[i] = store.Row{}, err
			}
		}
	}
	return rows, errs
}

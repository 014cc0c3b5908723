package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/meridian-catalog/meridian"
)

// A broken connection (the server restarted, failed over, or the backend was ended by
// pg_terminate_backend) is handled in two places. Begin retries once on a fresh pool
// when BEGIN itself fails on one, since BEGIN changes nothing: that is how a read
// transaction (and a write that has not started) survives the pool's dead connections.
// Inside a transaction, a statement that fails on a broken connection is EUnavailable
// (503): the transaction cannot have committed, since COMMIT was never sent. A COMMIT
// that fails on a broken connection is EUnavailable only when pgx knows it never
// reached the server; otherwise its outcome is unknown and the error stays internal.

// errLost is the caller-safe error of a transaction that lost its connection.
func errLost() error {
	return meridian.Errorf(meridian.EUnavailable, "The database connection was lost and nothing was written; retry the request")
}

// broken reports whether err means the connection to the server is gone.
func broken(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		}
		return pe.Code[:2] == "08" // connection_exception
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &ne)
}

// lost returns err marked EUnavailable when the connection broke, err otherwise.
func lost(err error) error {
	if broken(err) {
		return fmt.Errorf("%w: %w", errLost(), err)
	}
	return err
}

// guarded is a pgx.Tx whose statements answer EUnavailable when the connection breaks,
// and which sends the writes Pipeline held back before, or with, its next statement.
type guarded struct {
	pgx.Tx
	h *held
}

func (g guarded) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := g.flush(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := g.Tx.Exec(ctx, sql, args...)
	return tag, lost(err)
}

func (g guarded) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := g.flush(ctx); err != nil {
		return nil, err
	}
	rows, err := g.Tx.Query(ctx, sql, args...)
	if err != nil {
		return rows, lost(err)
	}
	return guardedRows{rows}, nil
}

func (g guarded) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if len(g.h.checks) > 0 || g.h.err != nil {
		var b pgx.Batch
		b.Queue(sql, args...)
		br, err := g.send(ctx, &b)
		if err != nil {
			return errRow{err}
		}
		return heldRow{br}
	}
	return guardedRow{g.Tx.QueryRow(ctx, sql, args...)}
}

func (g guarded) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	br, err := g.send(ctx, b)
	if err != nil {
		return errBatch{err}
	}
	return guardedBatch{br}
}

// Commit sends the held writes, then commits.
func (g guarded) Commit(ctx context.Context) error {
	if err := g.flush(ctx); err != nil {
		return err
	}
	return g.Tx.Commit(ctx)
}

type guardedRows struct{ pgx.Rows }

func (r guardedRows) Err() error             { return lost(r.Rows.Err()) }
func (r guardedRows) Scan(dest ...any) error { return lost(r.Rows.Scan(dest...)) }
func (r guardedRow) Scan(dest ...any) error  { return lost(r.Row.Scan(dest...)) }
func (b guardedBatch) Close() error          { return lost(b.BatchResults.Close()) }
func (b guardedBatch) QueryRow() pgx.Row     { return guardedRow{b.BatchResults.QueryRow()} }
func (b guardedBatch) Exec() (pgconn.CommandTag, error) {
	tag, err := b.BatchResults.Exec()
	return tag, lost(err)
}

func (b guardedBatch) Query() (pgx.Rows, error) {
	rows, err := b.BatchResults.Query()
	if err != nil {
		return rows, lost(err)
	}
	return guardedRows{rows}, nil
}

type guardedRow struct{ pgx.Row }

type guardedBatch struct{ pgx.BatchResults }

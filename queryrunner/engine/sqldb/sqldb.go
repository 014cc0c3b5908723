// Package sqldb streams one statement's result from a database/sql connection into
// an engine.Sink under the row cap: the part the database/sql engines (SQL Server,
// Trino) share.
package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/meridian-catalog/meridian/queryrunner/engine"
)

// Stream runs q in tx and streams its rows into sink until lim.MaxRows, calling stop
// when the cap is reached so the engine can end the statement on the server. mapErr
// turns driver errors into caller-safe ones.
func Stream(ctx context.Context, tx *sql.Tx, q string, lim engine.Limits, sink engine.Sink, stop func(), mapErr func(error) error) (engine.Summary, error) {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return engine.Summary{}, mapErr(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return engine.Summary{}, mapErr(err)
	}
	cols := make([]engine.Column, len(cts))
	for i, ct := range cts {
		cols[i] = engine.Column{Name: ct.Name(), Type: ct.DatabaseTypeName()}
	}
	if err := sink.Columns(cols); err != nil {
		return engine.Summary{}, err
	}
	capped := &engine.Capped{Sink: sink, Max: lim.MaxRows}
	raw := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return engine.Summary{Rows: capped.Count}, mapErr(err)
		}
		out := make([]any, len(cols))
		for i, v := range raw {
			out[i] = engine.JSONValue(v)
		}
		if err := capped.Row(out); err != nil {
			stop()
			if errors.Is(err, engine.ErrCapReached) {
				return engine.Summary{Rows: capped.Count, Truncated: true}, nil
			}
			return engine.Summary{Rows: capped.Count}, err
		}
	}
	if err := rows.Err(); err != nil {
		return engine.Summary{Rows: capped.Count}, mapErr(err)
	}
	return engine.Summary{Rows: capped.Count}, nil
}

// Strings runs a fixed query and returns its first column as text.
func Strings(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string, mapErr func(error) error, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			return nil, mapErr(err)
		}
		if s, ok := engine.JSONValue(v).(string); ok {
			out = append(out, s)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	return out, nil
}

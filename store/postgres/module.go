package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// SQL returns the module seam of the transaction.
func (t *tx) SQL() store.SQL { return moduleSQL{t} }

// moduleSQL implements store.SQL over the transaction.
type moduleSQL struct{ t *tx }

func (m moduleSQL) Dialect() store.Dialect { return store.DialectPostgres }

func (m moduleSQL) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := m.t.write(); err != nil {
		return 0, err
	}
	tag, err := m.t.tx.Exec(ctx, query, args...)
	if isUnique(err) {
		return 0, meridian.Errorf(meridian.EConflict, "Row already exists")
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: %w", err)
	}
	return tag.RowsAffected(), nil
}

func (m moduleSQL) Query(ctx context.Context, query string, args ...any) (store.Rows, error) {
	rows, err := m.t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return rows, nil
}

func (m moduleSQL) QueryRow(ctx context.Context, query string, args ...any) store.Scanner {
	return pgRow{m.t.tx.QueryRow(ctx, query, args...)}
}

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return meridian.Errorf(meridian.ENotFound, "not found")
	}
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

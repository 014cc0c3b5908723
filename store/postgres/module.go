package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/migration"
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
		return 0, meridian.Errorf(meridian.EConflict, "Entity already exists")
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

// migrateModules applies each module's migrations the database lacks, each in its own
// transaction under the migration lock, recorded in module_migrations under the
// module's name. A module whose applied version is newer than its newest migration is
// refused.
func migrateModules(ctx context.Context, conn *pgx.Conn, modules []store.Module) error {
	err := lockedTx(ctx, conn, func(t pgx.Tx) error {
		_, err := t.Exec(ctx, `CREATE TABLE IF NOT EXISTS module_migrations (
    module     TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    applied_at BIGINT  NOT NULL,
    PRIMARY KEY (module, version)
)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: migrate modules: %w", err)
	}
	for _, mod := range modules {
		ms, err := migration.Load(mod.Migrations, "postgres", "postgres: module "+mod.Name)
		if err != nil {
			return err
		}
		err = lockedTx(ctx, conn, func(t pgx.Tx) error {
			var current int
			if err := t.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM module_migrations WHERE module = $1",
				mod.Name).Scan(&current); err != nil {
				return fmt.Errorf("postgres: module %s: %w", mod.Name, err)
			}
			return migration.CheckCurrent("postgres: module "+mod.Name, current, migration.Latest(ms))
		})
		if err != nil {
			return err
		}
		for _, m := range ms {
			err := lockedTx(ctx, conn, func(t pgx.Tx) error {
				var applied bool
				if err := t.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM module_migrations WHERE module = $1 AND version = $2)",
					mod.Name, m.Version).Scan(&applied); err != nil {
					return err
				}
				if applied {
					return nil
				}
				// Simple protocol: a migration file may hold several statements.
				if _, err := t.Conn().PgConn().Exec(ctx, m.SQL).ReadAll(); err != nil {
					return err
				}
				_, err := t.Exec(ctx, "INSERT INTO module_migrations (module, version, applied_at) VALUES ($1, $2, $3)",
					mod.Name, m.Version, time.Now().UnixMilli())
				return err
			})
			if err != nil {
				return fmt.Errorf("postgres: module %s migration %s: %w", mod.Name, m.Name, err)
			}
		}
	}
	return nil
}

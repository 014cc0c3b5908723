package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/migration"
)

// SQL returns the module seam of the transaction.
func (t *tx) SQL() store.SQL { return moduleSQL{t} }

// moduleSQL implements store.SQL over the transaction.
type moduleSQL struct{ t *tx }

func (m moduleSQL) Dialect() store.Dialect { return store.DialectSQLite }

func (m moduleSQL) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := m.t.write(); err != nil {
		return 0, err
	}
	res, err := m.t.tx.ExecContext(ctx, numbered(query), args...)
	if isUnique(err) {
		return 0, meridian.Errorf(meridian.EConflict, "Entity already exists")
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	return res.RowsAffected()
}

func (m moduleSQL) Query(ctx context.Context, query string, args ...any) (store.Rows, error) {
	rows, err := m.t.tx.QueryContext(ctx, numbered(query), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return sqlRows{rows}, nil
}

func (m moduleSQL) QueryRow(ctx context.Context, query string, args ...any) store.Scanner {
	return sqlRow{m.t.tx.QueryRowContext(ctx, numbered(query), args...)}
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return meridian.Errorf(meridian.ENotFound, "not found")
	}
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// dollar matches PostgreSQL-style numbered placeholders.
var dollar = regexp.MustCompile(`\$([0-9]+)`)

// rewritten caches the SQLite text of each module statement: its $N placeholders become
// ?N, which SQLite binds to the N-th argument.
var rewritten sync.Map

func numbered(q string) string {
	if s, ok := rewritten.Load(q); ok {
		return s.(string)
	}
	s := dollar.ReplaceAllString(q, "?$1")
	rewritten.Store(q, s)
	return s
}

// migrateModules applies each module's migrations the database lacks, each in its own
// BEGIN IMMEDIATE transaction recorded in module_migrations under the module's name.
// A module whose applied version is newer than its newest migration is refused.
func migrateModules(ctx context.Context, w *sql.DB, modules []store.Module) error {
	if _, err := w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS module_migrations (
    module     TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    applied_at INTEGER NOT NULL,
    PRIMARY KEY (module, version)
)`); err != nil {
		return fmt.Errorf("sqlite: migrate modules: %w", err)
	}
	for _, mod := range modules {
		ms, err := migration.Load(mod.Migrations, "sqlite", "sqlite: module "+mod.Name)
		if err != nil {
			return err
		}
		var current int
		if err := w.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM module_migrations WHERE module = ?",
			mod.Name).Scan(&current); err != nil {
			return fmt.Errorf("sqlite: module %s: %w", mod.Name, err)
		}
		if err := migration.CheckCurrent("sqlite: module "+mod.Name, current, migration.Latest(ms)); err != nil {
			return err
		}
		for _, m := range ms {
			if err := applyModule(ctx, w, mod.Name, m); err != nil {
				return err
			}
		}
	}
	return nil
}

func applyModule(ctx context.Context, w *sql.DB, module string, m migration.File) error {
	t, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: module %s migration %s: %w", module, m.Name, err)
	}
	defer t.Rollback()
	var n int
	if err := t.QueryRowContext(ctx, "SELECT COUNT(*) FROM module_migrations WHERE module = ? AND version = ?",
		module, m.Version).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: module %s migration %s: %w", module, m.Name, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := t.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("sqlite: module %s migration %s: %w", module, m.Name, err)
	}
	if _, err := t.ExecContext(ctx, "INSERT INTO module_migrations (module, version, applied_at) VALUES (?, ?, ?)",
		module, m.Version, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("sqlite: module %s migration %s: %w", module, m.Name, err)
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("sqlite: module %s migration %s: %w", module, m.Name, err)
	}
	return nil
}

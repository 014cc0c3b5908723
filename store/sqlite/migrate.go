package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/migration"
)

// Migrations. The engine's own (migrations/NNNN_description.sql) and each module's are
// numbered on their own, and recorded in one table, module_migrations(module, version),
// the engine's under store.CoreModule. Each migration is applied in its own BEGIN
// IMMEDIATE transaction, so two processes opening the same new file at once apply each
// exactly once.
//
// Releases before the module seam recorded the engine's migrations in
// schema_migrations(version), with tokens created by 0001_init and the time series by
// 0003_timeseries. Such a file is adopted on open: the versions it recorded are copied
// to module_migrations as the engine's versions they cover (legacyCore), and
// schema_migrations is dropped. The auth and quality modules then find their tables
// already there (their first migrations create them IF NOT EXISTS), rows and all.

// legacyCore maps the last version recorded in schema_migrations by a release before
// the module seam to the engine migrations it covers: 1 (init) is 0001_init, 2
// (search) is 0001 and 0002_search, 3 (timeseries, now the quality module's) adds none.
var legacyCore = []int{0, 1, 2, 2}

// coreMigrations returns the engine's migrations in version order.
func coreMigrations() ([]migration.File, error) {
	return migration.Load(migrationFiles, "migrations", "sqlite")
}

// migrate brings the engine's tables, then each module's, up to date.
func migrate(ctx context.Context, w *sql.DB, modules []store.Module) error {
	core, err := coreMigrations()
	if err != nil {
		return err
	}
	sets, err := migration.Plan("sqlite", core, modules)
	if err != nil {
		return err
	}
	if err := prepareBookkeeping(ctx, w); err != nil {
		return err
	}
	for _, set := range sets {
		if err := applyAll(ctx, w, set.Module, set.Files); err != nil {
			return err
		}
	}
	return nil
}

// prepareBookkeeping creates module_migrations and adopts a file from a release
// before the module seam.
func prepareBookkeeping(ctx context.Context, w *sql.DB) error {
	t, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	defer t.Rollback()
	if _, err := t.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS module_migrations (
    module     TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    applied_at INTEGER NOT NULL,
    PRIMARY KEY (module, version)
)`); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	if err := adoptLegacy(ctx, t); err != nil {
		return err
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	return nil
}

// adoptLegacy moves the bookkeeping of schema_migrations, when the file has it, to
// module_migrations.
func adoptLegacy(ctx context.Context, t *sql.Tx) error {
	var n int
	if err := t.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").Scan(&n); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	if n == 0 {
		return nil
	}
	var v int
	if err := t.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	if v >= len(legacyCore) {
		return migration.CheckCurrent("sqlite", v, len(legacyCore)-1)
	}
	now := time.Now().UnixMilli()
	for c := 1; c <= legacyCore[v]; c++ {
		if _, err := t.ExecContext(ctx, `INSERT INTO module_migrations (module, version, applied_at) VALUES (?, ?, ?)
ON CONFLICT (module, version) DO NOTHING`, store.CoreModule, c, now); err != nil {
			return fmt.Errorf("sqlite: migrate: adopt schema_migrations: %w", err)
		}
	}
	if _, err := t.ExecContext(ctx, "DROP TABLE schema_migrations"); err != nil {
		return fmt.Errorf("sqlite: migrate: adopt schema_migrations: %w", err)
	}
	return nil
}

// moduleVersion returns the newest migration of module applied to the database.
func moduleVersion(ctx context.Context, q querier, module string) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM module_migrations WHERE module = ?",
		module).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: module %s: schema version: %w", module, err)
	}
	return v, nil
}

// applyAll applies the migrations of module the database lacks. It refuses a database
// whose version of the module is newer than its newest migration.
func applyAll(ctx context.Context, w *sql.DB, module string, ms []migration.File) error {
	current, err := moduleVersion(ctx, w, module)
	if err != nil {
		return err
	}
	if err := migration.CheckCurrent("sqlite: module "+module, current, migration.Latest(ms)); err != nil {
		return err
	}
	for _, m := range ms {
		if err := apply(ctx, w, module, m); err != nil {
			return fmt.Errorf("sqlite: module %s migration %s: %w", module, m.Name, err)
		}
	}
	return nil
}

// apply applies one migration unless it is recorded, and records it.
func apply(ctx context.Context, w *sql.DB, module string, m migration.File) error {
	t, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer t.Rollback()
	var n int
	if err := t.QueryRowContext(ctx, "SELECT COUNT(*) FROM module_migrations WHERE module = ? AND version = ?",
		module, m.Version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := t.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := t.ExecContext(ctx, "INSERT INTO module_migrations (module, version, applied_at) VALUES (?, ?, ?)",
		module, m.Version, time.Now().UnixMilli()); err != nil {
		return err
	}
	return t.Commit()
}

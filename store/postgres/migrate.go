package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/migration"
)

// Migrations. The engine's own (migrations/NNNN_description.sql) and each module's are
// numbered on their own, the same numbers as on SQLite, and recorded in one table,
// module_migrations(module, version), the engine's under store.CoreModule. Each
// migration is applied in its own transaction under the migration lock, so servers
// starting at the same time apply each exactly once.
//
// Releases before the module seam recorded the engine's migrations in
// schema_migrations(version), with tokens and search_docs created by 0001_init and the
// time series by 0002_timeseries. Such a database is adopted on open: the versions it
// recorded are copied to module_migrations as the engine's versions they cover
// (legacyCore), and schema_migrations is dropped. The auth and quality modules then
// find their tables already there (their first migrations create them IF NOT EXISTS),
// rows and all.

// legacyCore maps the last version recorded in schema_migrations by a release before
// the module seam to the engine migrations it covers: 1 (init, with search_docs) is
// 0001_init and 0002_search, 2 (timeseries, now the quality module's) adds none.
var legacyCore = []int{0, 2, 2}

// coreMigrations returns the engine's migrations in version order.
func coreMigrations() ([]migration.File, error) {
	return migration.Load(migrationFiles, "migrations", "postgres")
}

// migrate brings the engine's tables, then each module's, up to date.
func migrate(ctx context.Context, conn *pgx.Conn, modules []store.Module) error {
	core, err := coreMigrations()
	if err != nil {
		return err
	}
	sets, err := migration.Plan("postgres", core, modules)
	if err != nil {
		return err
	}
	err = lockedTx(ctx, conn, func(t pgx.Tx) error {
		if _, err := t.Exec(ctx, `CREATE TABLE IF NOT EXISTS module_migrations (
    module     TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    applied_at BIGINT  NOT NULL,
    PRIMARY KEY (module, version)
)`); err != nil {
			return fmt.Errorf("postgres: migrate: %w", err)
		}
		return adoptLegacy(ctx, t)
	})
	if err != nil {
		return err
	}
	for _, set := range sets {
		if err := applyAll(ctx, conn, set.Module, set.Files); err != nil {
			return err
		}
	}
	return nil
}

// adoptLegacy moves the bookkeeping of schema_migrations, when the database has it, to
// module_migrations.
func adoptLegacy(ctx context.Context, t pgx.Tx) error {
	var legacy bool
	if err := t.QueryRow(ctx, "SELECT to_regclass('schema_migrations') IS NOT NULL").Scan(&legacy); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	if !legacy {
		return nil
	}
	var v int
	if err := t.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	if v >= len(legacyCore) {
		return migration.CheckCurrent("postgres", v, len(legacyCore)-1)
	}
	now := time.Now().UnixMilli()
	for c := 1; c <= legacyCore[v]; c++ {
		if _, err := t.Exec(ctx, `INSERT INTO module_migrations (module, version, applied_at) VALUES ($1, $2, $3)
ON CONFLICT (module, version) DO NOTHING`, store.CoreModule, c, now); err != nil {
			return fmt.Errorf("postgres: migrate: adopt schema_migrations: %w", err)
		}
	}
	if _, err := t.Exec(ctx, "DROP TABLE schema_migrations"); err != nil {
		return fmt.Errorf("postgres: migrate: adopt schema_migrations: %w", err)
	}
	return nil
}

// moduleVersion returns the newest migration of module applied to the database.
func moduleVersion(ctx context.Context, q queryRower, module string) (int, error) {
	var v int
	if err := q.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM module_migrations WHERE module = $1",
		module).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: module %s: schema version: %w", module, err)
	}
	return v, nil
}

// applyAll applies the migrations of module the database lacks. It refuses a database
// whose version of the module is newer than its newest migration.
func applyAll(ctx context.Context, conn *pgx.Conn, module string, ms []migration.File) error {
	err := lockedTx(ctx, conn, func(t pgx.Tx) error {
		current, err := moduleVersion(ctx, t, module)
		if err != nil {
			return err
		}
		return migration.CheckCurrent("postgres: module "+module, current, migration.Latest(ms))
	})
	if err != nil {
		return err
	}
	for _, m := range ms {
		err := lockedTx(ctx, conn, func(t pgx.Tx) error {
			var applied bool
			if err := t.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM module_migrations WHERE module = $1 AND version = $2)",
				module, m.Version).Scan(&applied); err != nil {
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
				module, m.Version, time.Now().UnixMilli())
			return err
		})
		if err != nil {
			return fmt.Errorf("postgres: module %s migration %s: %w", module, m.Name, err)
		}
	}
	return nil
}

package queryrunner

import (
	"context"
	"embed"
	"io/fs"

	"github.com/meridian-catalog/meridian/store"
)

//go:embed migrations
var migrationFiles embed.FS

// ModuleName is the Query Runner module's name among the store's modules.
const ModuleName = "queryrunner"

// Module is Query Runner's tables (admin, user and team configs, saved queries); open
// the catalog with it (sqlite.Open, postgres.Open). When an entity is hard-deleted its
// rows go with it, in its transaction: a database service takes every config of the
// service, a user its user configs and saved queries, a team its team configs.
func Module() store.Module {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.Module{Name: ModuleName, Migrations: sub, OnRemove: removeEntity}
}

// removeEntity deletes the rows about a removed entity. Most removed entities (tables,
// columns' owners, …) have none: one query finds that out, so a large recursive delete
// costs one statement per entity here, as in the other modules.
func removeEntity(ctx context.Context, db store.SQL, id string) error {
	var n int
	err := db.QueryRow(ctx, `SELECT
  (SELECT COUNT(*) FROM qr_admin_configs WHERE service_id = $1) +
  (SELECT COUNT(*) FROM qr_user_configs WHERE service_id = $1 OR user_id = $1) +
  (SELECT COUNT(*) FROM qr_team_configs WHERE service_id = $1 OR team_id = $1) +
  (SELECT COUNT(*) FROM qr_saved_queries WHERE owner_id = $1)`, id).Scan(&n)
	if err != nil || n == 0 {
		return err
	}
	for _, q := range []string{
		"DELETE FROM qr_admin_configs WHERE service_id = $1",
		"DELETE FROM qr_user_configs WHERE service_id = $1 OR user_id = $1",
		"DELETE FROM qr_team_configs WHERE service_id = $1 OR team_id = $1",
		"DELETE FROM qr_saved_queries WHERE owner_id = $1",
	} {
		if _, err := db.Exec(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

package vectors

import (
	"context"
	"embed"
	"io/fs"

	"github.com/meridian-catalog/meridian/store"
)

//go:embed migrations
var migrationFiles embed.FS

// ModuleName is the vectors module's name among the store's modules.
const ModuleName = "vectors"

// Module is the vectors table; open the catalog with it (sqlite.Open, postgres.Open).
// A hard-deleted entity's vectors go with it, in its transaction.
func Module() store.Module {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.Module{Name: ModuleName, Migrations: sub, OnRemove: removeEntity}
}

// removeEntity deletes an entity's vectors, every model's, and counts the write.
// On PostgreSQL it locks the generation row before any vector row, in the order
// Index.write takes them: the indexer runs outside the entity write lock, and a
// hard delete that took vector rows first deadlocked with it rewriting the same
// entity's vectors. SQLite has one writer and needs no order.
func removeEntity(ctx context.Context, db store.SQL, entityID string) error {
	if db.Dialect() == store.DialectPostgres {
		if _, err := db.Exec(ctx, "SELECT 1 FROM vectors_state WHERE id = 1 FOR UPDATE"); err != nil {
			return err
		}
	}
	n, err := db.Exec(ctx, "DELETE FROM vectors WHERE entity_id = $1", entityID)
	if err != nil || n == 0 {
		return err
	}
	_, err = bumpGeneration(ctx, db)
	return err
}

// bumpGeneration counts a write to vectors and returns the new generation.
func bumpGeneration(ctx context.Context, db store.SQL) (int64, error) {
	var g int64
	err := db.QueryRow(ctx, "UPDATE vectors_state SET generation = generation + 1 WHERE id = 1 RETURNING generation").Scan(&g)
	return g, err
}

func generation(ctx context.Context, db store.SQL) (int64, error) {
	var g int64
	err := db.QueryRow(ctx, "SELECT generation FROM vectors_state WHERE id = 1").Scan(&g)
	return g, err
}

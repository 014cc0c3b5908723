// Package tasks serves tasks and suggestions (/api/v1/tasks) and the feed
// (/api/v1/feed): the task flows beside the engine's generic operations on the task
// kind (resolve, close, reassign, apply a suggestion, bulk accept and reject, comments,
// the scoped lists), and the feed's conversations and legacy task threads, which this
// package keeps in its own tables (Module).
//
// Tasks are entities of the task kind (meridian.KindTask): versioned, soft-deletable,
// with their rules in the kind's hooks (meridian.TaskAllows, the kind's Validate). This
// package only sequences the engine's writes.
package tasks

import (
	"context"
	"embed"
	"io/fs"

	"github.com/meridian-catalog/meridian/store"
)

//go:embed migrations
var migrationFiles embed.FS

// ModuleName is the name the module's migrations are recorded under.
const ModuleName = "tasks"

// Module declares the package's tables (the task number sequence and the feed threads)
// for both drivers. A hard-deleted entity takes the threads about it.
func Module() store.Module {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // embedded at build time
	}
	return store.Module{Name: ModuleName, Migrations: sub,
		OnRemove: func(ctx context.Context, db store.SQL, entityID string) error {
			_, err := db.Exec(ctx, `DELETE FROM feed_threads WHERE about_id = $1`, entityID)
			return err
		}}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/meridian-catalog/meridian/store"
)

// floorOp is the floor of "GET table by name": the same lookups done in-process as a
// raw driver call, with the server stopped. Each call opens a read transaction, reads
// the row with Tx.GetByFQN, decodes its JSON document (the API has to, too) and ends
// the transaction. The API's p50 divided by this p50 is its overhead: HTTP, auth,
// routing, relationship fields, shaping and encoding the answer.
func floorOp(drv store.Driver, fqns []string) operation {
	return operation{
		name: "floor: Tx.GetByFQN + JSON decode (same tables)",
		run: func(ctx context.Context, i int) (time.Duration, error) {
			fqn := fqns[i%len(fqns)]
			start := time.Now()
			tx, err := drv.Begin(ctx, false)
			if err != nil {
				return 0, err
			}
			row, err := tx.GetByFQN(ctx, "table", fqn)
			if err != nil {
				_ = tx.Rollback()
				return 0, fmt.Errorf("GetByFQN %s: %w", fqn, err)
			}
			var doc map[string]any
			err = json.Unmarshal(row.Doc, &doc)
			_ = tx.Rollback()
			d := time.Since(start)
			if err != nil {
				return d, fmt.Errorf("decode %s: %w", fqn, err)
			}
			return d, nil
		},
	}
}

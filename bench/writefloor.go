package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
)

// writeFloorResult is ingest's floor: tables per second through the entity engine
// in-process, without HTTP and without the outbox consumers.
type writeFloorResult struct {
	single, bulk float64 // tables per second
	err          string  // why it has no numbers
}

// writeFloor opens the catalog cfg describes in-process (the server stopped) and loads
// n more tables twice through the entity engine as the engine's own principal: single
// creates (Entities.Create) from workers goroutines, then Entities.BulkCreateOrUpdate
// calls of bulkBatch tables from workers goroutines. The catalog is not run, so no
// outbox consumer shares the CPU; the events wait in the outbox. Bodies are decoded
// from JSON before the clock starts, as a request's are, so the floor is the write
// path alone: authorization, the before-write sequence, staging and the commit.
func writeFloor(ctx context.Context, cfg app.Config, seed uint64, first, n, workers int) writeFloorResult {
	cat, err := app.Open(ctx, cfg)
	if err != nil {
		return writeFloorResult{err: oneLine(err.Error())}
	}
	defer cat.Close()
	bodies := func(from int) ([]meridian.Entity, error) {
		out := make([]meridian.Entity, n)
		for i := range out {
			b, err := json.Marshal(genTable(seed, from+i).body)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(b, &out[i]); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var res writeFloorResult
	single, err := bodies(first)
	if err != nil {
		return writeFloorResult{err: oneLine(err.Error())}
	}
	wall, err := parallel(ctx, n, 1, workers, func(i, _ int) error {
		if _, err := cat.Entities.Create(ctx, meridian.System, "table", single[i]); err != nil {
			return fmt.Errorf("table %d: %w", first+i, err)
		}
		return nil
	})
	if err != nil {
		return writeFloorResult{err: "single creates: " + oneLine(err.Error())}
	}
	res.single = float64(n) / wall.Seconds()
	bulk, err := bodies(first + n)
	if err != nil {
		return writeFloorResult{err: oneLine(err.Error())}
	}
	wall, err = parallel(ctx, n, bulkBatch, workers, func(from, to int) error {
		items, err := cat.Entities.BulkCreateOrUpdate(ctx, meridian.System, "table", bulk[from:to])
		if err != nil {
			return fmt.Errorf("tables %d..%d: %w", first+n+from, first+n+to-1, err)
		}
		for i, it := range items {
			if it.Err != nil {
				return fmt.Errorf("table %d: %w", first+n+from+i, it.Err)
			}
		}
		return nil
	})
	if err != nil {
		return writeFloorResult{err: "bulk: " + oneLine(err.Error())}
	}
	res.bulk = float64(n) / wall.Seconds()
	return res
}

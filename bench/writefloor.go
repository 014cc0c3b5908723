package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// writeFloorResult is ingest's floor: tables per second through the entity engine
// in-process, without HTTP and without the outbox consumers.
type writeFloorResult struct {
	single, bulk float64 // tables per second
	err          string  // why it has no numbers
}

// writeFloor opens the catalog cfg describes in-process (a database of its own, not
// the server's), creates the fixtures, and loads the REST phases' tables again
// through the entity engine as the engine's own principal: tables 0..n-1 as single
// creates (Entities.Create) from workers goroutines, then n..2n-1 in
// Entities.BulkCreateOrUpdate calls of bulkBatch tables from workers goroutines. So
// each floor writes the same tables into a database of the same size as the REST
// phase beside it. The catalog is not run, so no outbox consumer shares the CPU; the
// events wait in the outbox. Bodies are decoded from JSON before the clock starts, as
// a request's are, so the floor is the write path alone: authorization, the
// before-write sequence, staging and the commit.
func writeFloor(ctx context.Context, cfg app.Config, seed uint64, n, workers int) writeFloorResult {
	cat, err := app.Open(ctx, cfg)
	if err != nil {
		return writeFloorResult{err: oneLine(err.Error())}
	}
	defer cat.Close()
	if err := createFixturesIn(ctx, cat); err != nil {
		return writeFloorResult{err: "fixtures: " + oneLine(err.Error())}
	}
	bodies := func(from int) ([]meridian.Entity, error) {
		out := make([]meridian.Entity, n)
		for i := range out {
			var err error
			if out[i], err = decodedBody(seed, from+i); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var res writeFloorResult
	single, err := bodies(0)
	if err != nil {
		return writeFloorResult{err: oneLine(err.Error())}
	}
	wall, err := parallel(ctx, n, 1, workers, func(i, _ int) error {
		if _, err := cat.Entities.Create(ctx, meridian.System, "table", single[i]); err != nil {
			return fmt.Errorf("table %d: %w", i, err)
		}
		return nil
	})
	if err != nil {
		return writeFloorResult{err: "single creates: " + oneLine(err.Error())}
	}
	res.single = float64(n) / wall.Seconds()
	bulk, err := bodies(n)
	if err != nil {
		return writeFloorResult{err: oneLine(err.Error())}
	}
	wall, err = parallel(ctx, n, bulkBatch, workers, func(from, to int) error {
		items, err := cat.Entities.BulkCreateOrUpdate(ctx, meridian.System, "table", bulk[from:to])
		if err != nil {
			return fmt.Errorf("tables %d..%d: %w", n+from, n+to-1, err)
		}
		for i, it := range items {
			if it.Err != nil {
				return fmt.Errorf("table %d: %w", n+from+i, it.Err)
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

// createFixturesIn creates the fixtures through cat's engine; one already there (a
// seeded classification, say) is kept.
func createFixturesIn(ctx context.Context, cat *app.Catalog) error {
	for _, f := range fixtures() {
		if _, err := cat.Entities.Create(ctx, meridian.System, f.kind, f.body); err != nil && meridian.ErrorCode(err) != meridian.EConflict {
			return fmt.Errorf("create %s %v: %w", f.kind, f.body["name"], err)
		}
	}
	return nil
}

// decodedBody is table i's create body as a request's is decoded: through JSON.
func decodedBody(seed uint64, i int) (meridian.Entity, error) {
	b, err := json.Marshal(genTable(seed, i).body)
	if err != nil {
		return nil, err
	}
	var body meridian.Entity
	return body, json.Unmarshal(b, &body)
}

// driverCopy is one table's rows as the engine stored them, renamed for a copy: the
// row, the relations the table is at either end of, the event and the search
// document, all ready for the driver.
type driverCopy struct {
	row   store.Row
	rels  []store.Relation
	event meridian.ChangeEvent
	doc   search.Doc
}

// driverWriteFloor is the storage's own floor for ingest. It reads the rows the
// engine stored for the tables named fqns (the table row, the relations it is at
// either end of), renames each (a new id, "_copy" after its name) and, with the clock
// running, writes them straight through the driver: Tx.Insert (the row is also its
// version's snapshot, as the engine writes a table), Relate,
// the change event (AppendEncodedEvent with the snapshot's document where the driver
// has it, as the engine does) and Index, in transactions of driverFloorChunk tables on
// one goroutine, as a bulk chunk commits under the single writer. There is no
// authorization, draft, schema validation or encoding in it, so on SQLite, whose one
// writer commits every write, an ingest path reaches it only by committing in larger
// groups (the group commit joins chunks: one fsync, shared pages). The result is
// tables per second, or why there is none.
func driverWriteFloor(ctx context.Context, drv store.Driver, fqns []string) (float64, error) {
	k, err := meridian.DefaultRegistry().Lookup("table")
	if err != nil {
		return 0, err
	}
	copies := make([]driverCopy, 0, len(fqns))
	tx, err := drv.Begin(ctx, false)
	if err != nil {
		return 0, err
	}
	for _, fqn := range fqns {
		c, err := copyOf(ctx, tx, k, fqn)
		if err != nil {
			_ = tx.Rollback()
			return 0, fmt.Errorf("%s: %w", fqn, err)
		}
		copies = append(copies, c)
	}
	_ = tx.Rollback()

	start := time.Now()
	for from := 0; from < len(copies); from += driverFloorChunk {
		if err := writeCopies(ctx, drv, copies[from:min(from+driverFloorChunk, len(copies))]); err != nil {
			return 0, err
		}
	}
	return float64(len(copies)) / time.Since(start).Seconds(), nil
}

// driverFloorChunk is the tables of one transaction of driverWriteFloor: the engine's
// bulk chunk.
const driverFloorChunk = store.BulkChunk

// copyOf reads table fqn's rows in tx and renames them for a copy.
func copyOf(ctx context.Context, tx store.Tx, k *meridian.Kind, fqn string) (driverCopy, error) {
	row, err := tx.GetByFQN(ctx, k.Name, fqn)
	if err != nil {
		return driverCopy{}, err
	}
	var rels []store.Relation
	for _, q := range []store.RelationQuery{{FromID: row.ID}, {ToID: row.ID}} {
		r, err := tx.Relations(ctx, q)
		if err != nil {
			return driverCopy{}, err
		}
		rels = append(rels, r...)
	}
	var e meridian.Entity
	if err := json.Unmarshal(row.Doc, &e); err != nil {
		return driverCopy{}, err
	}
	id := meridian.NewID()
	e["id"], e["name"] = id, e.Name()+"_copy"
	e["fullyQualifiedName"] = fqn + "_copy"
	doc, err := json.Marshal(e)
	if err != nil {
		return driverCopy{}, err
	}
	for i := range rels {
		if rels[i].FromID == row.ID {
			rels[i].FromID = id
		}
		if rels[i].ToID == row.ID {
			rels[i].ToID = id
		}
	}
	// As the engine indexes a created table: its source is the snapshot it stores.
	sd := store.SearchFieldsOf(k, e)
	sd.Snapshot, sd.Created = true, true
	return driverCopy{
		row: store.Row{ID: id, Kind: k.Name, Name: e.Name(), FQN: e.FQN(), Version: row.Version,
			UpdatedAt: row.UpdatedAt, UpdatedBy: row.UpdatedBy, Doc: doc, Snapshot: true},
		rels: rels,
		event: meridian.ChangeEvent{ID: meridian.NewID(), EventType: meridian.EventEntityCreated, EntityType: k.Name,
			EntityID: id, EntityFQN: e.FQN(), UserName: row.UpdatedBy, Timestamp: row.UpdatedAt,
			CurrentVersion: row.Version.Float(), Entity: e},
		doc: sd.WithTerms(),
	}, nil
}

// writeCopies writes copies in one write transaction, each in one round trip where
// the driver pipelines writes (store.Pipeliner), as the engine's create does.
func writeCopies(ctx context.Context, drv store.Driver, copies []driverCopy) error {
	tx, err := drv.Begin(ctx, true)
	if err != nil {
		return err
	}
	for _, c := range copies {
		write := func() error { return writeCopy(ctx, tx, c) }
		if pl, ok := tx.(store.Pipeliner); ok {
			err = pl.Pipeline(write)
		} else {
			err = write()
		}
		if err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("%s: %w", c.row.FQN, err)
		}
	}
	return tx.Commit()
}

// writeCopy writes one table's rows in tx, as the engine's create does.
func writeCopy(ctx context.Context, tx store.Tx, c driverCopy) error {
	// The row is its version's snapshot (Row.Snapshot), as a table's whose document
	// holds no relationship field: the engine stores no other.
	if err := tx.Insert(ctx, c.row); err != nil {
		return err
	}
	for _, r := range c.rels {
		if err := tx.Relate(ctx, r); err != nil {
			return err
		}
	}
	if a, ok := tx.(store.EncodedEventAppender); ok {
		if err := a.AppendEncodedEvent(ctx, c.event, c.row.Doc, true); err != nil {
			return err
		}
	} else if err := tx.AppendEvent(ctx, c.event); err != nil {
		return err
	}
	return tx.Index(ctx, c.doc)
}

package graph_test

import (
	"context"
	"slices"
	"testing"

	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// TestABatchOfEventsProjectsAsEventByEvent hands the consumer a whole batch of
// creates, patches, a soft and a hard delete and lineage changes (the dispatcher calls
// HandleBatch), and checks the projection equals a rebuild from the catalog.
func TestABatchOfEventsProjectsAsEventByEvent(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			c := catalogtest.Open(t, d.cfg(t))
			if err := c.BuildGraph(ctx); err != nil {
				t.Fatal(err)
			}
			populate(t, c)
			changeAfterSnapshot(t, c)
			if err := c.Dispatcher.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			batched := everything(t, c)
			if _, err := c.Graph.Sync().Rebuild(ctx, &graph.CatalogSource{Entities: c.Entities}, nil); err != nil {
				t.Fatal(err)
			}
			if rebuilt := everything(t, c); !slices.Equal(batched, rebuilt) {
				t.Fatalf("after the batch: %d triples; a rebuild: %d", len(batched), len(rebuilt))
			}
		})
	}
}

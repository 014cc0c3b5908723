package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/jobs"
)

// GraphConfig chooses where the knowledge graph lives.
type GraphConfig struct {
	// Endpoint and UpdateEndpoint are a remote SPARQL 1.1 protocol server's query and
	// update URLs; both empty means the embedded store. Their zero values read
	// MERIDIAN_SPARQL_ENDPOINT and MERIDIAN_SPARQL_UPDATE_ENDPOINT (GraphFromEnv).
	Endpoint, UpdateEndpoint string
	// Snapshot is the file the embedded store is saved to (on shutdown, and in the
	// background once it changed) and restored from at start; empty means
	// DataDir/GraphSnapshotFile, SnapshotOff none (every start rebuilds). Its zero
	// value reads MERIDIAN_GRAPH_SNAPSHOT. A remote store keeps no snapshot.
	Snapshot string
}

// GraphSnapshotFile is the embedded graph's snapshot in the data directory.
const GraphSnapshotFile = "graph.snapshot"

// SnapshotOff as GraphConfig.Snapshot keeps no snapshot.
const SnapshotOff = "off"

// Background snapshots: one is written when the projection changed and snapshotEvery
// has passed since the last, or sooner after snapshotChanges outbox events.
const (
	snapshotEvery   = 5 * time.Minute
	snapshotChanges = 10_000
)

// GraphFromEnv reads the graph configuration from the environment.
func GraphFromEnv() GraphConfig {
	return GraphConfig{Endpoint: strings.TrimSpace(os.Getenv("MERIDIAN_SPARQL_ENDPOINT")),
		UpdateEndpoint: strings.TrimSpace(os.Getenv("MERIDIAN_SPARQL_UPDATE_ENDPOINT")),
		Snapshot:       strings.TrimSpace(os.Getenv("MERIDIAN_GRAPH_SNAPSHOT"))}
}

// withDefaults reads the environment for a zero configuration and fills the snapshot
// path: DataDir/GraphSnapshotFile by default, empty when off or remote.
func (c GraphConfig) withDefaults(dataDir string) GraphConfig {
	if c == (GraphConfig{}) {
		c = GraphFromEnv()
	}
	switch {
	case c.Remote() || strings.EqualFold(c.Snapshot, SnapshotOff):
		c.Snapshot = ""
	case c.Snapshot == "":
		c.Snapshot = filepath.Join(dataDir, GraphSnapshotFile)
	}
	return c
}

// Remote reports whether the configuration names a remote store.
func (c GraphConfig) Remote() bool { return c.Endpoint != "" || c.UpdateEndpoint != "" }

// remoteGraph builds the remote backend over a SPARQL 1.1 protocol server. It is set by
// the remote store's wiring (graph_remote.go) when that package is built in; nil
// means a remote configuration is refused.
var remoteGraph func(cfg GraphConfig, log *slog.Logger) (graph.Backend, error)

// newGraph builds the knowledge graph's backend, synchroniser and service.
func newGraph(cfg GraphConfig, ents *store.Entities, log *slog.Logger) (*graph.Service, error) {
	var backend graph.Backend = graph.NewEmbedded()
	if cfg.Remote() {
		if cfg.Endpoint == "" || cfg.UpdateEndpoint == "" {
			return nil, errors.New("set both MERIDIAN_SPARQL_ENDPOINT and MERIDIAN_SPARQL_UPDATE_ENDPOINT, or neither")
		}
		if remoteGraph == nil {
			return nil, errors.New("this build has no remote SPARQL store; unset MERIDIAN_SPARQL_ENDPOINT")
		}
		b, err := remoteGraph(cfg, log)
		if err != nil {
			return nil, err
		}
		backend = b
	}
	sync := graph.NewSync(ents.Registry(), &graph.CatalogSource{Entities: ents}, backend, log)
	return graph.NewService(graph.Config{Backend: backend, Sync: sync}), nil
}

// StartGraphRebuild starts the durable job that rebuilds the knowledge graph from the
// catalog, started by p, and returns its id. Errors: those of jobs.Service.Start.
func (c *Catalog) StartGraphRebuild(ctx context.Context, p *meridian.Principal) (string, error) {
	return c.Jobs.Start(ctx, p, graph.JobTypeRebuild, map[string]string{}, func(ctx context.Context, progress store.JobProgress) (any, error) {
		return c.rebuildGraph(ctx, progress)
	})
}

// rebuildGraph rebuilds the projection, reporting progress (nil for none).
func (c *Catalog) rebuildGraph(ctx context.Context, progress store.JobProgress) (graph.RebuildResult, error) {
	total := 0
	if progress != nil {
		_ = c.Entities.InTx(ctx, false, func(tx store.Tx) error {
			for _, k := range c.Entities.Registry().Kinds() {
				_, n, err := tx.List(ctx, store.ListQuery{Kind: k.Name, Include: store.IncludeAll})
				if err != nil {
					return err
				}
				total += n
			}
			return nil
		})
	}
	return c.Graph.Sync().Rebuild(ctx, &graph.CatalogSource{Entities: c.Entities}, func(done int) error {
		if progress == nil || total == 0 {
			return nil
		}
		return progress.Progress(ctx, min(99, done*100/total), nil)
	})
}

// BuildGraph builds the knowledge graph at once. The embedded store is in memory: it
// is restored from its snapshot and caught up with the outbox when the snapshot is
// usable, and otherwise rebuilt from the catalog and saved. A remote store keeps its
// data and is built only when it holds no projection yet.
// Errors: the catalog's and the backend's.
func (c *Catalog) BuildGraph(ctx context.Context) error {
	if c.graphRemote {
		// A remote store keeps its data; an empty one (no ontology yet) is filled.
		r, err := c.Graph.Backend().Query(ctx, "ASK { <"+graph.OntologyIRI+"> ?p ?o }", graph.Limits{Rows: 1})
		if err != nil || r.Boolean {
			c.Graph.Sync().MarkReady()
			return err
		}
	}
	if c.graphSnapshot != "" {
		_, ok, err := c.Graph.Sync().Restore(ctx, c.graphSnapshot, &graph.CatalogSource{Entities: c.Entities})
		if ok {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			c.log.Warn("the graph snapshot could not be caught up; the projection is rebuilt", "err", err)
		}
	}
	if _, err := c.rebuildGraph(ctx, nil); err != nil {
		return err
	}
	c.SaveGraphSnapshot(true)
	return nil
}

// SaveGraphSnapshot writes the embedded graph's snapshot when it changed since the
// last one (always when force), logging a failure: a missing snapshot only costs a
// rebuild at the next start.
func (c *Catalog) SaveGraphSnapshot(force bool) {
	if _, _, err := c.Graph.Sync().SaveSnapshot(c.graphSnapshot, force); err != nil {
		c.log.Warn("graph snapshot not written", "path", c.graphSnapshot, "err", err)
	}
}

// runGraphSnapshots writes the embedded graph's snapshot in the background until ctx
// ends (Run writes the last one once every consumer has stopped).
func (c *Catalog) runGraphSnapshots(ctx context.Context) {
	c.Graph.Sync().RunSnapshots(ctx, c.graphSnapshot, snapshotEvery, snapshotChanges)
}

// registerGraphJob lets the jobs service resume a rebuild after a restart.
func registerGraphJob(js *jobs.Service, c *Catalog) {
	js.Register(graph.JobTypeRebuild, func(ctx context.Context, _ jobs.Job, progress store.JobProgress) (any, error) {
		return c.rebuildGraph(ctx, progress)
	})
}

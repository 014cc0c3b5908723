package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/graph"
)

const graphUsage = "Usage: meridian graph rebuild [--data-dir D | --database-url URL]\n"

// graphCmd runs `meridian graph rebuild`: it projects the whole catalog to RDF again in
// the durable job graph.rebuild, showing its progress. With MERIDIAN_SPARQL_ENDPOINT
// and MERIDIAN_SPARQL_UPDATE_ENDPOINT set the projection is pushed to that remote
// store; otherwise it is built in this process's embedded store, which checks the
// projection, reports its size and saves its snapshot, from which the next server
// start restores it (a running server keeps its own; an admin rebuilds it with POST
// /api/v1/rdf/rebuild).
func graphCmd(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "rebuild" {
		fmt.Fprint(stderr, graphUsage)
		return errUsage
	}
	fs := newFlagSet("graph rebuild", stderr)
	dir := fs.string("data-dir", "MERIDIAN_DATA_DIR", defaultDataDir, "data directory")
	dbURL := databaseURL(fs)
	level := fs.string("log-level", "MERIDIAN_LOG_LEVEL", "warn", "log level: debug, info, warn or error")
	if err := fs.parse(args[1:]); err != nil {
		return err
	}
	log, err := newLogger(stderr, *level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return errUsage
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cat, err := openCatalog(ctx, app.Config{DataDir: *dir, DatabaseURL: *dbURL, Logger: log})
	if err != nil {
		return err
	}
	defer cat.Close()
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { cat.Jobs.Run(runCtx); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	start := time.Now()
	id, err := cat.StartGraphRebuild(ctx, system)
	if err != nil {
		return fmt.Errorf("start the graph rebuild: %w", err)
	}
	fmt.Fprintf(stderr, "meridian: rebuilding the knowledge graph, job %s\n", id)
	j, err := watchJob(ctx, cat.Jobs, id, "graph rebuild", "the next serve", stderr)
	if err != nil {
		return err
	}
	var res graph.RebuildResult
	_ = json.Unmarshal(j.Result, &res)
	where := "a remote SPARQL store"
	if e, ok := cat.Graph.Backend().(*graph.Embedded); ok {
		where = fmt.Sprintf("the embedded store (%d triples, %d terms)", e.Store().Len(), e.Store().Terms())
	}
	fmt.Fprintf(stderr, "meridian: projected %d entities into %s in %s\n", res.Entities, where, time.Since(start).Round(time.Millisecond))
	// The embedded store's snapshot lets the next serve start from this build.
	cat.SaveGraphSnapshot(true)
	return nil
}

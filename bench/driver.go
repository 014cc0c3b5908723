package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian/app"
)

// driverResult is one column of the report.
type driverResult struct {
	driver  string
	skipped string // why the driver has no numbers
	failed  string // why the run stopped early (numbers so far are kept)

	ingestWall  time.Duration
	ingestRate  float64 // tables per second
	bulkWall    time.Duration
	bulkRate    float64 // tables per second through the bulk endpoint
	ingestCPU   cpuPerTable
	bulkCPU     cpuPerTable
	ingestLoad  writerLoad // the single writer's, over the ingest (SQLite)
	bulkLoad    writerLoad
	peakRSS     int64 // VmHWM of meridian serve, bytes
	mcpStdioRSS int64 // VmHWM of meridian mcp (the stdio rows), bytes
	endRSS      int64 // VmRSS at the end, bytes
	dbSize      int64 // bytes on disk (SQLite files) or pg_database_size
	timings     []timing
	floor       timing
	writeFloor  writeFloorResult
	// driverWriteFloor is the bulk's tables copied through the driver alone
	// (driverWriteFloor), tables per second; driverWriteErr says why it has none.
	driverWriteFloor float64
	driverWriteErr   string

	// ingestCatchUp and bulkCatchUp are how long the outbox consumers took, after the
	// last table was acknowledged, to have handled every event of the load.
	ingestCatchUp, bulkCatchUp time.Duration
}

// driverTitle is the report's column name of a driver.
func driverTitle(d string) string {
	switch d {
	case "sqlite":
		return "SQLite"
	case "postgres":
		return "PostgreSQL"
	}
	return d
}

// benchDriver runs the whole benchmark on one store driver. Problems that make the
// driver unusable here (PostgreSQL unreachable, a binary without --database-url) skip
// it with a note; later failures are reported in the column.
func benchDriver(ctx context.Context, c config, driver, bin, tmp string, logf func(string, ...any)) *driverResult {
	res := &driverResult{driver: driver}
	dataDir := filepath.Join(tmp, driver, "data")
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o700); err != nil {
		res.skipped = err.Error()
		return res
	}

	var extra []string
	if c.yield != "" {
		extra = append(extra, "--consumer-yield", c.yield)
	}
	var dbURL string
	if driver == "postgres" {
		u, drop, err := throwawayDB(ctx, c.postgresURL)
		if err != nil {
			res.skipped = err.Error()
			return res
		}
		defer drop()
		dbURL = u
		extra = append(extra, "--database-url", dbURL)
	}

	srv, err := startServer(ctx, bin, dataDir, extra...)
	if err != nil {
		res.skipped = "meridian serve did not start: " + oneLine(err.Error())
		if strings.Contains(err.Error(), "flag provided but not defined: -database-url") {
			res.skipped = "this meridian binary has no --database-url flag, so it cannot serve from PostgreSQL"
		}
		return res
	}
	defer srv.stop()
	token, err := srv.token()
	if err != nil {
		res.failed = "read admin.token: " + err.Error()
		return res
	}

	ing := newClient(srv.base, token, c.workers)
	defer ing.close()
	if err := createFixtures(ctx, ing); err != nil {
		res.failed = "create service, databases, schemas and tags: " + oneLine(err.Error())
		return res
	}
	tables, err := encodeTables(c.seed, c.n)
	if err != nil {
		res.failed = "encode the tables: " + oneLine(err.Error())
		return res
	}
	logf("%s: ingesting %d tables with %d workers", driver, c.n, c.workers)
	step := max(1000, c.n/10/1000*1000)
	writer := readWriter(ctx, ing)
	cpu := startCPU(srv)
	fqns, wall, err := ingest(ctx, ing, tables, c.workers, func(done int) {
		if done%step == 0 {
			logf("%s: %d tables", driver, done)
		}
	})
	if err != nil {
		res.failed = "ingest: " + oneLine(err.Error())
		return res
	}
	res.ingestWall = wall
	res.ingestRate = float64(c.n) / wall.Seconds()
	res.ingestCPU = cpu.per(c.n)
	res.ingestLoad = writer.load(readWriter(ctx, ing), wall)
	logf("%s: ingest %.0f tables/s (%s)", driver, res.ingestRate, wall.Round(time.Millisecond))
	// The consumers (the semantic indexer, the graph, the activity stream, the audit
	// log) handle what was ingested in the background; the timed reads start once they
	// have caught up, so they do not share the CPU with them.
	caughtUp := time.Now()
	if err := waitCaughtUp(ctx, ing, driver, logf); err != nil {
		res.failed = "wait for the consumers: " + oneLine(err.Error())
		return res
	}
	res.ingestCatchUp = time.Since(caughtUp)
	logf("%s: the consumers caught up %s after the ingest", driver, res.ingestCatchUp.Round(100*time.Millisecond))
	// Then the work the server does once a load is over (SQLite merges the full-text
	// index, billing records the indexer's embeddings) ends before the timings: a commit
	// between the static floor's reads and GET by name would empty the read cache that
	// GET is timed from.
	if waited, err := srv.settle(ctx); err != nil {
		logf("%s: timing anyway: %v", driver, err)
	} else {
		logf("%s: the server settled %s after the consumers caught up", driver, waited.Round(time.Second))
	}

	k := c.samples + warmups(c.samples)
	getFQNs := sampleFQNs(fqns, k, c.seed, 1)
	patchFQNs := sampleFQNs(fqns, k, c.seed, 2)
	coldFQNs := distinctFQNs(fqns, k, c.seed, 3)
	queries := searchQueries(k, c.seed)

	// REST first, then MCP (mcp.go) on the same tables and queries: over streamable
	// HTTP to this server, then over stdio to a `meridian mcp` process on the same
	// database (SQLite: the same file, which WAL lets both processes read).
	seq := newClient(srv.base, token, 1)
	defer seq.close()
	httpMCP := dialMCPHTTP(srv.base, token)
	defer httpMCP.close()
	stdioMCP, stdioProc := dialMCPStdio(ctx, bin, dataDir, dataDir+".mcp-stdio.log", extra...)
	defer stdioMCP.close()
	statics, stopStatic, err := staticFloors(ctx, seq, token, getFQNs)
	if err != nil {
		res.failed = "static HTTP floor: " + oneLine(err.Error())
		return res
	}
	defer stopStatic()
	surfaces := []surface{
		restSurface(seq, getFQNs, patchFQNs, coldFQNs, queries),
		{name: "", ops: statics},
		restCompareSurface(seq, getFQNs),
		mcpSurface(httpMCP, getFQNs, queries),
		mcpSurface(stdioMCP, getFQNs, queries),
	}
	for _, s := range surfaces {
		for _, op := range s.ops {
			logf("%s: %s %s", driver, s.name, op.name)
			t := timeOp(ctx, s.name, op, c.samples)
			switch {
			case t.na != "":
				logf("%s: %s %s: n/a: %s", driver, s.name, op.name, t.na)
			case t.err != "":
				logf("%s: %s %s: FAILED: %s", driver, s.name, op.name, oneLine(t.err))
			case t.problems != "":
				logf("%s: %s %s: %s", driver, s.name, op.name, t.problems)
			}
			res.timings = append(res.timings, t)
		}
	}
	// REST search (same query) is the REST search row: the same requests, timed just
	// before the MCP ones.
	if t := res.timing("REST", restSearchOp); t != nil {
		same := *t
		same.name, same.info, same.reused = restSearchSame, "", true
		res.timings = append(res.timings, same)
	}
	res.mcpStdioRSS = stdioProc.peakRSS()
	stdioMCP.close()
	httpMCP.close()

	// Ingest again, through the bulk endpoint: n more tables with new names.
	reqs, err := bulkRequests(c.seed, c.n, c.n)
	if err != nil {
		res.failed = "encode the bulk requests: " + oneLine(err.Error())
		return res
	}
	logf("%s: bulk-ingesting %d tables, %d per request, %d workers", driver, c.n, bulkBatch, c.workers)
	writer = readWriter(ctx, ing)
	cpu = startCPU(srv)
	if wall, err := ingestBulk(ctx, ing, reqs, c.n, c.workers); err != nil {
		res.failed = "bulk ingest: " + oneLine(err.Error())
	} else {
		res.bulkWall, res.bulkRate = wall, float64(c.n)/wall.Seconds()
		res.bulkCPU = cpu.per(c.n)
		res.bulkLoad = writer.load(readWriter(ctx, ing), wall)
		logf("%s: bulk ingest %.0f tables/s (%s)", driver, res.bulkRate, wall.Round(time.Millisecond))
		caughtUp := time.Now()
		if err := waitCaughtUp(ctx, ing, driver, logf); err != nil {
			res.failed = "wait for the consumers after the bulk ingest: " + oneLine(err.Error())
		} else {
			res.bulkCatchUp = time.Since(caughtUp)
			logf("%s: the consumers caught up %s after the bulk ingest", driver, res.bulkCatchUp.Round(100*time.Millisecond))
		}
	}

	if hwm, rss, err := srv.peakRSS(); err == nil {
		res.peakRSS, res.endRSS = hwm, rss
	} else {
		logf("%s: peak RSS: %v", driver, err)
	}
	seq.close()
	ing.close()
	if err := srv.stop(); err != nil {
		logf("%s: stop: %v", driver, err)
	}

	// The floor: the same database, opened in-process, the server stopped.
	drv, err := app.OpenDriver(ctx, app.Config{DataDir: dataDir, DatabaseURL: dbURL})
	if err != nil {
		res.floor = timing{name: "floor", err: oneLine(err.Error())}
	} else {
		logf("%s: floor", driver)
		res.floor = timeOp(ctx, "driver", floorOp(drv, getFQNs), c.samples)
	}

	switch driver {
	case "sqlite":
		for _, f := range []string{app.CatalogFile, app.CatalogFile + "-wal"} {
			if fi, err := os.Stat(filepath.Join(dataDir, f)); err == nil {
				res.dbSize += fi.Size()
			}
		}
	case "postgres":
		if n, err := postgresSize(ctx, dbURL); err == nil {
			res.dbSize = n
		}
	}

	// The storage's floor for ingest: the bulk's tables (n..2n-1) copied through the
	// driver alone.
	if drv != nil {
		logf("%s: driver write floor", driver)
		bulkFQNs := make([]string, c.n)
		for i := range bulkFQNs {
			bulkFQNs[i] = genTable(c.seed, c.n+i).fqn
		}
		if res.driverWriteFloor, err = driverWriteFloor(ctx, drv, bulkFQNs); err != nil {
			res.driverWriteErr = oneLine(err.Error())
			logf("%s: driver write floor: %s", driver, res.driverWriteErr)
		}
		_ = drv.Close()
	}

	// Ingest's floors, through the engine in-process, on a database of their own.
	logf("%s: write floor", driver)
	res.writeFloor = engineFloors(ctx, c, driver, filepath.Join(tmp, driver, "floors"))
	if res.writeFloor.err != "" {
		logf("%s: write floor: %s", driver, res.writeFloor.err)
	}
	return res
}

// engineFloors runs writeFloor on a new database of driver (a new data directory, and
// for PostgreSQL a new database on the server), so that its single creates and its
// bulk write into a catalog of the size the REST phases wrote into, not one the REST
// phases and the driver write floor have already grown threefold.
func engineFloors(ctx context.Context, c config, driver, dataDir string) writeFloorResult {
	cfg := app.Config{DataDir: dataDir}
	if driver == "postgres" {
		u, drop, err := throwawayDB(ctx, c.postgresURL)
		if err != nil {
			return writeFloorResult{err: oneLine(err.Error())}
		}
		defer drop()
		cfg.DatabaseURL = u
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return writeFloorResult{err: oneLine(err.Error())}
	}
	return writeFloor(ctx, cfg, c.seed, c.n, c.workers)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		// Keep the most telling line: the last one (the server's own error).
		lines := strings.Split(s, "\n")
		s = lines[0] + " … " + strings.TrimSpace(lines[len(lines)-1])
	}
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// fmtBytes formats a byte count in MiB.
func fmtBytes(n int64) string {
	if n <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

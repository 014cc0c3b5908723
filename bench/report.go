package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian/bench/benchenv"
	"github.com/meridian-catalog/meridian/store"
)

// report is the whole run: the machine, the load and one result per driver.
type report struct {
	machine string
	n       int
	workers int
	samples int
	yield   string // the servers' --consumer-yield, "" for their default
	results []*driverResult

	semanticN int               // tables of the semantic suite
	semantic  []*semanticResult // one per driver; none when the suite did not run
	models    *modelResult      // the embedders' figures; nil when the suite did not run
}

// describeMachine names the machine: CPUs, CPU model, memory, Go version and date.
func describeMachine() string {
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			load = ", load average " + f[0] + " at start"
		}
	}
	return fmt.Sprintf("%s, %s %s/%s, %s%s", benchenv.Hardware(),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, time.Now().UTC().Format("2006-01-02 15:04 MST"), load)
}

// ms formats a duration in milliseconds with two or three significant digits.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	case v >= 0.1:
		return fmt.Sprintf("%.3f", v)
	default:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
}

// markdown renders the report.
func (r *report) markdown() string {
	var b strings.Builder
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }

	fmt.Fprintf(&b, "# Meridian benchmark\n\n")
	fmt.Fprintf(&b, "Machine: %s.\n\n", r.machine)
	if len(r.results) == 0 { // only the semantic suite ran
		b.WriteString(r.semanticMarkdown())
		return b.String()
	}
	yield := "its default, 30 s"
	if r.yield != "" {
		yield = r.yield
	}
	fmt.Fprintf(&b, "Load: %d tables × %d columns through `POST /api/v1/tables`, %d concurrent clients. "+
		"The outbox consumers (the semantic indexer with the default hashing embedder, the graph, the activity "+
		"stream, the audit log) handle the tables in the background; on SQLite they give way to a load that keeps "+
		"the single writer busy (`--consumer-yield`: "+yield+") and catch up after it. Timings start once every "+
		"outbox consumer (the indexer, the graph, the activity stream, the audit log) has caught up and the server "+
		"has settled (used under 10%% of a core for 3 s): %d samples per operation after %d "+
		"untimed warm-up calls, one request at a time on one keep-alive connection, server and client on the "+
		"same machine (127.0.0.1). Latencies in ms.\n\n",
		r.n, columnsPer, r.workers, r.samples, warmups(r.samples))
	fmt.Fprintf(&b, "After the timed operations, %d more tables go through `PUT /api/v1/tables/bulk`, %d per request, "+
		"%d concurrent clients. Targets (issue 7): GET by name ≥ 0.5× the static-HTTP floor; ingest ≥ 1,000 tables/s "+
		"through single requests (SQLite, %d clients) and ≥ 5,000 tables/s through the bulk endpoint.\n\n",
		r.n, bulkBatch, r.workers, r.workers)

	// Columns: drivers that ran. A skipped driver gets a note instead of a column.
	var cols []*driverResult
	for _, d := range r.results {
		if d.skipped != "" {
			note("**%s skipped**: %s", driverTitle(d.driver), d.skipped)
			continue
		}
		cols = append(cols, d)
		if d.failed != "" {
			note("**%s stopped early**: %s", driverTitle(d.driver), d.failed)
		}
	}
	if len(cols) == 0 {
		b.WriteString("No driver ran.\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		return b.String()
	}

	b.WriteString("| Operation |")
	for _, d := range cols {
		fmt.Fprintf(&b, " %s p50 | %s p99 |", driverTitle(d.driver), driverTitle(d.driver))
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---:|---:|")
	}
	b.WriteString("\n")

	// Rows: every (surface, operation) in first-seen order, then the MCP/REST
	// comparison groups, then the floor.
	type key struct{ surface, name string }
	compared := map[key]bool{}
	for _, c := range comparisons {
		compared[key{"REST", c.rest}] = true
		for _, tr := range []string{mcpStdio, mcpHTTP} {
			compared[key{"MCP", mcpOpName(c.tool, tr)}] = true
		}
	}
	var rows []key
	seen := map[key]bool{}
	for _, d := range cols {
		for _, t := range d.timings {
			k := key{t.surface, t.name}
			if !seen[k] && !compared[k] {
				seen[k] = true
				rows = append(rows, k)
			}
		}
	}
	cell := func(d *driverResult, t timing, ok bool) string {
		label := strings.TrimSpace(t.surface + " " + t.name)
		switch {
		case !ok:
			return " – | – |"
		case t.na != "":
			note("%s, %s: n/a (%s)", driverTitle(d.driver), label, t.na)
			return " n/a | n/a |"
		case t.err != "":
			note("%s, %s: error: %s", driverTitle(d.driver), label, oneLine(t.err))
			return " error | error |"
		}
		if t.info != "" {
			note("%s, %s %s: %s.", driverTitle(d.driver), t.surface, t.name, t.info)
		}
		flag := ""
		if t.problems != "" {
			note("**%s, %s %s: %s**", driverTitle(d.driver), t.surface, t.name, t.problems)
			flag = " ⚠"
		}
		return fmt.Sprintf(" %s%s | %s |", ms(t.p50), flag, ms(t.p99))
	}
	row := func(k key) {
		fmt.Fprintf(&b, "| %s |", strings.TrimSpace(k.surface+" "+k.name))
		for _, d := range cols {
			t := d.timing(k.surface, k.name)
			if t == nil {
				b.WriteString(cell(d, timing{}, false))
				continue
			}
			b.WriteString(cell(d, *t, true))
		}
		b.WriteString("\n")
	}
	for _, k := range rows {
		row(k)
	}

	// MCP against REST (issue #4): per tool, its rows over stdio and HTTP, the REST
	// call doing the same work, then MCP p50 / REST p50 (and p99 / p99) per transport.
	ran := false
	for _, c := range comparisons {
		for _, d := range cols {
			for _, tr := range []string{mcpStdio, mcpHTTP} {
				ran = ran || d.timing("MCP", mcpOpName(c.tool, tr)) != nil
			}
		}
	}
	for _, c := range comparisons {
		if !ran {
			break
		}
		row(key{"MCP", mcpOpName(c.tool, mcpStdio)})
		row(key{"MCP", mcpOpName(c.tool, mcpHTTP)})
		row(key{"REST", c.rest})
		for _, tr := range []string{mcpStdio, mcpHTTP} {
			fmt.Fprintf(&b, "| MCP/REST p50 (and p99), %s |", mcpOpName(c.tool, tr))
			for _, d := range cols {
				m, r := d.timing("MCP", mcpOpName(c.tool, tr)), d.timing("REST", c.rest)
				if m == nil || r == nil || m.samples == 0 || r.samples == 0 || r.p50 == 0 || r.p99 == 0 {
					b.WriteString(" – | – |")
					continue
				}
				fmt.Fprintf(&b, " %.2f× | %.2f× |", float64(m.p50)/float64(r.p50), float64(m.p99)/float64(r.p99))
			}
			b.WriteString("\n")
		}
	}

	floorName := "floor: Tx.GetByFQN + JSON decode (same tables)"
	for _, d := range cols {
		if d.floor.name != "" && d.floor.name != "floor" {
			floorName = d.floor.name
		}
	}
	fmt.Fprintf(&b, "| %s |", floorName)
	for _, d := range cols {
		b.WriteString(cell(d, d.floor, d.floor.name != ""))
	}
	b.WriteString("\n| API overhead: REST GET p50, each table once after the writes / floor p50 |")
	for _, d := range cols {
		get := d.timing("REST", coldGetName)
		if get == nil || get.p50 == 0 || d.floor.p50 == 0 {
			b.WriteString(" – | |")
			continue
		}
		fmt.Fprintf(&b, " %.1f× | |", float64(get.p50)/float64(d.floor.p50))
	}
	// The same-run floors as ratios of requests per second (one connection, p50):
	// GET by name against the static HTTP server and against the raw driver lookup.
	perSecond := func(label, getName string, floor func(d *driverResult) *timing, target string) {
		fmt.Fprintf(&b, "\n| %s |", label)
		for _, d := range cols {
			get, f := d.timing("REST", getName), floor(d)
			if get == nil || f == nil || get.p50 == 0 || f.p50 == 0 {
				b.WriteString(" – | |")
				continue
			}
			fmt.Fprintf(&b, " %.2f× | %s |", float64(f.p50)/float64(get.p50), target)
		}
	}
	const getName = "GET table by name (fields=columns)"
	perSecond("GET by name / static-HTTP floor in its own process, requests/s (p50)", getName,
		func(d *driverResult) *timing { return d.timing("", staticFloorName) }, "target ≥ 0.5×")
	perSecond("GET by name / static-HTTP floor in the bench process, requests/s (p50)", getName,
		func(d *driverResult) *timing { return d.timing("", inProcessFloorName) }, "")
	perSecond("GET by name, each table once after the writes / static-HTTP floor in its own process, requests/s (p50)", coldGetName,
		func(d *driverResult) *timing { return d.timing("", staticFloorName) }, "")
	perSecond("GET by name, each table once after the writes / raw driver lookup, requests/s (p50)", coldGetName,
		func(d *driverResult) *timing { return &d.floor }, "")
	// figureRow writes a row of one figure per driver and a note beside it; cell
	// answers "" for a driver without the figure.
	figureRow := func(label string, cell func(d *driverResult) (figure, note string)) {
		b.WriteString("\n| " + label + " |")
		for _, d := range cols {
			switch f, n := cell(d); {
			case f == "":
				b.WriteString(" – | |")
			case n == "":
				fmt.Fprintf(&b, " %s | |", f)
			default:
				fmt.Fprintf(&b, " %s | %s |", f, n)
			}
		}
	}
	rateRow := func(label string, rate func(d *driverResult) (float64, time.Duration)) {
		figureRow(label, func(d *driverResult) (string, string) {
			if r, wall := rate(d); r != 0 {
				return fmt.Sprintf("%.0f", r), wall.Round(100*time.Millisecond).String() + " wall"
			}
			return "", ""
		})
	}
	rateRow("Ingest rate, single requests (tables/s)", func(d *driverResult) (float64, time.Duration) { return d.ingestRate, d.ingestWall })
	rateRow(fmt.Sprintf("Ingest rate, bulk endpoint, %d per request (tables/s)", bulkBatch),
		func(d *driverResult) (float64, time.Duration) { return d.bulkRate, d.bulkWall })
	// caughtUpRow gives the rate to a catalog whose consumers have handled the whole load
	// (tables over the ingest's wall time plus their catch-up), beside the catch-up.
	caughtUpRow := func(label string, rate func(d *driverResult) (float64, time.Duration, time.Duration)) {
		figureRow(label, func(d *driverResult) (string, string) {
			if perSec, wall, catchUp := rate(d); perSec != 0 && catchUp > 0 {
				tables := perSec * wall.Seconds()
				return fmt.Sprintf("%.0f", tables/(wall+catchUp).Seconds()),
					"consumers caught up " + catchUp.Round(100*time.Millisecond).String() + " after the last table"
			}
			return "", ""
		})
	}
	caughtUpRow("Ingest to caught-up consumers, single requests (tables/s)", func(d *driverResult) (float64, time.Duration, time.Duration) {
		return d.ingestRate, d.ingestWall, d.ingestCatchUp
	})
	caughtUpRow("Ingest to caught-up consumers, bulk endpoint (tables/s)", func(d *driverResult) (float64, time.Duration, time.Duration) {
		return d.bulkRate, d.bulkWall, d.bulkCatchUp
	})
	cpuRow := func(label string, cpu func(d *driverResult) cpuPerTable) {
		figureRow(label, func(d *driverResult) (string, string) {
			if c := cpu(d); c != (cpuPerTable{}) {
				return ms(c.server), "clients " + ms(c.clients)
			}
			return "", ""
		})
	}
	cpuRow("CPU per table, single requests: meridian serve (ms), and the bench's clients", func(d *driverResult) cpuPerTable { return d.ingestCPU })
	cpuRow("CPU per table, bulk endpoint: meridian serve (ms), and the bench's clients", func(d *driverResult) cpuPerTable { return d.bulkCPU })
	// cpuBoundRow gives the most tables a second this machine's CPUs allow at the CPU a
	// table cost (the server's and the clients'), beside the share of it the ingest kept.
	cpuBoundRow := func(label string, rate func(d *driverResult) float64, cpu func(d *driverResult) cpuPerTable) {
		figureRow(label, func(d *driverResult) (string, string) {
			c := cpu(d)
			if c == (cpuPerTable{}) {
				return "", ""
			}
			bound := float64(runtime.NumCPU()) / (c.server + c.clients).Seconds()
			return fmt.Sprintf("%.0f", bound), fmt.Sprintf("REST %.2f×", rate(d)/bound)
		})
	}
	cpuBoundRow(fmt.Sprintf("CPU bound, single requests: %d CPUs over the CPU per table, server and clients (tables/s)", runtime.NumCPU()),
		func(d *driverResult) float64 { return d.ingestRate }, func(d *driverResult) cpuPerTable { return d.ingestCPU })
	cpuBoundRow(fmt.Sprintf("CPU bound, bulk endpoint: %d CPUs over the CPU per table, server and clients (tables/s)", runtime.NumCPU()),
		func(d *driverResult) float64 { return d.bulkRate }, func(d *driverResult) cpuPerTable { return d.bulkCPU })
	loadRow := func(label string, load func(d *driverResult) writerLoad) {
		figureRow(label, func(d *driverResult) (string, string) {
			if l := load(d); l != (writerLoad{}) {
				return fmt.Sprintf("%.0f%%", 100*l.busy), fmt.Sprintf("%.1f writes per commit", l.perCommit)
			}
			return "", ""
		})
	}
	loadRow("Single writer, single requests: share of the ingest's wall time it was busy", func(d *driverResult) writerLoad { return d.ingestLoad })
	loadRow("Single writer, bulk endpoint: share of the ingest's wall time it was busy", func(d *driverResult) writerLoad { return d.bulkLoad })
	writeFloorRow := func(label string, rest func(d *driverResult) float64, floor func(d *driverResult) float64) {
		figureRow(label, func(d *driverResult) (string, string) {
			switch f := floor(d); {
			case f == 0:
				return "", ""
			case rest(d) == 0:
				return fmt.Sprintf("%.0f", f), ""
			default:
				return fmt.Sprintf("%.0f", f), fmt.Sprintf("REST %.2f×", rest(d)/f)
			}
		})
	}
	writeFloorRow(fmt.Sprintf("floor: engine in-process, single creates, %d goroutines, no HTTP, no consumers (tables/s)", r.workers),
		func(d *driverResult) float64 { return d.ingestRate }, func(d *driverResult) float64 { return d.writeFloor.single })
	writeFloorRow(fmt.Sprintf("floor: engine in-process, bulk, %d per call, no HTTP, no consumers (tables/s)", bulkBatch),
		func(d *driverResult) float64 { return d.bulkRate }, func(d *driverResult) float64 { return d.writeFloor.bulk })
	writeFloorRow(fmt.Sprintf("floor: driver writes alone, the bulk's tables copied, %d per transaction, one goroutine (tables/s)", driverFloorChunk),
		func(d *driverResult) float64 { return d.bulkRate }, func(d *driverResult) float64 { return d.driverWriteFloor })
	b.WriteString("\n| Peak RSS of meridian serve (VmHWM) |")
	for _, d := range cols {
		fmt.Fprintf(&b, " %s | |", fmtBytes(d.peakRSS))
	}
	if ran {
		b.WriteString("\n| Peak RSS of meridian mcp, stdio rows (VmHWM) |")
		for _, d := range cols {
			fmt.Fprintf(&b, " %s | |", fmtBytes(d.mcpStdioRSS))
		}
	}
	b.WriteString("\n| Database size at the end |")
	for _, d := range cols {
		fmt.Fprintf(&b, " %s | |", fmtBytes(d.dbSize))
	}
	b.WriteString("\n\n")

	for _, d := range cols {
		if d.driver == "postgres" && d.peakRSS > 0 {
			note("PostgreSQL's peak RSS is the meridian process only; the PostgreSQL server's own memory is not counted.")
		}
	}
	note("The static-HTTP floors are net/http servers answering each sampled path with the bytes Meridian answered for it, " +
		"timed like the REST rows (same client, one keep-alive connection), while the server idles. The target is against " +
		"the one in a process of its own (the bench binary run again), as Meridian is: each request then goes from the " +
		"client's process to the server's and back. The one in the bench process, beside the client, never leaves one " +
		"process's scheduler; it shows what that crossing costs on this machine and is no target. The ratios divide the " +
		"floor's p50 by GET's p50: the share of the floor's requests per second that GET by name serves.")
	note("The driver floor runs with the server stopped, in-process, on the tables GET by name read; " +
		"against the GET that reads the database (each table once after the writes), the ratio is what HTTP, auth, " +
		"routing, `fields` and encoding add to one read.")
	note("The ingest rates count a table once its write is acknowledged: from then on a GET, a list or a keyword " +
		"search sees it. Every request is generated and encoded before the clock (and the CPU count) starts, so the " +
		"clients' share of the CPUs is sending and reading answers. The outbox consumers (semantic index, knowledge graph, activity, audit, subscriptions) handle " +
		"it after that; on SQLite they give way to a burst that saturates the single writer, for at most " +
		"--consumer-yield (30 s), and catch up after it. The rows \"Ingest to caught-up consumers\" count the load " +
		"until every consumer had handled it: n over the ingest's wall time plus the catch-up.")
	note("The CPU-bound rows divide the machine's CPUs (%d) by the CPU time a table cost the server and the bench's "+
		"clients together: the most tables a second these CPUs could ingest at that cost, were they never idle. Near "+
		"1.00×, the ingest is bound by CPU, and only less CPU a table (or more CPUs) raises it: on %d CPUs, 5,000 "+
		"tables/s leaves %s ms a table, and 1,000 leaves %s.", runtime.NumCPU(), runtime.NumCPU(),
		ms(time.Duration(runtime.NumCPU())*time.Second/5000), ms(time.Duration(runtime.NumCPU())*time.Second/1000))
	note("The single-writer rows come from the server's /metrics (meridian_writer_*), on a driver that commits writes "+
		"in groups (SQLite): the time its one writer spent running and committing transactions over the ingest's wall "+
		"time, and the writes one commit held. A write is one create, one consumer's batch or position, or one bulk "+
		"chunk of %d tables. Near 100%%, writes queue for the writer, and only less work inside it raises the rate.",
		store.BulkChunk)
	note("The driver write floor is the storage's own bound on ingest, measured with the server stopped, on the same "+
		"database, after the database size above is taken: the rows the engine stored for each of the bulk's tables "+
		"(the table row, the relations it is at either end of) are read, renamed (a new id, `_copy` after the name) "+
		"and, with the clock running, written straight through the driver as the engine's create writes them (the "+
		"row, which is also its version snapshot, the relations, the change event, the search document and its "+
		"full-text row), "+
		"%d tables a transaction on one goroutine, as a bulk chunk commits under the single writer. No authorization, "+
		"draft, JSON Schema or encoding is in it. On SQLite, whose one writer commits every write, an ingest path goes "+
		"faster only by committing more tables at once (the group commit may join chunks: one fsync, shared pages); "+
		"on PostgreSQL, write transactions also take turns (an advisory lock), but their round trips to the server "+
		"can overlap. The ratio is the share of it that the bulk endpoint keeps.", driverFloorChunk)
	for _, d := range cols {
		if d.driverWriteErr != "" {
			note("%s, driver write floor: %s", driverTitle(d.driver), d.driverWriteErr)
		}
	}
	note("The engine floors run last, with the server stopped, on a new database of their own (a new SQLite file, or a " +
		"new PostgreSQL database): the catalog opened in-process (not run, so no outbox consumer shares the CPU and the " +
		"events wait in the outbox) takes the REST phases' tables again, the first n through Entities.Create from the " +
		"same number of goroutines as the REST clients, then the next n through Entities.BulkCreateOrUpdate, bodies " +
		"decoded from JSON before the clock starts. So each floor writes the same tables into a catalog of the same " +
		"size as the REST phase beside it. They are the write path alone (authorization, the before-write sequence " +
		"with the JSON Schema, staging and the group commit); the REST ratio is the share of it that ingest through " +
		"the API keeps with HTTP, the client and the consumers on the same CPUs.")
	for _, d := range cols {
		if d.writeFloor.err != "" {
			note("%s, engine floors: %s", driverTitle(d.driver), d.writeFloor.err)
		}
	}
	note("GET table by name is served from the engine's read cache: the static floor read each path once just " +
		"before, and nothing was committed since, so each answer costs a check that the database is unchanged " +
		"(SQLite: `PRAGMA data_version`; PostgreSQL: the counter of the server's change feed, which a " +
		"`LISTEN` session moves on with each commit's notification, no round trip). " +
		"The PATCH row's commits empty the cache; \"each table once after the writes\" then reads tables not read " +
		"before, each from the database.")
	if ran {
		note("%s", "MCP rows: the mcp-go client ("+mcpGoVersion+"), one call at a time: `meridian mcp --data-dir <the same data dir>` "+
			"(plus `--database-url` for PostgreSQL) as admin over stdio, started after the REST rows while `meridian serve` "+
			"keeps running (SQLite: both processes open the same file), and stateless streamable HTTP at `/mcp` of the "+
			"server with the admin token. They use the REST rows' tables and queries, in the same order. search_metadata "+
			"sends {query, entityType: table, size: 10}, as `GET /api/v1/search/query?q=…&index=table&size=10`; "+
			"get_entity_details sends {entityType: table, fqn}, and reads every field of the table kind, as REST GET by "+
			"name (same fields) does. An MCP sample also includes the client decoding the JSON-RPC answer into a "+
			"CallToolResult (a REST sample ends when the body is read).")
		note("REST search (same query) repeats the REST search row: the same requests in the same order, timed just " +
			"before the MCP rows, so it is not timed twice.")
		note("MCP/REST rows: MCP p50 / REST p50 in the p50 column and MCP p99 / REST p99 in the p99 column, against " +
			"the REST row of the same group. Above 1× is what the MCP layer adds: JSON-RPC framing, the tool's argument " +
			"handling, result shaping within the budget, and the answer twice (structuredContent and the same JSON as text). " +
			"The rows are timed one after another, so a change of load in between (see the load average above) moves " +
			"the ratios, p99 most: read the p50 ratios.")
	}
	note("PATCH makes a new version each time (a version snapshot, a changeDescription and an outbox event " +
		"commit in the same transaction); the list walks every page with the `after` cursor and starts over.")
	for _, n := range notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	b.WriteString(r.semanticMarkdown())
	return b.String()
}

// timing finds the result of one operation.
func (d *driverResult) timing(surface, name string) *timing {
	for i := range d.timings {
		if d.timings[i].surface == surface && d.timings[i].name == name {
			return &d.timings[i]
		}
	}
	return nil
}
